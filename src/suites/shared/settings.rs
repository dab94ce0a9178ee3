//! The settings of `gpubench shared`: its subcommand's flags.

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::error::{UsageError, bail_usage};

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct SharedArgs {
    /// Largest stride, in elements.
    #[arg(long, default_value_t = 33)]
    pub max_stride: u32,
    /// Dependent loads per timed chain (a multiple of 32).
    #[arg(long, default_value_t = 1024)]
    pub iterations: u32,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
}

/// What metadata.json's settings record of a run: the element sizes and strides swept, the
/// chain length and how a load was timed. Written by [`super::run`]; nothing reads it back.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub element_bytes: [u32; 3],
    pub iterations: u32,
    pub strides: String,
    pub timing: String,
    pub warps: u32,
}

impl SharedArgs {
    /// Every check of the flags, before a device is opened.
    pub fn validate(&self) -> Result<(), UsageError> {
        if self.iterations == 0 || !self.iterations.is_multiple_of(32) || self.iterations > 1 << 20
        {
            bail_usage!(
                "--iterations must be a multiple of 32 between 32 and 1048576, not {}",
                self.iterations
            );
        }
        if self.max_stride == 0 || self.max_stride > 64 {
            bail_usage!("--max-stride must be between 1 and 64, not {}", self.max_stride);
        }
        Ok(())
    }
}

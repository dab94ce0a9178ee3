//! The settings of `gpubench regs`: its subcommand's flags.

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::error::{UsageError, bail_usage};

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct RegsArgs {
    /// Smallest register cap.
    #[arg(long, default_value_t = 16)]
    pub min_registers: u32,
    /// Step between caps (255 is always included).
    #[arg(long, default_value_t = 3)]
    pub step: u32,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
}

/// What metadata.json's settings record of a run: the register caps compiled and the method.
/// Written by [`super::run`]; nothing reads it back.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub caps: Vec<u32>,
    pub method: String,
}

impl RegsArgs {
    /// Every check of the flags, before a device is opened.
    pub fn validate(&self) -> Result<(), UsageError> {
        if self.step == 0 || self.min_registers < 16 || self.min_registers > 255 {
            bail_usage!("--min-registers must be between 16 and 255 and --step at least 1");
        }
        Ok(())
    }
}

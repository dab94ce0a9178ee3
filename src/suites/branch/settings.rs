//! The settings of `gpubench branch`: its subcommand's flags.

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::error::{UsageError, bail_usage};

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct BranchArgs {
    /// Busy-loop iterations inside each path.
    #[arg(long, default_value_t = 32)]
    pub work: u32,
    /// Seed of the random clause order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
}

/// What metadata.json's settings record of a run: the flags that shape the measurement and
/// how it measured. `gpubench branch` writes it; its redraw reads the seed back from runs
/// without settings.json.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub method: String,
    pub seed: u64,
    pub work: u32,
}

impl BranchArgs {
    /// Every check of the flags, before a device is opened.
    pub fn validate(&self) -> Result<(), UsageError> {
        if self.work == 0 || self.work > 100_000 {
            bail_usage!("--work must be between 1 and 100000 loop iterations per path");
        }
        Ok(())
    }
}

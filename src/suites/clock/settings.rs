//! The settings of `gpubench clock`: its subcommand's flags.

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::error::{UsageError, bail_usage};

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct ClockArgs {
    /// Back-to-back read pairs per timer.
    #[arg(long, default_value_t = 256)]
    pub pairs: u32,
    /// Blocks per SM in the counter-scope probe.
    #[arg(long, default_value_t = 2)]
    pub blocks_per_sm: u32,
    /// Busy-wait of each block in the counter-scope probe, in microseconds.
    #[arg(long, default_value_t = 20)]
    pub spin_us: u64,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
}

/// What metadata.json's settings record of a run: the flags that shape the measurement and
/// how it measured. `gpubench clock` writes it; nothing reads it back.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub blocks_per_sm: u32,
    pub method: String,
    pub pairs: u32,
    pub spin_us: u64,
}

impl ClockArgs {
    /// Every check of the flags, before a device is opened.
    pub fn validate(&self) -> Result<(), UsageError> {
        if self.pairs == 0 || self.pairs > 1 << 20 {
            bail_usage!("--pairs must be between 1 and 1048576");
        }
        if self.spin_us > 1_000_000 {
            bail_usage!("--spin-us must be at most 1000000 (one second)");
        }
        if self.blocks_per_sm == 0 || self.blocks_per_sm > 64 {
            bail_usage!("--blocks-per-sm must be between 1 and 64");
        }
        Ok(())
    }
}

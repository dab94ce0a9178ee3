//! The settings of `gpubench flops`: its subcommand's flags.

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::error::UsageError;

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct FlopsArgs {
    /// Loop trips of every kernel (256 FMA instructions per trip and thread).
    #[arg(long, default_value_t = 2048)]
    pub iterations: u32,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
}

/// What metadata.json's settings record of a run: the loop trips, the block and its
/// accumulators, the kernels run and the method. Written by [`super::run`]; nothing reads it
/// back.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub accumulators_per_thread: u64,
    pub fmas_per_accumulator_per_trip: u64,
    pub iterations: u32,
    /// The entry point of every kernel run.
    pub kernels: Vec<String>,
    pub method: String,
    pub threads_per_block: u32,
}

impl FlopsArgs {
    /// Every check of the flags, before a device is opened.
    pub fn validate(&self) -> Result<(), UsageError> {
        if self.iterations == 0 || self.iterations > 1_000_000 {
            return Err(
                UsageError::new("--iterations must be between 1 and 1000000 loop trips")
            );
        }
        Ok(())
    }
}

//! The settings of `gpubench dpx`: its subcommand's flags.

use clap::Args;
use serde::{Deserialize, Serialize};

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct DpxArgs {
    /// Timed launches of every kernel, each pair (short and long chain) after one untimed
    /// launch of both: each figure is the median over them, with the range.
    #[arg(long, default_value_t = 5)]
    pub repeats: u32,
    /// Loop trips of the one-thread latency chains (32 or 128 calls a trip).
    #[arg(long, default_value_t = 64)]
    pub latency_iterations: u32,
    /// Loop trips of the full-occupancy throughput kernels (8 chains of 8 or 16 calls a trip).
    #[arg(long, default_value_t = 32)]
    pub throughput_iterations: u32,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
}

impl DpxArgs {
    /// Every check of the flags, before a device is opened.
    pub fn validate(&self) -> Result<(), crate::error::UsageError> {
        let problem = if !(1..=1000).contains(&self.repeats) {
            "--repeats must be between 1 and 1000"
        } else if !(1..=100_000).contains(&self.latency_iterations) {
            "--latency-iterations must be between 1 and 100000"
        } else if !(1..=100_000).contains(&self.throughput_iterations) {
            "--throughput-iterations must be between 1 and 100000"
        } else {
            return Ok(());
        };
        Err(crate::error::UsageError::new(problem))
    }
}

/// What metadata.json's settings record of a run: its counts, its launch shape and the method
/// in words. Written by [`super::run`]; nothing reads it back.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub repeats: u32,
    pub latency_iterations: u32,
    pub throughput_iterations: u32,
    /// Calls per loop trip of the short and the long latency chain.
    pub latency_steps: [u32; 2],
    /// Calls per loop trip of each chain of the short and the long throughput kernel.
    pub throughput_steps: [u32; 2],
    pub chains_per_thread: u32,
    pub threads_per_block: u32,
    pub blocks_per_sm: u32,
    /// The functions timed, by their kernel name.
    pub functions: Vec<String>,
    /// The mixes timed (A and B alternating), by their kernel name.
    pub mixes: Vec<String>,
    pub method: String,
}

//! The settings of `gpubench pipeline`: its subcommand's flags.

use clap::Args;
use serde::{Deserialize, Serialize};

use super::measure::{OPERATIONS, Operation};
use crate::error::{UsageError, bail_usage};

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct PipelineArgs {
    /// Loop trips per chain (each trip runs the operation 32 or 4 times).
    #[arg(long, default_value_t = 256)]
    pub iterations: u32,
    /// The operation whose throughput is swept over 1..=32 warps.
    #[arg(long, default_value = "f32_fma")]
    pub sweep_op: String,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
}

/// What metadata.json's settings record of a run: the loop trips, the swept operation, the
/// launch shapes and chain lengths, and how it timed. `gpubench pipeline` writes it; its
/// redraw reads the swept operation back from runs without settings.json.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    /// Runs from before the per-instruction table lack the three `instruction_` fields.
    pub instruction_latency_chain_lengths: Option<Vec<u32>>,
    pub instruction_repeats: Option<usize>,
    pub instruction_throughput_chain_lengths: Option<Vec<u32>>,
    pub iterations: u32,
    pub latency_warps: u32,
    pub method: String,
    pub sweep_op: String,
    pub throughput_chains_per_thread: u32,
    pub throughput_threads: u32,
}

impl PipelineArgs {
    /// The operation `--sweep-op` names, checked with every other flag before a device is
    /// opened.
    pub fn swept(&self) -> Result<&'static Operation, UsageError> {
        if self.iterations == 0 || self.iterations > 100_000 {
            bail_usage!("--iterations must be between 1 and 100000 loop trips");
        }
        let Some(swept) = OPERATIONS.iter().find(|o| o.name == self.sweep_op) else {
            let names: Vec<&str> = OPERATIONS.iter().map(|o| o.name).collect();
            bail_usage!("--sweep-op {} is not one of {}", self.sweep_op, names.join(", "));
        };
        Ok(swept)
    }
}

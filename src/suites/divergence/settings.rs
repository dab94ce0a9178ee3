//! `gpubench divergence`'s arguments and the experiment configuration they make.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};

use super::measure::{DivergenceConfig, LoopKernel};
use crate::error::UsageError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelChoice {
    Single,
    Double,
    Both,
}

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct DivergenceArgs {
    /// Timed repetitions per divergence level, all inside one launch.
    #[arg(long, default_value_t = 256)]
    pub samples: u32,
    /// Untimed runs of the same loop before each timed one.
    #[arg(long, default_value_t = 1)]
    pub preheat: u32,
    /// Times the loop runs inside the timed region.
    #[arg(long, default_value_t = 1)]
    pub unroll: u32,
    /// Which loop kernel to measure.
    #[arg(long, value_enum, default_value_t = KernelChoice::Both)]
    pub kernel: KernelChoice,
    /// Lane bounds: staircase (Table I), random, half, or list:<32 comma-separated bounds>.
    #[arg(long, default_value = "staircase")]
    pub pattern: String,
    /// Trip count of the longest lane.
    #[arg(long, default_value_t = 32)]
    pub max_bound: i32,
    /// Seed for the random pattern.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Skip the push/pop split kernel (Listing 5), which runs with the single loop.
    #[arg(long)]
    pub no_split: bool,
    /// CUDA device index; `all`, or a list such as 0,2,3, runs once per GPU in child processes,
    /// side by side (`--serial`: one after another), under one directory with devices.json.
    #[arg(long, default_value = "0")]
    pub device: crate::cli::DeviceSelection,
    /// New run directory (default: gpubench-runs/<UTC time>-divergence); must not exist.
    #[arg(long)]
    pub output: Option<PathBuf>,
}

/// What metadata.json's settings record of a run: the configuration it measured and how it
/// launched; after measuring, the kernels' SASS and the timer overhead it subtracted.
/// `gpubench divergence` writes it; the redraw reads `max_bound` back from runs without
/// settings.json.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub kernels: Vec<String>,
    pub launches: String,
    /// `None` where a run's settings lack it; the redraw then takes 32.
    #[serde(default)]
    pub max_bound: Option<i32>,
    pub pattern: String,
    pub preheat: u32,
    pub samples: u32,
    /// Written once measured: a run that failed before has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sass: Option<crate::gpu::sass::SassRecord>,
    pub seed: u64,
    pub timer_overhead: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_overhead_subtracted_cycles: Option<i64>,
    pub unroll: u32,
    pub warps: u32,
}

impl DivergenceArgs {
    pub fn to_config(&self) -> Result<DivergenceConfig, UsageError> {
        let kernels: Vec<LoopKernel> = match self.kernel {
            KernelChoice::Single => vec![LoopKernel::Single],
            KernelChoice::Double => vec![LoopKernel::Double],
            KernelChoice::Both => vec![LoopKernel::Single, LoopKernel::Double],
        };
        let config = DivergenceConfig {
            kernels: kernels.clone(),
            pattern: self.pattern.parse()?,
            samples: self.samples,
            preheat: self.preheat,
            unroll: self.unroll,
            max_bound: self.max_bound,
            seed: self.seed,
            split: !self.no_split && kernels.contains(&LoopKernel::Single),
        };
        config.validate()?;
        Ok(config)
    }
}

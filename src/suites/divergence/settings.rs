//! `gpubench divergence`'s arguments and the experiment configuration they make.

use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};

use super::launch;
use super::measure::patterns::Pattern;
use super::measure::{LoopKernel, MAX_BOUND, MAX_REPEATS, MAX_SAMPLES};
use crate::error::{UsageError, bail_usage};

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
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
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

/// The experiment the flags make ([`DivergenceArgs::to_config`]): the kernels, the lane
/// pattern parsed, and whether the split kernel runs; checked by [`DivergenceConfig::validate`].
#[derive(Debug, Clone, PartialEq)]
pub struct DivergenceConfig {
    pub kernels: Vec<LoopKernel>,
    pub pattern: Pattern,
    pub samples: u32,
    pub preheat: u32,
    pub unroll: u32,
    pub max_bound: i32,
    pub seed: u64,
    /// Also run the push/pop split kernel (Listing 5) at every level.
    pub split: bool,
}

/// The configuration `gpubench divergence` makes with no flags, for tests: the defaults are
/// clap's, written once in `DivergenceArgs` (#73: `--samples`' 256 was written here again).
#[cfg(test)]
impl Default for DivergenceConfig {
    fn default() -> Self {
        use clap::Parser;
        #[derive(Parser)]
        struct Divergence {
            #[command(flatten)]
            args: DivergenceArgs,
        }
        Divergence::parse_from(["divergence"])
            .args
            .to_config()
            .expect("the default flags make a valid configuration")
    }
}

impl DivergenceConfig {
    pub fn validate(&self) -> Result<(), UsageError> {
        if self.samples == 0 || self.samples > MAX_SAMPLES {
            bail_usage!(
                "--samples must be between 1 and {MAX_SAMPLES} (the paper uses 256), not {}",
                self.samples
            );
        }
        let most = self.samples_readable_back();
        if self.samples > most {
            bail_usage!(
                "--samples {} would write a samples.csv larger than the {} MiB gpubench reads back from one file (report, compare and analyze could not read the run); pass --samples {most} or fewer with {} kernel(s) and this pattern",
                self.samples,
                crate::input::MAX_INPUT_BYTES >> 20,
                self.kernels.len()
            );
        }
        if self.unroll == 0 || self.unroll > MAX_REPEATS {
            bail_usage!(
                "--unroll must be between 1 and {MAX_REPEATS}: it is how many times the timed loop runs, not {}",
                self.unroll
            );
        }
        if self.preheat > MAX_REPEATS {
            bail_usage!("--preheat must be between 0 and {MAX_REPEATS}, not {}", self.preheat);
        }
        if self.max_bound < 1 || self.max_bound > MAX_BOUND {
            bail_usage!("--max-bound must be between 1 and {MAX_BOUND}, not {}", self.max_bound);
        }
        // Without opting in to more, a block may use 48 KiB of shared memory.
        let split_limit = 48 * 1024 / launch::split_shared_bytes(1) as i32 - 2;
        if self.split && self.max_bound > split_limit {
            bail_usage!(
                "the push/pop split keeps every stamp in shared memory, which holds bounds up to {split_limit}; pass --no-split or a --max-bound of at most {split_limit}"
            );
        }
        if self.kernels.is_empty() {
            bail_usage!("choose a kernel: --kernel single, double or both");
        }
        self.pattern.validate(self.max_bound)
    }

    /// The most samples whose `samples.csv` the reader reads back ([`crate::input::MAX_INPUT_BYTES`]):
    /// one row per kernel, level (32), sample and lane (32), each at most the pattern's name
    /// (quoted) and 64 bytes of kernel name and numbers (an i64 cycle count twice included).
    fn samples_readable_back(&self) -> u32 {
        let row_bytes = self.pattern.to_string().len() as u64 + 2 + 64;
        let per_sample = self.kernels.len().max(1) as u64 * 32 * 32 * row_bytes;
        u32::try_from(crate::input::MAX_INPUT_BYTES / per_sample).unwrap_or(u32::MAX)
    }
}

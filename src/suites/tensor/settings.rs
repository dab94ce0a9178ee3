//! The settings of `gpubench tensor`: its subcommand's flags.

use clap::Args;
use serde::{Deserialize, Serialize};

use super::measure::WGMMA_WIDTHS;
use crate::error::{UsageError, bail_usage};

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct TensorArgs {
    /// Loop trips of every kernel (16 mma.sync or 8 wgmma per trip and warp or warpgroup).
    #[arg(long, default_value_t = 512)]
    pub iterations: u32,
    /// wgmma widths N to measure (m64nNkK), of 8, 16, 32, 64, 128, 256: the widest does the
    /// most work per instruction; narrower ones show what a kernel tiled that way gets (below
    /// 64, FP16 only).
    #[arg(long, value_delimiter = ',', default_value = "256")]
    pub wgmma_n: Vec<u64>,
    /// Also FP16 wgmma with A from registers (the RS form) at every width asked for, beside A
    /// from shared memory (SS).
    #[arg(long)]
    #[serde(default)]
    pub a_from_registers: bool,
    /// Also the 2:4-sparse forms, FP16: mma.sp m16n8k32 and wgmma.sp m64n256k32 (from
    /// registers too with --a-from-registers), against the sparse peak (twice the dense).
    #[arg(long)]
    #[serde(default)]
    pub sparse: bool,
    /// Also hold FP16 wgmma (SS, N = 256) on every SM for this many seconds per operand fill
    /// (pseudo-random, then zeros), reading the rate, the SM clock and NVML's power after every
    /// launch: the rate and rate per watt it settles at (0: not run). Where the power cap acts,
    /// NVML reports the clocks held down and the whole run's figures are marked so: run it
    /// apart from a run whose short figures you quote.
    #[arg(long, default_value_t = 0.0, value_name = "SECONDS")]
    #[serde(default)]
    pub sustain: f64,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
}

/// What metadata.json's settings record of a run: the loop trips, the shape of the mma.sync
/// and wgmma blocks, the wgmma widths measured and the method. Written by [`super::run`];
/// nothing reads it back.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub iterations: u32,
    pub method: String,
    pub mma_chains_per_warp: u32,
    pub mma_unroll: u64,
    pub mma_warps_per_block: u32,
    pub wgmma_operands: String,
    pub wgmma_unroll: u64,
    pub wgmma_warpgroups_per_block: u32,
    pub wgmma_widths: Vec<u64>,
    /// wgmma with A from registers measured too (FP16).
    #[serde(default)]
    pub wgmma_a_from_registers: bool,
    /// The 2:4-sparse forms measured too (FP16).
    #[serde(default)]
    pub sparse: bool,
    /// Seconds per fill of the sustained run (absent where none ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sustain_seconds: Option<f64>,
}

impl TensorArgs {
    /// The wgmma widths to measure (sorted, each once), checked with every other flag before
    /// a device is opened.
    pub fn widths(&self) -> Result<Vec<u64>, UsageError> {
        if self.iterations == 0 || self.iterations > 1_000_000 {
            bail_usage!("--iterations must be between 1 and 1000000 loop trips");
        }
        if !(0.0..=super::sustain::MOST_SECONDS).contains(&self.sustain) {
            bail_usage!(
                "--sustain takes seconds per operand fill from 0 (off) to {}",
                super::sustain::MOST_SECONDS
            );
        }
        let mut widths = self.wgmma_n.clone();
        widths.sort_unstable();
        widths.dedup();
        if widths.is_empty() || widths.iter().any(|w| !WGMMA_WIDTHS.contains(w)) {
            bail_usage!(
                "--wgmma-n takes wgmma widths from 8, 16, 32, 64, 128 and 256, such as 256 or 64,128,256"
            );
        }
        Ok(widths)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sustained_run_takes_seconds_from_0_to_its_limit_and_nothing_else() {
        let with = |sustain: f64| TensorArgs {
            sustain,
            ..crate::harness::defaults()
        };
        for fine in [0.0, 30.0, 600.0] {
            assert!(with(fine).widths().is_ok(), "{fine}");
        }
        for bad in [-1.0, 600.5, f64::NAN, f64::INFINITY] {
            let refused = with(bad).widths().unwrap_err().to_string();
            assert!(refused.starts_with("--sustain takes seconds"), "{bad}: {refused}");
        }
    }
}

//! `gpubench calibrate`: the cache-confidence calibration study (no GPU).

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Simulated caches to read (CI runs 40; the committed study 4000 or more).
    #[arg(long, default_value_t = 400)]
    pub cases: u64,
    /// Seed of the cases: the same seed and count give the same study.
    #[arg(long, default_value_t = 29)]
    pub seed: u64,
    /// Host threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// New directory for outcomes.csv, reliability.csv, reliability.png and calibration.json
    /// (default: results/runs/<UTC time>-calibration); must not exist.
    #[arg(long)]
    pub output: Option<PathBuf>,
}

//! `gpubench calibrate`: the cache-confidence calibration study (no GPU).

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Simulated caches to read (CI runs 40; the committed studies 20 000, in two shards).
    #[arg(long, default_value_t = 400)]
    pub cases: u64,
    /// Seed of the cases: the same seed and count give the same study.
    #[arg(long, default_value_t = 29)]
    pub seed: u64,
    /// Index of the first case: a study too long for one sitting runs as shards (`--first-case
    /// 0 --cases 10000`, `--first-case 10000 --cases 10000`) that `--merge` joins.
    #[arg(long, default_value_t = 0)]
    pub first_case: u64,
    /// Join the shards in these study directories (one seed, consecutive cases, one build)
    /// into one study at `--output`, instead of running one.
    #[arg(long, num_args = 1.., value_name = "DIR", conflicts_with_all = ["cases", "seed", "first_case", "threads"])]
    pub merge: Vec<PathBuf>,
    /// Host threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// New directory for outcomes.csv, reliability.csv, reliability.png and calibration.json
    /// (default: gpubench-runs/<UTC time>-calibration); must not exist.
    #[arg(long)]
    pub output: Option<PathBuf>,
}

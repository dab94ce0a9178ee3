//! One entry of `gpubench all`'s plan, as a suite states it (`SuiteDef::plan`): the run's
//! name, the suite's arguments, and its rough share of the run.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedSuite {
    /// The sub-directory name, also what `--only` and `--skip` match.
    pub name: String,
    /// gpubench's arguments for it (without `--output` and `--device`).
    pub args: Vec<String>,
    /// Seconds it held the GPU in `gpubench all` on an H100 (for the progress bar's estimate
    /// only: the time a suite holds the GPU is its share of the run).
    pub estimate_seconds: f64,
    /// Whether its host work aside (see [`crate::gpu::turn::aside`]) takes longer than the
    /// other suites' measurements: the instruction space compiles a kernel per code size, in
    /// rounds, for seconds. `all` gives such a suite its first turn right after the clock's,
    /// so that its compiles overlap the other suites' measurements instead of outlasting them.
    #[serde(skip)]
    pub starts_early: bool,
}

impl PlannedSuite {
    pub fn new(name: &str, args: &[&str], estimate_seconds: f64) -> PlannedSuite {
        PlannedSuite {
            name: name.to_string(),
            args: args.iter().map(|a| a.to_string()).collect(),
            estimate_seconds,
            starts_early: false,
        }
    }

    /// This entry, [starting early](PlannedSuite::starts_early).
    pub fn early(mut self) -> PlannedSuite {
        self.starts_early = true;
        self
    }
}

//! One entry of `gpubench all`'s plan, as a suite states it (`SuiteDef::plan`): the run's
//! name, the suite's typed settings, and its rough share of the run; and the settings' round
//! trip through clap. A suite states its `all` entries as values of its own settings type,
//! from clap's defaults (`SyncArgs { watchdog_ms: 25, ..defaults }`); [`flags`] (`cli::flags`)
//! turns one back into the subcommand's flags, read off clap's own description of them, so
//! that no flag name is written anywhere but the settings type.

use serde::Serialize;
use serde_json::Value;

use super::SuiteDef;
pub use crate::cli::flags::{defaults, flags};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedSuite {
    /// The sub-directory name, also what `--only` and `--skip` match.
    pub name: String,
    /// The suite it runs (its subcommand).
    pub suite: &'static str,
    /// The suite's settings for it, as its settings type serializes them (`--output` and
    /// `--device` are `all`'s to give).
    pub settings: Value,
    /// Seconds it held the GPU in `gpubench all` on an H100 (for the progress bar's estimate
    /// only: the time a suite holds the GPU is its share of the run).
    pub estimate_seconds: f64,
    /// Whether its host work aside (see [`crate::gpu::lease::host_work`]) takes longer than the
    /// other suites' measurements: the instruction space compiles a kernel per code size, in
    /// rounds, for seconds. `all` gives such a suite its first turn right after the clock's,
    /// so that its compiles overlap the other suites' measurements instead of outlasting them.
    #[serde(skip)]
    pub starts_early: bool,
    /// Whether its process prepares for seconds before its turn (slots starts Nsight Compute,
    /// whose program is ready for its share of slots' turn only 1-2 s later): `all` gives it
    /// to its worker when the run starts, instead of one turn before its own.
    #[serde(skip)]
    pub prepares_from_start: bool,
}

impl PlannedSuite {
    /// An entry named `name` running suite `S` with `settings`.
    pub fn new<S: SuiteDef + ?Sized>(
        name: &str,
        settings: &S::Args,
        estimate_seconds: f64,
    ) -> PlannedSuite {
        PlannedSuite {
            name: name.to_string(),
            suite: S::NAME,
            // A settings type of numbers, strings, paths and lists always serializes (a path
            // that is not UTF-8 would not, and no plan holds one).
            settings: serde_json::to_value(settings).expect("a suite's settings serialize"),
            estimate_seconds,
            starts_early: false,
            prepares_from_start: false,
        }
    }

    /// This entry, [preparing from the start](PlannedSuite::prepares_from_start).
    pub fn prepared_from_start(mut self) -> PlannedSuite {
        self.prepares_from_start = true;
        self
    }

    /// This entry, [starting early](PlannedSuite::starts_early).
    pub fn early(mut self) -> PlannedSuite {
        self.starts_early = true;
        self
    }
}

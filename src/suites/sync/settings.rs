//! The settings of `gpubench sync`: its subcommand's flags.

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::error::{UsageError, bail_usage};

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct SyncArgs {
    /// Seconds a probe may run before the host kills it and records a hang.
    #[arg(long, default_value_t = 5.0)]
    pub timeout_seconds: f64,
    /// In-kernel watchdog of spinning loops, in milliseconds of SM clock.
    #[arg(long, default_value_t = 100)]
    pub watchdog_ms: u64,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
    #[arg(long, hide = true)]
    pub child_probe: Option<String>,
    #[arg(long, hide = true)]
    pub child_output: Option<PathBuf>,
    #[arg(long, hide = true, default_value_t = 0)]
    pub child_budget_cycles: i64,
}

/// What metadata.json's settings record of a run: the deadlines' flags and how the probes
/// ran. `gpubench sync` writes it; nothing reads it back.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub method: String,
    pub timeout_seconds: f64,
    pub watchdog_ms: u64,
}

impl SyncArgs {
    /// Every check of the flags, before a device is opened.
    pub fn validate(&self) -> Result<(), UsageError> {
        if !(0.1..=600.0).contains(&self.timeout_seconds) {
            bail_usage!("--timeout-seconds must be between 0.1 and 600");
        }
        if !(1..=10_000).contains(&self.watchdog_ms) {
            bail_usage!("--watchdog-ms must be between 1 and 10000");
        }
        Ok(())
    }

    /// The directory a child writes its probes' values into: a child (`--child-probe`)
    /// needs one.
    pub fn child_output_dir(&self) -> Result<&std::path::Path, UsageError> {
        self.child_output
            .as_deref()
            .ok_or_else(|| UsageError::new("--child-probe needs --child-output"))
    }
}

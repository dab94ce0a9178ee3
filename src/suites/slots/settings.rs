//! The settings of `gpubench slots`: its subcommand's flags.

use clap::Args;
use serde::{Deserialize, Serialize};

use super::WORKLOADS;
use crate::error::{UsageError, bail_usage};

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct SlotsArgs {
    /// Timed runs of each variant (tagged, plain) per workload, for the tags' cost.
    #[arg(long, default_value_t = 7)]
    pub repeats: usize,
    /// Comma-separated workloads to run (dot, bfs, gaussian, backprop, lud, btree; default all).
    #[arg(long)]
    pub only: Option<String>,
    /// Seed of the workloads' generated inputs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Skip the Nsight Compute cross-check even where ncu is installed.
    #[arg(long)]
    pub no_ncu: bool,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
    /// Run the plain kernels once and exit (what ncu profiles).
    #[arg(long, hide = true)]
    pub child_plain: bool,
}

/// What metadata.json's settings record of a run: the workloads, repeats and seed it ran,
/// whether it asked for ncu, and how it counted. `gpubench slots` writes it; nothing reads it
/// back.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub method: String,
    pub ncu: bool,
    pub repeats: usize,
    pub seed: u64,
    pub workloads: Vec<String>,
}

impl SlotsArgs {
    /// The workloads `--only` names (all of them without it), each once, in the order named.
    pub fn workloads(&self) -> Result<Vec<&'static str>, UsageError> {
        let Some(only) = self.only.as_deref() else {
            return Ok(WORKLOADS.to_vec());
        };
        let mut chosen = Vec::new();
        for name in only.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match WORKLOADS.iter().find(|&&w| w == name) {
                Some(&w) if !chosen.contains(&w) => chosen.push(w),
                Some(_) => {}
                None => {
                    bail_usage!(
                        "--only: no workload '{name}'; choose from {}",
                        WORKLOADS.join(", ")
                    );
                }
            }
        }
        if chosen.is_empty() {
            bail_usage!("--only names no workload; pass e.g. --only dot,bfs");
        }
        Ok(chosen)
    }

    /// The check of `--repeats`, before a device is opened (a plain child of the ncu run
    /// repeats nothing, and is not asked).
    pub fn validate(&self) -> Result<(), UsageError> {
        if !(1..=1000).contains(&self.repeats) {
            bail_usage!("--repeats takes 1 to 1000");
        }
        Ok(())
    }
}

//! The settings of `gpubench launch`: its subcommand's flags.

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::error::UsageError;

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct LaunchArgs {
    /// Repeats of every measurement: each figure is the median over them, with the range.
    #[arg(long, default_value_t = 21)]
    pub repeats: u32,
    /// Empty-kernel launches per host-timed batch, queued without waiting (well below the
    /// driver's queue of about 1024 pending launches, so that no call blocks).
    #[arg(long, default_value_t = 256)]
    pub queued: u32,
    /// Launch-and-synchronise round trips of the empty kernel, each timed by itself.
    #[arg(long, default_value_t = 200)]
    pub round_trips: u32,
    /// Empty kernels enqueued back to back between two events, and captured into the graph.
    #[arg(long, default_value_t = 500)]
    pub back_to_back: u32,
    /// The largest volume of the small-kernel sweep in bytes (read and written together), from
    /// 4 KiB in doublings; capped by the free device memory.
    #[arg(long, default_value_t = 1 << 30)]
    pub max_bytes: u64,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
}

/// What metadata.json's settings record of a run: the counts it used, the volumes it swept and
/// the method in words. Written by [`super::run`]; nothing reads it back.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub back_to_back: u32,
    pub method: String,
    pub queued: u32,
    pub repeats: u32,
    pub round_trips: u32,
    /// Threads per block of the streaming kernel.
    pub scale_threads: u32,
    /// The volumes swept, in bytes (read and written together).
    pub volumes_bytes: Vec<u64>,
}

impl LaunchArgs {
    /// Every check of the flags, before a device is opened.
    pub fn validate(&self) -> Result<(), UsageError> {
        let problem = if !(1..=1000).contains(&self.repeats) {
            "--repeats must be between 1 and 1000"
        } else if !(1..=512).contains(&self.queued) {
            "--queued must be between 1 and 512 launches (the driver queues about 1024)"
        } else if !(1..=100_000).contains(&self.round_trips) {
            "--round-trips must be between 1 and 100000"
        } else if !(1..=900).contains(&self.back_to_back) {
            "--back-to-back must be between 1 and 900 launches (the driver queues about 1024)"
        } else if !(16 << 10..=64 << 30).contains(&self.max_bytes) {
            "--max-bytes must be between 16 KiB (three volumes to fit) and 64 GiB"
        } else {
            return Ok(());
        };
        Err(UsageError::new(problem))
    }
}

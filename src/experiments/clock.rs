//! Clock probes (cuda/clock.cu): the SM clock as clock64 ticks per %globaltimer microsecond
//! over a busy-wait, and the back-to-back overhead of clock64 (Wong et al., section IV-A,
//! "clock overhead"). Used by `gpubench info` and recorded before and after every run, since
//! the SM clock of a GPU at rest climbs once work arrives.

use std::time::Duration;

use anyhow::{Context, Result};

use crate::analysis::clock::{self, SmClock};
use crate::analysis::stats::Summary;
use crate::gpu::{Gpu, launch};

/// Long enough that %globaltimer's update granularity (up to a microsecond) is noise.
pub const SM_CLOCK_SPIN: Duration = Duration::from_millis(20);
pub const OVERHEAD_PAIRS: u32 = 256;

pub fn measure_sm_clock(gpu: &mut Gpu) -> Result<SmClock> {
    let stamps = launch::clock_rate(gpu, SM_CLOCK_SPIN)?;
    clock::sm_clock(
        stamps.start_ns,
        stamps.start_cycles,
        stamps.end_ns,
        stamps.end_cycles,
    )
    .context("the SM clock probe saw %globaltimer or clock64 stand still")
}

pub fn measure_read_overhead(gpu: &mut Gpu) -> Result<Summary> {
    let differences = launch::clock_overhead(gpu, OVERHEAD_PAIRS)?;
    clock::read_overhead(&differences).context("the clock overhead probe returned no samples")
}

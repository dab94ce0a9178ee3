//! Clock probes (cuda/clock.cu): the SM clock as clock64 ticks per %globaltimer microsecond
//! over a busy-wait, and the back-to-back overhead of clock64 (Wong et al., section IV-A,
//! "clock overhead"). Used by `gpubench info` and recorded before and after every run, since
//! the SM clock of a GPU at rest climbs once work arrives.

use std::time::Duration;

use anyhow::{Context, Result};

use crate::analysis::clock::{self, SmClock};
use crate::analysis::stats::Summary;
use crate::gpu::{Gpu, launch};

/// Long enough that %globaltimer's update granularity (up to a microsecond) is noise: 0.01 %
/// of the clock at most (0.2 MHz at 2 GHz). Every suite measures it twice.
pub const SM_CLOCK_SPIN: Duration = Duration::from_millis(10);
pub const OVERHEAD_PAIRS: u32 = 256;
/// On the simulated device %globaltimer is the simulated core cycles at the configured clock
/// (sim/patches/globaltimer.patch), exact to a nanosecond, so 20 us reads the clock to 0.01 %;
/// 10 ms would be about 14 million simulated cycles, minutes of host time.
pub const SIMULATED_SM_CLOCK_SPIN: Duration = Duration::from_micros(20);

pub fn measure_sm_clock(gpu: &mut Gpu) -> Result<SmClock> {
    let spin = if gpu.simulated {
        SIMULATED_SM_CLOCK_SPIN
    } else {
        SM_CLOCK_SPIN
    };
    let (stamps, _) = launch::clock::clock_rate(gpu, spin, false)?;
    clock::sm_clock(
        stamps.start_ns,
        stamps.start_cycles,
        stamps.end_ns,
        stamps.end_cycles,
    )
    .context("the SM clock probe saw %globaltimer or clock64 stand still")
}

/// The windows of the SM clock against the host's clock: a short and a long busy-wait, whose
/// difference (100 ms) cancels the launch and the wait each includes; the host's clock reads
/// to a microsecond or so, 0.001 % of the difference.
pub const TWO_TIMERS_SHORT: Duration = Duration::from_millis(10);
pub const TWO_TIMERS_LONG: Duration = Duration::from_millis(110);
/// Pairs of windows: their spread is the reading's error.
pub const TWO_TIMERS_PAIRS: usize = 3;

/// The SM clock against two timers (`analysis::clock::two_timers`): `pairs` pairs of a short and
/// a long busy-wait, each stamped in clock64 and %globaltimer on the GPU and timed by the
/// host's monotonic clock.
pub fn measure_two_timers(gpu: &mut Gpu, pairs: usize) -> Result<clock::TwoTimers> {
    let mut windows = Vec::with_capacity(pairs);
    for _ in 0..pairs {
        let window = |gpu: &mut Gpu, spin| -> Result<clock::TimedWindow> {
            let (stamps, host) = launch::clock::clock_rate(gpu, spin, true)?;
            Ok(clock::TimedWindow {
                cycles: stamps.end_cycles - stamps.start_cycles,
                globaltimer_ns: stamps.end_ns - stamps.start_ns,
                host_ns: i64::try_from(host.as_nanos()).unwrap_or(i64::MAX),
            })
        };
        let short = window(gpu, TWO_TIMERS_SHORT)?;
        let long = window(gpu, TWO_TIMERS_LONG)?;
        windows.push([short, long]);
    }
    clock::two_timers(&windows).context("the two-timer clock probe saw a timer stand still")
}

pub fn measure_read_overhead(gpu: &mut Gpu) -> Result<Summary> {
    let differences = launch::clock::clock_overhead(gpu, OVERHEAD_PAIRS)?;
    clock::read_overhead(&differences).context("the clock overhead probe returned no samples")
}

/// Back-to-back overhead of clock64, clock and %globaltimer (Wong et al., clock overhead).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TimerOverheads {
    pub clock64_cycles: Summary,
    pub clock32_cycles: Summary,
    pub globaltimer_ns: Summary,
}

pub fn measure_timer_overheads(gpu: &mut Gpu, pairs: u32) -> Result<TimerOverheads> {
    let raw = launch::clock::timer_overheads(gpu, pairs)?;
    let summary = |part: &[i64]| {
        let values: Vec<f64> = part.iter().map(|&v| v as f64).collect();
        Summary::of(&values).context("the timer probe returned no samples")
    };
    let pairs = pairs as usize;
    Ok(TimerOverheads {
        clock64_cycles: summary(&raw[..pairs])?,
        clock32_cycles: summary(&raw[pairs..2 * pairs])?,
        globaltimer_ns: summary(&raw[2 * pairs..])?,
    })
}

/// Stamps of `blocks` blocks that each busy-wait `spin` (Wong et al., Fig. 5).
pub fn measure_counter_scope(
    gpu: &mut Gpu,
    blocks: u32,
    spin: Duration,
) -> Result<Vec<clock::BlockStamp>> {
    let raw = launch::clock::clock_scope(gpu, blocks, spin)?;
    Ok(raw
        .chunks(6)
        .enumerate()
        .map(|(block, row)| clock::BlockStamp {
            block,
            smid: row[0],
            start_cycles: row[1],
            start_ns: row[2],
            end_cycles: row[3],
            end_ns: row[4],
        })
        .collect())
}

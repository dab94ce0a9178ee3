//! The SM clock from clock64 ticks over %globaltimer nanoseconds, and clock64 read overhead.

use serde::Serialize;

use super::stats::Summary;

/// clock64 ticks per microsecond over an interval timed by %globaltimer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SmClock {
    pub mhz: f64,
    pub interval_ns: i64,
    pub interval_cycles: i64,
}

/// `None` when the interval is empty or runs backwards (a timer that did not advance).
pub fn sm_clock(start_ns: i64, start_cycles: i64, end_ns: i64, end_cycles: i64) -> Option<SmClock> {
    let interval_ns = end_ns - start_ns;
    let interval_cycles = end_cycles - start_cycles;
    if interval_ns <= 0 || interval_cycles <= 0 {
        return None;
    }
    Some(SmClock {
        mhz: interval_cycles as f64 * 1000.0 / interval_ns as f64,
        interval_ns,
        interval_cycles,
    })
}

/// Min / median / max of back-to-back clock64 differences.
pub fn read_overhead(differences: &[i64]) -> Option<Summary> {
    let values: Vec<f64> = differences.iter().map(|&d| d as f64).collect();
    Summary::of(&values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_per_microsecond_is_megahertz() {
        let clock = sm_clock(1_000, 5_000, 20_001_000, 5_000 + 39_600_000).unwrap();
        assert!((clock.mhz - 1980.0).abs() < 1e-9);
    }

    #[test]
    fn a_stalled_timer_gives_no_clock() {
        assert!(sm_clock(10, 10, 10, 20).is_none());
        assert!(sm_clock(10, 20, 30, 20).is_none());
    }
}

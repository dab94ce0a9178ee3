//! The SM clock from clock64 ticks over %globaltimer nanoseconds, and clock64 read overhead.

use serde::Serialize;

use super::stats::Summary;

/// clock64 ticks per microsecond over an interval timed by %globaltimer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
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

/// How far apart (relative) the SM clock over %globaltimer and over the host's clock may read,
/// beyond their errors, and still be said to agree: 0.05 %.
pub const TIMERS_AGREE_WITHIN: f64 = 5e-4;

/// One busy-wait of the clock probe as each timer saw it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct TimedWindow {
    pub cycles: i64,
    pub globaltimer_ns: i64,
    /// From just before the launch to just after the wait, on the host's monotonic clock.
    pub host_ns: i64,
}

/// The SM clock against two timers: clock64 over %globaltimer, and clock64 over the host's
/// monotonic clock (the difference of a long and a short window, which cancels the launch
/// and the wait); and %globaltimer's own rate against the host's clock.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct TwoTimers {
    /// clock64 over %globaltimer in the long windows, median (MHz).
    pub globaltimer_mhz: f64,
    /// clock64 over the host's clock, median over the pairs (MHz).
    pub host_mhz: f64,
    /// Half the range of the host readings over the pairs, and never less than two
    /// microseconds of the window difference: the host reading's error (MHz).
    pub host_error_mhz: f64,
    /// %globaltimer nanoseconds per host nanosecond over the window differences, median.
    pub globaltimer_per_host: f64,
    /// The window difference each pair timed (ns of the host's clock), median.
    pub window_ns: f64,
    pub windows: Vec<[TimedWindow; 2]>,
}

impl TwoTimers {
    /// How far the %globaltimer reading lies from the host's, relative to the host's.
    pub fn disagreement(&self) -> f64 {
        self.globaltimer_mhz / self.host_mhz - 1.0
    }

    /// Whether the two readings differ by more than the host reading's error, the
    /// %globaltimer reading's step (a microsecond over the long window) and
    /// [`TIMERS_AGREE_WITHIN`] (the driver keeps %globaltimer in step with the host's time by
    /// small corrections, which a 100 ms window may catch).
    pub fn disagree(&self) -> bool {
        let step = self.globaltimer_mhz * 1e3 / self.window_ns.max(1.0);
        (self.globaltimer_mhz - self.host_mhz).abs()
            > self.host_error_mhz + step + TIMERS_AGREE_WITHIN * self.host_mhz
    }
}

/// [`TwoTimers`] of pairs of (short, long) windows; `None` where a window difference is empty
/// or runs backwards.
pub fn two_timers(pairs: &[[TimedWindow; 2]]) -> Option<TwoTimers> {
    let mut host = Vec::new();
    let mut globaltimer = Vec::new();
    let mut ratio = Vec::new();
    let mut window = Vec::new();
    for [short, long] in pairs {
        let host_ns = long.host_ns - short.host_ns;
        let cycles = long.cycles - short.cycles;
        let gt_ns = long.globaltimer_ns - short.globaltimer_ns;
        if host_ns <= 0 || cycles <= 0 || gt_ns <= 0 || long.globaltimer_ns <= 0 {
            return None;
        }
        host.push(cycles as f64 * 1e3 / host_ns as f64);
        globaltimer.push(long.cycles as f64 * 1e3 / long.globaltimer_ns as f64);
        ratio.push(gt_ns as f64 / host_ns as f64);
        window.push(host_ns as f64);
    }
    let host_mhz = super::stats::median(&host)?;
    let window_ns = super::stats::median(&window)?;
    let (low, high) = host
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    let floor = host_mhz * 2e3 / window_ns;
    Some(TwoTimers {
        globaltimer_mhz: super::stats::median(&globaltimer)?,
        host_mhz,
        host_error_mhz: ((high - low) / 2.0).max(floor),
        globaltimer_per_host: super::stats::median(&ratio)?,
        window_ns,
        windows: pairs.to_vec(),
    })
}

/// Min / median / max of back-to-back clock64 differences.
pub fn read_overhead(differences: &[i64]) -> Option<Summary> {
    let values: Vec<f64> = differences.iter().map(|&d| d as f64).collect();
    Summary::of(&values)
}

/// One block's stamps from the counter-scope probe (Wong et al., Fig. 5).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct BlockStamp {
    pub block: usize,
    pub smid: i64,
    pub start_cycles: i64,
    pub start_ns: i64,
    pub end_cycles: i64,
    pub end_ns: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SmOffset {
    pub smid: i64,
    pub blocks: usize,
    /// Median over the SM's blocks of clock64 − f·%globaltimer, relative to the first block.
    pub offset_cycles: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct CounterScope {
    /// "shared" (one group), "per-SM" (every SM alone) or "per-group".
    pub verdict: String,
    /// SMs whose offsets agree within 3× the noise, each list sorted; largest group first.
    pub groups: Vec<Vec<i64>>,
    pub explanation: String,
    pub sms: Vec<SmOffset>,
    /// Range of the per-SM offsets.
    pub across_sm_range_cycles: f64,
    /// The noise of the method: the largest range of offsets among blocks of one SM, which
    /// read the same counter, or one %globaltimer step in cycles if that is larger.
    pub noise_cycles: f64,
}

/// If every SM read one shared counter, `clock64 − f·globaltimer` would be the same on all
/// SMs up to the timers' resolution; blocks on one SM show that resolution.
pub fn counter_scope(stamps: &[BlockStamp], mhz: f64) -> Option<CounterScope> {
    let reference = stamps.first()?;
    let cycles_per_ns = mhz / 1000.0;
    let offset = |s: &BlockStamp| {
        (s.start_cycles - reference.start_cycles) as f64
            - (s.start_ns - reference.start_ns) as f64 * cycles_per_ns
    };
    let mut by_sm: std::collections::BTreeMap<i64, Vec<f64>> = Default::default();
    for stamp in stamps {
        by_sm.entry(stamp.smid).or_default().push(offset(stamp));
    }
    let within = by_sm
        .values()
        .map(|offsets| {
            let (low, high) = offsets
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &o| {
                    (l.min(o), h.max(o))
                });
            high - low
        })
        .fold(0.0, f64::max);
    let timer_step = stamps
        .windows(2)
        .map(|w| (w[1].start_ns - w[0].start_ns).abs())
        .filter(|&d| d > 0)
        .min()
        .map_or(0.0, |ns| ns as f64 * cycles_per_ns);
    let noise = within.max(timer_step).max(1.0);
    let sms: Vec<SmOffset> = by_sm
        .iter()
        .map(|(&smid, offsets)| SmOffset {
            smid,
            blocks: offsets.len(),
            offset_cycles: super::stats::median(offsets).unwrap_or(0.0),
        })
        .collect();
    let (low, high) = sms
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), s| {
            (l.min(s.offset_cycles), h.max(s.offset_cycles))
        });
    let across = high - low;
    // Counters kept in step show the same offset: cut the sorted offsets at gaps wider than
    // 3× the noise.
    let mut sorted: Vec<&SmOffset> = sms.iter().collect();
    sorted.sort_by(|a, b| a.offset_cycles.total_cmp(&b.offset_cycles));
    let mut groups: Vec<Vec<i64>> = Vec::new();
    let mut previous = f64::NEG_INFINITY;
    for sm in sorted {
        if sm.offset_cycles - previous > 3.0 * noise || groups.is_empty() {
            groups.push(Vec::new());
        }
        groups.last_mut().expect("pushed above").push(sm.smid);
        previous = sm.offset_cycles;
    }
    for group in &mut groups {
        group.sort_unstable();
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.len()));
    let (verdict, explanation) = match groups.len() {
        1 => (
            "shared",
            format!(
                "the {} SMs' counters agree to within {across:.0} cycles, no more than 3× the method's noise of {noise:.0} cycles: one counter, or counters kept in step",
                sms.len()
            ),
        ),
        n if n == sms.len() => (
            "per-SM",
            format!(
                "each of the {n} SMs' counters has its own offset (up to {across:.0} cycles apart, noise {noise:.0} cycles)"
            ),
        ),
        n => (
            "per-group",
            format!(
                "{n} groups of SMs each share a counter offset (group sizes {:?}); groups differ by up to {across:.0} cycles, {:.0}× the method's noise of {noise:.0} cycles",
                groups.iter().map(Vec::len).collect::<Vec<_>>(),
                across / noise
            ),
        ),
    };
    Some(CounterScope {
        verdict: verdict.into(),
        groups,
        explanation,
        sms,
        across_sm_range_cycles: across,
        noise_cycles: noise,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window of `ms` on a GPU at `mhz` whose %globaltimer runs `gt_rate` times the host's,
    /// with `overhead_us` of launch and wait on the host.
    fn window(ms: f64, mhz: f64, gt_rate: f64, overhead_us: f64) -> TimedWindow {
        let host_ns = ms * 1e6;
        TimedWindow {
            cycles: (host_ns * mhz / 1e3) as i64,
            globaltimer_ns: (host_ns * gt_rate) as i64,
            host_ns: (host_ns + overhead_us * 1e3) as i64,
        }
    }

    #[test]
    fn the_host_reading_cancels_the_launch_and_finds_a_slow_globaltimer() {
        // An H100 at 1979.5 MHz whose %globaltimer runs 0.78 % slow: clock64 over
        // %globaltimer reads 1995 MHz, above the card's maximum.
        let pairs: Vec<[TimedWindow; 2]> = (0..3)
            .map(|i| {
                [
                    window(10.0, 1979.5, 0.9922, 20.0 + f64::from(i)),
                    window(110.0, 1979.5, 0.9922, 21.0),
                ]
            })
            .collect();
        let t = two_timers(&pairs).unwrap();
        assert!((t.host_mhz - 1979.5).abs() < 0.05, "{t:?}");
        assert!((t.globaltimer_mhz - 1995.1).abs() < 0.2, "{t:?}");
        assert!((t.globaltimer_per_host - 0.9922).abs() < 1e-4, "{t:?}");
        assert!(t.disagree());
        assert!(t.host_error_mhz < 0.1, "{t:?}");
        let agreeing: Vec<[TimedWindow; 2]> = (0..3)
            .map(|_| {
                [
                    window(10.0, 1980.0, 1.0, 20.0),
                    window(110.0, 1980.0, 1.0, 20.0),
                ]
            })
            .collect();
        let t = two_timers(&agreeing).unwrap();
        assert!(!t.disagree(), "{t:?}");
        assert!(t.disagreement().abs() < 1e-4);
    }

    #[test]
    fn a_timer_that_stands_still_gives_no_reading() {
        let still = [
            window(10.0, 1980.0, 1.0, 20.0),
            window(10.0, 1980.0, 1.0, 20.0),
        ];
        assert!(two_timers(&[still]).is_none());
    }

    #[test]
    fn ticks_per_microsecond_is_megahertz() {
        let clock = sm_clock(1_000, 5_000, 20_001_000, 5_000 + 39_600_000).unwrap();
        assert!((clock.mhz - 1980.0).abs() < 1e-9);
    }

    fn stamps(offsets_by_sm: &[i64]) -> Vec<BlockStamp> {
        // Two blocks per SM, 1000 ns apart, clock at 2 cycles per ns plus the SM's offset.
        (0..offsets_by_sm.len() * 2)
            .map(|block| {
                let sm = block % offsets_by_sm.len();
                let ns = 5_000_000 + 1000 * block as i64;
                BlockStamp {
                    block,
                    smid: sm as i64,
                    start_cycles: 2 * ns + offsets_by_sm[sm],
                    start_ns: ns,
                    end_cycles: 2 * ns + offsets_by_sm[sm] + 40_000,
                    end_ns: ns + 20_000,
                }
            })
            .collect()
    }

    #[test]
    fn synchronized_counters_are_shared() {
        let scope = counter_scope(&stamps(&[0, 0, 1, 0]), 2000.0).unwrap();
        assert_eq!(scope.verdict, "shared");
        assert_eq!(scope.sms.len(), 4);
    }

    #[test]
    fn offset_counters_are_per_sm() {
        let scope = counter_scope(&stamps(&[0, 250_000, -90_000, 7]), 2000.0).unwrap();
        assert_eq!(scope.verdict, "per-group");
        assert_eq!(scope.groups, vec![vec![0, 3], vec![2], vec![1]]);
        assert!((scope.across_sm_range_cycles - 340_000.0).abs() < 1.0);
        let alone = counter_scope(&stamps(&[0, 250_000, -90_000]), 2000.0).unwrap();
        assert_eq!(alone.verdict, "per-SM");
    }

    #[test]
    fn a_stalled_timer_gives_no_clock() {
        assert!(sm_clock(10, 10, 10, 20).is_none());
        assert!(sm_clock(10, 20, 30, 20).is_none());
    }
}

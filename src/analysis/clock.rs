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

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SmOffset {
    pub smid: i64,
    pub blocks: usize,
    /// Median over the SM's blocks of clock64 − f·%globaltimer, relative to the first block.
    pub offset_cycles: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CounterScope {
    /// "shared" (one group), "per-SM" (every SM alone) or "per-group".
    pub verdict: &'static str,
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
        verdict,
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

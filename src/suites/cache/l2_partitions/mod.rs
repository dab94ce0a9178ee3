//! Which L2 partition holds a line, and which SMs share a partition, from first touches.
//!
//! A one-thread chase on Hopper sees two L2 plateaus (about 284 and 533 cycles on an H100),
//! which only says that some lines cost more. Here each SM reads lines that one "warming" SM
//! has just brought into the L2, once (first touch) and again (re-read); see
//! `cuda/l2_partition.cu`. Where a line is homed in the other partition than the reading SM's,
//! and the warming SM has not left a copy on the reader's side, the first touch pays the trip
//! across. So, per SM, the share of slow first touches is about 0 when it sits with the warming
//! SM and about the share of lines homed on the warming SM's side when it does not. Two sweeps
//! (warmed from SM A, then from an SM of the other side) must put every SM on the same side;
//! where they do not, no grouping is stated. The home of each line, seen from an SM across,
//! gives the address granularity at which homes alternate.
//!
//! Slow and fast are told apart by two-means over every first touch
//! (`analysis::two_latencies`); they count as two latencies only where an empty stretch lies
//! between them, their medians differ by 20 cycles or more, and the slow group is more than a
//! few stray lines.

use serde::{Deserialize, Serialize};

use crate::analysis::stats;
use crate::analysis::two_latencies::{self, Spread};

/// The slow group must hold at least this share of every first touch: a few slow lines (a
/// region's first line, which also misses the TLB) are not a partition.
const MIN_SLOW_SHARE: f64 = 0.02;
/// An SM whose slow share is below this sits with the warming SM.
const WITH_BELOW: f64 = 0.1;
/// An SM whose slow share is above this sits across from it.
const ACROSS_ABOVE: f64 = 0.2;
/// Bytes per line of the probe (`cuda/l2_partition.cu`).
pub const LINE_BYTES: u64 = 128;

/// One SM's walk of one fresh region: cycles per line, first touch and re-read.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    pub sm: u32,
    pub first: Vec<f64>,
    pub again: Vec<f64>,
}

/// Every probe of one warming SM.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    pub warm_sm: u32,
    pub probes: Vec<Probe>,
}

/// One SM in one sweep: a row of `partitions.csv` (the redraw reads it back to draw
/// `partitions.png`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmReading {
    pub sweep: usize,
    pub warm_sm: u32,
    pub sm: u32,
    pub slow_share: f64,
    pub first_touch_median: f64,
    pub reread_median: f64,
    pub side: Side,
}

/// Where an SM sits: with the warming SM, across from it, or unclear.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    With,
    Across,
    Unclear,
}

/// What the L2 partition experiment read: `cache.json`'s `l2_partitions`, written by the run
/// and read back by the summary (`partitions_report::figures`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Partitions {
    /// First touches above this are slow (two-means over every first touch).
    pub threshold_cycles: f64,
    /// Whether the slow first touches stand apart from the fast ones (`two_latencies::split`).
    pub separated: bool,
    /// Every first touch where they do not stand apart.
    pub fast_first_touch: Option<Spread>,
    pub slow_first_touch: Option<Spread>,
    pub reread: Option<Spread>,
    /// Share of re-reads above the threshold: about 0 where a first touch leaves a copy on
    /// the reader's side.
    pub reread_slow_share: Option<f64>,
    /// The lowest and highest per-SM median re-read: how far the SMs sit from the L2.
    pub reread_sm_medians: Option<(f64, f64)>,
    /// The two groups of SMs, where both sweeps put every probed SM on the same side.
    pub groups: Option<[Vec<u32>; 2]>,
    /// Share of lines homed on the warming SM's side, as SMs across see it.
    pub home_share: Option<f64>,
    /// The largest aligned block of addresses whose lines share one home.
    pub home_chunk_bytes: Option<u64>,
    pub per_sm: Vec<SmReading>,
    pub verdict: String,
}

/// The share of `values` above `threshold` (0 for none).
fn share_above(values: &[f64], threshold: f64) -> f64 {
    values.iter().filter(|&&v| v > threshold).count() as f64 / values.len().max(1) as f64
}

/// Reads the partitions from the sweeps (the first warmed from one SM, the second from an SM
/// the first found across from it).
pub fn analyse(sweeps: &[Sweep]) -> Option<Partitions> {
    let firsts: Vec<f64> = sweeps
        .iter()
        .flat_map(|s| s.probes.iter().flat_map(|p| p.first.iter().copied()))
        .collect();
    let read = two_latencies::split(&firsts, 20.0, MIN_SLOW_SHARE)?;
    let (threshold, separated) = (read.threshold, read.apart);
    let (fast_spread, slow_spread) = (read.fast, read.slow);
    let agains: Vec<f64> = sweeps
        .iter()
        .flat_map(|s| s.probes.iter().flat_map(|p| p.again.iter().copied()))
        .collect();
    let reread = Spread::of(&agains);
    let reread_slow_share = (!agains.is_empty()).then(|| share_above(&agains, threshold));
    let sm_medians: Vec<f64> = sweeps
        .iter()
        .flat_map(|s| s.probes.iter().filter_map(|p| stats::median(&p.again)))
        .collect();
    let reread_sm_medians = (!sm_medians.is_empty()).then(|| {
        (
            sm_medians.iter().copied().fold(f64::INFINITY, f64::min),
            sm_medians.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    });
    let mut per_sm = Vec::new();
    // The probes from across their warming SM: their slow lines are homed on its side.
    let mut across: Vec<&Probe> = Vec::new();
    for (index, sweep) in sweeps.iter().enumerate() {
        for probe in sweep.probes.iter().filter(|p| !p.first.is_empty()) {
            let share = share_above(&probe.first, threshold);
            let side = if !separated {
                Side::Unclear
            } else if share < WITH_BELOW {
                Side::With
            } else if share > ACROSS_ABOVE {
                across.push(probe);
                Side::Across
            } else {
                Side::Unclear
            };
            per_sm.push(SmReading {
                sweep: index,
                warm_sm: sweep.warm_sm,
                sm: probe.sm,
                slow_share: share,
                first_touch_median: stats::median(&probe.first).unwrap_or(f64::NAN),
                reread_median: stats::median(&probe.again).unwrap_or(f64::NAN),
                side,
            });
        }
    }
    let groups = separated.then(|| groups_of(&per_sm)).flatten();
    // Each probe's region on its own, so that no block spans two regions.
    let homes: Vec<(u64, bool)> = across
        .iter()
        .enumerate()
        .flat_map(|(k, p)| {
            p.first
                .iter()
                .enumerate()
                .map(move |(j, &v)| (((k as u64) << 40) + j as u64 * LINE_BYTES, v > threshold))
        })
        .collect();
    let home_share = (separated && !homes.is_empty())
        .then(|| homes.iter().filter(|h| h.1).count() as f64 / homes.len() as f64);
    let region = across.iter().map(|p| p.first.len()).min().unwrap_or(0) as u64 * LINE_BYTES;
    let home_chunk_bytes = if separated {
        two_latencies::uniform_block_bytes(&homes, 2 * LINE_BYTES, region / 2)
    } else {
        None
    };
    let verdict = verdict(
        separated,
        groups.as_ref(),
        fast_spread,
        slow_spread,
        reread_slow_share,
        &per_sm,
    );
    Some(Partitions {
        threshold_cycles: threshold,
        separated,
        fast_first_touch: fast_spread,
        slow_first_touch: slow_spread,
        reread,
        reread_slow_share,
        reread_sm_medians,
        groups,
        home_share,
        home_chunk_bytes,
        per_sm,
        verdict,
    })
}

/// Two groups where every SM probed in both sweeps sits with the first warming SM in one and
/// across in the other (or the reverse, as the second warming SM's own side demands), and
/// every SM probed once is on a clear side.
fn groups_of(per_sm: &[SmReading]) -> Option<[Vec<u32>; 2]> {
    let first_warm = per_sm.first()?.warm_sm;
    // Whether SM `warm` sits on the first warming SM's side.
    let warm_side = |warm: u32| -> Option<bool> {
        if warm == first_warm {
            return Some(true);
        }
        let reading = per_sm
            .iter()
            .find(|q| q.sm == warm && q.warm_sm == first_warm)?;
        match reading.side {
            Side::With => Some(true),
            Side::Across => Some(false),
            Side::Unclear => None,
        }
    };
    let mut sms: Vec<u32> = per_sm.iter().map(|r| r.sm).collect();
    sms.sort_unstable();
    sms.dedup();
    let (mut own, mut other) = (Vec::new(), Vec::new());
    for sm in sms {
        let mut sides = per_sm.iter().filter(|r| r.sm == sm).map(|r| {
            let with = match r.side {
                Side::With => true,
                Side::Across => false,
                Side::Unclear => return None,
            };
            Some(with == warm_side(r.warm_sm)?)
        });
        let first = sides.next()??;
        if !sides.all(|s| s == Some(first)) {
            return None;
        }
        if first { own.push(sm) } else { other.push(sm) }
    }
    (!own.is_empty() && !other.is_empty()).then_some([own, other])
}

fn verdict(
    separated: bool,
    groups: Option<&[Vec<u32>; 2]>,
    fast: Option<Spread>,
    slow: Option<Spread>,
    reread_slow_share: Option<f64>,
    per_sm: &[SmReading],
) -> String {
    let Some(fast) = fast else {
        return "no first touch was timed".into();
    };
    if !separated {
        return format!(
            "one L2 latency on first touch from every SM (median {:.0} cycles): no partition across which a line costs more is seen",
            fast.median
        );
    }
    let slow = slow.map_or(f64::NAN, |s| s.median);
    let copies = match reread_slow_share {
        Some(share) if share < 0.01 => {
            "; a re-read is fast everywhere: the first touch leaves a copy on the reader's side"
        }
        _ => "",
    };
    match groups {
        Some([a, b]) => format!(
            "two L2 partitions: SMs {} and {} (both sweeps agree on every SM); a line homed across costs {slow:.0} cycles on first touch against {:.0}{copies}",
            a.len(),
            b.len(),
            fast.median
        ),
        None => {
            let unclear = per_sm.iter().filter(|r| r.side == Side::Unclear).count();
            format!(
                "slow first touches ({slow:.0} against {:.0} cycles), but the sweeps do not put every SM on one side ({unclear} readings unclear): no grouping stated{copies}",
                fast.median
            )
        }
    }
}

#[cfg(test)]
mod tests;

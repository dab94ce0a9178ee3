//! What the walks and chases say per SM, with no GPU: the L2 partition each SM sits in, its
//! first-touch latency to lines homed in its own partition and in the other, its re-read, its
//! latency into the other blocks of its cluster, and which SMs stand off the rest.
//!
//! The partitions are read as the cache suite's partition experiment reads them (two-means
//! over every first touch, `analysis::two_latencies`): an SM across from the warming SM finds
//! about half its lines slow (those homed on the warming SM's side), an SM with it finds none.
//! The second sweep warms from an SM the first found across, so every SM is across from one
//! of the two warming SMs; its latencies are read in that sweep, where its fast first touches
//! are lines homed in its own partition and its slow ones lines homed in the other.
//!
//! Two-means starts from the midpoint of the lowest and the highest first touch, so one stray
//! first touch far above the rest decides where it settles: on the committed H100 runs (fast
//! 256-330 cycles, slow 440-540, 67,584 first touches a sweep) a single one above 850-900
//! cycles becomes the slow group on its own, the split is no two latencies (its slow group is
//! under 2 % of the values), the first sweep finds no SM across, no second sweep runs and
//! every SM was put in one partition: an H100 run read 1 with the cache suite reading 64 + 68
//! in the same run, its SMs' median first touches 281-328 cycles (the 64) and 365.5-436 (the
//! 68, half their lines slow). The concurrent walks of every SM leave such strays: the largest
//! first touch of the committed runs is 572-728 cycles. So a slow group that is a few strays,
//! or a latency that every SM meets alike (none across), is set aside and the split is made
//! again below it ([`latency_split`]). Where the reading still puts the SMs in one partition
//! but the SMs' walks are of two kinds, some spreading as widely as an SM across from the
//! warming SM (lines at two latencies) and the rest as an SM with it, the count is not stated
//! ([`L2Map::unresolved`]).

use serde::{Deserialize, Serialize};

use crate::analysis::stats;
use crate::analysis::two_latencies::{self, Spread};

/// Two latencies only where their medians are this many cycles apart (as the partition
/// experiment asks).
const LEAST_GAP_CYCLES: f64 = 20.0;
/// … and the slow group holds this share of every first touch (a region's first line, which
/// also misses the TLB, is not a partition).
const LEAST_SLOW_SHARE: f64 = 0.02;
/// An SM whose share of slow first touches is below this sits with the warming SM.
const WITH_BELOW: f64 = 0.1;
/// An SM whose share is above this sits across from it.
const ACROSS_ABOVE: f64 = 0.2;
/// The walks that spread wide must be at least this share of them to make a kind (a partition
/// holds many SMs: the H100's 132 split 64 + 68 or 66 + 66); a few walks widened by a
/// disturbance are not one.
const LEAST_WIDE_SHARE: f64 = 0.1;
/// Slow groups set aside (strays, or a latency no SM is across by) before the split is given
/// up.
const SLOW_GROUPS_LEFT_OUT_AT_MOST: usize = 4;
/// An SM stands off the others where it lies this many scaled MADs from their median … (on
/// an H100 the SMs' L2 latencies form one gradient, 276-320 cycles, whose farthest SMs lie
/// 2.5-3.4 MADs out and change places between runs: a rule at 3 named them in one run and not
/// the next.)
const OUTLIER_MADS: f64 = 4.0;
/// … and this share of the median (a spread of a cycle or two is no outlier).
const OUTLIER_SHARE: f64 = 0.05;

/// One SM's walk of its own region: cycles per line, first touch and re-read (both empty
/// where no block of the launch landed on the SM).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Walk {
    pub first: Vec<f64>,
    pub again: Vec<f64>,
}

/// Every SM's walk after one warming SM read every region; `walks[s]` is SM `s`'s.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    pub warm_sm: u32,
    pub walks: Vec<Walk>,
}

/// One SM's reading of the L2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmL2 {
    pub sm: u32,
    /// 0: SM 0's partition, 1: the other; none where the sweeps disagree or saw nothing.
    pub partition: Option<u32>,
    /// Median first touch of lines homed in the SM's own partition.
    pub own_cycles: Option<f64>,
    /// Median first touch of lines homed in the other partition.
    pub other_cycles: Option<f64>,
    /// Median re-read (the copy the first touch left on the SM's side).
    pub reread_cycles: Option<f64>,
    /// Share of slow first touches, per sweep.
    pub slow_share: Vec<Option<f64>>,
}

/// The L2 as every SM saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct L2Map {
    /// First touches above this are slow (two-means over all of them).
    pub threshold_cycles: Option<f64>,
    /// Whether the slow first touches stand apart from the fast ones: two partitions.
    pub separated: bool,
    /// SMs with readings, and of them the SMs both sweeps put on one side.
    pub probed: usize,
    pub placed: usize,
    pub sms: Vec<SmL2>,
    /// Why the number of partitions is not stated, where it is not: the reading put the SMs
    /// in one partition, yet some SMs' walks spread as widely as an SM's across from the
    /// warming SM (lines at two latencies). Every SM is then left unplaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unresolved: Option<String>,
}

fn share_above(values: &[f64], threshold: f64) -> f64 {
    values.iter().filter(|&&v| v > threshold).count() as f64 / values.len().max(1) as f64
}

/// The threshold between fast and slow first touches of `walks` (each an SM's first touches
/// in one sweep), where two latencies stand apart (`two_latencies::split`, 20 cycles, 2 %, as
/// the cache suite asks) and some walk is across from its warming SM (more than
/// [`ACROSS_ABOVE`] of its lines slow). A slow group that is not a partition is set aside and
/// the split made again over the values at or below its threshold, at most
/// [`SLOW_GROUPS_LEFT_OUT_AT_MOST`] times: a few strays (under 2 % of the values, which two-means takes
/// for the slow group where one lies far above the rest) or a latency every walk meets at
/// about the same small share (apart, but no walk across). A split of one latency with a slow
/// group of its own size (one peak cut in two) ends the search: none.
fn latency_split(walks: &[&[f64]]) -> Option<f64> {
    let mut values: Vec<f64> = walks.iter().flat_map(|w| w.iter().copied()).collect();
    for _ in 0..=SLOW_GROUPS_LEFT_OUT_AT_MOST {
        let split = two_latencies::split(&values, LEAST_GAP_CYCLES, LEAST_SLOW_SHARE)?;
        let t = split.threshold;
        let slow = values.iter().filter(|&&v| v > t).count();
        if split.apart {
            if walks
                .iter()
                .any(|w| !w.is_empty() && share_above(w, t) > ACROSS_ABOVE)
            {
                return Some(t);
            }
        } else if slow as f64 >= LEAST_SLOW_SHARE * values.len() as f64 {
            return None;
        }
        values.retain(|&v| v <= t);
    }
    None
}

/// The threshold between fast and slow first touches of the sweeps ([`latency_split`] over
/// every walk).
fn two_groups(sweeps: &[Sweep]) -> Option<f64> {
    let walks: Vec<&[f64]> = sweeps
        .iter()
        .flat_map(|s| s.walks.iter().map(|w| w.first.as_slice()))
        .collect();
    latency_split(&walks)
}

/// The lowest SM that `sweep` puts across from its warming SM: the second sweep's warming SM.
pub fn first_across(sweep: &Sweep) -> Option<u32> {
    let threshold = two_groups(std::slice::from_ref(sweep))?;
    sweep
        .walks
        .iter()
        .position(|w| !w.first.is_empty() && share_above(&w.first, threshold) > ACROSS_ABOVE)
        .and_then(|s| u32::try_from(s).ok())
}

/// Whether a slow share puts the SM with (false) or across from (true) the warming SM.
fn across(share: f64) -> Option<bool> {
    if share < WITH_BELOW {
        Some(false)
    } else if share > ACROSS_ABOVE {
        Some(true)
    } else {
        None
    }
}

/// Reads the partitions and every SM's latencies from the sweeps (the first warmed from SM
/// `sweeps[0].warm_sm`, which defines partition 0).
pub fn read_l2(sweeps: &[Sweep]) -> L2Map {
    let sms = sweeps.iter().map(|s| s.walks.len()).max().unwrap_or(0);
    let threshold = two_groups(sweeps);
    // The partition of each warming SM: the first's is 0; a later one's is what the first
    // sweep saw of it.
    let first_sweep = sweeps.first();
    let warm_partition = |warm: u32| -> Option<u32> {
        let first = first_sweep?;
        if warm == first.warm_sm {
            return Some(0);
        }
        let walk = first.walks.get(warm as usize)?;
        let t = threshold?;
        (!walk.first.is_empty())
            .then(|| across(share_above(&walk.first, t)))
            .flatten()
            .map(u32::from)
    };
    let mut out = Vec::with_capacity(sms);
    for sm in 0..sms {
        let walks: Vec<Option<&Walk>> = sweeps
            .iter()
            .map(|s| s.walks.get(sm).filter(|w| !w.first.is_empty()))
            .collect();
        let slow_share: Vec<Option<f64>> = walks
            .iter()
            .map(|w| w.zip(threshold).map(|(w, t)| share_above(&w.first, t)))
            .collect();
        let reread_cycles = stats::median(
            &walks
                .iter()
                .flatten()
                .flat_map(|w| w.again.iter().copied())
                .collect::<Vec<f64>>(),
        );
        let (partition, own_cycles, other_cycles) = match threshold {
            None => {
                // One latency: every line is homed alike, so there is one partition.
                let all: Vec<f64> = walks
                    .iter()
                    .flatten()
                    .flat_map(|w| w.first.iter().copied())
                    .collect();
                let median = stats::median(&all);
                (median.map(|_| 0), median, None)
            }
            Some(t) => {
                let mut votes = Vec::new();
                let mut across_walk = None;
                for (k, share) in slow_share.iter().enumerate() {
                    let (Some(share), Some(warm)) = (share, warm_partition(sweeps[k].warm_sm))
                    else {
                        continue;
                    };
                    if let Some(is_across) = across(*share) {
                        votes.push(if is_across { 1 - warm.min(1) } else { warm });
                        if is_across && across_walk.is_none() {
                            across_walk = walks[k];
                        }
                    }
                }
                let partition = votes
                    .first()
                    .copied()
                    .filter(|p| votes.iter().all(|v| v == p));
                let (fast, slow): (Vec<f64>, Vec<f64>) = across_walk
                    .map(|w| w.first.iter().partition(|&&v| v <= t))
                    .unwrap_or_default();
                (partition, stats::median(&fast), stats::median(&slow))
            }
        };
        out.push(SmL2 {
            sm: sm as u32,
            partition,
            own_cycles,
            other_cycles,
            reread_cycles,
            slow_share,
        });
    }
    let mut map = L2Map {
        threshold_cycles: threshold,
        separated: threshold.is_some(),
        probed: out.iter().filter(|s| s.reread_cycles.is_some()).count(),
        placed: 0,
        sms: out,
        unresolved: None,
    };
    if map.partitions() < 2 {
        map.unresolved = one_partition_doubt(sweeps, threshold);
    }
    if map.unresolved.is_some() {
        // The fast and slow lines of an SM are not told apart, so neither is the latency of
        // the lines homed in its own partition.
        for s in &mut map.sms {
            (s.partition, s.own_cycles, s.other_cycles) = (None, None, None);
        }
    }
    map.placed = map.sms.iter().filter(|s| s.partition.is_some()).count();
    map
}

/// Why a reading of fewer than two partitions is not stated: the SMs' walks are of two kinds
/// by how widely their first touches spread (5-95 %, split as the first touches are, the wide
/// kind at least [`LEAST_WIDE_SHARE`] of the walks), as they are where lines are homed in two
/// partitions: an SM across from the warming SM meets two latencies (on the committed H100 and
/// H200 runs its walk spreads 214-241 cycles), an SM with it one (36-64, the L2's slices and
/// noise). Neither the SMs' distances from the L2 nor a few strays change a walk's width.
/// `None` where the walks are of one kind (one partition).
fn one_partition_doubt(sweeps: &[Sweep], threshold: Option<f64>) -> Option<String> {
    let widths: Vec<f64> = sweeps
        .iter()
        .flat_map(|s| s.walks.iter())
        .filter_map(|w| Spread::of(&w.first))
        .map(|s| s.p95 - s.p5)
        .collect();
    let split = two_latencies::split(&widths, LEAST_GAP_CYCLES, LEAST_WIDE_SHARE)
        .filter(|split| split.apart)?;
    let (narrow, wide) = (split.fast?, split.slow?);
    let pooled = match threshold {
        Some(t) => {
            format!("the split of every first touch (at {t:.0} cycles) puts every SM on one side")
        }
        None => "the first touches of every SM together hold no two latencies".to_string(),
    };
    Some(format!(
        "{} of {} SM walks spread {:.0} cycles (5-95 %, median over them) against {:.0} for the rest, as an SM across the L2 from the warming SM meets lines at two latencies, but {pooled}",
        wide.n,
        widths.len(),
        wide.median,
        narrow.median,
    ))
}

impl L2Map {
    /// The number of partitions the SMs fall in (0 where none was placed).
    pub fn partitions(&self) -> usize {
        let mut seen: Vec<u32> = self.sms.iter().filter_map(|s| s.partition).collect();
        seen.sort_unstable();
        seen.dedup();
        seen.len()
    }

    /// `value` of every SM, indexed by SM.
    pub fn per_sm(&self, value: impl Fn(&SmL2) -> Option<f64>) -> Vec<Option<f64>> {
        self.sms.iter().map(value).collect()
    }
}

/// One chase of one block of a cluster into one block of the same cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DsmChase {
    /// Which cluster of the launch, and the ranks and SMs of the chasing and chased blocks.
    pub cluster_index: u32,
    pub rank: u32,
    pub sm: u32,
    pub target_rank: u32,
    pub target_sm: u32,
    pub cycles_per_load: f64,
}

/// Per SM, the mean latency of its chases into other blocks (`remote`) or into its own block
/// through the cluster window (not remote); none where it ran no such chase.
pub fn dsm_per_sm(chases: &[DsmChase], sms: usize, remote: bool) -> Vec<Option<f64>> {
    (0..sms)
        .map(|sm| {
            let values: Vec<f64> = chases
                .iter()
                .filter(|c| c.sm as usize == sm && (c.rank != c.target_rank) == remote)
                .map(|c| c.cycles_per_load)
                .collect();
            (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
        })
        .collect()
}

/// The SMs whose value stands off the others': more than [`OUTLIER_MADS`] scaled MADs and
/// [`OUTLIER_SHARE`] of the median from the median. Returns (SM, value − median).
pub fn outliers(values: &[Option<f64>]) -> Vec<(u32, f64)> {
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    let Some(median) = stats::median(&present) else {
        return Vec::new();
    };
    let deviations: Vec<f64> = present.iter().map(|v| (v - median).abs()).collect();
    let mad = stats::median(&deviations).unwrap_or(0.0) * 1.4826;
    let limit = (OUTLIER_MADS * mad).max(OUTLIER_SHARE * median.abs());
    values
        .iter()
        .enumerate()
        .filter_map(|(sm, v)| {
            let v = (*v)?;
            ((v - median).abs() > limit).then_some((sm as u32, v - median))
        })
        .collect()
}

/// The median of the present values with their range.
pub fn spread(values: &[Option<f64>]) -> Option<(f64, f64, f64)> {
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    let median = stats::median(&present)?;
    let low = present.iter().copied().fold(f64::INFINITY, f64::min);
    let high = present.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((median, low, high))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines homed in 4 KiB blocks (32 lines) alternating between the partitions; SMs in
    /// partition `side(sm)`. A walk warmed from partition `warm` of an SM in `mine`: a line
    /// homed in `warm`'s partition other than `mine` is slow (`far`), the rest fast, plus
    /// `offset` cycles of the SM's own distance.
    fn walk(mine: u32, warm: u32, lines: usize, offset: f64) -> Walk {
        let home = |j: usize| ((j / 32) % 2) as u32;
        let first = (0..lines)
            .map(|j| {
                let slow = mine != warm && home(j) == warm;
                offset + if slow { 470.0 } else { 285.0 } + (j % 7) as f64
            })
            .collect();
        Walk {
            first,
            again: vec![offset + 287.0; lines],
        }
    }

    fn sweeps(sides: &[u32], offsets: &[f64]) -> Vec<Sweep> {
        let across = sides.iter().position(|&s| s != sides[0]).unwrap() as u32;
        [0u32, across]
            .iter()
            .map(|&warm| Sweep {
                warm_sm: warm,
                walks: sides
                    .iter()
                    .zip(offsets)
                    .map(|(&side, &offset)| walk(side, sides[warm as usize], 256, offset))
                    .collect(),
            })
            .collect()
    }

    #[test]
    fn two_partitions_are_read_with_each_sms_own_and_other_latency() {
        let sides = [0, 0, 1, 1, 0, 1, 1, 0];
        let offsets = [0.0, 2.0, 4.0, 0.0, 1.0, 3.0, 30.0, 0.0];
        let sweeps = sweeps(&sides, &offsets);
        assert_eq!(first_across(&sweeps[0]), Some(2));
        let map = read_l2(&sweeps);
        assert!(map.separated);
        assert_eq!(map.partitions(), 2);
        assert_eq!((map.probed, map.placed), (8, 8));
        for (sm, reading) in map.sms.iter().enumerate() {
            assert_eq!(reading.partition, Some(sides[sm]), "SM {sm}");
            let own = reading.own_cycles.unwrap();
            let other = reading.other_cycles.unwrap();
            assert!((own - 288.0 - offsets[sm]).abs() <= 3.0, "SM {sm}: {own}");
            assert!(
                (other - 473.0 - offsets[sm]).abs() <= 3.0,
                "SM {sm}: {other}"
            );
        }
        // SM 6 sits 30 cycles further from the L2 than the rest.
        let own = map.per_sm(|s| s.own_cycles);
        assert_eq!(
            outliers(&own).iter().map(|o| o.0).collect::<Vec<_>>(),
            vec![6]
        );
    }

    #[test]
    fn one_latency_is_one_partition_with_no_other_latency() {
        let walks: Vec<Walk> = (0..4).map(|_| walk(0, 0, 128, 0.0)).collect();
        let map = read_l2(&[Sweep { warm_sm: 0, walks }]);
        assert!(!map.separated);
        assert_eq!(map.partitions(), 1);
        assert!(map.sms.iter().all(|s| s.other_cycles.is_none()));
    }

    #[test]
    fn an_sm_the_sweeps_disagree_on_and_an_sm_without_a_block_are_left_unplaced() {
        let sides = [0, 0, 1, 1];
        let mut sweeps = sweeps(&sides, &[0.0; 4]);
        // SM 1 reads as across from SM 0 in the first sweep and with SM 2 in the second:
        // partition 1 by both, then made to disagree.
        sweeps[0].walks[1] = walk(1, 0, 256, 0.0);
        sweeps[1].walks[1] = walk(0, 1, 256, 0.0);
        sweeps[0].walks[3] = Walk::default();
        sweeps[1].walks[3] = Walk::default();
        let map = read_l2(&sweeps);
        assert_eq!(map.sms[1].partition, None);
        assert_eq!(map.sms[3].partition, None);
        assert!(map.sms[3].reread_cycles.is_none());
        assert_eq!((map.probed, map.placed), (3, 2));
    }

    /// Deterministic noise in [-1, 1).
    fn noise(state: &mut u64) -> f64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    /// The H100's 132 SMs as the failing run saw them: SM 0's side the cache suite read in
    /// the same run (64 SMs), the rest (68) across; each SM `offset` cycles from the L2 on a
    /// gradient of 0-45 cycles; first touches 285 (near) or 470 (across) cycles, ±12 of
    /// noise; the first line of a walk also misses the TLB.
    fn h100_like(warms: &[u32], offset_scale: f64, seed: u64) -> (Vec<u32>, Vec<Sweep>) {
        const SM0_SIDE: [u32; 64] = [
            0, 1, 6, 7, 12, 13, 14, 15, 16, 17, 22, 23, 28, 29, 30, 31, 32, 33, 38, 39, 44, 45, 46,
            47, 48, 49, 54, 55, 60, 61, 62, 63, 68, 69, 74, 75, 76, 77, 82, 83, 88, 89, 90, 91, 96,
            97, 102, 103, 104, 105, 110, 111, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125,
            126, 127,
        ];
        let sides: Vec<u32> = (0..132)
            .map(|s| u32::from(!SM0_SIDE.contains(&s)))
            .collect();
        let mut state = seed;
        let sweeps = warms
            .iter()
            .map(|&warm| Sweep {
                warm_sm: warm,
                walks: (0..132u32)
                    .map(|sm| {
                        let offset = offset_scale * f64::from((sm * 37) % 46);
                        let mine = sides[sm as usize];
                        let first = (0..512usize)
                            .map(|j| {
                                let home = ((j / 32) % 2) as u32;
                                let slow =
                                    mine != sides[warm as usize] && home == sides[warm as usize];
                                let tlb = if j == 0 { 250.0 } else { 0.0 };
                                offset
                                    + if slow { 470.0 } else { 285.0 }
                                    + tlb
                                    + 12.0 * noise(&mut state)
                            })
                            .collect();
                        Walk {
                            first,
                            again: vec![offset + 287.0; 512],
                        }
                    })
                    .collect(),
            })
            .collect();
        (sides, sweeps)
    }

    #[test]
    fn one_stray_first_touch_far_above_the_rest_leaves_the_two_partitions() {
        // The failing run: the first sweep, from SM 0, with one first touch of 5000 cycles.
        let (sides, mut sweeps) = h100_like(&[0], 1.0, 3);
        sweeps[0].walks[40].first[100] = 5000.0;
        // Each SM's median first touch spans 280-410 cycles, as in the failing run (the SMs
        // across, half their lines slow, lie between the two latencies).
        let medians: Vec<Option<f64>> = sweeps[0]
            .walks
            .iter()
            .map(|w| stats::median(&w.first))
            .collect();
        let (_, low, high) = spread(&medians).unwrap();
        assert!(low < 290.0 && high > 400.0, "{low} {high}");
        // The cause: two-means over every first touch takes the stray for the slow group,
        // which is then no second latency (one value), so no SM was across and the old
        // reading was one partition.
        let firsts: Vec<f64> = sweeps[0]
            .walks
            .iter()
            .flat_map(|w| w.first.iter().copied())
            .collect();
        let plain = two_latencies::split(&firsts, LEAST_GAP_CYCLES, LEAST_SLOW_SHARE).unwrap();
        assert!(!plain.apart && plain.threshold > 2000.0, "{plain:?}");
        // Now the stray is set aside: SM 2 is the first across, as in the cache suite.
        assert_eq!(first_across(&sweeps[0]), Some(2));
        // The first sweep alone already places every SM …
        let map = read_l2(&sweeps);
        assert_eq!(map.partitions(), 2);
        assert!(map.unresolved.is_none());
        for (sm, reading) in map.sms.iter().enumerate() {
            assert_eq!(reading.partition, Some(sides[sm]), "SM {sm}");
        }
        // … and both sweeps (the second warmed from SM 2) place them alike.
        let (_, mut both) = h100_like(&[0, 2], 1.0, 3);
        both[0].walks[40].first[100] = 5000.0;
        both[1].walks[7].first[3] = 9000.0;
        let map = read_l2(&both);
        assert_eq!((map.partitions(), map.placed, map.probed), (2, 132, 132));
        assert!(
            map.sms
                .iter()
                .all(|s| s.partition == Some(sides[s.sm as usize]))
        );
        let own = spread(&map.per_sm(|s| s.own_cycles)).unwrap();
        let other = spread(&map.per_sm(|s| s.other_cycles)).unwrap();
        assert!(
            (own.0 - 308.0).abs() < 10.0 && (other.0 - 493.0).abs() < 10.0,
            "{own:?} {other:?}"
        );
    }

    #[test]
    fn a_latency_every_sm_meets_alike_is_left_out() {
        // Every 30th load of every walk delayed to 3000 cycles (3 % of the first touches:
        // apart, and more than the strays two-means may ignore), in both sweeps.
        let (sides, mut sweeps) = h100_like(&[0, 2], 1.0, 5);
        for walk in sweeps.iter_mut().flat_map(|s| s.walks.iter_mut()) {
            walk.first.iter_mut().step_by(30).for_each(|v| *v = 3000.0);
        }
        let map = read_l2(&sweeps);
        assert_eq!(map.partitions(), 2, "{:?}", map.unresolved);
        assert!(map.threshold_cycles.unwrap() < 500.0);
        assert!(
            map.sms
                .iter()
                .all(|s| s.partition == Some(sides[s.sm as usize]))
        );
    }

    #[test]
    fn walks_of_two_widths_that_the_pooled_split_misses_leave_the_count_unresolved() {
        // The SMs lie 0-180 cycles apart from the L2 (a gradient four times the H100's), so
        // that the walk of every SM across holds two latencies 185 cycles apart but the first
        // touches of all SMs together fill the gap between them: no threshold stands apart.
        // The reading must not be one partition.
        let (_, sweeps) = h100_like(&[0], 4.0, 11);
        let firsts: Vec<f64> = sweeps[0]
            .walks
            .iter()
            .flat_map(|w| w.first.iter().copied())
            .collect();
        let plain = two_latencies::split(&firsts, LEAST_GAP_CYCLES, LEAST_SLOW_SHARE).unwrap();
        assert!(!plain.apart);
        assert_eq!(first_across(&sweeps[0]), None);
        let map = read_l2(&sweeps);
        assert!(!map.separated);
        assert_ne!(map.partitions(), 1);
        let why = map.unresolved.as_deref().unwrap();
        assert!(why.starts_with("68 of 132 SM walks spread"), "{why}");
        assert!(why.ends_with("hold no two latencies"), "{why}");
        assert_eq!((map.placed, map.probed), (0, 132));
        assert!(
            map.sms
                .iter()
                .all(|s| s.partition.is_none() && s.own_cycles.is_none())
        );
        assert!(map.sms.iter().all(|s| s.reread_cycles.is_some()));
        // Loads held up on the way (a sixth of every walk's first touches anywhere from 300
        // to 460 cycles) fill the gap on the H100's own gradient: two partitions, or not
        // stated, never one.
        let (sides, mut sweeps) = h100_like(&[0], 1.0, 17);
        let mut state = 23;
        for walk in &mut sweeps[0].walks {
            for v in walk.first.iter_mut().step_by(6) {
                *v = 380.0 + 80.0 * noise(&mut state);
            }
        }
        let map = read_l2(&sweeps);
        match map.unresolved {
            Some(_) => assert_eq!(map.partitions(), 0),
            None => {
                assert_eq!(map.partitions(), 2);
                let wrong = map
                    .sms
                    .iter()
                    .filter(|s| s.partition.is_some_and(|p| p != sides[s.sm as usize]));
                assert_eq!(wrong.count(), 0);
            }
        }
    }

    #[test]
    fn a_uniform_l2_with_a_gradient_over_the_sms_and_strays_is_one_partition() {
        // Every line near for every SM (each sweep warmed on the SMs' own side), the SMs on
        // the H100's gradient, a stray of 5000 cycles: one latency, one partition, stated.
        let (_, mut sweeps) = h100_like(&[0], 1.0, 13);
        for walk in &mut sweeps[0].walks {
            for v in &mut walk.first {
                if *v > 440.0 && *v < 600.0 {
                    *v -= 185.0;
                }
            }
        }
        sweeps[0].walks[9].first[17] = 5000.0;
        assert_eq!(first_across(&sweeps[0]), None);
        let map = read_l2(&sweeps);
        assert_eq!(map.partitions(), 1);
        assert_eq!(map.unresolved, None);
        assert_eq!(map.placed, 132);
        assert!(
            map.sms
                .iter()
                .all(|s| s.own_cycles.is_some() && s.other_cycles.is_none())
        );
    }

    #[test]
    fn dsm_latencies_split_into_remote_and_own_per_sm() {
        let chase = |rank, sm, target_rank, target_sm, cycles| DsmChase {
            cluster_index: 0,
            rank,
            sm,
            target_rank,
            target_sm,
            cycles_per_load: cycles,
        };
        let chases = [
            chase(0, 4, 1, 7, 200.0),
            chase(0, 4, 0, 4, 180.0),
            chase(1, 7, 0, 4, 210.0),
            chase(1, 7, 1, 7, 181.0),
        ];
        let remote = dsm_per_sm(&chases, 8, true);
        assert_eq!(remote[4], Some(200.0));
        assert_eq!(remote[7], Some(210.0));
        assert_eq!(remote[0], None);
        assert_eq!(dsm_per_sm(&chases, 8, false)[7], Some(181.0));
        assert_eq!(spread(&remote), Some((205.0, 200.0, 210.0)));
    }

    #[test]
    fn a_spread_of_a_few_cycles_has_no_outlier() {
        let values: Vec<Option<f64>> = (0..20).map(|i| Some(280.0 + (i % 5) as f64)).collect();
        assert!(outliers(&values).is_empty());
    }
}

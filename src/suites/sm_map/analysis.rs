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

use serde::{Deserialize, Serialize};

use crate::analysis::stats;
use crate::analysis::two_latencies;

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
}

fn share_above(values: &[f64], threshold: f64) -> f64 {
    values.iter().filter(|&&v| v > threshold).count() as f64 / values.len().max(1) as f64
}

fn all_first(sweeps: &[Sweep]) -> Vec<f64> {
    sweeps
        .iter()
        .flat_map(|s| s.walks.iter().flat_map(|w| w.first.iter().copied()))
        .collect()
}

/// The threshold between fast and slow first touches, where they stand apart.
fn two_groups(firsts: &[f64]) -> Option<f64> {
    two_latencies::split(firsts, LEAST_GAP_CYCLES, LEAST_SLOW_SHARE)
        .filter(|split| split.apart)
        .map(|split| split.threshold)
}

/// The lowest SM that `sweep` puts across from its warming SM: the second sweep's warming SM.
pub fn first_across(sweep: &Sweep) -> Option<u32> {
    let threshold = two_groups(&all_first(std::slice::from_ref(sweep)))?;
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
    let firsts = all_first(sweeps);
    let threshold = two_groups(&firsts);
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
                    let (Some(share), Some(warm)) =
                        (share, warm_partition(sweeps[k].warm_sm))
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
                (
                    partition,
                    stats::median(&fast),
                    stats::median(&slow),
                )
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
    let probed = out.iter().filter(|s| s.reread_cycles.is_some()).count();
    let placed = out.iter().filter(|s| s.partition.is_some()).count();
    L2Map {
        threshold_cycles: threshold,
        separated: threshold.is_some(),
        probed,
        placed,
        sms: out,
    }
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
            assert!((other - 473.0 - offsets[sm]).abs() <= 3.0, "SM {sm}: {other}");
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

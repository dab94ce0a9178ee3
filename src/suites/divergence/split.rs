//! Where the divergence cost goes (Białas & Strzelecki, section IV-A, Listing 5): the single
//! loop with a timestamp after every iteration and a barrier before the final stamp. For the
//! lane that runs longest, the time from the loop's start to its last in-loop stamp holds the
//! divergent branches (pushes); the time from there to the stamp after the barrier holds the
//! reconvergence (pops and the carrier instruction). The slope of each against M, fitted like
//! the single loop's, divides the cost per divergent lane between the two.

use serde::{Deserialize, Serialize};

use crate::analysis::linear_fit::{self, Interval};
use crate::analysis::stats::{self, Summary};

pub const WARP_LANES: usize = 32;

/// One level's stamps: `samples × 32 × stride`, row-major, as `divergence_split` writes them.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitLevel {
    pub m: u32,
    pub bounds: [i32; WARP_LANES],
    pub stamps: Vec<i64>,
    pub stride: usize,
}

impl SplitLevel {
    fn samples(&self) -> usize {
        self.stamps.len() / (WARP_LANES * self.stride)
    }

    fn row(&self, sample: usize, lane: usize) -> &[i64] {
        let start = (sample * WARP_LANES + lane) * self.stride;
        &self.stamps[start..start + self.stride]
    }

    /// The first lane with the largest bound: it is active from start to end.
    fn longest_lane(&self) -> usize {
        let longest = self.bounds.iter().copied().max().unwrap_or(0);
        self.bounds.iter().position(|&b| b == longest).unwrap_or(0)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SplitSummary {
    pub m: u32,
    pub lane: usize,
    /// Loop start to the longest lane's last in-loop stamp (divergent branches happen here).
    pub branch_cycles: Summary,
    /// Last in-loop stamp to the stamp after the barrier (reconvergence happens here).
    pub reconvergence_cycles: Summary,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SplitReport {
    pub levels: Vec<SplitSummary>,
    /// OLS slopes of the per-M medians on M, with 95 % intervals.
    pub branch_cycles_per_divergent_lane: Option<Interval>,
    pub reconvergence_cycles_per_divergent_lane: Option<Interval>,
}

pub fn summarize(levels: &[SplitLevel]) -> SplitReport {
    let summaries: Vec<SplitSummary> = levels
        .iter()
        .filter_map(|level| {
            let lane = level.longest_lane();
            let last = usize::try_from(level.bounds[lane]).ok()?;
            if last + 2 > level.stride {
                return None;
            }
            let (branch, reconvergence): (Vec<f64>, Vec<f64>) = (0..level.samples())
                .map(|sample| {
                    let row = level.row(sample, lane);
                    (
                        (row[last] - row[0]) as f64,
                        (row[level.stride - 1] - row[last]) as f64,
                    )
                })
                .unzip();
            Some(SplitSummary {
                m: level.m,
                lane,
                branch_cycles: Summary::of(&branch)?,
                reconvergence_cycles: Summary::of(&reconvergence)?,
            })
        })
        .collect();
    let x: Vec<f64> = summaries.iter().map(|s| f64::from(s.m)).collect();
    let slope = |values: Vec<f64>| linear_fit::fit(&x, &values).map(|fit| fit.slope);
    SplitReport {
        branch_cycles_per_divergent_lane: slope(
            summaries.iter().map(|s| s.branch_cycles.median).collect(),
        ),
        reconvergence_cycles_per_divergent_lane: slope(
            summaries
                .iter()
                .map(|s| s.reconvergence_cycles.median)
                .collect(),
        ),
        levels: summaries,
    }
}

/// One lane's stamp in a timeline, in cycles since the warp's first start stamp (the median
/// over samples).
/// A row of `timeline.csv`, which the redraw reads back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    pub m: u32,
    pub lane: usize,
    pub kind: StampKind,
    /// The iteration just finished (for "iteration"), else empty.
    pub iteration: Option<usize>,
    pub cycles: f64,
}

/// Which stamp a [`TimelinePoint`] is: "start", "iteration" or "after_barrier" in the CSV.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StampKind {
    Start,
    Iteration,
    AfterBarrier,
}

pub fn timeline(level: &SplitLevel) -> Vec<TimelinePoint> {
    let samples = level.samples();
    let mut points = Vec::new();
    for lane in 0..WARP_LANES {
        let bound = usize::try_from(level.bounds[lane])
            .unwrap_or(0)
            .min(level.stride - 2);
        let mut stamp_indices = vec![(0, StampKind::Start, None)];
        stamp_indices.extend((1..=bound).map(|i| (i, StampKind::Iteration, Some(i - 1))));
        stamp_indices.push((level.stride - 1, StampKind::AfterBarrier, None));
        for (index, kind, iteration) in stamp_indices {
            let relative: Vec<f64> = (0..samples)
                .map(|sample| {
                    let origin = (0..WARP_LANES)
                        .map(|l| level.row(sample, l)[0])
                        .min()
                        .unwrap_or(0);
                    (level.row(sample, lane)[index] - origin) as f64
                })
                .collect();
            if let Some(cycles) = stats::median(&relative) {
                points.push(TimelinePoint {
                    m: level.m,
                    lane,
                    kind,
                    iteration,
                    cycles,
                });
            }
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::divergence_patterns::Pattern;

    /// A model warp: every iteration 10 cycles; each lane that leaves adds `push` cycles to
    /// the loop of the lanes still running, and `pop` cycles to the reconvergence.
    fn modelled(m: u32, push: i64, pop: i64, samples: usize) -> SplitLevel {
        let bounds = Pattern::Staircase.rows(32, 0)[m as usize].bounds;
        let stride = 34;
        let mut stamps = vec![0_i64; samples * WARP_LANES * stride];
        for sample in 0..samples {
            for lane in 0..WARP_LANES {
                let row = &mut stamps[(sample * WARP_LANES + lane) * stride..][..stride];
                row[0] = 1000;
                let mut t = 1000;
                for i in 0..bounds[lane] as usize {
                    // Lanes that have already left by iteration i each cost one push.
                    let left = bounds.iter().filter(|&&b| (b as usize) == i).count() as i64;
                    t += 10 + push * left;
                    row[1 + i] = t;
                }
                row[stride - 1] = 1000 + 32 * 10 + push * i64::from(m) + 50 + pop * i64::from(m);
            }
        }
        SplitLevel {
            m,
            bounds,
            stamps,
            stride,
        }
    }

    #[test]
    fn the_cost_divides_between_branch_and_reconvergence() {
        let levels: Vec<SplitLevel> = (0..32).map(|m| modelled(m, 4, 9, 3)).collect();
        let report = summarize(&levels);
        assert_eq!(report.levels.len(), 32);
        assert_eq!(report.levels[5].lane, 0);
        let branch = report.branch_cycles_per_divergent_lane.unwrap().estimate;
        let reconvergence = report
            .reconvergence_cycles_per_divergent_lane
            .unwrap()
            .estimate;
        assert!((branch - 4.0).abs() < 1e-9, "{branch}");
        assert!((reconvergence - 9.0).abs() < 1e-9, "{reconvergence}");
    }

    #[test]
    fn timelines_start_at_zero_and_end_after_the_barrier() {
        let level = modelled(3, 4, 9, 2);
        let points = timeline(&level);
        let lane31: Vec<&TimelinePoint> = points.iter().filter(|p| p.lane == 31).collect();
        assert_eq!(lane31[0].kind, StampKind::Start);
        assert_eq!(lane31[0].cycles, 0.0);
        assert_eq!(lane31.iter().filter(|p| p.kind == StampKind::Iteration).count(), 29);
        assert_eq!(lane31.last().unwrap().kind, StampKind::AfterBarrier);
        assert_eq!(lane31.last().unwrap().cycles, (320 + 12 + 50 + 27) as f64);
    }
}

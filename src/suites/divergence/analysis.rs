//! Divergence-loop statistics: from per-lane clock64 samples to per-M summaries and the
//! least-squares cost of each divergent lane (Białas & Strzelecki, section IV: slope of
//! cycles against M).

use serde::Serialize;

use crate::analysis::linear_fit::{self, LinearFit};
use crate::analysis::stats::Summary;

pub const WARP_LANES: usize = 32;

/// The warp's loop time in each sample: the largest lane's cycles minus the timer overhead.
/// All lanes read the clock at the same instruction before and after the reconverged loop,
/// so lanes agree to a few cycles; the maximum is the time the warp was busy.
pub fn warp_cycles(lane_cycles: &[i64], timer_overhead_cycles: f64) -> Vec<f64> {
    lane_cycles
        .chunks(WARP_LANES)
        .map(|lanes| *lanes.iter().max().unwrap_or(&0) as f64 - timer_overhead_cycles)
        .collect()
}

/// The median of the in-kernel back-to-back clock64 differences, rounded to whole cycles
/// (the counter ticks in whole cycles); 0 when there are none.
pub fn median_overhead(differences: &[i64]) -> i64 {
    let values: Vec<f64> = differences.iter().map(|&d| d as f64).collect();
    crate::analysis::stats::median(&values).map_or(0, |m| m.round() as i64)
}

/// One divergence level of one kernel: the per-sample warp cycles.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelSamples {
    pub kernel: String,
    pub m: u32,
    pub warp_cycles: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelSummary {
    pub kernel: String,
    pub m: u32,
    #[serde(flatten)]
    pub cycles: Summary,
}

pub fn summarize(levels: &[LevelSamples]) -> Vec<LevelSummary> {
    levels
        .iter()
        .filter_map(|level| {
            Summary::of(&level.warp_cycles).map(|cycles| LevelSummary {
                kernel: level.kernel.clone(),
                m: level.m,
                cycles,
            })
        })
        .collect()
}

/// The first fit of the foundation: OLS slope of the per-M median cycles against M.
/// Medians, not every sample, so that 256 identical preheated samples do not pose as 256
/// independent observations; the interval then reflects how far the medians leave a line.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct CostFit {
    pub kernel: String,
    pub estimator: String,
    pub m_min: u32,
    pub m_max: u32,
    pub cycles_per_divergent_lane: linear_fit::Interval,
    pub intercept_cycles: linear_fit::Interval,
    pub r_squared: f64,
    pub residual_stdev_cycles: f64,
    pub points: usize,
}

pub fn fit_cost(summaries: &[LevelSummary], kernel: &str) -> Option<CostFit> {
    let points: Vec<&LevelSummary> = summaries.iter().filter(|s| s.kernel == kernel).collect();
    let x: Vec<f64> = points.iter().map(|s| f64::from(s.m)).collect();
    let y: Vec<f64> = points.iter().map(|s| s.cycles.median).collect();
    let LinearFit {
        n,
        slope,
        intercept,
        r_squared,
        residual_stdev,
    } = linear_fit::fit(&x, &y)?;
    Some(CostFit {
        kernel: kernel.to_string(),
        estimator: "OLS of per-M median warp cycles on M, 95% Student-t interval".into(),
        m_min: points.iter().map(|s| s.m).min()?,
        m_max: points.iter().map(|s| s.m).max()?,
        cycles_per_divergent_lane: slope,
        intercept_cycles: intercept,
        r_squared,
        residual_stdev_cycles: residual_stdev,
        points: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warp_cycles_take_the_slowest_lane_less_overhead() {
        let mut lanes = vec![100_i64; 64];
        lanes[5] = 104;
        lanes[40] = 90;
        assert_eq!(warp_cycles(&lanes, 2.0), vec![102.0, 98.0]);
    }

    #[test]
    fn cost_is_the_slope_of_the_medians() {
        let levels: Vec<LevelSamples> = (0..32)
            .map(|m| LevelSamples {
                kernel: "single".into(),
                m,
                // An outlier sample per level must not move the median-based fit.
                warp_cycles: vec![
                    400.0 + 26.0 * f64::from(m),
                    400.0 + 26.0 * f64::from(m),
                    9_999.0,
                ],
            })
            .collect();
        let summaries = summarize(&levels);
        let fit = fit_cost(&summaries, "single").unwrap();
        assert!((fit.cycles_per_divergent_lane.estimate - 26.0).abs() < 1e-9);
        assert_eq!((fit.m_min, fit.m_max, fit.points), (0, 31, 32));
        assert!(fit_cost(&summaries, "double").is_none());
    }
}

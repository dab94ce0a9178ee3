//! The TLB stride experiment's one step: at a page-scale stride every element sits on its own
//! page, and the chase's latency steps up once the elements outnumber what a translation
//! structure holds. The step is found by a piecewise-constant least-squares fit with one break
//! over the element counts (every break between two measured counts tried); its height comes
//! with a Welch 95 % interval, and where that interval reaches zero there is no step; the
//! figure states the spread of the points past the step, which is what a second sweep varies by.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::analysis::stats::Summary;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StrideStep {
    /// The last element count of the lower level and the first of the upper one.
    pub elements_before: f64,
    pub elements_after: f64,
    pub near_cycles: f64,
    pub far_cycles: f64,
    pub step_cycles: f64,
    /// The step's Welch 95 % interval within this sweep (whether there is a step at all).
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// The points past the step less the lower level's mean, lowest and highest: the spread a
    /// second sweep's step lands in (the interval above assumes independent points, and the
    /// page-walk caches' state makes points of one sweep move together).
    pub spread_low: f64,
    pub spread_high: f64,
}

/// The step of `points` (elements, cycles per load); `None` below four points, with fewer than
/// two points on either side of every break, or where the step's interval reaches zero.
pub fn stride_step(points: &[(f64, f64)]) -> Option<StrideStep> {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    if sorted.len() < 4 {
        return None;
    }
    let cycles: Vec<f64> = sorted.iter().map(|p| p.1).collect();
    // The squared deviations from the mean: (n − 1) times the sample variance.
    let cost = |s: &[f64]| Summary::of(s).map_or(0.0, |x| (s.len() - 1) as f64 * x.stdev.powi(2));
    let split = (2..=sorted.len() - 2).min_by(|&a, &b| {
        (cost(&cycles[..a]) + cost(&cycles[a..]))
            .total_cmp(&(cost(&cycles[..b]) + cost(&cycles[b..])))
    })?;
    let (near, far) = cycles.split_at(split);
    let (low, high) = (Summary::of(near)?, Summary::of(far)?);
    let (m1, v1) = (low.mean, low.stdev.powi(2));
    let (m2, v2) = (high.mean, high.stdev.powi(2));
    let (n1, n2) = (near.len() as f64, far.len() as f64);
    let se2 = v1 / n1 + v2 / n2;
    let step = m2 - m1;
    let half = if se2 > 0.0 {
        // Welch–Satterthwaite degrees of freedom.
        let dof = se2 * se2
            / ((v1 / n1).powi(2) / (n1 - 1.0) + (v2 / n2).powi(2) / (n2 - 1.0))
                .max(f64::MIN_POSITIVE);
        StudentsT::new(0.0, 1.0, dof.max(1.0))
            .ok()?
            .inverse_cdf(0.975)
            * se2.sqrt()
    } else {
        0.0
    };
    (step - half > 0.0).then_some(StrideStep {
        elements_before: sorted[split - 1].0,
        elements_after: sorted[split].0,
        near_cycles: m1,
        far_cycles: m2,
        step_cycles: step,
        ci95_low: step - half,
        ci95_high: step + half,
        spread_low: high.min - m1,
        spread_high: high.max - m1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A simulated 16-entry structure: 275 cycles (with a deterministic wobble of `noise`)
    /// up to 16 elements, 10 more past it.
    fn chase(entries: usize, noise: f64) -> Vec<(f64, f64)> {
        let counts = [
            2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 15, 16, 17, 18, 19, 23, 27, 32, 45, 64, 128, 256,
        ];
        counts
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let wobble = [0.0, noise, -noise, noise / 2.0][i % 4];
                let base = if n <= entries { 275.0 } else { 285.0 };
                (n as f64, base + wobble)
            })
            .collect()
    }

    #[test]
    fn the_step_is_found_past_the_simulated_entries_with_its_height() {
        for noise in [0.0, 3.0] {
            let s = stride_step(&chase(16, noise)).unwrap();
            assert_eq!(
                (s.elements_before, s.elements_after),
                (16.0, 17.0),
                "noise {noise}"
            );
            assert!(s.ci95_low <= 10.0 && 10.0 <= s.ci95_high, "{s:?}");
            assert!(s.spread_low <= s.ci95_low && s.ci95_high <= s.spread_high + 1e-9);
        }
        let eight = stride_step(&chase(8, 2.0)).unwrap();
        assert_eq!((eight.elements_before, eight.elements_after), (8.0, 10.0));
    }

    #[test]
    fn a_flat_chase_has_no_step() {
        let flat: Vec<(f64, f64)> = chase(10_000, 3.0);
        assert!(stride_step(&flat).is_none());
        assert!(stride_step(&flat[..3]).is_none());
    }
}

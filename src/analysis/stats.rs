//! Order statistics and moments of one group of samples.

use serde::Serialize;

/// n, min, median, mean, max and sample standard deviation (n − 1 in the denominator;
/// 0 for a single sample).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub mean: f64,
    pub max: f64,
    pub stdev: f64,
}

impl Summary {
    /// `None` for an empty slice or one holding NaN: neither has a meaningful summary.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() || values.iter().any(|v| v.is_nan()) {
            return None;
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let stdev = if n > 1 {
            let squares: f64 = sorted.iter().map(|v| (v - mean).powi(2)).sum();
            (squares / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Some(Summary {
            n,
            min: sorted[0],
            median: median_of_sorted(&sorted),
            mean,
            max: sorted[n - 1],
            stdev,
        })
    }
}

/// The median of values already sorted (the mean of the middle two for an even count).
pub fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Each block's span in cycles (`stamps` holds a start and an end per block), leaving out a
/// block whose end is not after its start.
pub fn block_spans(stamps: &[i64]) -> Vec<f64> {
    stamps
        .chunks_exact(2)
        .filter(|pair| pair[1] > pair[0])
        .map(|pair| (pair[1] - pair[0]) as f64)
        .collect()
}

/// `work_per_block` per clock of each block's span; `None` when any block has no span (a
/// broken stamp spoils the measurement rather than vanishing from it).
pub fn per_clock_of_blocks(stamps: &[i64], work_per_block: f64) -> Option<Vec<f64>> {
    let rates: Vec<f64> = block_spans(stamps)
        .into_iter()
        .map(|span| work_per_block / span)
        .collect();
    (!rates.is_empty() && rates.len() * 2 == stamps.len()).then_some(rates)
}

/// Median of any slice; `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    Summary::of(values).map(|summary| summary.median)
}

/// Weighted median of `(value, weight)` pairs: the smallest value at which the weights of the
/// values up to it reach half the total (the mean of two values where one ends exactly at
/// half). `None` when empty or when no weight is positive and finite.
pub fn weighted_median(pairs: &[(f64, f64)]) -> Option<f64> {
    let mut sorted: Vec<(f64, f64)> = pairs
        .iter()
        .copied()
        .filter(|&(v, w)| v.is_finite() && w.is_finite() && w >= 0.0)
        .collect();
    let total: f64 = sorted.iter().map(|&(_, w)| w).sum();
    if total <= 0.0 {
        return None;
    }
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut below = 0.0;
    for (k, &(value, weight)) in sorted.iter().enumerate() {
        below += weight;
        if below > total / 2.0 {
            return Some(value);
        }
        if below == total / 2.0 {
            // Exactly half below: between this value and the next that carries weight.
            let next = sorted[k + 1..].iter().find(|&&(_, w)| w > 0.0);
            return Some(next.map_or(value, |&(n, _)| (value + n) / 2.0));
        }
    }
    sorted.last().map(|&(v, _)| v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_weighted_median_follows_the_weight_not_the_count() {
        // Ten light values at 1 and one heavy value at 5: the weight decides.
        let mut pairs: Vec<(f64, f64)> = (0..10).map(|_| (1.0, 0.1)).collect();
        pairs.push((5.0, 2.0));
        assert_eq!(weighted_median(&pairs), Some(5.0));
        // Equal weights: the plain median.
        let equal = [(4.0, 1.0), (1.0, 1.0), (3.0, 1.0), (2.0, 1.0)];
        assert_eq!(weighted_median(&equal), Some(2.5));
        assert_eq!(weighted_median(&equal[..3]), median(&[4.0, 1.0, 3.0]));
        assert_eq!(weighted_median(&[(1.0, 0.0)]), None);
        assert_eq!(weighted_median(&[]), None);
    }

    #[test]
    fn summarises_a_small_group() {
        let summary = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(summary.n, 4);
        assert_eq!((summary.min, summary.max), (1.0, 4.0));
        assert_eq!(summary.median, 2.5);
        assert_eq!(summary.mean, 2.5);
        assert!((summary.stdev - 1.290_994_448_7).abs() < 1e-9);
    }

    #[test]
    fn a_single_sample_has_no_spread() {
        let summary = Summary::of(&[7.0]).unwrap();
        assert_eq!((summary.median, summary.stdev), (7.0, 0.0));
    }

    #[test]
    fn empty_or_nan_has_no_summary() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }

    proptest! {
        #[test]
        fn order_statistics_are_ordered(values in prop::collection::vec(-1e6f64..1e6, 1..200)) {
            let s = Summary::of(&values).unwrap();
            prop_assert!(s.min <= s.median && s.median <= s.max);
            prop_assert!(s.min <= s.mean + 1e-6 && s.mean <= s.max + 1e-6);
            prop_assert!(s.stdev >= 0.0);
            let below = values.iter().filter(|v| **v < s.median).count();
            prop_assert!(below <= values.len() / 2);
        }
    }
}

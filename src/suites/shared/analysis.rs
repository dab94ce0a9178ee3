//! Shared-memory bank conflicts: how many wavefronts a warp's load needs, and the fitted cost
//! of each one beyond the unavoidable.
//!
//! Model: 32 banks of 4-byte words; in one wavefront a bank delivers one distinct word (lanes
//! asking for the same word share it). A warp's request needs as many wavefronts as the most
//! distinct words any one bank must deliver. 8- and 16-byte elements span 2 and 4 banks, so
//! even conflict-free they need 2 and 4 wavefronts.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::analysis::linear_fit::{self, Interval};

pub const BANKS: u32 = 32;
pub const WARP_LANES: u32 = 32;

/// Wavefronts for 32 lanes loading `element_bytes` at element index `lane * stride`.
pub fn wavefronts(element_bytes: u32, stride: u32) -> u32 {
    let words = (element_bytes / 4).max(1);
    let mut per_bank: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    for lane in 0..WARP_LANES {
        let first = lane * stride * words;
        for word in first..first + words {
            per_bank.entry(word % BANKS).or_default().insert(word);
        }
    }
    per_bank.values().map(|w| w.len() as u32).max().unwrap_or(1)
}

/// The fewest wavefronts an element size allows (stride 1).
pub fn minimum_wavefronts(element_bytes: u32) -> u32 {
    (element_bytes / 4).max(1)
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StridePoint {
    pub element_bytes: u32,
    pub stride: u32,
    pub cycles_per_load: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConflictFit {
    /// Cycles each wavefront beyond the element size's minimum adds to a dependent load.
    pub cycles_per_extra_way: Interval,
    /// Conflict-free dependent-load latency per element size (bytes → cycles).
    pub conflict_free_cycles: BTreeMap<u32, Interval>,
    pub residual_rms_cycles: f64,
    pub points: usize,
    pub model: String,
}

/// OLS of cycles on one intercept per element size plus (wavefronts − minimum).
pub fn fit(points: &[StridePoint]) -> Option<ConflictFit> {
    let sizes: Vec<u32> = points
        .iter()
        .map(|p| p.element_bytes)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut columns: Vec<Vec<f64>> = sizes
        .iter()
        .map(|&size| {
            points
                .iter()
                .map(|p| f64::from(u8::from(p.element_bytes == size)))
                .collect()
        })
        .collect();
    columns.push(
        points
            .iter()
            .map(|p| {
                f64::from(
                    wavefronts(p.element_bytes, p.stride) - minimum_wavefronts(p.element_bytes),
                )
            })
            .collect(),
    );
    let y: Vec<f64> = points.iter().map(|p| p.cycles_per_load).collect();
    let fit = linear_fit::fit_multiple(&columns, &y)?;
    Some(ConflictFit {
        cycles_per_extra_way: *fit.coefficients.last()?,
        conflict_free_cycles: sizes
            .iter()
            .copied()
            .zip(fit.coefficients.iter().copied())
            .collect(),
        residual_rms_cycles: (fit.residual_sum_of_squares / points.len() as f64).sqrt(),
        points: points.len(),
        model: "cycles = conflict-free latency (one per element size) + cost × (wavefronts − minimum wavefronts); OLS, 95% Student-t intervals".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wavefronts_follow_the_bank_arithmetic() {
        assert_eq!(wavefronts(4, 1), 1);
        assert_eq!(wavefronts(4, 2), 2);
        assert_eq!(wavefronts(4, 3), 1, "odd strides are conflict-free");
        assert_eq!(wavefronts(4, 8), 8);
        assert_eq!(wavefronts(4, 32), 32);
        assert_eq!(wavefronts(4, 33), 1);
        for stride in 1..=33 {
            assert_eq!(wavefronts(4, stride), gcd(stride, 32));
        }
        assert_eq!(wavefronts(8, 1), 2);
        assert_eq!(wavefronts(8, 16), 32);
        assert_eq!(wavefronts(16, 1), 4);
        assert_eq!(wavefronts(16, 8), 32);
    }

    fn gcd(a: u32, b: u32) -> u32 {
        if b == 0 { a } else { gcd(b, a % b) }
    }

    #[test]
    fn the_fit_recovers_a_simulated_bank_model() {
        let mut points = Vec::new();
        for (bytes, base) in [(4, 30.0), (8, 33.0), (16, 37.0)] {
            for stride in 1..=33 {
                let extra = f64::from(wavefronts(bytes, stride) - minimum_wavefronts(bytes));
                let wobble = if stride % 3 == 0 { 0.25 } else { -0.125 };
                points.push(StridePoint {
                    element_bytes: bytes,
                    stride,
                    cycles_per_load: base + 2.0 * extra + wobble,
                });
            }
        }
        let fit = fit(&points).unwrap();
        assert!(
            (fit.cycles_per_extra_way.estimate - 2.0).abs() < 0.05,
            "{fit:?}"
        );
        assert!((fit.conflict_free_cycles[&8].estimate - 33.0).abs() < 0.2);
        assert_eq!(fit.points, 99);
    }
}

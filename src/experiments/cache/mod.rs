//! Memory-hierarchy pointer chase (cuda/cache.cu), after Wong et al., "Inferring cache
//! characteristics from latency plots" (Fig. 4) and Listings 1–2: one thread follows a chain
//! of fixed stride through a footprint, one untimed pass warms the caches, a timed run of at
//! least one full pass gives the average cycles per load, and the final index is checked.
//!
//! Sweeps cost little: footprints double from the smallest up to the space's limit; between
//! two doublings whose latency differs, bisection finds where the lower plateau ends, and a
//! fine sweep (the stride as step, or wider for big caches, at most `fine_points` points)
//! covers the rise after it. `analysis::cache_inference` reads the levels from the result.
//!
//! Spaces so far: `global` (default loads), `l2` (`ld.global.cg`), `readonly`
//! (`ld.global.nc`) and `shared`. [`saved`] reads a curve back for `gpubench analyze cache`.

pub mod saved;

use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use crate::analysis::cache_inference::ChasePoint;
use crate::gpu::{Gpu, launch};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Global,
    L2,
    Readonly,
    Shared,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::L2 => "l2",
            Space::Readonly => "readonly",
            Space::Shared => "shared",
        }
    }

    pub fn entry(self) -> &'static str {
        match self {
            Space::Global => "chase_global",
            Space::L2 => "chase_l2",
            Space::Readonly => "chase_readonly",
            Space::Shared => "chase_shared",
        }
    }
}

/// A chain over `footprint_bytes` at `stride_bytes` (both multiples of 4): element i·k holds
/// (i + 1)·k mod n·k, k = stride / 4 words, n = footprint / stride elements; others are 0.
pub fn chain(footprint_bytes: u64, stride_bytes: u64) -> Vec<u32> {
    let words = (footprint_bytes / 4) as usize;
    let k = (stride_bytes / 4).max(1) as usize;
    let n = (words / k).max(1);
    let mut chain = vec![0_u32; words.max(1)];
    for i in 0..n {
        chain[i * k] = (((i + 1) % n) * k) as u32;
    }
    chain
}

/// The index a chase from 0 reaches after `loads` loads.
pub fn expected_index(footprint_bytes: u64, stride_bytes: u64, loads: u64) -> i64 {
    let k = (stride_bytes / 4).max(1);
    let n = (footprint_bytes / 4 / k).max(1);
    ((loads % n) * k) as i64
}

/// Cycles per load at one footprint: a full warm pass, then at least one full timed pass.
pub fn measure_point(
    gpu: &mut Gpu,
    space: Space,
    footprint_bytes: u64,
    stride_bytes: u64,
) -> Result<f64> {
    let chain = chain(footprint_bytes, stride_bytes);
    let n = (footprint_bytes / stride_bytes).max(1) as u32;
    let warm = n;
    let steps = n.max(2048).div_ceil(16) * 16;
    let deadline =
        Duration::from_secs(10) + Duration::from_secs_f64(f64::from(warm + steps) * 2000.0 / 1e9);
    let (cycles, index) = match space {
        Space::Shared => launch::chase_shared(gpu, &chain, warm, steps, deadline)?,
        _ => launch::chase(gpu, space.entry(), &chain, warm, steps, deadline)?,
    };
    let expected = expected_index(footprint_bytes, stride_bytes, u64::from(warm + steps));
    if index != expected {
        bail!(
            "the {} chase over {footprint_bytes} B ended at index {index}, not {expected}: the loads were not all made",
            space.name()
        );
    }
    Ok(cycles as f64 / f64::from(steps))
}

#[derive(Debug, Clone)]
pub struct SweepResult {
    pub points: Vec<ChasePoint>,
    pub launches: usize,
    pub seconds: f64,
}

/// Coarse doubling, bisection at each rise, fine sweep after it.
pub fn sweep(
    gpu: &mut Gpu,
    space: Space,
    stride: u64,
    smallest: u64,
    largest: u64,
    fine_points: u64,
) -> Result<SweepResult> {
    let started = Instant::now();
    let mut points: Vec<ChasePoint> = Vec::new();
    let measure = |gpu: &mut Gpu, footprint: u64, points: &mut Vec<ChasePoint>| -> Result<f64> {
        if let Some(p) = points.iter().find(|p| p.footprint_bytes == footprint) {
            return Ok(p.cycles);
        }
        let cycles = measure_point(gpu, space, footprint, stride)?;
        points.push(ChasePoint {
            footprint_bytes: footprint,
            stride_bytes: stride,
            cycles,
        });
        Ok(cycles)
    };
    let mut coarse = Vec::new();
    let mut footprint = smallest;
    while footprint <= largest {
        coarse.push((footprint, measure(gpu, footprint, &mut points)?));
        footprint *= 2;
    }
    let rises = |a: f64, b: f64| b > a * 1.05 + 2.0;
    for pair in coarse.windows(2) {
        let ((low_f, low_y), (high_f, high_y)) = (pair[0], pair[1]);
        if !rises(low_y, high_y) {
            continue;
        }
        // Bisection: the last footprint still on the lower plateau.
        let (mut good, mut bad) = (low_f / stride, high_f / stride);
        while bad - good > 1 {
            let middle = (good + bad) / 2;
            if rises(low_y, measure(gpu, middle * stride, &mut points)?) {
                bad = middle;
            } else {
                good = middle;
            }
        }
        let edge = good * stride;
        let span = (edge / 2).max(16 * stride);
        let step = (span / fine_points).div_ceil(stride).max(1) * stride;
        let mut f = edge.saturating_sub(4 * step).max(stride);
        while f <= (edge + span).min(high_f) {
            measure(gpu, f, &mut points)?;
            f += step;
        }
    }
    points.sort_by_key(|p| p.footprint_bytes);
    Ok(SweepResult {
        launches: points.len(),
        points,
        seconds: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_visit_every_element_once_per_pass() {
        let chain = chain(256, 32);
        assert_eq!(chain.len(), 64);
        let mut seen = vec![];
        let mut j = 0_usize;
        for _ in 0..8 {
            seen.push(j);
            j = chain[j] as usize;
        }
        assert_eq!(seen, vec![0, 8, 16, 24, 32, 40, 48, 56]);
        assert_eq!(j, 0, "back to the start after one pass");
        assert_eq!(expected_index(256, 32, 8), 0);
        assert_eq!(expected_index(256, 32, 11), 24);
        assert!(chain.iter().all(|&i| (i as usize) < chain.len()));
    }
}

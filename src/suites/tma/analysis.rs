//! What the TMA suite infers from latency against footprint: the capacity a random chase sees
//! before it starts to miss, the hit and miss latencies, and whether the TMA copy's curve turns
//! where the L2 load's does. The model is the one of a random chase over a cache of capacity C:
//! at footprint f a fraction min(1, C/f) of the steps hit, so latency = hit·h + miss·(1−h).
//! For each C (a fine logarithmic grid) hit and miss are a linear least-squares fit; C is the
//! grid point of least residual, and its 95 % interval the points whose residual stays under
//! the profile bound RSS_min·(1 + F(0.95; 1, n−3)/(n−3)).

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, FisherSnedecor};

/// The fitted cache of a latency-against-footprint curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    pub capacity_bytes: f64,
    pub capacity_low_bytes: f64,
    pub capacity_high_bytes: f64,
    pub hit_cycles: f64,
    pub miss_cycles: f64,
}

/// Least-squares hit and miss latencies for capacity `c`, and the residual sum of squares.
fn fit_at(points: &[(f64, f64)], c: f64) -> Option<(f64, f64, f64)> {
    // y = a·h + b·(1 − h): normal equations in (a, b).
    let (mut shh, mut shg, mut sgg, mut shy, mut sgy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(f, y) in points {
        let h = (c / f).min(1.0);
        let g = 1.0 - h;
        shh += h * h;
        shg += h * g;
        sgg += g * g;
        shy += h * y;
        sgy += g * y;
    }
    let det = shh * sgg - shg * shg;
    if det.abs() < 1e-12 {
        return None;
    }
    let a = (shy * sgg - sgy * shg) / det;
    let b = (sgy * shh - shy * shg) / det;
    let rss = points
        .iter()
        .map(|&(f, y)| {
            let h = (c / f).min(1.0);
            (y - a * h - b * (1.0 - h)).powi(2)
        })
        .sum();
    Some((a, b, rss))
}

/// The fit of `points` (footprint bytes, cycles); `None` below five points, or where no
/// capacity inside the measured range explains a rise (miss not above hit).
pub fn capacity(points: &[(f64, f64)]) -> Option<Capacity> {
    let n = points.len();
    if n < 5 {
        return None;
    }
    let low = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let high = points.iter().map(|p| p.0).fold(0.0, f64::max);
    // Capacities from the smallest footprint (everything beyond it misses) to the largest
    // (only the last point misses at all).
    const GRID: usize = 2000;
    let grid: Vec<(f64, (f64, f64, f64))> = (0..=GRID)
        .filter_map(|i| {
            let c = low * (high / low).powf(i as f64 / GRID as f64);
            fit_at(points, c).map(|fit| (c, fit))
        })
        .collect();
    let &(best, (hit, miss, rss)) = grid.iter().min_by(|a, b| a.1.2.total_cmp(&b.1.2))?;
    if miss <= hit || best >= high {
        return None;
    }
    let dof = (n - 3) as f64;
    let f = FisherSnedecor::new(1.0, dof).ok()?.inverse_cdf(0.95);
    let bound = rss * (1.0 + f / dof) + 1e-9 * hit.abs();
    let inside: Vec<f64> = grid
        .iter()
        .filter(|(_, fit)| fit.2 <= bound && fit.1 > fit.0)
        .map(|(c, _)| *c)
        .collect();
    Some(Capacity {
        capacity_bytes: best,
        capacity_low_bytes: inside.iter().copied().fold(best, f64::min),
        capacity_high_bytes: inside.iter().copied().fold(best, f64::max),
        hit_cycles: hit,
        miss_cycles: miss,
    })
}

/// Whether two fitted capacities agree: their intervals overlap.
pub fn same_capacity(a: &Capacity, b: &Capacity) -> bool {
    a.capacity_low_bytes <= b.capacity_high_bytes && b.capacity_low_bytes <= a.capacity_high_bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = 1048576.0;

    /// A simulated random chase over a cache of `l2` bytes: `hit` cycles, `miss` past it, and a
    /// deterministic wobble of `noise` cycles.
    fn curve(l2: f64, hit: f64, miss: f64, noise: f64) -> Vec<(f64, f64)> {
        [
            1.0, 4.0, 8.0, 16.0, 24.0, 32.0, 40.0, 48.0, 64.0, 96.0, 128.0, 256.0,
        ]
        .iter()
        .enumerate()
        .map(|(i, &m)| {
            let f = m * MIB;
            let h = (l2 / f).min(1.0);
            let wobble = if i % 2 == 0 { noise } else { -noise };
            (f, h * hit + (1.0 - h) * miss + wobble)
        })
        .collect()
    }

    #[test]
    fn the_fit_recovers_the_simulated_cache() {
        let c = capacity(&curve(50.0 * MIB, 300.0, 650.0, 0.0)).unwrap();
        assert!(
            (c.capacity_bytes / (50.0 * MIB) - 1.0).abs() < 0.01,
            "{c:?}"
        );
        assert!((c.hit_cycles - 300.0).abs() < 2.0 && (c.miss_cycles - 650.0).abs() < 2.0);
        // With noise the interval widens but still holds the truth.
        let noisy = capacity(&curve(50.0 * MIB, 300.0, 650.0, 4.0)).unwrap();
        assert!(noisy.capacity_low_bytes <= 50.0 * MIB && 50.0 * MIB <= noisy.capacity_high_bytes);
        assert!(noisy.capacity_high_bytes - noisy.capacity_low_bytes > 0.0);
        // A copy 80 cycles slower on every access sees the same cache; a smaller one does not.
        let tma = capacity(&curve(50.0 * MIB, 380.0, 730.0, 4.0)).unwrap();
        assert!(same_capacity(&noisy, &tma));
        let small = capacity(&curve(24.0 * MIB, 300.0, 650.0, 4.0)).unwrap();
        assert!(!same_capacity(&noisy, &small), "{noisy:?} {small:?}");
    }

    #[test]
    fn a_flat_or_short_curve_has_no_capacity() {
        let flat: Vec<(f64, f64)> = (1..8).map(|i| (f64::from(i) * MIB, 300.0)).collect();
        assert!(capacity(&flat).is_none());
        assert!(capacity(&flat[..4]).is_none());
    }
}

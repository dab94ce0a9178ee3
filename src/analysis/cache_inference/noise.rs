//! The noise a curve's reading measures its steps and plateaus against.

use super::{ChasePoint, plateaus};
use crate::analysis::stats;

/// The noise of a neighbour difference, two ways.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Noise {
    /// The robust spread of every difference (most neighbours differ by noise alone): what a
    /// step must stand out of, and the scale a model fits within.
    pub every: f64,
    /// The robust spread of the differences on the first plateau, where nothing but noise
    /// moves the curve, where that is smaller: what the plateaus' tolerance is made of.
    pub flat: f64,
}

impl Noise {
    /// A sweep that bisects its rises (every GPU sweep does) can hold more steps than flat
    /// differences, and their spread then counts the first misses as noise: on GPGPU-Sim's L2
    /// the rise made every difference's spread 3.3 cycles where the first plateau's spread
    /// under 0.2, and the plateau took in 12 KiB of misses. Only the first plateau is measured:
    /// the plateaus above it move with the partial lines their loads mix in, and take a wider
    /// tolerance from their height anyway. On a sweep whose differences are mostly flat the two
    /// agree.
    pub fn of(curve: &[ChasePoint]) -> Noise {
        let every = robust_spread(curve.windows(2).map(|w| w[1].cycles - w[0].cycles));
        let fastest = curve.iter().map(|p| p.cycles).fold(f64::INFINITY, f64::min);
        let first = plateaus(curve, |latency| plateau_tolerance(every, fastest, latency))
            .first()
            .map(|p| &curve[p.first..=p.last])
            .filter(|points| points.len() > MIN_FLAT_DIFFERENCES);
        // Too few flat differences to say more than every difference does.
        let flat = first.map_or(every, |points| {
            robust_spread(points.windows(2).map(|w| w[1].cycles - w[0].cycles)).min(every)
        });
        Noise { every, flat }
    }
}

/// Fewer differences on the first plateau than this leave its noise to every difference's.
const MIN_FLAT_DIFFERENCES: usize = 8;

/// 1.4826 × the median absolute deviation from the median: the standard deviation where the
/// values are Gaussian, whatever a minority of them does.
fn robust_spread(values: impl Iterator<Item = f64>) -> f64 {
    let values: Vec<f64> = values.collect();
    let center = stats::median(&values).unwrap_or(0.0);
    let deviations: Vec<f64> = values.iter().map(|d| (d - center).abs()).collect();
    1.4826 * stats::median(&deviations).unwrap_or(0.0)
}

/// How far a plateau at `latency` may wobble: no wider than the noise `sigma` demands (a step,
/// one set overflowing, can be under a cycle in a big cache), but higher plateaus wobble as
/// partial lines come and go (each costs the level's extra latency over the loads averaged),
/// and real ones drift as TLB misses set in, so the tolerance grows with the plateau's height
/// above the fastest level.
pub(super) fn plateau_tolerance(sigma: f64, fastest: f64, latency: f64) -> f64 {
    (5.0 * sigma).max(0.25).max(0.1 * (latency - fastest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::cache_inference::{MinimumRise, infer_with};

    const CAPACITY: u64 = 256 * 1024;

    fn at(footprint_bytes: u64, cycles: f64) -> ChasePoint {
        ChasePoint {
            footprint_bytes,
            stride_bytes: 128,
            cycles,
        }
    }

    /// A sweep shaped as the GPU and simulator sweeps are: coarse footprints on a plateau that
    /// wobbles by a tenth of a cycle, then the rise bisected into 24 points (each a few cycles
    /// above the last, unevenly), then a few on the level above.
    fn bisected_rise() -> Vec<ChasePoint> {
        let wobble = [
            0.0, 0.1, -0.04, 0.12, 0.02, 0.0, 0.15, -0.08, 0.05, 0.1, 0.0, 0.07,
        ];
        let mut curve: Vec<ChasePoint> = (0..12)
            .map(|k| {
                let footprint = (CAPACITY as f64 / 1.15f64.powi(11 - k)) as u64 / 128 * 128;
                at(footprint, 172.0 + wobble[k as usize])
            })
            .collect();
        for k in 1..=24u64 {
            let uneven = [0.0, 2.5, -1.5, 3.0][(k % 4) as usize];
            curve.push(at(CAPACITY + k * 5120, 172.0 + 4.5 * k as f64 + uneven));
        }
        for k in 1..=4u64 {
            curve.push(at(
                CAPACITY + 24 * 5120 + k * 65536,
                292.0 + wobble[k as usize],
            ));
        }
        curve
    }

    #[test]
    fn the_noise_is_the_flat_differences_spread_not_the_rises() {
        let noise = Noise::of(&bisected_rise());
        assert!(
            noise.every > 1.0,
            "every difference's spread {}",
            noise.every
        );
        assert!(
            noise.flat < 0.25,
            "the first plateau's spread {}",
            noise.flat
        );
    }

    #[test]
    fn the_first_plateau_ends_at_the_last_footprint_that_hits() {
        let report = infer_with(&bisected_rise(), MinimumRise::CACHES).unwrap();
        let capacity = report.levels[0].capacity.unwrap();
        assert_eq!(capacity.hits_up_to_bytes, CAPACITY, "{report:?}");
        assert_eq!(capacity.first_miss_seen_bytes, CAPACITY + 5120);
    }

    /// `flat` points wobbling by a tenth of a cycle, then a rise in uneven steps of 5 to 20
    /// cycles (each past any plateau's tolerance), then the level above.
    fn steep_rise_after(flat: u64) -> Vec<ChasePoint> {
        let mut curve: Vec<ChasePoint> = (0..flat)
            .map(|k| at(4096 * (k + 1), 100.0 + 0.1 * (k % 2) as f64))
            .collect();
        let mut latency = 100.0;
        for k in 0..16u64 {
            latency += [10.0, 20.0, 5.0, 15.0][(k % 4) as usize];
            curve.push(at(4096 * (flat + 1) + 512 * k, latency));
        }
        curve
    }

    #[test]
    fn a_first_plateau_of_few_points_leaves_the_noise_to_every_difference() {
        let long = Noise::of(&steep_rise_after(12));
        assert!(long.flat < 0.5 && long.every > 3.0, "{long:?}");
        // Three points, and the first steps its tolerance (from every difference) takes in:
        // too few differences to measure a spread on.
        let short = Noise::of(&steep_rise_after(3));
        assert_eq!(short.flat, short.every, "{short:?}");
    }

    #[test]
    fn on_a_mostly_flat_sweep_the_two_agree() {
        // Gaussian-like noise from a fixed generator (sum of four uniforms), σ 0.5 a point,
        // over 200 flat points and one step of 50 cycles half way.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut uniform = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let curve: Vec<ChasePoint> = (0..200u64)
            .map(|k| {
                let noise = (0..4).map(|_| uniform()).sum::<f64>() * 0.5 * 3f64.sqrt();
                let level = if k < 100 { 100.0 } else { 150.0 };
                at(4096 + 128 * k, level + noise)
            })
            .collect();
        let noise = Noise::of(&curve);
        assert!(noise.flat / noise.every > 0.85, "{noise:?}");
        // A point's noise of 0.5 makes a difference's √2 × 0.5.
        assert!((noise.flat - 0.5 * 2f64.sqrt()).abs() < 0.15, "{noise:?}");
        assert!((noise.every - 0.5 * 2f64.sqrt()).abs() < 0.15, "{noise:?}");
    }
}

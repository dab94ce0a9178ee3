//! Reading memory levels off a bandwidth-against-footprint curve: plateaus (runs of points
//! within a band of their running median) and, between two plateaus whose bandwidth drops,
//! the footprint where the curve crosses the geometric mean of the two (log-interpolated),
//! bracketed by the two measured points around it. Pure: no GPU, no I/O.

use serde::Serialize;

use crate::analysis::stats::{Summary, median};

/// One measured point: a footprint and the bandwidth reached there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    pub footprint_bytes: u64,
    pub bytes_per_second: f64,
}

/// A run of points at one bandwidth.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plateau {
    pub from_bytes: u64,
    pub to_bytes: u64,
    pub points: usize,
    /// Median bandwidth over the plateau's points, and their range.
    pub median_bytes_per_second: f64,
    pub min_bytes_per_second: f64,
    pub max_bytes_per_second: f64,
}

/// Where the bandwidth of one plateau falls to the next one's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Falloff {
    /// Footprint where the curve crosses the geometric mean of the two plateaus.
    pub bytes: u64,
    /// The measured footprints either side of the crossing.
    pub low_bytes: u64,
    pub high_bytes: u64,
    /// The descent: from the last footprint of the plateau before to the first of the one
    /// after. Where the fall is gradual the crossing moves within it from one process to the
    /// next (a device copy on an H100 crossed at 41.5 and at 61.7 MiB), so the descent, not
    /// the pair of points around the crossing, is what a repeat can confirm.
    pub descent_from_bytes: u64,
    pub descent_to_bytes: u64,
    /// The plateaus' bandwidths, before and after.
    pub before_bytes_per_second: f64,
    pub after_bytes_per_second: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Levels {
    pub plateaus: Vec<Plateau>,
    pub falloffs: Vec<Falloff>,
}

/// A point belongs to the run before it while it stays within this factor of the run's median.
pub const BAND: f64 = 1.2;
/// Fewer points than this are a transition, not a plateau.
pub const MIN_PLATEAU_POINTS: usize = 3;
/// A falloff is reported where the next plateau is below this fraction of the one before.
pub const FALL: f64 = 0.8;

fn rates(points: &[CurvePoint]) -> Vec<f64> {
    points.iter().map(|p| p.bytes_per_second).collect()
}

/// The plateaus that are levels: a plateau between a higher and a lower one that spans at
/// most one doubling of footprint is a pause in one descent, not a level (a device copy on an
/// H100 falls from the L2's rate to DRAM's over 30 to 80 MiB and pauses on the way at a
/// footprint that moved between 26 and 42 MiB from one process to the next; the half-way
/// point of the whole descent stayed between 41.6 and 52.4 MiB).
fn levels_of(plateaus: &[Plateau]) -> Vec<&Plateau> {
    let mut kept: Vec<&Plateau> = plateaus.iter().collect();
    while let Some(i) = (1..kept.len().saturating_sub(1)).find(|&i| {
        let (before, pause, after) = (kept[i - 1], kept[i], kept[i + 1]);
        pause.to_bytes <= 2 * pause.from_bytes
            && before.median_bytes_per_second > pause.median_bytes_per_second
            && pause.median_bytes_per_second > after.median_bytes_per_second
    }) {
        kept.remove(i);
    }
    kept
}

/// The points with a rate (finite, above zero), by footprint.
fn measured_in_order(points: &[CurvePoint]) -> Vec<CurvePoint> {
    let mut sorted: Vec<CurvePoint> = points
        .iter()
        .copied()
        .filter(|p| p.bytes_per_second.is_finite() && p.bytes_per_second > 0.0)
        .collect();
    sorted.sort_by_key(|p| p.footprint_bytes);
    sorted
}

/// Plateaus and falloffs of `points` (any order; sorted by footprint here).
pub fn levels(points: &[CurvePoint]) -> Levels {
    let sorted = measured_in_order(points);
    // Runs of points that stay within BAND of the run's running median.
    let mut runs: Vec<Vec<CurvePoint>> = Vec::new();
    for &point in &sorted {
        let joins = runs.last().is_some_and(|run| {
            let m = median(&rates(run)).unwrap_or(f64::NAN);
            point.bytes_per_second <= m * BAND && point.bytes_per_second >= m / BAND
        });
        match runs.last_mut() {
            Some(run) if joins => run.push(point),
            _ => runs.push(vec![point]),
        }
    }
    let plateaus: Vec<Plateau> = runs
        .iter()
        .filter(|run| run.len() >= MIN_PLATEAU_POINTS)
        .filter_map(|run| {
            let spread = Summary::of(&rates(run))?;
            Some(Plateau {
                from_bytes: run[0].footprint_bytes,
                to_bytes: run[run.len() - 1].footprint_bytes,
                points: run.len(),
                median_bytes_per_second: spread.median,
                min_bytes_per_second: spread.min,
                max_bytes_per_second: spread.max,
            })
        })
        .collect();
    let mut falloffs = Vec::new();
    for pair in levels_of(&plateaus).windows(2) {
        let (before, after) = (pair[0], pair[1]);
        if after.median_bytes_per_second >= before.median_bytes_per_second * FALL {
            continue;
        }
        let target = (before.median_bytes_per_second * after.median_bytes_per_second).sqrt();
        if let Some((bytes, low, high)) =
            crossing(&sorted, before.to_bytes, after.from_bytes, target)
        {
            falloffs.push(Falloff {
                bytes,
                low_bytes: low,
                high_bytes: high,
                descent_from_bytes: before.to_bytes,
                descent_to_bytes: after.from_bytes,
                before_bytes_per_second: before.median_bytes_per_second,
                after_bytes_per_second: after.median_bytes_per_second,
            });
        }
    }
    Levels { plateaus, falloffs }
}

/// Where `sorted` (by footprint) first falls below `target` between the footprints `from`
/// and `to`: the footprint log-interpolated between the last point at or above it and the
/// next, and those two points' footprints.
fn crossing(sorted: &[CurvePoint], from: u64, to: u64, target: f64) -> Option<(u64, u64, u64)> {
    let between: Vec<&CurvePoint> = sorted
        .iter()
        .filter(|p| p.footprint_bytes >= from && p.footprint_bytes <= to)
        .collect();
    let w = between
        .windows(2)
        .find(|w| w[0].bytes_per_second >= target && w[1].bytes_per_second < target)?;
    let (a, b) = (w[0], w[1]);
    let (la, lb) = (a.bytes_per_second.ln(), b.bytes_per_second.ln());
    let t = (la - target.ln()) / (la - lb);
    let (fa, fb) = (
        (a.footprint_bytes as f64).ln(),
        (b.footprint_bytes as f64).ln(),
    );
    let bytes = (fa + t * (fb - fa)).exp().round() as u64;
    Some((bytes, a.footprint_bytes, b.footprint_bytes))
}

/// How far a sweep's rate may move against the rate its fall-off crosses from one process to
/// the next: each moves up to 5 % (on one H100 over twelve processes the L2 write read
/// 3,870-4,001 GB/s, the device copy's L2 plateau 5,738-6,028 and the pause in its descent
/// 3,904-4,110), so the two up to 10 % apart.
pub const STEADY_SHIFT: f64 = 0.10;

/// A fall-off's footprint is read only where a [`STEADY_SHIFT`] of the rate either way moves
/// its crossing by less than this factor (under one step of a sweep of three points per
/// doubling, 1.26).
pub const STEADY_SPAN: f64 = 1.25;

/// Where the crossing of a fall-off (from the rate `before` to `after`, over the descent
/// `from`-`to`) lies when the rate it crosses moves [`STEADY_SHIFT`] either way, over the descent (its edges where a shifted target is not crossed within
/// it): `(from, to)` footprints. A steep fall keeps the two close; a gradual one spreads them
/// (a device copy on an H100 falls from 5,900 to 2,850 GB/s over 33 to 83 MiB and pauses
/// near the half-way rate on the way; its crossing moved from 43 to 67 MiB between processes).
pub fn crossing_spread(
    points: &[CurvePoint],
    (before, after): (f64, f64),
    (from, to): (u64, u64),
) -> (u64, u64) {
    let sorted = measured_in_order(points);
    let target = (before * after).sqrt();
    let at = |t: f64, edge: u64| crossing(&sorted, from, to, t).map_or(edge, |(b, _, _)| b);
    let early = at(target * (1.0 + STEADY_SHIFT), from);
    let late = at(target / (1.0 + STEADY_SHIFT), to);
    (early.min(late), early.max(late))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A curve of two or three levels with log-linear transitions over half a doubling at
    /// each capacity, 4 points per doubling, and multiplicative noise `noise(i)`.
    fn curve(
        levels: &[(f64, u64)],
        last: f64,
        from: u64,
        to: u64,
        noise: impl Fn(usize) -> f64,
    ) -> Vec<CurvePoint> {
        let mut points = Vec::new();
        let mut f = from as f64;
        let mut i = 0;
        while f <= to as f64 {
            let mut bw = last;
            for (k, &(level, capacity)) in levels.iter().enumerate().rev() {
                let next = if k + 1 < levels.len() {
                    levels[k + 1].0
                } else {
                    last
                };
                let c = capacity as f64;
                if f <= c {
                    bw = level;
                } else if f < c * 2f64.sqrt() {
                    let t = (f / c).ln() / 2f64.sqrt().ln();
                    bw = (level.ln() + t * (next.ln() - level.ln())).exp();
                }
            }
            points.push(CurvePoint {
                footprint_bytes: f as u64,
                bytes_per_second: bw * noise(i),
            });
            f *= 2f64.powf(0.25);
            i += 1;
        }
        points
    }

    #[test]
    fn two_levels_give_two_plateaus_and_the_falloff_between_them() {
        let points = curve(&[(7e12, 30 << 20)], 3e12, 1 << 20, 1 << 30, |_| 1.0);
        let found = levels(&points);
        assert_eq!(found.plateaus.len(), 2, "{found:?}");
        assert!((found.plateaus[0].median_bytes_per_second - 7e12).abs() < 1e9);
        assert!((found.plateaus[1].median_bytes_per_second - 3e12).abs() < 1e9);
        assert_eq!(found.falloffs.len(), 1);
        let f = &found.falloffs[0];
        assert!(f.low_bytes < f.bytes && f.bytes <= f.high_bytes, "{f:?}");
        // The crossing lies inside the transition, between the capacity and √2 × it.
        assert!(
            f.bytes >= 30 << 20 && f.bytes as f64 <= (30u64 << 20) as f64 * 1.42,
            "{f:?}"
        );
    }

    #[test]
    fn a_flat_curve_has_one_plateau_and_no_falloff() {
        let points = curve(&[], 5e12, 1 << 20, 1 << 28, |i| {
            1.0 + 0.03 * ((i % 3) as f64 - 1.0)
        });
        let found = levels(&points);
        assert_eq!(found.plateaus.len(), 1);
        assert!(found.falloffs.is_empty());
        assert!(found.plateaus[0].min_bytes_per_second < found.plateaus[0].max_bytes_per_second);
    }

    /// Device copies on one H100 in two processes (gpubench bandwidth, 2026-11-24): the pause
    /// on the way down moved (34.6 MiB read 5.47 TB/s in one, 4.35 in the other); the descent
    /// from the L2's rate to DRAM's is one fall-off, at the same place in both.
    #[test]
    fn a_pause_in_one_descent_is_no_level_of_its_own() {
        let measured: [&[(u64, f64)]; 2] = [
            &[
                (1081344, 3.344e+12),
                (1359872, 4.104e+12),
                (1703936, 4.934e+12),
                (2162688, 5.756e+12),
                (2719744, 4.730e+12),
                (3424256, 5.206e+12),
                (4325376, 6.240e+12),
                (5439488, 5.913e+12),
                (6864896, 5.642e+12),
                (8650752, 6.422e+12),
                (10895360, 6.222e+12),
                (13729792, 6.400e+12),
                (17301504, 6.371e+12),
                (21790720, 5.819e+12),
                (27459584, 5.492e+12),
                (34603008, 5.473e+12),
                (43581440, 4.538e+12),
                (54919168, 4.083e+12),
                (69206016, 4.036e+12),
                (87179264, 3.244e+12),
                (109854720, 3.146e+12),
                (138412032, 3.039e+12),
                (174374912, 2.946e+12),
                (219709440, 2.871e+12),
                (276824064, 2.841e+12),
                (348766208, 2.811e+12),
                (439418880, 2.812e+12),
                (553648128, 2.799e+12),
                (697548800, 2.790e+12),
                (878854144, 2.791e+12),
            ],
            &[
                (1081344, 3.345e+12),
                (1359872, 4.133e+12),
                (1703936, 4.987e+12),
                (2162688, 5.778e+12),
                (2719744, 4.594e+12),
                (3424256, 5.268e+12),
                (4325376, 5.874e+12),
                (5439488, 5.908e+12),
                (6864896, 5.855e+12),
                (8650752, 6.462e+12),
                (10895360, 6.354e+12),
                (13729792, 6.664e+12),
                (17301504, 6.349e+12),
                (21790720, 5.816e+12),
                (27459584, 5.231e+12),
                (34603008, 4.352e+12),
                (43581440, 4.267e+12),
                (54919168, 3.993e+12),
                (69206016, 3.186e+12),
                (87179264, 2.933e+12),
                (109854720, 2.787e+12),
                (138412032, 2.799e+12),
                (174374912, 2.775e+12),
                (219709440, 2.765e+12),
                (276824064, 2.793e+12),
                (348766208, 2.781e+12),
                (439418880, 2.787e+12),
                (553648128, 2.783e+12),
                (697548800, 2.787e+12),
                (878854144, 2.790e+12),
            ],
        ];
        let mut found = Vec::new();
        for curve in measured {
            let points: Vec<CurvePoint> = curve
                .iter()
                .map(|&(footprint_bytes, bytes_per_second)| CurvePoint {
                    footprint_bytes,
                    bytes_per_second,
                })
                .collect();
            let levels = levels(&points);
            assert_eq!(levels.falloffs.len(), 1, "{levels:?}");
            found.push(levels.falloffs[0].clone());
        }
        assert_eq!(
            (found[0].low_bytes, found[0].high_bytes),
            (found[1].low_bytes, found[1].high_bytes)
        );
        let moved = found[0].bytes.abs_diff(found[1].bytes) as f64 / found[0].bytes as f64;
        assert!(moved < 0.1, "{found:?}");
    }

    /// Footprints in MiB and GB/s: one process's device read and copy sweeps on an H100 (128
    /// threads x 16 blocks per SM; scripts/repeat-readings.sh), from 4 to 264 MiB.
    fn measured(points: &[(f64, f64)]) -> Vec<CurvePoint> {
        points
            .iter()
            .map(|&(mib, gbs)| CurvePoint {
                footprint_bytes: (mib * (1u64 << 20) as f64) as u64,
                bytes_per_second: gbs * 1e9,
            })
            .collect()
    }

    const H100_READ: [(f64, f64); 19] = [
        (4.12, 7475.0),
        (5.19, 5524.0),
        (6.53, 7088.0),
        (8.25, 7588.0),
        (10.38, 7464.0),
        (13.09, 7408.0),
        (16.50, 7440.0),
        (20.78, 7257.0),
        (26.19, 4813.0),
        (33.00, 3264.0),
        (41.56, 3528.0),
        (52.38, 3214.0),
        (66.00, 3151.0),
        (83.12, 3141.0),
        (104.75, 3145.0),
        (132.00, 3124.0),
        (166.28, 3129.0),
        (209.53, 3105.0),
        (264.00, 3116.0),
    ];

    const H100_COPY: [(f64, f64); 19] = [
        (4.12, 6225.0),
        (5.19, 5831.0),
        (6.55, 5700.0),
        (8.25, 6537.0),
        (10.39, 6307.0),
        (13.09, 6502.0),
        (16.50, 6532.0),
        (20.78, 5822.0),
        (26.19, 5699.0),
        (33.00, 5586.0),
        (41.56, 4617.0),
        (52.38, 4117.0),
        (66.00, 4110.0),
        (83.14, 3273.0),
        (104.77, 3192.0),
        (132.00, 3071.0),
        (166.30, 2977.0),
        (209.53, 2908.0),
        (264.00, 2862.0),
    ];

    fn spread_of(points: &[CurvePoint]) -> Vec<f64> {
        let found = levels(points);
        found
            .falloffs
            .iter()
            .map(|f| {
                let (from, to) = crossing_spread(
                    points,
                    (f.before_bytes_per_second, f.after_bytes_per_second),
                    (f.descent_from_bytes, f.descent_to_bytes),
                );
                assert!(from <= f.bytes && f.bytes <= to, "{f:?}: {from}-{to}");
                to as f64 / from as f64
            })
            .collect()
    }

    #[test]
    fn a_steep_fall_is_steady_and_a_gradual_one_is_not() {
        let read = spread_of(&measured(&H100_READ));
        assert_eq!(read.len(), 1, "{read:?}");
        assert!(read[0] < STEADY_SPAN, "{read:?}");
        let copy = spread_of(&measured(&H100_COPY));
        assert!(!copy.is_empty());
        assert!(copy.iter().all(|s| *s > STEADY_SPAN), "{copy:?}");
        // A fall over half a doubling, as caches give, with no noise.
        let steep = curve(&[(4e12, 1 << 20), (1e12, 1 << 24)], 5e11, 1 << 16, 1 << 28, |_| 1.0);
        let spreads = spread_of(&steep);
        assert_eq!(spreads.len(), 2);
        assert!(spreads.iter().all(|s| *s < STEADY_SPAN), "{spreads:?}");
    }

    proptest! {
        #[test]
        fn falloffs_are_found_near_each_capacity_under_noise(
            first in 16u32..20,
            gap in 3u32..6,
            high in 2.0f64..6.0,
            mid in 1.5f64..3.0,
            seed in 0u64..1000,
        ) {
            let c1 = 1u64 << first;
            let c2 = c1 << gap;
            let low = 1e12;
            let levels_in = [(low * mid * high, c1), (low * mid, c2)];
            let noise = |i: usize| {
                let x = ((i as u64 + 1).wrapping_mul(6364136223846793005).wrapping_add(seed) >> 40) as f64;
                1.0 + 0.04 * (x / (1u64 << 24) as f64 - 0.5)
            };
            let points = curve(&levels_in, low, c1 >> 4, c2 << 4, noise);
            let found = levels(&points);
            prop_assert_eq!(found.plateaus.len(), 3, "{:?}", found);
            prop_assert_eq!(found.falloffs.len(), 2, "{:?}", found);
            for (f, c) in found.falloffs.iter().zip([c1, c2]) {
                let ratio = f.bytes as f64 / c as f64;
                prop_assert!((0.9..1.5).contains(&ratio), "{:?} vs {}", f, c);
            }
        }
    }
}

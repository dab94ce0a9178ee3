//! The pure reading of a launch run: each launch measurement's median and range, and the
//! small-kernel model T(V) = a + V/b fitted by ordinary least squares to the median time per
//! launch at every volume (gpu-benches' `gpu-small-kernels`): the overhead a, the asymptotic
//! bandwidth b and the volume at which the kernel reaches half of b, V½ = a·b (there
//! V/T(V) = b/2).

use serde::{Deserialize, Serialize};

use crate::analysis::linear_fit::{self, Interval};
use crate::analysis::stats::Summary;

/// One volume of the sweep: its median GPU time per launch and the range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub bytes: u64,
    pub time_us: Summary,
}

impl Point {
    /// Bytes over the median time, in GB/s.
    pub fn gb_per_s(&self) -> f64 {
        self.bytes as f64 / self.time_us.median / 1e3
    }
}

/// A value with the bounds of its 95 % confidence interval, where the interval is bounded.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub estimate: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// T(V) = a + V/b fitted to the points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmallKernelFit {
    pub points: usize,
    /// a, in microseconds, with its 95 % CI.
    pub overhead_us: Interval,
    /// 1/b, in microseconds per byte, with its 95 % CI.
    pub slope_us_per_byte: Interval,
    /// b = 1/slope in GB/s; its CI the reciprocals of the slope's bounds (unbounded above
    /// where the slope's interval reaches zero). `None` where the slope is not positive.
    pub bandwidth_gb_per_s: Option<Estimate>,
    /// V½ = a·b in bytes; its bounds from a's and b's 95 % CIs together (covering it with at
    /// least 90 % probability), where both are positive. `None` where a or b is not positive.
    pub half_bandwidth_bytes: Option<Estimate>,
    pub r_squared: f64,
}

impl SmallKernelFit {
    /// The fitted time per launch at `bytes`, in microseconds.
    pub fn time_us(&self, bytes: f64) -> f64 {
        self.overhead_us.estimate + bytes * self.slope_us_per_byte.estimate
    }
}

/// GB/s from a slope in microseconds per byte: b = 1/s bytes per µs = 10⁻³/s GB/s.
fn gb_per_s(slope_us_per_byte: f64) -> f64 {
    1e-3 / slope_us_per_byte
}

/// The OLS fit of the median time on the volume; `None` with fewer than three points.
pub fn fit(points: &[Point]) -> Option<SmallKernelFit> {
    let x: Vec<f64> = points.iter().map(|p| p.bytes as f64).collect();
    let y: Vec<f64> = points.iter().map(|p| p.time_us.median).collect();
    let line = linear_fit::fit(&x, &y)?;
    let (a, s) = (line.intercept, line.slope);
    let bandwidth = (s.estimate > 0.0).then(|| Estimate {
        estimate: gb_per_s(s.estimate),
        low: (s.ci95_high > 0.0).then(|| gb_per_s(s.ci95_high)),
        high: (s.ci95_low > 0.0).then(|| gb_per_s(s.ci95_low)),
    });
    let half = (a.estimate > 0.0 && s.estimate > 0.0).then(|| {
        let bounded = a.ci95_low > 0.0 && s.ci95_low > 0.0;
        Estimate {
            estimate: a.estimate / s.estimate,
            low: bounded.then(|| a.ci95_low / s.ci95_high),
            high: bounded.then(|| a.ci95_high / s.ci95_low),
        }
    });
    Some(SmallKernelFit {
        points: line.n,
        overhead_us: a,
        slope_us_per_byte: s,
        bandwidth_gb_per_s: bandwidth,
        half_bandwidth_bytes: half,
        r_squared: line.r_squared,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points of T(V) = a + V/b at 4 KiB to 1 GiB, each time off by `noise(i)` of itself.
    fn points(a_us: f64, b_gb_per_s: f64, noise: impl Fn(usize) -> f64) -> Vec<Point> {
        (12..=30)
            .enumerate()
            .map(|(i, power)| {
                let bytes = 1u64 << power;
                let t = (a_us + bytes as f64 / (b_gb_per_s * 1e3)) * (1.0 + noise(i));
                Point {
                    bytes,
                    time_us: Summary::of(&[t * 0.99, t, t * 1.02]).unwrap(),
                }
            })
            .collect()
    }

    #[test]
    fn the_fit_recovers_overhead_and_bandwidth_from_exact_points() {
        let fit = fit(&points(3.0, 3000.0, |_| 0.0)).unwrap();
        assert_eq!(fit.points, 19);
        assert!((fit.overhead_us.estimate - 3.0).abs() < 1e-6, "{fit:?}");
        let b = fit.bandwidth_gb_per_s.unwrap();
        assert!((b.estimate - 3000.0).abs() < 1e-6);
        // V½ = a·b: 3 µs at 3000 GB/s is 9 MB, where V/T(V) is half of b.
        let half = fit.half_bandwidth_bytes.unwrap().estimate;
        assert!((half - 9e6).abs() < 1.0, "{half}");
        assert!(((half / fit.time_us(half)) / 1e3 - 1500.0).abs() < 1e-6);
        assert!(fit.r_squared > 0.999_999);
    }

    /// With noise a fraction of each time, the 95 % intervals hold the true a and b in about
    /// 95 % of the trials (and well over 80 %, which is what this asserts), and the estimates
    /// stay near.
    #[test]
    fn the_intervals_hold_the_truth_under_noise() {
        // A fixed generator: a linear congruence, mapped to a Gaussian by Box-Muller.
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut uniform = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let (a, b) = (4.0, 3300.0);
        let (mut held_a, mut held_b, trials) = (0, 0, 400);
        for _ in 0..trials {
            // Additive noise of 0.2 µs on every time (the OLS model's homoscedastic errors).
            let noise: Vec<f64> = (0..19)
                .map(|_| {
                    let (u, v) = (uniform(), uniform());
                    0.2 * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
                })
                .collect();
            let pts: Vec<Point> = points(a, b, |_| 0.0)
                .into_iter()
                .zip(&noise)
                .map(|(p, e)| {
                    let t = p.time_us.median + e;
                    Point {
                        bytes: p.bytes,
                        time_us: Summary::of(&[t]).unwrap(),
                    }
                })
                .collect();
            let fit = fit(&pts).unwrap();
            let i = fit.overhead_us;
            held_a += usize::from(i.ci95_low <= a && a <= i.ci95_high);
            let bw = fit.bandwidth_gb_per_s.unwrap();
            held_b += usize::from(bw.low.unwrap() <= b && b <= bw.high.unwrap());
            assert!((i.estimate - a).abs() < 1.0, "{i:?}");
            assert!((bw.estimate / b - 1.0).abs() < 0.01, "{bw:?}");
        }
        for held in [held_a, held_b] {
            assert!(held > trials * 85 / 100, "{held} of {trials}");
        }
    }

    #[test]
    fn a_slope_that_is_not_positive_gives_no_bandwidth() {
        let flat: Vec<Point> = points(5.0, 1.0, |_| 0.0)
            .into_iter()
            .map(|p| Point {
                bytes: p.bytes,
                time_us: Summary::of(&[5.0]).unwrap(),
            })
            .collect();
        let fit = fit(&flat).unwrap();
        assert!(fit.bandwidth_gb_per_s.is_none());
        assert!(fit.half_bandwidth_bytes.is_none());
        assert!(super::fit(&flat[..2]).is_none());
    }

    #[test]
    fn a_point_gives_its_bandwidth_at_the_median() {
        let p = Point {
            bytes: 1 << 20,
            time_us: Summary::of(&[1.0, 2.0, 3.0]).unwrap(),
        };
        assert!((p.gb_per_s() - (1u64 << 20) as f64 / 2e3).abs() < 1e-9);
    }
}

//! Ordinary least squares of y on x, with a Student-t 95 % confidence interval for the slope.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub estimate: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LinearFit {
    pub n: usize,
    pub slope: Interval,
    pub intercept: Interval,
    pub r_squared: f64,
    /// Root-mean-square residual with n − 2 degrees of freedom.
    pub residual_stdev: f64,
}

/// The least-squares line of y on x, with the sums its callers judge it by.
#[derive(Debug, Clone, Copy)]
pub struct Line {
    pub mean_x: f64,
    pub mean_y: f64,
    /// Σ (x − x̄)²: zero where every x is equal (no slope defined).
    pub sxx: f64,
    pub slope: f64,
    pub intercept: f64,
}

/// The least-squares line of `y` on `x` (as long as each other), with no judgement of it:
/// what [`fit`] and the cache fit's thousands of candidates share.
pub fn least_squares(x: &[f64], y: &[f64]) -> Option<Line> {
    let n = x.len() as f64;
    if x.is_empty() {
        return None;
    }
    let mean_x = x.iter().sum::<f64>() / n;
    let mean_y = y.iter().sum::<f64>() / n;
    let sxx: f64 = x.iter().map(|v| (v - mean_x).powi(2)).sum();
    let sxy: f64 = x
        .iter()
        .zip(y)
        .map(|(a, b)| (a - mean_x) * (b - mean_y))
        .sum();
    let slope = sxy / sxx;
    Some(Line {
        mean_x,
        mean_y,
        sxx,
        slope,
        intercept: mean_y - slope * mean_x,
    })
}

/// OLS fit; `None` when fewer than three points, or when all x are equal (no slope defined).
/// With exactly collinear data the interval collapses to the estimate, which is honest:
/// the data admit no other line.
pub fn fit(x: &[f64], y: &[f64]) -> Option<LinearFit> {
    let n = x.len();
    if n != y.len() || n < 3 {
        return None;
    }
    let Line {
        mean_x,
        mean_y,
        sxx,
        slope,
        intercept,
    } = least_squares(x, y).filter(|line| line.sxx != 0.0)?;
    let residual_squares: f64 = x
        .iter()
        .zip(y)
        .map(|(a, b)| (b - (intercept + slope * a)).powi(2))
        .sum();
    let total_squares: f64 = y.iter().map(|b| (b - mean_y).powi(2)).sum();
    let degrees = (n - 2) as f64;
    let residual_variance = residual_squares / degrees;
    let slope_se = (residual_variance / sxx).sqrt();
    let intercept_se = (residual_variance * (1.0 / n as f64 + mean_x * mean_x / sxx)).sqrt();
    let t = StudentsT::new(0.0, 1.0, degrees).ok()?.inverse_cdf(0.975);
    let interval = |estimate: f64, se: f64| Interval {
        estimate,
        ci95_low: estimate - t * se,
        ci95_high: estimate + t * se,
    };
    Some(LinearFit {
        n,
        slope: interval(slope, slope_se),
        intercept: interval(intercept, intercept_se),
        r_squared: if total_squares > 0.0 {
            1.0 - residual_squares / total_squares
        } else {
            1.0
        },
        residual_stdev: residual_variance.sqrt(),
    })
}

/// Multiple least squares of `y` on the given columns (include a column of ones for an
/// intercept), with Student-t 95 % intervals for every coefficient.
#[derive(Debug, Clone, PartialEq)]
pub struct MultipleFit {
    pub coefficients: Vec<Interval>,
    pub residual_sum_of_squares: f64,
    pub n: usize,
}

/// `None` when there are no more points than columns or the columns are linearly dependent.
pub fn fit_multiple(columns: &[Vec<f64>], y: &[f64]) -> Option<MultipleFit> {
    let n = y.len();
    let p = columns.len();
    if p == 0 || n <= p || columns.iter().any(|c| c.len() != n) {
        return None;
    }
    // Normal equations XᵀX b = Xᵀy, inverted by Gauss–Jordan with partial pivoting.
    let mut gram = vec![vec![0.0; p]; p];
    let mut moment = vec![0.0; p];
    for a in 0..p {
        for b in 0..p {
            gram[a][b] = columns[a].iter().zip(&columns[b]).map(|(u, v)| u * v).sum();
        }
        moment[a] = columns[a].iter().zip(y).map(|(u, v)| u * v).sum();
    }
    let inverse = invert(gram)?;
    let beta: Vec<f64> = (0..p)
        .map(|a| (0..p).map(|b| inverse[a][b] * moment[b]).sum())
        .collect();
    let rss: f64 = (0..n)
        .map(|i| {
            let fitted: f64 = (0..p).map(|a| beta[a] * columns[a][i]).sum();
            (y[i] - fitted).powi(2)
        })
        .sum();
    let degrees = (n - p) as f64;
    let variance = rss / degrees;
    let t = StudentsT::new(0.0, 1.0, degrees).ok()?.inverse_cdf(0.975);
    let coefficients = (0..p)
        .map(|a| {
            let se = (variance * inverse[a][a]).max(0.0).sqrt();
            Interval {
                estimate: beta[a],
                ci95_low: beta[a] - t * se,
                ci95_high: beta[a] + t * se,
            }
        })
        .collect();
    Some(MultipleFit {
        coefficients,
        residual_sum_of_squares: rss,
        n,
    })
}

fn invert(mut matrix: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let p = matrix.len();
    let scale = matrix
        .iter()
        .flatten()
        .fold(0.0_f64, |acc, v| acc.max(v.abs()))
        .max(f64::MIN_POSITIVE);
    let mut inverse: Vec<Vec<f64>> = (0..p)
        .map(|i| (0..p).map(|j| if i == j { 1.0 } else { 0.0 }).collect())
        .collect();
    for column in 0..p {
        let pivot = (column..p)
            .max_by(|&a, &b| matrix[a][column].abs().total_cmp(&matrix[b][column].abs()))?;
        if matrix[pivot][column].abs() <= scale * 1e-12 {
            return None;
        }
        matrix.swap(column, pivot);
        inverse.swap(column, pivot);
        let divisor = matrix[column][column];
        for j in 0..p {
            matrix[column][j] /= divisor;
            inverse[column][j] /= divisor;
        }
        for row in 0..p {
            if row != column {
                let factor = matrix[row][column];
                for j in 0..p {
                    matrix[row][j] -= factor * matrix[column][j];
                    inverse[row][j] -= factor * inverse[column][j];
                }
            }
        }
    }
    Some(inverse)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{RngExt, SeedableRng, rngs::StdRng};

    #[test]
    fn an_exact_line_is_recovered_with_a_zero_width_interval() {
        let x: Vec<f64> = (0..32).map(f64::from).collect();
        let y: Vec<f64> = x.iter().map(|m| 500.0 + 32.0 * m).collect();
        let fit = fit(&x, &y).unwrap();
        assert!((fit.slope.estimate - 32.0).abs() < 1e-9);
        assert!((fit.intercept.estimate - 500.0).abs() < 1e-9);
        assert!((fit.slope.ci95_high - fit.slope.ci95_low).abs() < 1e-9);
        assert!((fit.r_squared - 1.0).abs() < 1e-12);
    }

    #[test]
    fn matches_a_textbook_interval() {
        // Worked by hand: Sxy = 10 and Sxx = 10 give slope 1 and intercept 0.2; residuals
        // (0.8, -1.2, 0.8, -1.2, 0.8) give SSE 4.8, s² = 1.6, se = sqrt(1.6 / 10) = 0.4;
        // t(0.975, 3 df) = 3.182446305.
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [2.0, 1.0, 4.0, 3.0, 6.0];
        let fit = fit(&x, &y).unwrap();
        assert!((fit.slope.estimate - 1.0).abs() < 1e-12);
        assert!((fit.intercept.estimate - 0.2).abs() < 1e-12);
        let half_width = fit.slope.ci95_high - fit.slope.estimate;
        assert!((half_width - 3.182_446_305 * 0.4).abs() < 1e-6);
    }

    #[test]
    fn too_few_or_degenerate_points_give_no_fit() {
        assert!(fit(&[1.0, 2.0], &[1.0, 2.0]).is_none());
        assert!(fit(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]).is_none());
        assert!(fit(&[1.0, 2.0, 3.0], &[1.0, 2.0]).is_none());
    }

    #[test]
    fn multiple_fit_agrees_with_the_simple_one_and_solves_exact_planes() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [2.0, 1.0, 4.0, 3.0, 6.0];
        let simple = fit(&x, &y).unwrap();
        let multiple = fit_multiple(&[vec![1.0; 5], x.to_vec()], &y).unwrap();
        assert!((multiple.coefficients[1].estimate - simple.slope.estimate).abs() < 1e-12);
        assert!((multiple.coefficients[1].ci95_low - simple.slope.ci95_low).abs() < 1e-9);

        let e: Vec<f64> = (0..10).map(f64::from).collect();
        let s: Vec<f64> = (0..10).map(|m| f64::from(m / 4)).collect();
        let y: Vec<f64> = e
            .iter()
            .zip(&s)
            .map(|(e, s)| 100.0 + 32.0 * e + 84.0 * s)
            .collect();
        let plane = fit_multiple(&[vec![1.0; 10], e.clone(), s], &y).unwrap();
        let estimates: Vec<f64> = plane.coefficients.iter().map(|c| c.estimate).collect();
        for (got, want) in estimates.iter().zip([100.0, 32.0, 84.0]) {
            assert!((got - want).abs() < 1e-9, "{estimates:?}");
        }
        assert!(
            fit_multiple(&[vec![1.0; 10], e.clone(), e], &y).is_none(),
            "dependent columns"
        );
    }

    proptest! {
        /// On noisy lines the 95 % interval holds the true slope, and the estimate is close.
        #[test]
        fn noisy_lines_are_bracketed(
            slope in -50.0f64..50.0,
            intercept in -1000.0f64..1000.0,
            noise in 0.1f64..5.0,
            seed in any::<u64>(),
        ) {
            let mut rng = StdRng::seed_from_u64(seed);
            let x: Vec<f64> = (0..64).map(|i| f64::from(i % 32)).collect();
            let y: Vec<f64> = x
                .iter()
                .map(|m| intercept + slope * m + noise * (rng.random::<f64>() - 0.5) * 2.0)
                .collect();
            let fit = fit(&x, &y).unwrap();
            // Uniform noise of half-width `noise`: the slope error is far below noise/4 here.
            prop_assert!((fit.slope.estimate - slope).abs() < noise / 4.0);
            prop_assert!(fit.slope.ci95_low <= fit.slope.estimate);
            prop_assert!(fit.slope.estimate <= fit.slope.ci95_high);
        }
    }
}

//! Cache geometry by model fitting: every candidate cache (sets × ways × line, a replacement
//! policy, whole or sectored lines) predicts the fraction of a stride chase's loads that miss
//! at each footprint; hit and miss latencies follow by least squares (latency = hit + (miss −
//! hit) × fraction); the candidates are ranked by a robust information criterion, as the
//! divergence model's are. Reading the steps of a rise one by one (Wong et al., Fig. 4) needs
//! every step above the noise; a fit uses every point of the rise at once.
//!
//! What each candidate predicts is `analysis::miss_fraction`'s.
//!
//! Criterion: with σ the noise of one point, each residual r costs ρ(r/σ) (Huber, quadratic
//! up to 3σ, linear beyond, so a few outliers cannot choose the model); Δ is a candidate's
//! cost over the best's and a geometry's weight is its share of Σ exp(−Δ/2) (Akaike weights),
//! the confidence reported. A best fit whose residuals are much larger than the noise fits no
//! candidate: the level then says which families were tried and how far each was.

use serde::Serialize;

use super::chase::ChasePoint;
pub use super::miss_fraction::{Candidate, Policy, miss_fraction};
use super::miss_fraction::{miss_fraction_with, random_miss_rate, tabled_random_miss_rate};

mod identified;
use identified::fetch_of;
pub use identified::{Identified, prefetch_twin};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FittedModel {
    pub policy: Policy,
    pub size_bytes: u64,
    pub line_bytes: u64,
    pub sector_bytes: Option<u64>,
    pub ways: u64,
    pub sets: u64,
    pub hit_cycles: f64,
    pub miss_cycles: f64,
    pub rms_cycles: f64,
    /// 1.4826 × the median absolute residual: the residuals' spread without the outliers.
    pub robust_spread_cycles: f64,
    /// Cost over the best candidate's (0 for the best).
    pub delta: f64,
}

impl FittedModel {
    /// The geometry and policy it fitted, as the candidate the miss model takes.
    pub fn candidate(&self) -> Candidate {
        Candidate {
            sets: self.sets,
            ways: self.ways,
            line_bytes: self.line_bytes,
            sector_bytes: self.sector_bytes,
            policy: self.policy,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TriedFamily {
    pub family: String,
    pub candidates: usize,
    /// The residual RMS of the family's best candidate, in cycles.
    pub best_rms_cycles: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GeometryFit {
    pub best: FittedModel,
    /// The best candidate of another geometry, and its Δ.
    pub runner_up: Option<FittedModel>,
    /// Other geometries within Δ ≤ 2 of the best, the closest first: the fit's uncertainty
    /// (at most 16 listed; `within_delta_2_count` says how many there are).
    pub within_delta_2: Vec<FittedModel>,
    pub within_delta_2_count: usize,
    /// The best geometry's Akaike weight among all candidates.
    pub confidence: f64,
    /// What the candidates within Δ ≤ 2 of the best agree on: the parameters the data identify.
    pub identified: Identified,
    /// The weight of every candidate that agrees with the best on the identified parameters
    /// and on the size within a line: how likely the statement made (those parameters and
    /// the size, not the whole geometry) is right.
    pub identified_confidence: f64,
    /// [`GeometryFit::identified`] where a descending chase has shown there is no next-line
    /// prefetcher: the candidates' twins no longer tie with them.
    pub without_prefetch: Identified,
    pub without_prefetch_confidence: f64,
    /// The weight of every candidate whose size is within a line of the best's.
    pub size_confidence: f64,
    /// The noise the weights were computed at: the point noise, or the best candidate's misfit
    /// where that is larger (its robust residual spread, or the scale at which its Huber cost
    /// per point is what noise alone gives): a model that misses the data by more than the
    /// noise cannot tell candidates apart any better than its misfit allows.
    pub likelihood_sigma_cycles: f64,
    /// Whether the best candidate's residuals are within the noise (robust spread ≤
    /// [`misfit_allowance`]; outliers aside), over all the points and over the rise alone
    /// ([`GeometryFit::rise_spread_cycles`]).
    pub fits: bool,
    /// The best candidate's residual spread over the rise alone (the points where it or the
    /// data lie between the two plateaus): the RMS of its residuals there, the largest one in
    /// 29 and one more left out (outliers); `None` where the rise has fewer than four points.
    /// A model of a cache the candidates do not hold (a victim buffer's sudden rise, a
    /// pseudo-LRU's uneven one) can match both plateaus, most of the points, while missing
    /// the rise itself.
    pub rise_spread_cycles: Option<f64>,
    pub noise_cycles: f64,
    pub points: usize,
    pub tried: Vec<TriedFamily>,
}

/// The footprints between which the size of the cache may lie, and the chase's stride.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchRange {
    pub min_size_bytes: u64,
    pub max_size_bytes: u64,
    pub stride_bytes: u64,
}

const LINES: [u64; 5] = [SMALLEST_LINE_BYTES, 32, 64, 128, 256];
/// The smallest line the fit tries.
pub const SMALLEST_LINE_BYTES: u64 = 16;
const WITHIN_DELTA_2_LISTED: usize = 16;
const MAX_WAYS: u64 = 64;
const SECTOR_BYTES: u64 = 32;
/// The most set counts tried per (line, ways); shapes with more in the size range are left
/// out (a cache of tens of MiB has no per-set resolution in a sweep anyway).
const MAX_SETS_PER_SHAPE: u64 = 1024;

fn candidates(range: SearchRange) -> Vec<Candidate> {
    let mut out = Vec::new();
    for line in LINES.into_iter().filter(|&b| b >= range.stride_bytes) {
        for ways in 1..=MAX_WAYS {
            let unit = line * ways;
            let first = range.min_size_bytes.div_ceil(unit).max(1);
            let last = range.max_size_bytes / unit;
            if last < first || last - first > MAX_SETS_PER_SHAPE {
                continue;
            }
            for sets in first..=last {
                let mut shapes = vec![(None, Policy::Lru), (None, Policy::Random)];
                if line > SECTOR_BYTES && range.stride_bytes < line {
                    shapes.push((Some(SECTOR_BYTES), Policy::Lru));
                }
                for (sector_bytes, policy) in shapes {
                    // One way is a direct-mapped cache: random replacement is the same.
                    if ways == 1 && policy == Policy::Random {
                        continue;
                    }
                    out.push(Candidate {
                        sets,
                        ways,
                        line_bytes: line,
                        sector_bytes,
                        policy,
                    });
                }
            }
        }
    }
    out
}

/// The absolute residuals of the rise: the points (in footprint order) where the model predicts
/// some misses but has not yet reached 98 % of its misses at the largest footprint, and those
/// where the data stand more than 3σ clear of both of the model's plateaus. (The far plateau
/// itself is not a rise: a partial last line makes its predicted fraction wobble.) `None`
/// with fewer than four such points.
fn rise_residual(
    predicted: &[f64],
    ys: &[f64],
    residuals: &[f64],
    hit: f64,
    miss: f64,
    sigma: f64,
) -> Option<Vec<f64>> {
    let far = *predicted.last()?;
    let top = hit + (miss - hit) * far;
    let end = predicted
        .iter()
        .position(|&x| x >= 0.98 * far)
        .unwrap_or(predicted.len());
    let rise: Vec<f64> = (0..predicted.len())
        .filter(|&i| {
            (i < end && predicted[i] > 0.0)
                || (ys[i] > hit + 3.0 * sigma && ys[i] < top - 3.0 * sigma)
        })
        .map(|i| residuals[i])
        .collect();
    (rise.len() >= 4).then_some(rise)
}

fn huber(u: f64) -> f64 {
    let u = u.abs();
    if u <= 3.0 { u * u } else { 6.0 * u - 9.0 }
}

struct Scored {
    candidate: Candidate,
    hit: f64,
    miss: f64,
    rms: f64,
    spread: f64,
    cost: f64,
}

/// Least squares of `ys` on `xs` (latency = hit + (miss − hit) × miss fraction), then the
/// robust cost; `None` where the candidate predicts no change over the points or a miss
/// faster than a hit. The points must include the plateaus on both sides of the rise: they pin
/// the hit latency and the miss penalty, so no candidate can pass the rise off as a ramp.
fn score(candidate: Candidate, xs: &[f64], ys: &[f64], sigma: f64) -> Option<Scored> {
    let n = xs.len() as f64;
    let line = crate::analysis::linear_fit::least_squares(xs, ys).filter(|l| l.sxx >= 1e-12)?;
    let (hit, slope) = (line.intercept, line.slope);
    if slope <= 0.0 {
        return None;
    }
    let (mut cost, mut squares) = (0.0, 0.0);
    for (x, y) in xs.iter().zip(ys) {
        let r = y - (hit + slope * x);
        squares += r * r;
        cost += huber(r / sigma);
    }
    Some(Scored {
        candidate,
        hit,
        miss: hit + slope,
        rms: (squares / n).sqrt(),
        spread: f64::NAN,
        cost,
    })
}

fn model(s: &Scored, best_cost: f64) -> FittedModel {
    let c = s.candidate;
    FittedModel {
        policy: c.policy,
        size_bytes: c.size_bytes(),
        line_bytes: c.line_bytes,
        sector_bytes: c.sector_bytes,
        ways: c.ways,
        sets: c.sets,
        hit_cycles: s.hit,
        miss_cycles: s.miss,
        rms_cycles: s.rms,
        robust_spread_cycles: s.spread,
        delta: s.cost - best_cost,
    }
}

/// [`score`] for each of `candidates` whose predictions change over `points`, in order.
fn score_all(
    candidates: &[Candidate],
    points: &[ChasePoint],
    stride: u64,
    ys: &[f64],
    sigma: f64,
) -> Vec<Scored> {
    let mut xs = vec![0.0; points.len()];
    let mut memo = std::collections::HashMap::new();
    // The tabled rates first: an index beats the memo's hashing.
    let mut random = |n: u64, ways: u64| {
        tabled_random_miss_rate(n, ways).unwrap_or_else(|| {
            *memo
                .entry((n, ways))
                .or_insert_with(|| random_miss_rate(n, ways))
        })
    };
    let mut scored = Vec::new();
    for candidate in candidates {
        for (x, p) in xs.iter_mut().zip(points) {
            *x = miss_fraction_with(candidate, p.footprint_bytes, stride, &mut random);
        }
        scored.extend(score(*candidate, xs.as_slice(), ys, sigma));
    }
    scored
}

/// Fits every candidate in `range` to `points` (one stride, a rise and the plateaus on both
/// sides, in footprint order); `sigma` is the noise of one point in cycles (floored at 0.02).
/// `None` when no candidate changes over the points.
///
/// The likelihood's noise is the larger of `sigma` and the best candidate's misfit: when even
/// the best model misses the points by more than their noise, differences between candidates
/// smaller than that misfit say nothing, and the weights spread out.
/// (Scoring again at the misfit instead would let Huber's cut-off at 3σ move the ranking: on
/// simulated LRU caches that picked wrong lines the noise-level ranking got right.)
pub fn fit(points: &[ChasePoint], range: SearchRange, sigma: f64) -> Option<GeometryFit> {
    fit_candidates(points, &candidates(range), range.stride_bytes, sigma)
}

/// [`fit`] among caches with a next-line prefetcher ([`Policy::LruNextLine`]), of lines longer
/// than the stride and two sets or more, within eight lines (and 512 B) of `near_bytes`: for a
/// level whose descending chase showed the prefetcher, where the plain candidates place the
/// size a few lines off (with an odd set count none of them chases like it).
pub fn fit_prefetching(
    points: &[ChasePoint],
    near_bytes: u64,
    stride_bytes: u64,
    sigma: f64,
) -> Option<GeometryFit> {
    let mut candidates = Vec::new();
    for line in LINES.into_iter().filter(|&b| b > stride_bytes) {
        let slack = (8 * line).max(512);
        let first = near_bytes.saturating_sub(slack).div_ceil(line).max(4);
        for lines in first..=(near_bytes + slack) / line {
            for ways in (1..=MAX_WAYS.min(lines / 2)).filter(|w| lines % w == 0) {
                candidates.push(Candidate {
                    sets: lines / ways,
                    ways,
                    line_bytes: line,
                    sector_bytes: None,
                    policy: Policy::LruNextLine,
                });
            }
        }
    }
    fit_candidates(points, &candidates, stride_bytes, sigma)
}

fn fit_candidates(
    points: &[ChasePoint],
    candidates: &[Candidate],
    stride_bytes: u64,
    sigma: f64,
) -> Option<GeometryFit> {
    let sigma = sigma.max(0.02);
    let ys: Vec<f64> = points.iter().map(|p| p.cycles).collect();
    let mut scored = score_in_parallel(candidates, points, stride_bytes, &ys, sigma);
    let best_index =
        (0..scored.len()).min_by(|&a, &b| scored[a].cost.total_cmp(&scored[b].cost))?;
    let (spread, rise_spread) = spreads(&scored[best_index], points, stride_bytes, &ys, sigma);
    // The ranking stays the one at the point noise; the costs, and so every Δ and weight, are
    // scaled down by (σ / misfit)² (exact for the quadratic part of the cost).
    // The misfit is the larger of the robust spread and the scale at which the best's Huber
    // cost per point is its expectation under noise alone (≈ 1 at the 3σ cut-off).
    let cost_per_point = scored[best_index].cost / points.len() as f64;
    let likelihood_sigma = sigma
        .max(spread)
        .max(sigma * cost_per_point.max(1.0).sqrt());
    let scale = (sigma / likelihood_sigma).powi(2);
    for s in &mut scored {
        s.cost *= scale;
    }
    scored[best_index].spread = spread;
    let best_cost = scored[best_index].cost;
    let best = &scored[best_index];
    let total: f64 = scored
        .iter()
        .map(|s| (-(s.cost - best_cost) / 2.0).exp())
        .sum();
    let mine: f64 = scored
        .iter()
        .filter(|s| s.candidate.same_geometry(&best.candidate))
        .map(|s| (-(s.cost - best_cost) / 2.0).exp())
        .sum();
    let others = other_geometries(&scored, best, best_cost);
    let runner_up = others.first().map(|s| model(s, best_cost));
    let close: Vec<&&Scored> = others
        .iter()
        .filter(|s| s.cost - best_cost <= 2.0)
        .collect();
    let within_delta_2_count = close.len();
    let within_delta_2 = close
        .iter()
        .take(WITHIN_DELTA_2_LISTED)
        .map(|s| model(s, best_cost))
        .collect();
    let tried = tried_families(&scored);
    let ties: Vec<Candidate> = scored
        .iter()
        .filter(|s| s.cost - best_cost <= 2.0)
        .map(|s| s.candidate)
        .collect();
    let identified = Identified::with_prefetch_twins(&ties, stride_bytes)
        .without_random_geometry(&best.candidate);
    let without_prefetch = Identified {
        fetch_bytes: fetch_of(&ties),
        ..Identified::of(&ties)
    }
    .without_random_geometry(&best.candidate);
    let (best_size, best_line) = (best.candidate.size_bytes(), best.candidate.line_bytes);
    let weight_of = |admits: &dyn Fn(&Candidate) -> bool| -> f64 {
        scored
            .iter()
            .filter(|s| {
                admits(&s.candidate) && s.candidate.size_bytes().abs_diff(best_size) <= best_line
            })
            .map(|s| (-(s.cost - best_cost) / 2.0).exp())
            .sum::<f64>()
            / total
    };
    let identified_confidence = weight_of(&|c| identified.admits(c));
    let without_prefetch_confidence = weight_of(&|c| without_prefetch.admits(c));
    let size_confidence = weight_of(&|_| true);
    Some(GeometryFit {
        best: model(best, best_cost),
        runner_up,
        within_delta_2,
        within_delta_2_count,
        confidence: mine / total,
        identified,
        identified_confidence,
        without_prefetch,
        without_prefetch_confidence,
        size_confidence,
        likelihood_sigma_cycles: likelihood_sigma,
        fits: {
            let allowance = misfit_allowance(sigma, best.miss - best.hit);
            best.spread <= allowance && rise_spread.is_none_or(|r| r <= allowance)
        },
        rise_spread_cycles: rise_spread,
        noise_cycles: sigma,
        points: points.len(),
        tried,
    })
}

/// The share of the rise (miss minus hit cycles) a model's residual spread may reach however
/// quiet the points: a miss's cost depends on the line that misses (its DRAM row, its memory
/// partition), so the mean over the lines that miss at one footprint moves with which lines
/// they are. GPGPU-Sim, which adds no noise, shows it: on a 64-set × 6-way L1D (`results/sim/
/// SM7_QV100-6way`) the configuration's own geometry leaves 0.19 % of its 169-cycle rise RMS
/// over the rise, and points up to 0.54 % off. The calibration study draws such caches
/// (`analysis::calibration`, "miss cost by line").
pub const MISFIT_FLOOR_OF_RISE: f64 = 0.003;

/// How far a model's residual spread may reach and still fit: twice the noise and 0.05 cycles,
/// or [`MISFIT_FLOOR_OF_RISE`] of the rise where that is more.
pub fn misfit_allowance(sigma: f64, rise_cycles: f64) -> f64 {
    (2.0 * sigma + 0.05).max(MISFIT_FLOOR_OF_RISE * rise_cycles.abs())
}

/// Every candidate scored against the points. Tens of thousands of candidates, each scored on
/// its own: split over the host's cores, the chunks joined in candidate order so ties resolve
/// as in one pass.
fn score_in_parallel(
    candidates: &[Candidate],
    points: &[ChasePoint],
    stride_bytes: u64,
    ys: &[f64],
    sigma: f64,
) -> Vec<Scored> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let chunk = candidates.len().div_ceil(threads).max(1);
    crate::analysis::in_parallel(candidates.chunks(chunk), |part| {
        score_all(part, points, stride_bytes, ys, sigma)
    })
}

/// The best candidate's robust spread, over all the points and over the rise alone: it
/// decides whether the best fits at all.
fn spreads(
    best: &Scored,
    points: &[ChasePoint],
    stride_bytes: u64,
    ys: &[f64],
    sigma: f64,
) -> (f64, Option<f64>) {
    let mut random = random_miss_rate;
    let predicted: Vec<f64> = points
        .iter()
        .map(|p| {
            miss_fraction_with(
                &best.candidate,
                p.footprint_bytes,
                stride_bytes,
                &mut random,
            )
        })
        .collect();
    let residuals: Vec<f64> = predicted
        .iter()
        .zip(ys)
        .map(|(x, y)| (y - (best.hit + (best.miss - best.hit) * x)).abs())
        .collect();
    let mut sorted = residuals.clone();
    sorted.sort_by(f64::total_cmp);
    (
        1.4826 * sorted[sorted.len() / 2],
        rise_residual(&predicted, ys, &residuals, best.hit, best.miss, sigma).map(|mut r| {
            // The largest residuals left out, one per 29 points and one more: an
            // outlier is not a misfit.
            r.sort_by(f64::total_cmp);
            r.truncate(r.len() - r.len() / 29 - 1);
            (r.iter().map(|x| x * x).sum::<f64>() / r.len() as f64).sqrt()
        }),
    )
}

/// Other geometries than the best's, each by its best candidate, best first: every one
/// within Δ 2 of the best, and at least one.
fn other_geometries<'a>(scored: &'a [Scored], best: &Scored, best_cost: f64) -> Vec<&'a Scored> {
    let mut others: Vec<&Scored> = Vec::new();
    let mut order: Vec<&Scored> = scored.iter().collect();
    order.sort_by(|a, b| a.cost.total_cmp(&b.cost));
    for s in order {
        if s.candidate.same_geometry(&best.candidate)
            || others
                .iter()
                .any(|o| o.candidate.same_geometry(&s.candidate))
        {
            continue;
        }
        if s.cost - best_cost > 2.0 && !others.is_empty() {
            break;
        }
        others.push(s);
    }
    others
}

/// Each family of candidates tried, in the order first scored, with how many and the best RMS
/// among them: what a misfit reports it tried.
fn tried_families(scored: &[Scored]) -> Vec<TriedFamily> {
    let mut tried: Vec<TriedFamily> = Vec::new();
    for s in scored {
        let family = s.candidate.family();
        match tried.iter_mut().find(|t| t.family == family) {
            Some(t) => {
                t.candidates += 1;
                t.best_rms_cycles = Some(t.best_rms_cycles.map_or(s.rms, |r| r.min(s.rms)));
            }
            None => tried.push(TriedFamily {
                family: family.into(),
                candidates: 1,
                best_rms_cycles: Some(s.rms),
            }),
        }
    }
    tried
}

#[cfg(test)]
mod tests;

//! A curve's levels before any is read: where each plateau ends, with no model fitted.

use super::noise::{Noise, plateau_tolerance};
use super::{ChasePoint, MinimumRise, Plateau, one_stride, plateaus};

/// The curve's finest stride, its points, their noise, the jump threshold, the first
/// plateau's tolerance and the plateaus that are levels of their own (in footprint order).
pub(super) struct Levels {
    pub stride: u64,
    pub curve: Vec<ChasePoint>,
    pub noise: Noise,
    pub jump: f64,
    pub tolerance: f64,
    pub flats: Vec<Plateau>,
}

/// None where the finest stride has fewer than three footprints.
pub(super) fn levels(points: &[ChasePoint], minimum_rise: MinimumRise) -> Option<Levels> {
    let (stride, curve) = one_stride(points)?;
    if curve.len() < 3 {
        return None;
    }
    let noise = Noise::of(&curve);
    let jump = (5.0 * noise.every).max(0.25);
    let fastest = curve.iter().map(|p| p.cycles).fold(f64::INFINITY, f64::min);
    let plateau_tolerance = |latency: f64| plateau_tolerance(noise.flat, fastest, latency);
    let tolerance = plateau_tolerance(curve[0].cycles);
    // Plateaus that are not clearly slower than the one before are the same level (noise, a
    // dip, a drift of a few cycles): a level is only read from a rise of more than the jump
    // threshold and the minimum rise.
    let mut flats: Vec<Plateau> = Vec::new();
    for plateau in plateaus(&curve, plateau_tolerance) {
        match flats.last_mut() {
            Some(previous)
                if plateau.latency - previous.latency
                    <= jump.max(minimum_rise.of(previous.latency)) =>
            {
                previous.last = plateau.last;
            }
            _ => flats.push(plateau),
        }
    }
    Some(Levels {
        stride,
        curve,
        noise,
        jump,
        tolerance,
        flats,
    })
}

/// Where each level's plateau ends, the last footprint with no miss (the size the step
/// reading states before a model fit may restate it), for every level below the slowest: what
/// a run needs to place its descending chase, at the cost of a plateau search instead of
/// [`super::infer_with`]'s fits.
pub fn plateau_ends(points: &[ChasePoint], minimum_rise: MinimumRise) -> Vec<u64> {
    let Some(Levels { curve, flats, .. }) = levels(points, minimum_rise) else {
        return Vec::new();
    };
    let below_the_slowest = flats.len().saturating_sub(1);
    flats[..below_the_slowest]
        .iter()
        .map(|p| curve[p.last].footprint_bytes)
        .collect()
}

//! Pipeline latency and throughput (Wong et al., section IV-B): from per-warp start and end
//! stamps of kernels that run `ops_per_chain` operations in each of `chains` chains per thread.

use serde::Serialize;

/// The span all warps were busy: latest end minus earliest start.
pub fn elapsed_cycles(stamps: &[i64]) -> Option<i64> {
    let starts = stamps.iter().step_by(2);
    let ends = stamps.iter().skip(1).step_by(2);
    let start = *starts.min()?;
    let end = *ends.max()?;
    (end > start).then_some(end - start)
}

/// Operations per clock for the whole block (one SM).
pub fn ops_per_clock(stamps: &[i64], threads: u32, chains: u32, ops_per_chain: u64) -> Option<f64> {
    let cycles = elapsed_cycles(stamps)?;
    Some(f64::from(threads) * f64::from(chains) * ops_per_chain as f64 / cycles as f64)
}

/// Cycles per operation of one dependent chain (warp 0's own span).
pub fn latency_cycles(stamps: &[i64], ops_per_chain: u64) -> Option<f64> {
    let span = stamps.get(1)? - stamps.first()?;
    (span > 0 && ops_per_chain > 0).then(|| span as f64 / ops_per_chain as f64)
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct WarpPoint {
    pub warps: u32,
    pub ops_per_clock: f64,
    /// Cycles per dependent op seen by warp 0 at this warp count.
    pub latency_cycles: f64,
}

/// The fewest warps reaching `fraction` of the highest throughput measured.
pub fn saturation_warps(points: &[WarpPoint], fraction: f64) -> Option<u32> {
    let best = points.iter().map(|p| p.ops_per_clock).fold(0.0, f64::max);
    points
        .iter()
        .filter(|p| p.ops_per_clock >= fraction * best)
        .map(|p| p.warps)
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_from_stamps() {
        // Two warps: [100, 1100] and [150, 1300]: elapsed 1200 cycles.
        let stamps = [100, 1100, 150, 1300];
        assert_eq!(elapsed_cycles(&stamps), Some(1200));
        assert_eq!(ops_per_clock(&stamps, 64, 4, 300), Some(64.0));
        assert_eq!(latency_cycles(&stamps, 250), Some(4.0));
        assert_eq!(elapsed_cycles(&[5, 5]), None);
    }

    #[test]
    fn saturation_is_the_knee_of_a_pipeline_model() {
        // A pipeline of latency 4 issuing one warp-instruction per clock: throughput grows
        // linearly until 4 warps, then stays at 32 ops per clock.
        let points: Vec<WarpPoint> = (1..=16)
            .map(|w| WarpPoint {
                warps: w,
                ops_per_clock: 32.0 * f64::from(w.min(4)) / 4.0,
                latency_cycles: 4.0_f64.max(f64::from(w)),
            })
            .collect();
        assert_eq!(saturation_warps(&points, 0.95), Some(4));
    }
}

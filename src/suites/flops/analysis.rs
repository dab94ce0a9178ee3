//! The peak-rate kernels' stamps read back (cuda/flops.cuh): per block, start and end in the
//! SM's clock64 and in %globaltimer. The clock spans give each SM's FLOP per clock (what the
//! units do per cycle); the globaltimer spans give the chip's FLOP per second over the wall
//! time from the first block's start to the last block's end (what the chip delivers at
//! whatever clock it held under that load), and each block's clock during its loop.

use serde::Serialize;

use crate::analysis::stats::Summary;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChipRate {
    /// FLOP per clock of each block's SM: median and range over blocks.
    pub flop_per_clock_per_sm: Summary,
    /// All blocks' FLOP over the wall time from the earliest start to the latest end.
    pub flop_per_second: f64,
    /// Each block's clock64 cycles over its globaltimer nanoseconds, in MHz.
    pub sm_mhz_during: Summary,
}

/// The rates of a launch whose every block did `flop_per_block`; `None` when a block's stamps
/// do not advance (a broken stamp spoils the measurement rather than vanishing from it).
pub fn chip_rate(stamps: &[i64], flop_per_block: f64) -> Option<ChipRate> {
    if stamps.is_empty() || !stamps.len().is_multiple_of(4) {
        return None;
    }
    let mut per_clock = Vec::new();
    let mut mhz = Vec::new();
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    for block in stamps.chunks_exact(4) {
        let (cycles, ns) = (block[1] - block[0], block[3] - block[2]);
        if cycles <= 0 || ns <= 0 {
            return None;
        }
        per_clock.push(flop_per_block / cycles as f64);
        mhz.push(cycles as f64 / ns as f64 * 1e3);
        first = first.min(block[2]);
        last = last.max(block[3]);
    }
    let blocks = per_clock.len() as f64;
    Some(ChipRate {
        flop_per_clock_per_sm: Summary::of(&per_clock)?,
        flop_per_second: flop_per_block * blocks / ((last - first) as f64 * 1e-9),
        sm_mhz_during: Summary::of(&mhz)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stamps of `blocks` blocks at `mhz`, each doing `flop` at `per_clock`, started
    /// `stagger_ns` apart.
    fn simulated(blocks: usize, mhz: f64, flop: f64, per_clock: f64, stagger_ns: i64) -> Vec<i64> {
        (0..blocks)
            .flat_map(|b| {
                let cycles = (flop / per_clock) as i64;
                let ns = (cycles as f64 / mhz * 1e3) as i64;
                let start_ns = 1_000_000 + b as i64 * stagger_ns;
                let start_cycles = 7_000 * b as i64;
                [start_cycles, start_cycles + cycles, start_ns, start_ns + ns]
            })
            .collect()
    }

    #[test]
    fn the_chip_rate_is_every_block_over_the_whole_wall_time() {
        let flop = 256.0 * 2_000_000.0;
        let stamps = simulated(132, 1980.0, flop, 256.0, 0);
        let rate = chip_rate(&stamps, flop).unwrap();
        assert!((rate.flop_per_clock_per_sm.median - 256.0).abs() < 1e-9);
        assert!((rate.sm_mhz_during.median - 1980.0).abs() < 0.01);
        // 132 SMs x 256 FLOP x 1.98 GHz.
        let expected = 132.0 * 256.0 * 1.98e9;
        assert!((rate.flop_per_second / expected - 1.0).abs() < 1e-6);
        // Blocks that start apart stretch the wall time, not the per-clock rate.
        let staggered = chip_rate(&simulated(132, 1980.0, flop, 256.0, 1000), flop).unwrap();
        assert_eq!(staggered.flop_per_clock_per_sm, rate.flop_per_clock_per_sm);
        assert!(staggered.flop_per_second < rate.flop_per_second);
    }

    #[test]
    fn broken_stamps_are_no_rate() {
        assert!(chip_rate(&[], 1.0).is_none());
        assert!(chip_rate(&[0, 10, 0], 1.0).is_none());
        assert!(chip_rate(&[10, 10, 0, 5], 1.0).is_none());
        assert!(chip_rate(&[0, 10, 5, 5], 1.0).is_none());
    }
}

//! What `gpubench bandwidth` measures and where: its settings, the levels with the kernel each
//! searches and how each hands out its slices, the occupancies an SM allows, the footprints of
//! the searches and the sweeps (the method is in `measure`).

use crate::experiments::launch_size::shared_fits;
use crate::gpu::launch::bandwidth::{self as launcher, Kernel, Occupancy, SliceOrder};

/// The run's settings as the measurement reads them: [`super::BandwidthArgs`] (which checks
/// them) in seconds, with the largest device-wide footprint resolved on the device.
#[derive(Debug, Clone, PartialEq)]
pub struct BandwidthConfig {
    /// Timed launches of each headline point.
    pub repeats: u32,
    /// Timed launches of each sweep point: the sweeps are half the suite's GPU time.
    pub sweep_repeats: u32,
    pub min_seconds: f64,
    /// The L2's headline points' launches run at least this long (and at least `min_seconds`).
    pub headline_min_seconds: f64,
    pub points_per_doubling: u32,
    /// Largest device-wide footprint (read and write; the copy covers the same bytes).
    pub max_device_bytes: u64,
    /// Largest footprint per SM in the L1 sweep.
    pub max_sm_bytes: u64,
}

impl BandwidthConfig {
    /// The shortest launch of `level`'s headline points: the L2's run at least
    /// `headline_min_seconds`. Every launch of the L2 shared-line read starts slow (about eight
    /// passes' worth on an H100), so at 1-2 ms its rate moved 10 % between processes and at
    /// 8 ms under 2 % (docs/results-h100.md); shared memory, L1 and DRAM repeat to 1 % at 1 ms,
    /// and long launches for them would cost `all` half a second.
    pub fn headline_seconds(&self, level: Level) -> f64 {
        match level {
            Level::L2 => self.min_seconds.max(self.headline_min_seconds),
            Level::Shared | Level::L1 | Level::Dram => self.min_seconds,
        }
    }
}

/// The levels the suite measures, each with the kernel of its search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Shared,
    L1,
    L2,
    Dram,
}

impl Level {
    pub const ALL: [Level; 4] = [Level::Shared, Level::L1, Level::L2, Level::Dram];

    pub fn name(self) -> &'static str {
        match self {
            Level::Shared => "shared",
            Level::L1 => "l1",
            Level::L2 => "l2",
            Level::Dram => "dram",
        }
    }

    /// The read its occupancy search times.
    pub fn search_kernel(self) -> Kernel {
        match self {
            Level::Shared => Kernel::SharedRead,
            Level::L1 => Kernel::ReadSm,
            Level::L2 | Level::Dram => Kernel::ReadDevice,
        }
    }

    /// How `kernel` hands out its slices at this level's search and headline: by ticket past
    /// the L2 (the slices in flight together, no pass ending on a few blocks: 3-6 % more from
    /// DRAM on an H100); the L2's reads stream (far more blocks than are resident, each
    /// reading one private slice once: 9.2-9.35 TB/s on an H200 where a resident grid read
    /// 7.3-8.8, scripts/l2-private-read-probe.cu), its write and copy keep fixed slices (a
    /// block finds its own lines on its side of the L2: by ticket the L2's read and copy fell
    /// 4-25 %; scripts/slice-order-probe.cu). The sweeps keep fixed slices throughout.
    pub fn slice_order(self, kernel: Kernel) -> SliceOrder {
        match (self, kernel) {
            (Level::Dram, k) if k.takes_ticket() => SliceOrder::Ticket,
            (Level::L2, Kernel::ReadDevice | Kernel::ReadDeviceStrong) => SliceOrder::Stream,
            _ => SliceOrder::Fixed,
        }
    }
}

/// What the device allows per SM, for the occupancy search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub multiprocessors: u32,
    pub max_threads_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub shared_per_sm: u64,
    pub shared_per_block_optin: u64,
    pub l2_bytes: u64,
}

/// Shared bytes per block in the shared-memory measurements: at least 32 KiB and at least one
/// unrolled pass of every thread.
pub fn shared_bytes(threads: u32) -> u64 {
    (32 << 10).max(launcher::UNROLL * u64::from(threads) * launcher::VECTOR_BYTES)
}

/// The footprint each level's search runs at: well inside L1 (64 KiB per SM, inside every L1
/// since Volta), inside L2 (a quarter of it: inside the half of the H100's L2 that weak loads
/// fill, and enough slices for every SM at any block size), far past L2 (16 ×, at least
/// 1 GiB, capped at the sweep's end).
pub fn search_footprint(level: Level, limits: &Limits, max_device_bytes: u64) -> u64 {
    match level {
        Level::Shared => 0,
        Level::L1 => 64 << 10,
        Level::L2 => (limits.l2_bytes / 4).max(1 << 20),
        Level::Dram => far_past_l2(limits.l2_bytes).min(max_device_bytes),
    }
}

/// A footprint far past an L2 of `l2_bytes`: 16 × it, at least 1 GiB (the DRAM search's, and
/// the default end of the device sweep).
pub fn far_past_l2(l2_bytes: u64) -> u64 {
    (16 * l2_bytes).max(1 << 30)
}

/// Every (threads, blocks per SM) the SM can hold, for `level`.
pub fn candidates(level: Level, limits: &Limits) -> Vec<Occupancy> {
    let mut all = Vec::new();
    for threads in [128, 256, 512, 1024] {
        let mut blocks = 1;
        while threads * blocks <= limits.max_threads_per_sm && blocks <= limits.max_blocks_per_sm {
            let fits = match level {
                Level::Shared => shared_fits(
                    blocks,
                    shared_bytes(threads),
                    limits.shared_per_sm,
                    limits.shared_per_block_optin,
                ),
                _ => true,
            };
            if fits {
                all.push(Occupancy {
                    threads,
                    blocks_per_sm: blocks,
                });
            }
            blocks *= 2;
        }
    }
    all
}

/// The allocations each L2 headline point is measured in (the suite's own buffer and fresh
/// ones of the point's footprint).
pub const L2_ALLOCATIONS: usize = 3;

/// Occupancies whose rates lie within this share of the best are a tie for a sweep: the
/// rates of full SMs differ by about that much from one process to the next (7,454-7,520 GB/s
/// for 2,048 threads per SM in three shapes on one H100).
pub const SWEEP_TIE: f64 = 0.02;

/// The occupancy a device sweep runs at, of `(occupancy, bytes per second)` candidates: of
/// those within [`SWEEP_TIE`] of the best rate, the one with the most threads per SM (many
/// loads in flight keep a level's plateau level, and the pick stays put when the rates swap
/// within their noise), then the faster. `None` where no candidate has a rate.
pub fn sweep_pick(candidates: &[(Occupancy, f64)]) -> Option<Occupancy> {
    let best = candidates
        .iter()
        .map(|&(_, rate)| rate)
        .filter(|rate| rate.is_finite() && *rate > 0.0)
        .fold(None, |best: Option<f64>, rate| {
            Some(best.map_or(rate, |b| b.max(rate)))
        })?;
    candidates
        .iter()
        .filter(|&&(_, rate)| rate.is_finite() && rate >= best * (1.0 - SWEEP_TIE))
        .max_by(|a, b| {
            let threads = |o: &Occupancy| o.threads * o.blocks_per_sm;
            threads(&a.0)
                .cmp(&threads(&b.0))
                .then(a.1.total_cmp(&b.1))
        })
        .map(|&(o, _)| o)
}

/// Footprints from `from` to `to` (inclusive), `per_doubling` geometric steps per doubling,
/// each rounded down to a multiple of `unit`, without repeats.
pub fn footprints(from: u64, to: u64, per_doubling: u32, unit: u64) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    let step = 2f64.powf(1.0 / f64::from(per_doubling));
    let mut f = from as f64;
    while f <= to as f64 * 1.0001 {
        let rounded = ((f as u64) / unit).max(1) * unit;
        if out.last() != Some(&rounded) {
            out.push(rounded);
        }
        f *= step;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100_like() -> Limits {
        Limits {
            multiprocessors: 132,
            max_threads_per_sm: 2048,
            max_blocks_per_sm: 32,
            shared_per_sm: 233_472,
            shared_per_block_optin: 232_448,
            l2_bytes: 50 << 20,
        }
    }

    fn occupancy(threads: u32, blocks_per_sm: u32) -> Occupancy {
        Occupancy {
            threads,
            blocks_per_sm,
        }
    }

    #[test]
    fn a_sweep_takes_the_fullest_sm_of_a_tie_and_keeps_it_when_the_rates_swap() {
        // One process: 256 x 8 ahead; the next: 128 x 16 ahead, by as little; 128 x 4 is
        // fast in both but has half the threads.
        let first = [
            (occupancy(128, 4), 7_400.0),
            (occupancy(128, 16), 7_454.0),
            (occupancy(256, 8), 7_520.0),
            (occupancy(512, 4), 7_472.0),
        ];
        let second = [
            (occupancy(128, 4), 7_530.0),
            (occupancy(128, 16), 7_505.0),
            (occupancy(256, 8), 7_481.0),
            (occupancy(512, 4), 7_480.0),
        ];
        let a = sweep_pick(&first).expect("a pick");
        let b = sweep_pick(&second).expect("a pick");
        assert_eq!(a.threads * a.blocks_per_sm, 2048);
        assert_eq!(b.threads * b.blocks_per_sm, 2048);
        // Within the tie the faster full shape; both are full SMs, so the curve is the same kind.
        assert_eq!(a, occupancy(256, 8));
        assert_eq!(b, occupancy(128, 16));
    }

    #[test]
    fn a_sweep_takes_a_smaller_occupancy_only_where_it_is_clearly_faster() {
        let clear = [(occupancy(128, 4), 8_000.0), (occupancy(256, 8), 7_500.0)];
        assert_eq!(sweep_pick(&clear), Some(occupancy(128, 4)));
        let none = [(occupancy(128, 4), f64::NAN), (occupancy(256, 8), 0.0)];
        assert_eq!(sweep_pick(&none), None);
        assert_eq!(sweep_pick(&[]), None);
    }

    #[test]
    fn footprints_step_geometrically_in_whole_units() {
        let unit = 16 << 10;
        let f = footprints(1 << 20, 1 << 30, 3, unit);
        assert!(f.windows(2).all(|w| w[0] < w[1]));
        assert!(
            f.iter()
                .all(|b| b % unit == 0 && *b >= 1 << 20 && *b <= 1 << 30)
        );
        // Ten doublings at three points each, both ends included.
        assert_eq!(f.len(), 31);
        assert_eq!((f[0], f[30]), (1 << 20, 1 << 30));
    }

    #[test]
    fn candidates_fit_the_sm() {
        let limits = h100_like();
        let global = candidates(Level::L2, &limits);
        assert!(global.iter().all(|o| o.threads * o.blocks_per_sm <= 2048));
        assert!(global.contains(&Occupancy {
            threads: 128,
            blocks_per_sm: 16
        }));
        assert!(!global.contains(&Occupancy {
            threads: 1024,
            blocks_per_sm: 4
        }));
        let shared = candidates(Level::Shared, &limits);
        assert!(shared.iter().all(|o| {
            u64::from(o.blocks_per_sm) * (shared_bytes(o.threads) + 1024) <= limits.shared_per_sm
        }));
        // 1024 threads need 64 KiB each: three fit, four do not, so 1 and 2 are tried.
        assert!(shared.contains(&Occupancy {
            threads: 1024,
            blocks_per_sm: 2
        }));
        assert!(
            !shared
                .iter()
                .any(|o| o.threads == 1024 && o.blocks_per_sm == 4)
        );
    }

    #[test]
    fn search_footprints_sit_inside_and_past_their_levels() {
        let limits = h100_like();
        assert!(search_footprint(Level::L2, &limits, 1 << 30) < limits.l2_bytes / 2);
        assert!(search_footprint(Level::Dram, &limits, 4 << 30) >= 16 * limits.l2_bytes);
        assert_eq!(search_footprint(Level::Dram, &limits, 1 << 29), 1 << 29);
    }

    #[test]
    fn only_dram_points_of_private_slices_take_them_by_ticket_and_only_l2_reads_stream() {
        for kernel in Kernel::ALL {
            let at_dram = Level::Dram.slice_order(kernel);
            assert_eq!(
                at_dram == SliceOrder::Ticket,
                kernel.takes_ticket(),
                "{kernel:?}"
            );
            let reads = [Kernel::ReadDevice, Kernel::ReadDeviceStrong];
            assert_eq!(
                Level::L2.slice_order(kernel) == SliceOrder::Stream,
                reads.contains(&kernel),
                "{kernel:?}"
            );
            for level in [Level::Shared, Level::L1] {
                assert_eq!(
                    level.slice_order(kernel),
                    SliceOrder::Fixed,
                    "{level:?} {kernel:?}"
                );
            }
        }
        // The shared-line read keeps its chunks whatever the level.
        assert_eq!(
            Level::Dram.slice_order(Kernel::ReadDeviceShared),
            SliceOrder::Fixed
        );
    }

    #[test]
    fn only_the_l2_headline_launches_run_long() {
        let config = BandwidthConfig {
            repeats: 5,
            sweep_repeats: 3,
            min_seconds: 0.001,
            headline_min_seconds: 0.008,
            points_per_doubling: 3,
            max_device_bytes: 1 << 30,
            max_sm_bytes: 4 << 20,
        };
        assert_eq!(config.headline_seconds(Level::L2), 0.008);
        for level in [Level::Shared, Level::L1, Level::Dram] {
            assert_eq!(config.headline_seconds(level), 0.001, "{level:?}");
        }
        let long = BandwidthConfig {
            min_seconds: 0.02,
            ..config
        };
        assert_eq!(long.headline_seconds(Level::L2), 0.02);
    }
}

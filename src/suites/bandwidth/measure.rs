//! `gpubench bandwidth`: read, write and copy bandwidth against footprint for shared memory,
//! L1, L2 and DRAM (Wong et al. measure latency per level; this measures the other axis, as
//! gpu-benches and Luo et al. 2024 do, with our own kernels in cuda/bandwidth.cu).
//!
//! Method. Every access is a 16-byte vector and every thread keeps four in flight. For each
//! level a short search first picks the occupancy (threads per block × blocks per SM, every
//! pair the SM allows) that moves the most bytes at a footprint well inside that level. Shared
//! memory's write and copy are measured at its read's winner; past L1 every operation (weak
//! and strong read, write, copy) has its own search at L2 and at DRAM, since many occupancies
//! read at the same rate but write and copy up to 12 % apart, so a figure taken at whichever
//! read won did not repeat from run to run. The sweeps run at the winners (each device-wide
//! operation at its own L2 winner with the sweep's fixed slices: the L2's reads search again
//! with fixed slices for their sweeps and take, of the occupancies within [`SWEEP_TIE`] of the
//! best, the one with the most threads per SM, [`sweep_pick`]):
//! reads through L1 against the footprint of each SM (every block its own region), and weak
//! reads past L1, strong (`.cg`) reads, writes and copies against the device-wide footprint,
//! from one slice per SM to far past L2. Every line is read by one block at a time: blocks that
//! shared lines would be served by one another's fetches, not by the level measured. The L2's
//! reads (search and headline) stream: far more blocks than are resident, each reading one
//! slice once, as gpu-benches' `gpu-l2-cache` runs, wherever the slices outnumber the resident
//! blocks (else fixed slices); its write and copy and every sweep keep fixed slices, a block
//! reading the same slices from pass to pass; at DRAM the blocks take the slices in order from
//! an atomic ticket, which keeps the slices in flight together and ends no pass on a few
//! blocks ([`Level::slice_order`]). Each
//! launch is calibrated (passes doubled until it runs at least `--min-ms`; the L2's headline
//! figures' launches at least `--headline-ms`, so a slow start of each launch is spread over
//! enough passes to repeat between processes), then timed between CUDA events, `--repeats`
//! times for a headline point and `--sweep-repeats` times for a sweep point (the sweeps are
//! half the suite's GPU time); a point's bandwidth is the median of the repeats, with their
//! range. The L2's write and copy headlines are measured in [`L2_ALLOCATIONS`] allocations of
//! their footprint (where their lines land moves them by up to 5 %; the reads do not move),
//! the median of the allocations' medians with the range over all their launches
//! ([`Bench::over_allocations`]). Bytes per clock per SM divide by the SM clock measured at the start of the run and
//! the SM count.

use std::time::Duration;

use anyhow::{Result, bail};

pub use super::levels::*;
use crate::analysis::stats::Summary;
use crate::experiments::launch_size::calibrated_passes;
use crate::gpu::Gpu;
use crate::gpu::launch::bandwidth::{
    self as launcher, Buffers, Kernel, Launch, Occupancy, SliceOrder,
};

/// One timed point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub level: Level,
    pub operation: &'static str,
    pub placement: &'static str,
    pub threads: u32,
    pub blocks_per_sm: u32,
    pub footprint_bytes: u64,
    pub order: SliceOrder,
    pub passes: u32,
    pub bytes_per_launch: u64,
    /// Over the repeats: bytes per second.
    pub median_bytes_per_second: f64,
    pub min_bytes_per_second: f64,
    pub max_bytes_per_second: f64,
    pub repeats: usize,
    /// The allocations of the footprint its launches ran in (1 but for the L2's write and
    /// copy headlines, [`L2_ALLOCATIONS`]).
    pub allocations: usize,
}

pub fn describe(kernel: Kernel) -> (&'static str, &'static str) {
    match kernel {
        Kernel::ReadDevice => ("read", "device"),
        Kernel::ReadDeviceStrong => ("strong read", "device"),
        Kernel::ReadDeviceShared => ("shared-line read", "device"),
        Kernel::WriteDevice => ("write", "device"),
        Kernel::CopyDevice => ("copy", "device"),
        Kernel::ReadSm => ("read", "sm"),
        Kernel::SharedRead => ("read", "shared"),
        Kernel::SharedWrite => ("write", "shared"),
        Kernel::SharedCopy => ("copy", "shared"),
    }
}

/// Measures one point: calibrates the passes, then times `repeats` launches.
pub struct Bench<'a> {
    pub gpu: &'a mut Gpu,
    pub buffers: Buffers,
    pub limits: Limits,
    pub config: &'a BandwidthConfig,
    pub launches: u64,
}

const DEADLINE: Duration = Duration::from_secs(20);

impl Bench<'_> {
    /// One point, its launches calibrated to run at least `min_seconds`; its slices handed out
    /// in `order` where the launch can keep it ([`Launch::resolved_order`]).
    #[allow(clippy::too_many_arguments)]
    pub fn point(
        &mut self,
        level: Level,
        kernel: Kernel,
        occupancy: Occupancy,
        footprint: u64,
        order: SliceOrder,
        repeats: u32,
        min_seconds: f64,
    ) -> Result<Point> {
        let sms = self.limits.multiprocessors;
        let mut launch = Launch {
            kernel,
            occupancy,
            footprint_bytes: footprint,
            passes: 1,
            order,
        };
        launch.order = launch.resolved_order(sms);
        launch.passes = calibrated_passes(min_seconds, 1e7, |passes| {
            self.time(&Launch { passes, ..launch })
        })?;
        let bytes = launch.bytes_moved(sms);
        let mut rates = Vec::new();
        for _ in 0..repeats {
            rates.push(bytes as f64 / self.time(&launch)?);
        }
        let Some(Summary {
            min, median, max, ..
        }) = Summary::of(&rates)
        else {
            bail!("{} gave no bandwidth to summarise", kernel.entry());
        };
        let (operation, placement) = describe(kernel);
        Ok(Point {
            level,
            operation,
            placement,
            threads: occupancy.threads,
            blocks_per_sm: occupancy.blocks_per_sm,
            footprint_bytes: launch.covered_bytes(),
            order: launch.order,
            passes: launch.passes,
            bytes_per_launch: bytes,
            median_bytes_per_second: median,
            min_bytes_per_second: min,
            max_bytes_per_second: max,
            repeats: rates.len(),
            allocations: 1,
        })
    }

    fn time(&mut self, launch: &Launch) -> Result<f64> {
        self.launches += 1;
        let seconds = launcher::run(self.gpu, &mut self.buffers, launch, DEADLINE)?;
        if seconds.is_nan() || seconds <= 0.0 {
            bail!("a {} launch reported no GPU time", launch.kernel.entry());
        }
        Ok(seconds)
    }
}

/// Everything one run measures.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Every candidate of every level's occupancy search.
    pub search: Vec<Point>,
    /// The candidates of the reads' sweeps' own searches, with fixed slices
    /// ([`Bench::sweep_occupancy`]).
    pub sweep_search: Vec<Point>,
    /// Each allocation's point of the L2's write and copy headlines
    /// ([`Bench::over_allocations`]).
    pub allocations: Vec<Point>,
    /// Each level's best occupancy.
    pub winners: Vec<(Level, Occupancy)>,
    /// Each level's figures at its winner and search footprint: shared read / write / copy,
    /// L1 read, and L2 and DRAM read / write / copy.
    pub headline: Vec<Point>,
    /// Reads through L1 against the footprint per SM, at L1's winner.
    pub l1_sweep: Vec<Point>,
    /// Reads, writes and copies against the device footprint, each at its sweep's occupancy.
    pub device_sweeps: Vec<(Kernel, Vec<Point>)>,
}

/// The device-wide kernels (read, strong read, write, copy), in the order the sweeps and
/// headline figures list them.
fn device_kernels() -> impl Iterator<Item = Kernel> {
    Kernel::ALL.into_iter().filter(|k| k.device_wide())
}

impl Bench<'_> {
    /// The occupancy (of every candidate the SM allows) at which `kernel` moves the most
    /// bytes at `level`'s search footprint; every candidate's point goes to `search`.
    fn search(
        &mut self,
        level: Level,
        kernel: Kernel,
        search: &mut Vec<Point>,
    ) -> Result<Occupancy> {
        let points = self.search_points(level, kernel, level.slice_order(kernel))?;
        let best = points.iter().copied().reduce(|best, point| {
            if point.median_bytes_per_second > best.median_bytes_per_second {
                point
            } else {
                best
            }
        });
        search.extend(&points);
        let Some(best) = best else {
            bail!(
                "no occupancy fits the {} search on this device",
                level.name()
            );
        };
        Ok(Occupancy {
            threads: best.threads,
            blocks_per_sm: best.blocks_per_sm,
        })
    }

    /// Every candidate occupancy of `level` timed for `kernel` at the level's search footprint,
    /// its slices handed out in `order`.
    fn search_points(
        &mut self,
        level: Level,
        kernel: Kernel,
        order: SliceOrder,
    ) -> Result<Vec<Point>> {
        let limits = self.limits;
        let mut points = Vec::new();
        for occupancy in candidates(level, &limits) {
            let footprint = match level {
                Level::Shared => shared_bytes(occupancy.threads),
                _ => search_footprint(level, &limits, self.config.max_device_bytes),
            };
            let min_seconds = self.config.min_seconds;
            points.push(self.point(level, kernel, occupancy, footprint, order, 3, min_seconds)?);
        }
        Ok(points)
    }

    /// `first` (measured in the suite's own buffer) measured again in [`L2_ALLOCATIONS`] − 1
    /// fresh allocations of its footprint, each point into `each`: the median of the
    /// allocations' medians, the range over all of their launches. The L2's write and copy move
    /// with where their lines land: on one H100 the suite's own buffer wrote 3,899-4,031 GB/s
    /// over five processes and fresh allocations of the footprint 3,803-3,889, the copy 6,532-
    /// 6,742 against 6,033-6,512; its reads did not move (8,141-8,181 in every allocation).
    fn over_allocations(
        &mut self,
        first: Point,
        kernel: Kernel,
        footprint: u64,
        order: SliceOrder,
        min_seconds: f64,
        each: &mut Vec<Point>,
    ) -> Result<Point> {
        let occupancy = Occupancy {
            threads: first.threads,
            blocks_per_sm: first.blocks_per_sm,
        };
        let repeats = self.config.repeats;
        let mut points = vec![first];
        for _ in 1..L2_ALLOCATIONS {
            let fresh = Buffers::new(self.gpu, footprint, self.limits.multiprocessors)?;
            let own = std::mem::replace(&mut self.buffers, fresh);
            let point = self.point(
                first.level,
                kernel,
                occupancy,
                footprint,
                order,
                repeats,
                min_seconds,
            );
            self.buffers = own;
            points.push(point?);
        }
        each.extend(&points);
        let medians: Vec<f64> = points.iter().map(|p| p.median_bytes_per_second).collect();
        let Some(median) = crate::analysis::stats::median(&medians) else {
            bail!("{} gave no bandwidth to summarise", kernel.entry());
        };
        Ok(Point {
            median_bytes_per_second: median,
            min_bytes_per_second: points
                .iter()
                .map(|p| p.min_bytes_per_second)
                .fold(f64::INFINITY, f64::min),
            max_bytes_per_second: points
                .iter()
                .map(|p| p.max_bytes_per_second)
                .fold(0.0, f64::max),
            repeats: points.iter().map(|p| p.repeats).sum(),
            allocations: points.len(),
            ..first
        })
    }

    /// The occupancy `kernel`'s device sweep runs at. Where the L2's search handed out its
    /// slices as the sweep does (fixed), its winner; where it streamed (the reads), a search of
    /// its own with fixed slices, its points into `sweep_search`, taken by [`sweep_pick`]: every
    /// occupancy streams the L2 at the same rate within 1 %, so the streamed winner was a coin
    /// toss (one 128-thread block per SM in one process, eight in the next), and with fixed
    /// slices one block per SM reads the L2 at half the rate of eight and with no level: the
    /// device read's fall-off moved from 9.7 to 25 MiB between processes on one H100.
    fn sweep_occupancy(
        &mut self,
        kernel: Kernel,
        l2_winner: Occupancy,
        sweep_search: &mut Vec<Point>,
    ) -> Result<Occupancy> {
        if Level::L2.slice_order(kernel) == SliceOrder::Fixed {
            return Ok(l2_winner);
        }
        let points = self.search_points(Level::L2, kernel, SliceOrder::Fixed)?;
        sweep_search.extend(&points);
        let rates: Vec<(Occupancy, f64)> = points
            .iter()
            .map(|p| {
                let occupancy = Occupancy {
                    threads: p.threads,
                    blocks_per_sm: p.blocks_per_sm,
                };
                (occupancy, p.median_bytes_per_second)
            })
            .collect();
        Ok(sweep_pick(&rates).unwrap_or(l2_winner))
    }

    /// The occupancy searches, the headline points and the sweeps.
    pub fn measure(&mut self) -> Result<Measured> {
        let limits = self.limits;
        let max_device = self.config.max_device_bytes;
        let repeats = self.config.repeats;
        let sweep_repeats = self.config.sweep_repeats;
        let sweep = self.config.min_seconds;
        let per_doubling = self.config.points_per_doubling;
        let mut search = Vec::new();
        let mut winners = Vec::new();
        for level in Level::ALL {
            let occupancy = self.search(level, level.search_kernel(), &mut search)?;
            winners.push((level, occupancy));
        }
        let winner = |level: Level| {
            winners
                .iter()
                .find(|(l, _)| *l == level)
                .map(|(_, o)| *o)
                .expect("every level was searched")
        };
        let mut headline = Vec::new();
        let shared = winner(Level::Shared);
        for kernel in [Kernel::SharedRead, Kernel::SharedWrite, Kernel::SharedCopy] {
            let bytes = shared_bytes(shared.threads);
            let min_seconds = self.config.headline_seconds(Level::Shared);
            headline.push(self.point(
                Level::Shared,
                kernel,
                shared,
                bytes,
                SliceOrder::Fixed,
                repeats,
                min_seconds,
            )?);
        }
        let footprint = search_footprint(Level::L1, &limits, max_device);
        headline.push(self.point(
            Level::L1,
            Kernel::ReadSm,
            winner(Level::L1),
            footprint,
            SliceOrder::Fixed,
            repeats,
            self.config.headline_seconds(Level::L1),
        )?);
        // Past L1, each operation at its own winner (the reads' search is the level's).
        let mut own_winners: Vec<(Level, Kernel, Occupancy)> = Vec::new();
        let mut allocations = Vec::new();
        for level in [Level::L2, Level::Dram] {
            let footprint = search_footprint(level, &limits, max_device);
            for kernel in device_kernels() {
                let occupancy = if kernel == level.search_kernel() {
                    winner(level)
                } else {
                    self.search(level, kernel, &mut search)?
                };
                let min_seconds = self.config.headline_seconds(level);
                let order = level.slice_order(kernel);
                let mut point =
                    self.point(level, kernel, occupancy, footprint, order, repeats, min_seconds)?;
                if level == Level::L2 && matches!(kernel, Kernel::WriteDevice | Kernel::CopyDevice)
                {
                    point = self.over_allocations(
                        point,
                        kernel,
                        footprint,
                        order,
                        min_seconds,
                        &mut allocations,
                    )?;
                }
                headline.push(point);
                own_winners.push((level, kernel, occupancy));
            }
        }
        let l2_winner_of = |kernel: Kernel| {
            own_winners
                .iter()
                .find(|(l, k, _)| *l == Level::L2 && *k == kernel)
                .map(|(_, _, o)| *o)
                .expect("every device operation was searched at L2")
        };
        let l1 = winner(Level::L1);
        let unit = launcher::VECTOR_BYTES * u64::from(l1.threads * l1.blocks_per_sm);
        let mut l1_sweep = Vec::new();
        for footprint in footprints(16 << 10, self.config.max_sm_bytes, per_doubling, unit) {
            l1_sweep.push(self.point(
                Level::L1,
                Kernel::ReadSm,
                l1,
                footprint,
                SliceOrder::Fixed,
                sweep_repeats,
                sweep,
            )?);
        }
        let mut device_sweeps = Vec::new();
        let mut sweep_search = Vec::new();
        for kernel in device_kernels() {
            let l2 = self.sweep_occupancy(kernel, l2_winner_of(kernel), &mut sweep_search)?;
            let slice = launcher::UNROLL * launcher::VECTOR_BYTES * u64::from(l2.threads);
            // From one slice per SM (smaller regions leave SMs idle) to the largest footprint.
            let first = (u64::from(limits.multiprocessors) * slice).max(1 << 20);
            let unit = if kernel == Kernel::CopyDevice {
                2 * slice
            } else {
                slice
            };
            let mut points = Vec::new();
            for footprint in footprints(first, max_device, per_doubling, unit) {
                let order = SliceOrder::Fixed;
                let point = self.point(
                    Level::L2,
                    kernel,
                    l2,
                    footprint,
                    order,
                    sweep_repeats,
                    sweep,
                )?;
                points.push(point);
            }
            device_sweeps.push((kernel, points));
        }
        Ok(Measured {
            search,
            sweep_search,
            allocations,
            winners,
            headline,
            l1_sweep,
            device_sweeps,
        })
    }
}

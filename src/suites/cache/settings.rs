//! `gpubench cache`'s arguments: the space, the chain and the sweep; each space's defaults
//! for the flags whose default depends on it, and every check of the flags ([`Flags`]).

use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};

use super::measure::{Order, Space};
use crate::error::{UsageError, bail_usage};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChainChoice {
    Stride,
    Random,
}

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct CacheArgs {
    /// Memory space: global (default loads), l2 (ld.global.cg), readonly (ld.global.nc),
    /// shared, constant (index in a per-thread register: LDC, the constant caches),
    /// constant-uniform (warp-uniform index: ULDC, the uniform datapath), texture (tex1Dfetch
    /// through a texture object), instruction (straight-line code of growing size) or tlb
    /// (page-scale strides over GiBs).
    #[arg(long, value_enum, default_value_t = Space::Global)]
    pub space: Space,
    /// Visiting order: stride (address order, as Wong) or random (defeats prefetching).
    #[arg(long, value_enum, default_value_t = ChainChoice::Stride)]
    pub chain: ChainChoice,
    /// Seed of the random order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Chain stride in bytes (default: 32; 128 for l2, 4 for shared, 64 for constant, 16 (one
    /// instruction) for instruction, 2 MiB for tlb).
    #[arg(long)]
    pub stride: Option<u64>,
    /// Smallest footprint in bytes.
    #[arg(long)]
    pub min_bytes: Option<u64>,
    /// Largest footprint in bytes.
    #[arg(long)]
    pub max_bytes: Option<u64>,
    /// Points of the fine sweep after each rise (default: 160; 32 for instruction and tlb,
    /// whose points cost a compile or a GiB-scale chain).
    #[arg(long)]
    pub fine_points: Option<u64>,
    /// How finely the L2 and instruction spaces bisect each rise: to 1/N of its footprint.
    /// 512 is about 48 KiB at 24 MiB and 256 B at 128 KiB of code, finer than the rises
    /// themselves; each halving costs an L2 point of tens of MiB or an instruction-space
    /// compile round. The other spaces bisect to one stride
    #[arg(long, default_value_t = 512)]
    pub resolution: u32,
    /// The L2 space (one thread) times its loads over at most the first N MiB of the chain,
    /// after a warm pass over all of it; a footprint up to N MiB is timed whole.
    #[arg(long, default_value_t = 32)]
    pub timed_span_mib: u64,
    /// Threads chasing at once, each from its own place in the chain (global, l2, readonly).
    #[arg(long, default_value_t = 1)]
    pub threads: u32,
    /// Also time loads one by one (1024 per doubling footprint) into loads.csv (global, l2,
    /// readonly).
    #[arg(long)]
    pub per_load: bool,
    /// Shared-memory carveout preferences in percent, comma-separated (global, readonly): the
    /// first is used for the sweep, every one gets a sweep of its own that locates the L1
    /// (carveout.csv). Default: 0 (the most L1).
    #[arg(long, value_delimiter = ',')]
    pub carveout: Vec<i32>,
    /// Skip the conflict experiment (N addresses at a fixed stride: ways and way size).
    #[arg(long)]
    pub no_conflict: bool,
    /// TLB strides in bytes, comma-separated: each gets a sweep of its own (tlb_strides.csv);
    /// the first is the main sweep's. Default: 2 MiB, 32 MiB, 512 MiB, 1 GiB.
    #[arg(long, value_delimiter = ',')]
    pub tlb_strides: Vec<u64>,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
}

/// What metadata.json's settings record of a run: what `run` resolved from its flags and the
/// device (the stride, the footprints, the chain and method in words). Written by `run`; read
/// back by the redraw (the stride of its title) and `analyze cache` (the space of a saved
/// chase's run).
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub chain: String,
    /// Runs before it was recorded (the format-1 fixtures) lack it.
    pub coarse_points_per_doubling: Option<u32>,
    pub fine_points: u64,
    pub max_bytes: u64,
    pub method: String,
    pub min_bytes: u64,
    pub per_load: bool,
    /// The carveout the sweep asked for; null for a space without global loads.
    pub preferred_shared_carveout_percent: Option<i32>,
    pub space: String,
    pub stride_bytes: u64,
    pub threads: u32,
}

/// Per-space defaults: (stride, smallest, largest, fine points), each sweep starting on its
/// fastest plateau and ending past the caches in front of memory. The TLB's largest footprint
/// depends on the device's memory and is set once it is open.
pub(super) fn defaults(space: Space) -> (u64, u64, Option<u64>, u64) {
    match space {
        Space::Global | Space::Readonly | Space::Texture => (32, 4 << 10, Some(4 << 20), 160),
        // The L2's end comes from the device (`l2_largest`).
        Space::L2 => (128, 256 << 10, None, 48),
        Space::Shared => (4, 1 << 10, Some(48 << 10), 160),
        Space::Constant | Space::ConstantUniform => (64, 64, Some(64 << 10), 160),
        Space::Instruction => (16, 1 << 10, Some(512 << 10), 32),
        Space::Tlb => (2 << 20, 8 << 20, None, 32),
    }
}

/// The TLB sweep's default end: the largest doubling of `smallest` within 85 % of the
/// device's memory.
fn tlb_largest(smallest: u64, memory_bytes: u64) -> u64 {
    let limit = memory_bytes / 20 * 17;
    let mut largest = smallest;
    while let Some(next) = largest.checked_mul(2).filter(|&n| n <= limit) {
        largest = next;
    }
    largest
}

/// The L2 sweep's default end: at least twice the driver's L2 size (the far half and the step
/// to DRAM sit near the size itself: 49 MiB on the H100's 50, 49–64 MiB on the H200's 60),
/// a power of two, no less than 128 MiB.
fn l2_largest(l2_bytes: u64) -> u64 {
    (2 * l2_bytes).next_power_of_two().max(128 << 20)
}

/// What `gpubench cache`'s flags ask, checked: every check of the flags is here, [`Flags::check`]
/// before a device is opened and [`Flags::largest`] once it is.
pub(super) struct Flags {
    pub(super) space: Space,
    pub(super) order: Order,
    pub(super) stride: u64,
    pub(super) smallest: u64,
    /// The default largest footprint, where the space has one (L2 and tlb take theirs from
    /// the device).
    pub(super) largest: Option<u64>,
    pub(super) fine_points: u64,
    /// The L2 chase's timed span, in bytes.
    pub(super) span: u64,
}

impl Flags {
    pub(super) fn check(args: &CacheArgs) -> Result<Flags, UsageError> {
        let space = args.space;
        let order = match args.chain {
            ChainChoice::Stride => Order::Stride,
            ChainChoice::Random => Order::Random(args.seed),
        };
        let (stride, smallest, largest, fine_points) = defaults(space);
        let stride = args.stride.unwrap_or(stride);
        let smallest = args.min_bytes.unwrap_or(smallest);
        let fine_points = args.fine_points.unwrap_or(fine_points);
        // Pointer chases (the global spaces and tlb) need 8-byte elements.
        let unit = match space {
            Space::Instruction => 16,
            Space::Global | Space::L2 | Space::Readonly | Space::Tlb => 8,
            _ => 4,
        };
        if stride == 0
            || !stride.is_multiple_of(unit)
            || smallest < stride
            || (space == Space::Tlb && smallest < 2 * stride)
            || !smallest.is_multiple_of(stride)
            || args
                .max_bytes
                .is_some_and(|largest| smallest.checked_mul(4).is_none_or(|m| largest < m))
        {
            bail_usage!(
                "--stride must be a positive multiple of {unit}, --min-bytes a multiple of it (two strides at least for tlb), and --max-bytes at least 4 times --min-bytes (three doublings at least)"
            );
        }
        if space == Space::Shared && args.max_bytes.is_some_and(|largest| largest > 48 << 10) {
            bail_usage!(
                "the shared space holds at most 48 KiB per block here; pass --max-bytes 49152 or less"
            );
        }
        if space != Space::Tlb && args.max_bytes.is_some_and(|largest| largest > 8 << 30) {
            bail_usage!(
                "--max-bytes must be at most 8 GiB (use --space tlb for larger footprints)"
            );
        }
        if fine_points == 0 {
            bail_usage!("--fine-points must be at least 1");
        }
        if !(8..=1 << 16).contains(&args.resolution) {
            bail_usage!(
                "--resolution takes 8 to 65536 (a rise is bisected to 1/N of its footprint)"
            );
        }
        if !(1..=1024).contains(&args.timed_span_mib) {
            bail_usage!("--timed-span-mib takes 1 to 1024 (MiB)");
        }
        let span = args.timed_span_mib << 20;
        if !(1..=1024).contains(&args.threads) || (args.threads > 1 && !space.global_loads()) {
            bail_usage!(
                "--threads takes 1 to 1024, and more than 1 only with --space global, l2 or readonly"
            );
        }
        if args.per_load && !space.global_loads() {
            bail_usage!(
                "--per-load works with --space global, l2 or readonly; drop it for this space"
            );
        }
        if !args.carveout.is_empty()
            && (!matches!(space, Space::Global | Space::Readonly)
                || args.carveout.iter().any(|p| !(0..=100).contains(p)))
        {
            bail_usage!(
                "--carveout takes percentages from 0 to 100, with --space global or readonly"
            );
        }
        if !args.tlb_strides.is_empty()
            && (space != Space::Tlb
                || args
                    .tlb_strides
                    .iter()
                    .any(|&s| s == 0 || !s.is_multiple_of(8) || s > 1 << 40))
        {
            bail_usage!(
                "--tlb-strides takes positive multiples of 8 bytes up to 1 TiB, with --space tlb"
            );
        }
        Ok(Flags {
            space,
            order,
            stride,
            smallest,
            largest,
            fine_points,
            span,
        })
    }

    /// The sweep's largest footprint: `--max-bytes`, else the space's default (the L2's from
    /// the device's `l2_bytes`, the TLB's from its `memory`), checked against the device's
    /// memory and `--min-bytes` (once the device is open).
    pub(super) fn largest(
        &self,
        args: &CacheArgs,
        l2_bytes: u64,
        memory: u64,
    ) -> Result<u64, UsageError> {
        let Flags {
            space, smallest, ..
        } = *self;
        let largest = match (args.max_bytes, self.largest) {
            (Some(given), _) => given,
            (None, Some(default)) => default,
            (None, None) if space == Space::L2 => l2_largest(l2_bytes),
            (None, None) => tlb_largest(smallest, memory),
        };
        if space == Space::Tlb && largest > memory / 10 * 9 {
            bail_usage!(
                "--max-bytes {largest} is more than 90 % of the device's {memory} bytes; pass a smaller one"
            );
        }
        if smallest.checked_mul(4).is_none_or(|m| largest < m) {
            bail_usage!(
                "--max-bytes must be at least 4 times --min-bytes (three doublings at least)"
            );
        }
        Ok(largest)
    }
}

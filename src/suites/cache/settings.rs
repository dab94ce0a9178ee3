//! `gpubench cache`'s arguments: the space, the chain and the sweep.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpaceChoice {
    Global,
    L2,
    Readonly,
    Shared,
    Constant,
    ConstantUniform,
    Texture,
    Instruction,
    Tlb,
}

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
    #[arg(long, value_enum, default_value_t = SpaceChoice::Global)]
    pub space: SpaceChoice,
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
    /// CUDA device index; `all`, or a list such as 0,2,3, runs once per GPU in child processes,
    /// side by side (`--serial`: one after another), under one directory with devices.json.
    #[arg(long, default_value = "0")]
    pub device: crate::cli::DeviceSelection,
    /// New run directory (default: gpubench-runs/<UTC time>-cache); must not exist.
    #[arg(long)]
    pub output: Option<PathBuf>,
}

/// What metadata.json's settings record of a run: what `run` resolved from its flags and the
/// device (the stride, the footprints, the chain and method in words). Written by `run`; read
/// back by the redraw (the stride of its title) and `analyze cache` (the space of a saved
/// chase's run).
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub chain: String,
    /// Runs before it was recorded (the format-1 fixtures) lack it.
    #[serde(default)]
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

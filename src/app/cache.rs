//! `gpubench cache --space …` (sweep one memory space and read its levels) and
//! `gpubench analyze cache FILE.csv` (the same inference on a saved curve, no GPU).

use anyhow::Result;
use serde_json::json;

use super::suite;
use crate::analysis::cache_inference;
use crate::analysis::per_load as per_load_analysis;
use crate::cli::{AnalyzeCacheArgs, CacheArgs, ChainChoice, SpaceChoice};
use crate::error::UsageError;
use crate::experiments::cache::{self, Order, Space, instruction, per_load, saved, tlb};
use crate::gpu::Gpu;
use crate::gpu::launch::TlbBuffer;
use crate::report::cache as cache_report;
use crate::report::cache_plot;

pub fn analyze_saved(args: &AnalyzeCacheArgs) -> Result<()> {
    let points = saved::load(&args.file)?;
    let report = cache_inference::infer(&points).ok_or_else(|| {
        UsageError::new(format!(
            "{}: the finest stride has fewer than 3 distinct footprints; sweep more footprints",
            args.file.display()
        ))
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", cache_report::render_text(&report));
    }
    Ok(())
}

/// Per-space defaults: (stride, smallest, largest, fine points), each sweep starting on its
/// fastest plateau and ending past the caches in front of memory. The TLB's largest footprint
/// depends on the device's memory and is set once it is open.
fn defaults(space: Space) -> (u64, u64, Option<u64>, u64) {
    match space {
        Space::Global | Space::Readonly | Space::Texture => (32, 4 << 10, Some(4 << 20), 160),
        Space::L2 => (128, 256 << 10, Some(128 << 20), 160),
        Space::Shared => (4, 1 << 10, Some(48 << 10), 160),
        Space::Constant => (64, 64, Some(64 << 10), 160),
        Space::Instruction => (16, 1 << 10, Some(512 << 10), 32),
        Space::Tlb => (2 << 20, 8 << 20, None, 32),
    }
}

/// The TLB sweep's default end: the largest doubling of `smallest` within 85 % of the
/// device's memory.
fn tlb_largest(smallest: u64, memory_bytes: u64) -> u64 {
    let limit = memory_bytes / 20 * 17;
    let mut largest = smallest;
    while largest * 2 <= limit {
        largest *= 2;
    }
    largest
}

/// `gpubench cache --space …`: sweep one space and read its levels.
pub fn run(args: &CacheArgs) -> Result<()> {
    let space = match args.space {
        SpaceChoice::Global => Space::Global,
        SpaceChoice::L2 => Space::L2,
        SpaceChoice::Readonly => Space::Readonly,
        SpaceChoice::Shared => Space::Shared,
        SpaceChoice::Constant => Space::Constant,
        SpaceChoice::Texture => Space::Texture,
        SpaceChoice::Instruction => Space::Instruction,
        SpaceChoice::Tlb => Space::Tlb,
    };
    let order = match args.chain {
        ChainChoice::Stride => Order::Stride,
        ChainChoice::Random => Order::Random(args.seed),
    };
    let (stride, smallest, largest, fine_points) = defaults(space);
    let stride = args.stride.unwrap_or(stride);
    let smallest = args.min_bytes.unwrap_or(smallest);
    let fine_points = args.fine_points.unwrap_or(fine_points);
    let unit = if space == Space::Instruction { 16 } else { 4 };
    if stride == 0
        || !stride.is_multiple_of(unit)
        || smallest < stride
        || (space == Space::Tlb && smallest < 2 * stride)
        || !smallest.is_multiple_of(stride)
        || args.max_bytes.is_some_and(|largest| largest < 4 * smallest)
    {
        return Err(UsageError::new(format!(
            "--stride must be a positive multiple of {unit}, --min-bytes a multiple of it (two strides at least for tlb), and --max-bytes at least 4 times --min-bytes (three doublings at least)"
        ))
        .into());
    }
    if space == Space::Shared && args.max_bytes.is_some_and(|largest| largest > 48 << 10) {
        return Err(UsageError::new(
            "the shared space holds at most 48 KiB per block here; pass --max-bytes 49152 or less",
        )
        .into());
    }
    if space != Space::Tlb && args.max_bytes.is_some_and(|largest| largest > 8 << 30) {
        return Err(UsageError::new(
            "--max-bytes must be at most 8 GiB (use --space tlb for larger footprints)",
        )
        .into());
    }
    if fine_points == 0 {
        return Err(UsageError::new("--fine-points must be at least 1").into());
    }
    if !(1..=1024).contains(&args.threads) || (args.threads > 1 && !space.global_loads()) {
        return Err(UsageError::new(
            "--threads takes 1 to 1024, and more than 1 only with --space global, l2 or readonly",
        )
        .into());
    }
    if args.per_load && !space.global_loads() {
        return Err(UsageError::new(
            "--per-load works with --space global, l2 or readonly; drop it for this space",
        )
        .into());
    }
    let entries: &[(&str, &str)] = match space {
        // The instruction space's kernels are generated later; loading the cache module still
        // proves the PTX this binary carries (and whose ISA they declare) loads on the driver.
        Space::Instruction => &[("cache", "chase_global")],
        Space::Tlb => &[("cache", "chase_tlb"), ("cache", "tlb_chain_init")],
        _ => &[("cache", space.entry())],
    };
    let mut gpu = suite::open(args.device, args.output.as_deref(), entries)?;
    let memory = gpu.properties()?.global_memory_bytes as u64;
    let largest = match (args.max_bytes, largest) {
        (Some(given), _) => given,
        (None, Some(default)) => default,
        (None, None) => tlb_largest(smallest, memory),
    };
    if space == Space::Tlb && largest > memory / 10 * 9 {
        return Err(UsageError::new(format!(
            "--max-bytes {largest} is more than 90 % of the device's {memory} bytes; pass a smaller one"
        ))
        .into());
    }
    if largest < 4 * smallest {
        return Err(UsageError::new(
            "--max-bytes must be at least 4 times --min-bytes (three doublings at least)",
        )
        .into());
    }
    let isa = crate::kernels::module("cache")
        .and_then(|m| m.isa_version())
        .unwrap_or("7.0");
    let settings = json!({
        "space": space.name(),
        "stride_bytes": stride,
        "min_bytes": smallest,
        "max_bytes": largest,
        "fine_points": fine_points,
        "threads": args.threads,
        "per_load": args.per_load,
        "chain": match order { Order::Stride => "fixed stride, address order".to_string(), Order::Random(seed) => format!("fixed stride, random order (seed {seed})") },
        "preferred_shared_carveout_percent": space.global_loads().then_some(crate::gpu::launch::CHASE_CARVEOUT_PERCENT),
        "method": match space {
            Space::Instruction => format!("generated straight-line PTX (ISA {isa}, 8 independent fma.rn.f32 chains) JIT-compiled per size; two passes, the second timed; 16 bytes per instruction"),
            Space::Tlb => "one element per stride in one buffer allocated at the largest footprint, chain scattered on the device, ld.global.cg; one warm pass, then at least one full timed pass; final element checked; then a stride sweep past the first reach for the page size".to_string(),
            _ => "one warm pass, then at least one full timed pass (>= 2048 loads); final index checked; coarse doubling, bisection at each rise, fine sweep after it".to_string(),
        },
    });
    let suite = suite::start(
        &mut gpu,
        "cache",
        args.output.as_deref(),
        &["cache"],
        settings,
    )?;
    let outcome = (|| -> Result<()> {
        let mut tlb_buffer = match space {
            Space::Tlb => Some(TlbBuffer::new(&gpu, largest)?),
            _ => None,
        };
        let sweep = cache::sweep(
            cache::RiseThreshold::of(space),
            stride,
            smallest,
            largest,
            fine_points,
            |footprint| match (space, tlb_buffer.as_mut()) {
                (Space::Instruction, _) => instruction::measure(&mut gpu, isa, footprint),
                (Space::Tlb, Some(buffer)) => {
                    tlb::measure(&mut gpu, buffer, order, footprint, stride)
                }
                _ => cache::measure_point(&mut gpu, space, order, args.threads, footprint, stride),
            },
        )?;
        suite.run.write_csv("chase.csv", &sweep.points)?;
        let report = cache_inference::infer(&sweep.points)
            .ok_or_else(|| anyhow::anyhow!("the sweep gave fewer than 3 footprints"))?;
        let tlb_summary = match tlb_buffer.as_mut() {
            Some(buffer) => Some(translation(&mut gpu, buffer, &suite, &report, stride)?),
            None => None,
        };
        drop(tlb_buffer);
        let granularity = match space {
            Space::Global | Space::L2 | Space::Readonly | Space::Texture | Space::Constant => {
                fetch_granularity(&mut gpu, &suite, space, &report, stride, largest)?
            }
            _ => None,
        };
        let per_load = if args.per_load {
            Some(per_load_sweep(
                &mut gpu, &suite, space, order, stride, smallest, largest,
            )?)
        } else {
            None
        };
        let device = &suite.metadata.device;
        suite.run.write_json(
            "cache.json",
            &json!({
                "space": space.name(),
                "report": report,
                "tlb": tlb_summary,
                "fetch_granularity": granularity,
                "per_load": per_load,
                "sweep": { "points": sweep.points.len(), "launches": sweep.launches, "seconds": sweep.seconds },
                "device_attributes": {
                    "l2_cache_bytes": device.l2_cache_bytes,
                    "shared_memory_per_multiprocessor_bytes": device.shared_memory_per_multiprocessor_bytes,
                    "global_memory_bytes": device.global_memory_bytes,
                },
            }),
        )?;
        let title = suite.title(&cache_plot::title(space.name(), stride, args.threads));
        suite.run.write_with("cache.png", |path| {
            cache_plot::draw(path, &title, &sweep.points, &report)
        })?;
        print!("{}", cache_report::render_text(&report));
        println!(
            "{} space: {} points ({} launches) in {:.1} s; the driver reports an L2 of {} KiB",
            space.name(),
            sweep.points.len(),
            sweep.launches,
            sweep.seconds,
            device.l2_cache_bytes / 1024
        );
        Ok(())
    })();
    suite.finish(&mut gpu, outcome)
}

/// TLB levels: each cache level's size read as a reach, and the page size from a stride sweep
/// at four times the first reach (`pages.csv`).
fn translation(
    gpu: &mut Gpu,
    buffer: &mut TlbBuffer,
    suite: &suite::Suite,
    report: &cache_inference::CacheReport,
    stride: u64,
) -> Result<serde_json::Value> {
    let first_reach = report.levels.iter().find_map(|level| level.size_bytes);
    let page = match first_reach {
        Some(reach) => {
            let footprint = (4 * reach).min(buffer.bytes()) / stride * stride;
            let strides: Vec<u64> = (0..14).map(|k| (4_u64 << 10) << k).collect();
            let points = cache::stride_sweep(footprint, strides, 8, |s| {
                tlb::measure(gpu, buffer, Order::Stride, footprint, s)
            })?;
            granularity_of(suite, "pages.csv", footprint, &points)?
        }
        None => None,
    };
    match &page {
        Some(page) => println!(
            "page size {} KiB (confidence {:.2})",
            page.bytes >> 10,
            page.confidence
        ),
        None => println!("page size: not read (no TLB reach found in the sweep)"),
    }
    let levels: Vec<_> = report
        .levels
        .iter()
        .map(|level| {
            json!({
                "latency_cycles": level.latency_cycles,
                "reach_bytes": level.size_bytes,
                "entries": match (level.size_bytes, &page) {
                    (Some(reach), Some(page)) => Some(reach / page.bytes),
                    _ => None,
                },
                "confidence": level.confidence,
            })
        })
        .collect();
    Ok(json!({ "page": page, "levels": levels }))
}

/// Writes a stride sweep at `footprint` as `name` (the chase CSV's columns) and reads its
/// fetch granularity.
fn granularity_of(
    suite: &suite::Suite,
    name: &str,
    footprint: u64,
    points: &[(u64, f64)],
) -> Result<Option<crate::analysis::granularity::Granularity>> {
    let rows: Vec<cache_inference::ChasePoint> = points
        .iter()
        .map(|&(stride_bytes, cycles)| cache_inference::ChasePoint {
            footprint_bytes: footprint,
            stride_bytes,
            cycles,
        })
        .collect();
    suite.run.write_csv(name, &rows)?;
    Ok(crate::analysis::granularity::granularity(points))
}

/// The first cache level's fetch granularity (line, or sector where the cache is sectored):
/// a stride sweep at twice its size or more (`strides.csv`), from an eighth of the sweep's
/// stride to eight times it, read by `analysis::granularity`.
fn fetch_granularity(
    gpu: &mut Gpu,
    suite: &suite::Suite,
    space: Space,
    report: &cache_inference::CacheReport,
    stride: u64,
    largest: u64,
) -> Result<Option<serde_json::Value>> {
    let Some(size) = report.levels.first().and_then(|level| level.size_bytes) else {
        return Ok(None);
    };
    let top = 8 * stride;
    // Past the capacity, and long enough for 32 elements at the widest stride.
    let footprint = (2 * size).max(32 * top).div_ceil(top) * top;
    if footprint > largest.max(2 * size) {
        return Ok(None);
    }
    let strides: Vec<u64> = (0..7)
        .map(|k| (stride / 8).max(4) << k)
        .filter(|&s| s <= top)
        .collect();
    // At least 32 elements: more than a set's ways, so large strides cannot all fit one set.
    let dividing = strides
        .iter()
        .copied()
        .filter(|&s| footprint.is_multiple_of(s));
    let points = cache::stride_sweep(footprint, dividing, 32, |s| {
        cache::measure_point(gpu, space, Order::Stride, 1, footprint, s)
    })?;
    let estimate = granularity_of(suite, "strides.csv", footprint, &points)?;
    match &estimate {
        Some(g) => println!(
            "level 1 fetch granularity (line or sector): {} B (confidence {:.2}; stride sweep at {footprint} B)",
            g.bytes, g.confidence
        ),
        None => println!(
            "level 1 fetch granularity: not read (the stride sweep at {footprint} B is not a rise to a plateau)"
        ),
    }
    Ok(Some(json!({
        "level": 1,
        "footprint_bytes": footprint,
        "strides": strides,
        "estimate": estimate,
    })))
}

/// `--per-load`: 1024 individually timed loads at every doubling footprint (`loads.csv`).
fn per_load_sweep(
    gpu: &mut Gpu,
    suite: &suite::Suite,
    space: Space,
    order: Order,
    stride: u64,
    smallest: u64,
    largest: u64,
) -> Result<Vec<per_load_analysis::FootprintLoads>> {
    let mut samples = Vec::new();
    let mut footprint = smallest;
    while footprint <= largest {
        samples.extend(per_load::record(
            gpu, space, order, footprint, stride, 1024,
        )?);
        footprint *= 2;
    }
    suite.run.write_csv("loads.csv", &samples)?;
    let pairs: Vec<(u64, f64)> = samples
        .iter()
        .map(|s| (s.footprint_bytes, s.cycles as f64))
        .collect();
    let summary = per_load_analysis::summarise(&pairs);
    println!("per load: footprint, median cycles, share slower than 1.5 x the first median");
    for row in &summary {
        println!(
            "  {:>10} B {:>8.1} {:>6.1} %",
            row.footprint_bytes,
            row.median_cycles,
            100.0 * row.slow_fraction
        );
    }
    Ok(summary)
}

//! `gpubench cache --space …` (sweep one memory space and read its levels) and
//! `gpubench analyze cache FILE.csv` (the same inference on a saved curve, no GPU).

use anyhow::Result;
use serde_json::json;

use super::suite;
use crate::analysis::cache_inference;
use crate::analysis::per_load as per_load_analysis;
use crate::cli::{AnalyzeCacheArgs, CacheArgs, ChainChoice, SpaceChoice};
use crate::error::UsageError;
use crate::experiments::cache::conflict::{self, ConflictRow};
use crate::experiments::cache::{self, Order, Space, instruction, per_load, saved, tlb};
use crate::gpu::Gpu;
use crate::gpu::launch::TlbBuffer;
use crate::report::cache as cache_report;
use crate::report::cache_plot;

pub fn analyze_saved(args: &AnalyzeCacheArgs) -> Result<()> {
    let points = saved::load(&args.file)?;
    let space = match &args.space {
        Some(name) => Some(Space::from_name(name).ok_or_else(|| {
            UsageError::new(format!(
                "--space {name} is not a cache space; use one of global, l2, readonly, shared, constant, constant-uniform, texture, instruction, tlb"
            ))
        })?),
        None => space_of_run(&args.file),
    };
    // A run's own chase is read as the run read it: with its space's rise threshold. A curve
    // of unknown origin gets a threshold relative to its own noise only.
    let minimum_rise = space.map_or(cache_inference::MinimumRise::NOISE_ONLY, |space| {
        cache::RiseThreshold::of(space).minimum_rise()
    });
    let report = cache_inference::infer_with(&points, minimum_rise).ok_or_else(|| {
        UsageError::new(format!(
            "{}: the finest stride has fewer than 3 distinct footprints; sweep more footprints",
            args.file.display()
        ))
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        match space {
            Some(space) => println!(
                "levels read with the {} space's rise threshold ({} x the lower latency + {} cycles)",
                space.name(),
                minimum_rise.relative,
                minimum_rise.absolute
            ),
            None => println!(
                "levels read with a threshold from the curve's own noise (pass --space, or keep the file in its run directory, for a space's threshold)"
            ),
        }
        print!("{}", cache_report::render_text(&report));
    }
    Ok(())
}

/// The space of the cache run whose directory holds `file` (its `metadata.json`), if any.
fn space_of_run(file: &std::path::Path) -> Option<Space> {
    #[derive(serde::Deserialize)]
    struct Settings {
        space: String,
    }
    let dir = file.parent()?;
    let metadata = crate::report::metadata::SavedMetadata::read(dir).ok()?;
    if metadata.suite != "cache" {
        return None;
    }
    Space::from_name(&metadata.settings::<Settings>().ok()?.space)
}

/// The generated kernels a `cache` suite run with `suite_args` (its command line from the
/// subcommand on, as `all` plans it) asks for first, for `all` to compile ahead: the
/// instruction space's coarse grid, the same on every GPU. Nothing for other spaces or for
/// arguments that do not parse (the suite will say what is wrong with them).
pub fn kernels_to_prebuild(suite_args: &[String]) -> Vec<crate::gpu::prebuilt::Generated> {
    #[derive(clap::Parser)]
    struct Command {
        #[command(flatten)]
        args: CacheArgs,
    }
    use clap::Parser;
    let Some(("cache", rest)) = suite_args.split_first().map(|(a, r)| (a.as_str(), r)) else {
        return Vec::new();
    };
    let Ok(Command { args }) =
        Command::try_parse_from(std::iter::once("cache").chain(rest.iter().map(String::as_str)))
    else {
        return Vec::new();
    };
    if args.space != SpaceChoice::Instruction {
        return Vec::new();
    }
    let (stride, smallest, largest, _) = defaults(Space::Instruction);
    let stride = args.stride.unwrap_or(stride);
    let smallest = args.min_bytes.unwrap_or(smallest);
    let Some(largest) = args.max_bytes.or(largest) else {
        return Vec::new();
    };
    if stride == 0 || !stride.is_multiple_of(instruction::INSTRUCTION_BYTES) {
        return Vec::new();
    }
    let isa = crate::kernels::module("cache")
        .and_then(|m| m.isa_version())
        .unwrap_or("7.0");
    cache::coarse_grid(stride, smallest, largest, cache::COARSE_PER_DOUBLING)
        .into_iter()
        .filter_map(|bytes| u32::try_from(bytes / instruction::INSTRUCTION_BYTES).ok())
        .map(|instructions| instruction::generated(isa, instructions))
        .collect()
}

/// Per-space defaults: (stride, smallest, largest, fine points), each sweep starting on its
/// fastest plateau and ending past the caches in front of memory. The TLB's largest footprint
/// depends on the device's memory and is set once it is open.
fn defaults(space: Space) -> (u64, u64, Option<u64>, u64) {
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

/// `gpubench cache --space …`: sweep one space and read its levels.
pub fn run(args: &CacheArgs) -> Result<()> {
    let space = match args.space {
        SpaceChoice::Global => Space::Global,
        SpaceChoice::L2 => Space::L2,
        SpaceChoice::Readonly => Space::Readonly,
        SpaceChoice::Shared => Space::Shared,
        SpaceChoice::Constant => Space::Constant,
        SpaceChoice::ConstantUniform => Space::ConstantUniform,
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
    if !(8..=1 << 16).contains(&args.resolution) {
        return Err(UsageError::new(
            "--resolution takes 8 to 65536 (a rise is bisected to 1/N of its footprint)",
        )
        .into());
    }
    if !(1..=1024).contains(&args.timed_span_mib) {
        return Err(UsageError::new("--timed-span-mib takes 1 to 1024 (MiB)").into());
    }
    let span = args.timed_span_mib << 20;
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
    if !args.carveout.is_empty()
        && (!matches!(space, Space::Global | Space::Readonly)
            || args.carveout.iter().any(|p| !(0..=100).contains(p)))
    {
        return Err(UsageError::new(
            "--carveout takes percentages from 0 to 100, with --space global or readonly",
        )
        .into());
    }
    if !args.tlb_strides.is_empty()
        && (space != Space::Tlb
            || args
                .tlb_strides
                .iter()
                .any(|&s| s == 0 || !s.is_multiple_of(8) || s > 1 << 40))
    {
        return Err(UsageError::new(
            "--tlb-strides takes positive multiples of 8 bytes up to 1 TiB, with --space tlb",
        )
        .into());
    }
    let entries: &[(&str, &str)] = match space {
        // The instruction space's kernels are generated later; loading the cache module still
        // proves the PTX this binary carries (and whose ISA they declare) loads on the driver.
        Space::Instruction => &[("cache", "chase_global")],
        Space::Tlb => &[("cache", "chase_tlb"), ("cache", "tlb_chain_init")],
        Space::Global => &[
            ("cache", "chase_global"),
            ("cache", "absolute_pointers"),
            ("cache", "chase_global_index"),
        ],
        Space::L2 => &[
            ("cache", "chase_l2"),
            ("cache", "chase_l2_block_warmed"),
            ("cache", "absolute_pointers"),
        ],
        Space::Readonly => &[("cache", space.entry()), ("cache", "absolute_pointers")],
        _ => &[("cache", space.entry())],
    };
    let mut gpu = suite::open(args.device, args.output.as_deref(), entries)?;
    let properties = gpu.properties()?;
    let memory = properties.global_memory_bytes as u64;
    let largest = match (args.max_bytes, largest) {
        (Some(given), _) => given,
        (None, Some(default)) => default,
        (None, None) if space == Space::L2 => {
            l2_largest(u64::try_from(properties.l2_cache_bytes).unwrap_or(0))
        }
        (None, None) => tlb_largest(smallest, memory),
    };
    if let Some(&first) = args.carveout.first() {
        gpu.chase_carveout_percent = first;
    }
    if space == Space::Tlb && largest > memory / 10 * 9 {
        return Err(UsageError::new(format!(
            "--max-bytes {largest} is more than 90 % of the device's {memory} bytes; pass a smaller one"
        ))
        .into());
    }
    if smallest.checked_mul(4).is_none_or(|m| largest < m) {
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
        "preferred_shared_carveout_percent": space.global_loads().then_some(gpu.chase_carveout_percent),
        "coarse_points_per_doubling": cache::COARSE_PER_DOUBLING,
        "method": match space {
            Space::Instruction => format!("generated straight-line PTX (ISA {isa}, 8 independent fma.rn.f32 chains), one kernel per size, compiled ahead in batches on the host's cores with the driver's linker (each round's batch serves every rise's bisections at once; under gpubench all the coarse grid is compiled before the suite starts by the toolkit's ptxas, its SASS checked for one FFMA per instruction); two passes, the second timed; 16 bytes per instruction; bisection at each rise to 1/{} of the footprint", args.resolution),
            Space::Tlb => "one element per stride in one buffer allocated at the largest footprint, chain scattered on the device, ld.global.cg; one warm pass, then at least one full timed pass; final element checked; then a stride sweep past the first reach for the page size".to_string(),
            Space::L2 => format!("64-bit pointer chase (p = *p: nothing but the load on the chain), address-order chain built on the device; one warm pass made by a block of 1024 threads in address order, then one thread's timed loads from element 0 over the first {} MiB of the chain (>= 2048 loads, at most one pass: each element was last read in the warm pass with all others in between, as in a full pass); final element checked; four coarse points per doubling, bisection at each rise to 1/{} of the footprint, fine sweep after it", args.timed_span_mib, args.resolution),
            Space::Global | Space::Readonly => "64-bit pointer chase (p = *p: nothing but the load on the chain); one warm pass, then at least one full timed pass (>= 2048 loads); final element checked; four coarse points per doubling, bisection at each rise, fine sweep after it".to_string(),
            _ => "chain of byte offsets or indices loaded directly (no arithmetic between loads, checked in the SASS); one warm pass, then at least one full timed pass (>= 2048 loads); final index checked; four coarse points per doubling, bisection at each rise, fine sweep after it".to_string(),
        },
    });
    suite::run_opened(
        gpu,
        "cache",
        args.output.as_deref(),
        &["cache"],
        settings,
        |gpu, suite| {
            // Host work beside the GPU's: ptxas and cuobjdump read the chase's SASS while the
            // sweep runs.
            let disassembly = (space != Space::Instruction)
                .then(|| crate::gpu::sass::beside(&["cache"], &properties.compute_capability));
            let mut tlb_buffer = match space {
                Space::Tlb => Some(TlbBuffer::new(gpu, largest)?),
                _ => None,
            };
            let grid = cache::Grid {
                stride,
                relative_resolution: match space {
                    Space::L2 | Space::Instruction => 1.0 / f64::from(args.resolution),
                    _ => 0.0,
                },
            };
            let threshold = cache::RiseThreshold::of(space);
            let mut generated_kernels = None;
            let sweep = if space == Space::Instruction {
                let mut code = instruction::CodeProbe::new(gpu, isa);
                let sweep =
                    cache::sweep_with(threshold, grid, smallest, largest, fine_points, &mut code)?;
                eprintln!(
                    "instruction space: {} sizes measured, {} kernels compiled ahead on the host's cores, {} prebuilt by gpubench all",
                    sweep.points.len(),
                    code.kernels_compiled,
                    code.kernels_prebuilt
                );
                generated_kernels = Some(json!({
                    "compiled_by_the_driver": code.kernels_compiled,
                    "prebuilt_by_all": code.kernels_prebuilt,
                    "prebuilt_sass_checked": "one FFMA per generated fma instruction",
                }));
                sweep
            } else {
                cache::sweep_with(
                    threshold,
                    grid,
                    smallest,
                    largest,
                    fine_points,
                    &mut |footprint| match tlb_buffer.as_mut() {
                        Some(buffer) => tlb::measure(gpu, buffer, order, footprint, stride),
                        None => cache::measure_point(
                            gpu,
                            space,
                            order,
                            args.threads,
                            footprint,
                            stride,
                            span,
                        ),
                    },
                )?
            };
            suite.run.write_csv("chase.csv", &sweep.points)?;
            let report = cache_inference::infer_with(
                &sweep.points,
                cache::RiseThreshold::of(space).minimum_rise(),
            )
            .ok_or_else(|| anyhow::anyhow!("the sweep gave fewer than 3 footprints"))?;
            let tlb_summary = match tlb_buffer.as_mut() {
                Some(buffer) => Some(translation(gpu, buffer, suite, &report, stride)?),
                None => None,
            };
            let tlb_strides = match tlb_buffer.as_mut() {
                Some(buffer) => Some(translation_strides(
                    gpu,
                    buffer,
                    suite,
                    order,
                    &sweep.points,
                    &args.tlb_strides,
                    largest,
                )?),
                None => None,
            };
            drop(tlb_buffer);
            for gap in &sweep.unresolved {
                println!(
                    "unresolved: {} B to {} B: {}",
                    gap.from_bytes, gap.to_bytes, gap.why
                );
            }
            let disassembly = disassembly.map(crate::gpu::sass::Beside::join);
            let entry = if space == Space::L2 && args.threads == 1 && order == Order::Stride {
                "chase_l2_block_warmed"
            } else {
                space.entry()
            };
            let timed_loop = timed_loop(suite, space, entry, disassembly.transpose()?)?;
            let index_overhead = match space {
                Space::Global => Some(index_overhead(gpu, &report, smallest, stride)?),
                _ => None,
            };
            let granularity = match space {
                Space::Global
                | Space::L2
                | Space::Readonly
                | Space::Texture
                | Space::Constant
                | Space::ConstantUniform => {
                    fetch_granularity(gpu, suite, space, &report, stride, largest, span)?
                }
                _ => None,
            };
            let line = granularity
                .as_ref()
                .and_then(|g| g.get("estimate"))
                .and_then(|e| e.get("bytes"))
                .and_then(serde_json::Value::as_u64);
            let conflict = match space {
                Space::Global
                | Space::Readonly
                | Space::Texture
                | Space::Constant
                | Space::ConstantUniform
                    if !args.no_conflict && args.threads == 1 =>
                {
                    conflict_experiment(gpu, suite, space, &report, stride, line)?
                }
                _ => None,
            };
            let carveouts = if args.carveout.len() > 1 {
                Some(carveout_sweep(
                    gpu,
                    suite,
                    space,
                    &args.carveout,
                    stride,
                    smallest,
                    largest,
                    fine_points,
                    span,
                )?)
            } else {
                None
            };
            let per_load = if args.per_load {
                Some(per_load_sweep(
                    gpu, suite, space, order, stride, smallest, largest,
                )?)
            } else {
                None
            };
            suite.release_gpu(gpu)?;
            let device = &suite.metadata.device;
            suite.run.write_json(
            "cache.json",
            &json!({
                "space": space.name(),
                "report": report,
                "tlb": tlb_summary,
                "tlb_strides": tlb_strides,
                "timed_loop": timed_loop,
                "index_chain": index_overhead,
                "unresolved": sweep.unresolved,
                "fetch_granularity": granularity,
                "conflict": conflict,
                "carveout": carveouts,
                "per_load": per_load,
                "sweep": { "points": sweep.points.len(), "launches": sweep.launches, "seconds": sweep.seconds, "generated_kernels": generated_kernels },
                "device_attributes": {
                    "l2_cache_bytes": device.l2_cache_bytes,
                    "shared_memory_per_multiprocessor_bytes": device.shared_memory_per_multiprocessor_bytes,
                    "global_memory_bytes": device.global_memory_bytes,
                },
            }),
        )?;
            let title = suite.title(&cache_plot::title(space.name(), stride, args.threads));
            suite.run.write_figure("cache", |path| {
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
        },
    )
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
    span: u64,
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
    // Pointer chases need 8-byte elements.
    let narrowest = if space.global_loads() { 8 } else { 4 };
    let strides: Vec<u64> = (0..7)
        .map(|k| (stride / 8).max(narrowest) << k)
        .filter(|&s| s <= top)
        .collect();
    // At least 32 elements: more than a set's ways, so large strides cannot all fit one set.
    let dividing = strides
        .iter()
        .copied()
        .filter(|&s| footprint.is_multiple_of(s));
    let points = cache::stride_sweep(footprint, dividing, 32, |s| {
        cache::measure_point(gpu, space, Order::Stride, 1, footprint, s, span)
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

/// The SASS of the space's chase kernel, compiled from the same PTX this run loaded
/// (`cache.sass` beside the results), and what its timed loop loads with: a space whose loop
/// executes another load than the space's own is flagged, never reported silently as that space.
fn timed_loop(
    suite: &suite::Suite,
    space: Space,
    entry: &str,
    disassembly: Option<(Option<String>, crate::gpu::sass::SassRecord)>,
) -> Result<serde_json::Value> {
    if space == Space::Instruction {
        return Ok(
            json!({ "status": "generated code: checked by the instruction space's own test (16 bytes of SASS per instruction)" }),
        );
    }
    let Some((text, record)) = disassembly else {
        return Ok(json!({ "status": "the cache module is not embedded" }));
    };
    if let Some(text) = text {
        suite.run.write("cache.sass", text.as_bytes())?;
    }
    let Some(kernel) = record.kernels.iter().find(|k| k.kernel == entry) else {
        println!("timed loop: SASS not read ({})", record.status);
        return Ok(json!({ "status": record.status, "arch": record.arch, "kernel": entry }));
    };
    let expected = space.expected_loads();
    let loads: Vec<&String> = kernel.timed_region_loads.keys().collect();
    let as_expected = !loads.is_empty() && loads.iter().all(|l| expected.contains(&l.as_str()));
    let verdict = if as_expected {
        format!("as expected: {}", expected.join(" or "))
    } else {
        format!(
            "UNEXPECTED: the timed loop loads with {loads:?}, not {}: this run does not measure the {} path",
            expected.join(" or "),
            space.name()
        )
    };
    println!(
        "timed loop ({}, {}): loads {:?}; other instructions {:?}; {verdict}",
        kernel.kernel, record.arch, kernel.timed_region_loads, kernel.timed_region_other
    );
    Ok(json!({
        "status": record.status,
        "arch": record.arch,
        "kernel": kernel.kernel,
        "loads": kernel.timed_region_loads,
        "other_instructions": kernel.timed_region_other,
        "control_instructions": kernel.timed_region_control,
        "expected_loads": expected,
        "verdict": verdict,
    }))
}

/// The global chase written with word indices at the sweep's smallest footprint, beside the
/// pointer chase there: the raw figure gpubench used to report and the load-to-use one.
fn index_overhead(
    gpu: &mut Gpu,
    report: &cache_inference::CacheReport,
    smallest: u64,
    stride: u64,
) -> Result<serde_json::Value> {
    let pointer = cache::measure_point(
        gpu,
        Space::Global,
        Order::Stride,
        1,
        smallest,
        stride,
        cache::L2_TIMED_SPAN_BYTES,
    )?;
    let index = cache::measure_index_chase(gpu, smallest, stride)?;
    println!(
        "index chain (j = chain[j]) at {smallest} B: {index:.1} cycles per load; pointer chain (load-to-use): {pointer:.1}; index arithmetic adds {:.1}",
        index - pointer
    );
    Ok(json!({
        "footprint_bytes": smallest,
        "index_chain_cycles": index,
        "pointer_chain_cycles": pointer,
        "overhead_cycles": index - pointer,
        "level_1_latency_cycles": report.levels.first().map(|l| l.latency_cycles),
    }))
}

/// The conflict experiment on the first level (`conflict.csv`, `conflict.png`): strides from
/// the line (or four sweep strides) to sixteen times the size, the largest N of addresses at
/// each that still hits (below a quarter of the way from the level's latency to the next one's).
fn conflict_experiment(
    gpu: &mut Gpu,
    suite: &suite::Suite,
    space: Space,
    report: &cache_inference::CacheReport,
    stride: u64,
    line: Option<u64>,
) -> Result<Option<crate::analysis::conflict::ConflictReport>> {
    let (Some(first), Some(second)) = (report.levels.first(), report.levels.get(1)) else {
        return Ok(None);
    };
    let Some(size) = first.size_bytes else {
        return Ok(None);
    };
    let hit_below =
        first.latency_cycles + 0.25 * (second.latency_cycles - first.latency_cycles).max(0.0);
    let smallest = line.unwrap_or(4 * stride).max(stride).next_power_of_two();
    let cap: u64 = match space {
        Space::Constant | Space::ConstantUniform => 64 << 10,
        _ => 1 << 30,
    };
    let strides: Vec<u64> = (0..24)
        .map(|k| smallest << k)
        .take_while(|&s| s <= 16 * size.next_power_of_two() && 2 * s <= cap)
        .collect();
    // Enough addresses at every stride to pass any plausible way count, within 256 MiB.
    let most = |s: u64| {
        (2 * size / s + 256)
            .min(cap / s)
            .min((256 << 20) / s)
            .min(8192)
    };
    let found =
        crate::experiments::cache::conflict::experiment(&strides, hit_below, most, |n, s| {
            // Not the L2 space: no timed span.
            cache::measure_point(
                gpu,
                space,
                Order::Stride,
                1,
                n * s,
                s,
                cache::L2_TIMED_SPAN_BYTES,
            )
        })?;
    let rows: Vec<ConflictRow> = found
        .iter()
        .flat_map(|(p, tried)| {
            tried.iter().map(move |&(addresses, cycles)| ConflictRow {
                stride_bytes: p.stride_bytes,
                addresses,
                cycles,
                hits: cycles < hit_below,
            })
        })
        .collect();
    suite.run.write_csv("conflict.csv", &rows)?;
    // A stride whose every tried N hit says only "at least N".
    let points = conflict::points_from_rows(&rows);
    let analysis = crate::analysis::conflict::analyse(&points, line);
    let title = suite.title(&format!("{} conflict experiment", space.name()));
    suite.run.write_figure("conflict", |path| {
        cache_plot::draw_conflict(path, &title, &points, &analysis)
    })?;
    println!(
        "conflict (largest N still hitting, < {hit_below:.1} cycles): {}; {}{}",
        points
            .iter()
            .map(|p| format!(
                "{} B: {}{}",
                p.stride_bytes,
                if p.at_least { ">= " } else { "" },
                p.max_hitting
            ))
            .collect::<Vec<_>>()
            .join(", "),
        analysis.verdict,
        match (analysis.ways, analysis.way_bytes) {
            (Some(w), Some(b)) => format!(": {w} ways of {b} B"),
            _ => String::new(),
        }
    );
    Ok(Some(analysis))
}

#[derive(serde::Serialize)]
struct CarveoutRow {
    carveout_percent: i32,
    requested_shared_bytes: i64,
    level_1_bytes: Option<u64>,
    level_1_latency_cycles: Option<f64>,
    sum_bytes: Option<i64>,
}

/// One sweep per shared-memory carveout preference (`carveout.csv`): the L1 the chase sees,
/// beside the shared memory the preference asks for (the driver rounds it to a configuration
/// it supports; L1 + shared is the unified capacity when the preference is taken).
#[allow(clippy::too_many_arguments)]
fn carveout_sweep(
    gpu: &mut Gpu,
    suite: &suite::Suite,
    space: Space,
    carveouts: &[i32],
    stride: u64,
    smallest: u64,
    largest: u64,
    fine_points: u64,
    span: u64,
) -> Result<Vec<serde_json::Value>> {
    let shared = i64::from(gpu.properties()?.shared_memory_per_multiprocessor_bytes);
    let mut rows = Vec::new();
    for &percent in carveouts {
        gpu.chase_carveout_percent = percent;
        let sweep = cache::sweep(
            cache::RiseThreshold::of(space),
            stride,
            smallest,
            largest,
            fine_points,
            |f| cache::measure_point(gpu, space, Order::Stride, 1, f, stride, span),
        )?;
        let level = cache_inference::infer(&sweep.points).and_then(|r| r.levels.first().cloned());
        let requested = shared * i64::from(percent) / 100;
        let size = level.as_ref().and_then(|l| l.size_bytes);
        println!(
            "carveout {percent:>3} % (asks {} KiB shared): level 1 {}",
            requested >> 10,
            size.map_or("not found".into(), |b| format!("{b} B"))
        );
        rows.push(CarveoutRow {
            carveout_percent: percent,
            requested_shared_bytes: requested,
            level_1_bytes: size,
            level_1_latency_cycles: level.as_ref().map(|l| l.latency_cycles),
            sum_bytes: size.map(|b| b as i64 + requested),
        });
    }
    gpu.chase_carveout_percent = carveouts[0];
    suite.run.write_csv("carveout.csv", &rows)?;
    Ok(rows
        .iter()
        .map(|r| serde_json::to_value(r).unwrap_or_default())
        .collect())
}

/// TLB sweeps at further strides (`tlb_strides.csv`): the main sweep's stride is one of
/// `strides` (default 2 MiB, 32 MiB, 512 MiB, 1 GiB); each other gets its own sweep from two
/// strides to the largest footprint, and each says where a level appears or that none did.
fn translation_strides(
    gpu: &mut Gpu,
    buffer: &mut TlbBuffer,
    suite: &suite::Suite,
    order: Order,
    main_points: &[cache_inference::ChasePoint],
    strides: &[u64],
    largest: u64,
) -> Result<Vec<serde_json::Value>> {
    let main_stride = main_points.first().map_or(0, |p| p.stride_bytes);
    let mut strides: Vec<u64> = if strides.is_empty() {
        vec![main_stride, 32 << 20, 512 << 20, 1 << 30]
    } else {
        strides.to_vec()
    };
    strides.retain(|&s| s != main_stride && s.checked_mul(8).is_some_and(|m| m <= largest));
    let mut all_points = Vec::new();
    let mut summary = Vec::new();
    for stride in strides {
        let smallest = 2 * stride;
        let sweep = cache::sweep(
            cache::RiseThreshold::of(Space::Tlb),
            stride,
            smallest,
            largest,
            16,
            |f| tlb::measure(gpu, buffer, order, f, stride),
        )?;
        let report = cache_inference::infer_with(
            &sweep.points,
            cache::RiseThreshold::of(Space::Tlb).minimum_rise(),
        );
        let reaches: Vec<_> = report
            .iter()
            .flat_map(|r| r.levels.iter())
            .filter_map(|l| {
                l.size_bytes.map(|b| {
                    json!({ "reach_bytes": b, "elements_at_reach": b / stride, "latency_cycles": l.latency_cycles })
                })
            })
            .collect();
        let verdict = if reaches.is_empty() {
            format!("no step from {smallest} B up to {largest} B at a {stride}-byte stride")
        } else {
            let list: Vec<String> = reaches
                .iter()
                .map(|r| {
                    format!(
                        "{} B ({} elements)",
                        r["reach_bytes"], r["elements_at_reach"]
                    )
                })
                .collect();
            format!("at a {stride}-byte stride, steps past {}", list.join(", "))
        };
        println!("tlb: {verdict}");
        summary.push(json!({ "stride_bytes": stride, "points": sweep.points.len(), "levels": reaches, "verdict": verdict }));
        all_points.extend(sweep.points);
    }
    suite.run.write_csv("tlb_strides.csv", &all_points)?;
    if !all_points.is_empty() {
        let title = suite.title("TLB chase, one element per stride");
        let every: Vec<_> = main_points.iter().chain(&all_points).copied().collect();
        suite.run.write_figure("tlb_strides", |path| {
            cache_plot::draw_by_stride(path, &title, &every)
        })?;
    }
    Ok(summary)
}

/// `gpubench cache` in the suite registry: one `all` entry per memory space.
pub struct Cache;

/// The spaces `gpubench all` sweeps, in order. The instruction space comes first: its
/// compiles step aside while the later suites measure (see `instruction::CodeProbe`).
const ALL_SPACES: [&str; 9] = [
    "instruction",
    "global",
    "l2",
    "readonly",
    "shared",
    "constant",
    "constant-uniform",
    "texture",
    "tlb",
];

impl super::registry::SuiteDef for Cache {
    const NAME: &'static str = "cache";
    const ABOUT: &'static str =
        "Pointer-chase latency against footprint and the cache levels read from it (Wong Fig. 4)";
    type Args = CacheArgs;

    fn run(args: &CacheArgs) -> Result<()> {
        run(args)
    }

    fn plan(&self, quick: bool) -> Vec<crate::app::plan::PlannedSuite> {
        ALL_SPACES
            .iter()
            .map(|&space| {
                let mut args = vec!["cache", "--space", space];
                // The L2 and instruction sweeps are the long ones (each L2 point chases tens of
                // MiB, each instruction point is a JIT compile): fewer fine points there. The L2
                // keeps its one-line stride: a stride past the line would overstate the
                // footprint it caches.
                let estimate = match (space, quick) {
                    // Bisected to 1/64 of the footprint (about 0.4 MiB at 24 MiB) rather
                    // than 1/512: three halvings fewer per edge.
                    // Its loads timed over the first 4 MiB of each chain, not 32.
                    ("l2", true) => {
                        args.extend([
                            "--fine-points",
                            "2",
                            "--resolution",
                            "64",
                            "--timed-span-mib",
                            "4",
                        ]);
                        0.9
                    }
                    ("l2", false) => {
                        args.extend(["--fine-points", "4"]);
                        4.9
                    }
                    // The plateau past the last level is flat from about 145 KiB on (H100, H200):
                    // ending at 256 KiB halves the largest kernels the driver compiles. Quick
                    // bisects to 1/32 of the code size and measures two fine points: each
                    // halving is a round of compiles, which outlasted every other suite.
                    ("instruction", true) => {
                        args.extend([
                            "--stride",
                            "256",
                            "--fine-points",
                            "2",
                            "--max-bytes",
                            "262144",
                            "--resolution",
                            "32",
                        ]);
                        0.5
                    }
                    ("instruction", false) => {
                        args.extend([
                            "--stride",
                            "64",
                            "--fine-points",
                            "4",
                            "--max-bytes",
                            "262144",
                        ]);
                        0.6
                    }
                    // Ending at 1 MiB, past the L1 (256 KiB on Hopper) and on the L2's plateau,
                    // rather than at 4 MiB: most of these sweeps' GPU time is their largest
                    // footprints. Without the conflict experiment (about 230 chases each).
                    ("global" | "readonly" | "texture", true) => {
                        args.extend([
                            "--fine-points",
                            "16",
                            "--max-bytes",
                            "1048576",
                            "--no-conflict",
                        ]);
                        0.6
                    }
                    (_, true) => {
                        args.extend(["--fine-points", "16"]);
                        0.4
                    }
                    _ => 1.0,
                };
                let planned =
                    crate::app::plan::PlannedSuite::new(&format!("cache-{space}"), &args, estimate);
                // Its compiles, aside, are the longest host work of any suite.
                if space == "instruction" {
                    planned.early()
                } else {
                    planned
                }
            })
            .collect()
    }

    fn figures(&self, dir: &std::path::Path) -> Result<Vec<crate::report::figures::Figure>> {
        cache_report::figures(dir)
    }

    fn redraw(
        &self,
        run: &super::registry::SavedRun,
        out: &mut super::registry::Redraw,
    ) -> Result<()> {
        use crate::report::saved as files;
        use anyhow::Context;
        #[derive(serde::Deserialize)]
        struct Settings {
            space: String,
            stride_bytes: u64,
            threads: Option<u32>,
        }
        let settings: Settings = run.metadata.settings()?;
        let space = Space::from_name(&settings.space)
            .with_context(|| format!("unknown cache space '{}'", settings.space))?;
        let chase = files::find(run.dir, "chase.csv")
            .with_context(|| format!("{} has no chase.csv", run.dir.display()))?;
        let points = saved::load(&chase)?;
        let report =
            cache_inference::infer_with(&points, cache::RiseThreshold::of(space).minimum_rise())
                .context("chase.csv has too few points")?;
        let title = run.title(&cache_plot::title(
            &settings.space,
            settings.stride_bytes,
            settings.threads.unwrap_or(1),
        ));
        out.figure("cache", |p| cache_plot::draw(p, &title, &points, &report))?;
        if files::find(run.dir, "conflict.csv").is_some() {
            let rows: Vec<ConflictRow> = files::read_csv(run.dir, "conflict.csv")?;
            let kept = conflict::points_from_rows(&rows);
            let line = match files::find(run.dir, "strides.csv") {
                Some(path) => {
                    let strides = saved::load(&path)?;
                    let pairs: Vec<(u64, f64)> =
                        strides.iter().map(|p| (p.stride_bytes, p.cycles)).collect();
                    crate::analysis::granularity::granularity(&pairs).map(|g| g.bytes)
                }
                None => None,
            };
            let analysis = crate::analysis::conflict::analyse(&kept, line);
            let title = run.title(&format!("{} conflict experiment", settings.space));
            out.figure("conflict", |p| {
                cache_plot::draw_conflict(p, &title, &kept, &analysis)
            })?;
        }
        if let Some(path) = files::find(run.dir, "tlb_strides.csv") {
            let more = saved::load(&path)?;
            let every: Vec<_> = points.iter().chain(&more).copied().collect();
            let title = run.title("TLB chase, one element per stride");
            out.figure("tlb_strides", |p| {
                cache_plot::draw_by_stride(p, &title, &every)
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::registry::SuiteDef;

    #[test]
    fn all_prebuilds_the_instruction_space_coarse_grid_and_nothing_else() {
        for quick in [false, true] {
            let plans = Cache.plan(quick);
            let instruction = plans
                .iter()
                .find(|p| p.args.contains(&"instruction".to_string()))
                .unwrap();
            let kernels = kernels_to_prebuild(&instruction.args);
            let stride: u64 = instruction.args[instruction
                .args
                .iter()
                .position(|a| a == "--stride")
                .unwrap()
                + 1]
            .parse()
            .unwrap();
            let grid = cache::coarse_grid(stride, 1 << 10, 256 << 10, cache::COARSE_PER_DOUBLING);
            assert_eq!(kernels.len(), grid.len());
            for (kernel, bytes) in kernels.iter().zip(&grid) {
                assert_eq!(kernel.name, instruction::ENTRY);
                assert_eq!(
                    kernel.ptx.matches("fma.rn.f32").count() as u64,
                    bytes / instruction::INSTRUCTION_BYTES
                );
            }
            for other in plans.iter().filter(|p| p != &instruction) {
                assert!(
                    kernels_to_prebuild(&other.args).is_empty(),
                    "{:?}",
                    other.args
                );
            }
        }
        assert!(
            kernels_to_prebuild(&["cache".into(), "--space".into(), "nowhere".into()]).is_empty()
        );
        assert!(kernels_to_prebuild(&["divergence".into()]).is_empty());
    }
}

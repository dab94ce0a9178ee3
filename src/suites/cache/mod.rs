//! `gpubench cache --space …` (sweep one memory space and read its levels) and
//! `gpubench analyze cache FILE.csv` (the same inference on a saved curve, no GPU).

use anyhow::Result;

use self::measure::{self as cache, Order, Space, instruction, tlb};
use self::plot as cache_plot;
use self::report as cache_report;
pub use self::settings::{CacheArgs, ChainChoice, Recorded};
use self::settings::{Flags, defaults};
use crate::analysis::cache_inference;
use crate::suites::cache::launch::TlbBuffer;
use crate::harness::suite;

pub mod analysis;
mod analyze;
mod entry;
pub mod l2_partitions;
pub mod launch;
pub mod measure;
mod partitions_report;
pub mod storage;
mod plot;
pub mod report;
pub mod settings;
mod side_experiments;
mod text;
mod texture;
mod translation;

pub use analyze::analyze_saved;
pub use entry::Cache;
use side_experiments::*;
use translation::*;

/// The generated kernels a `cache` suite run with `args` (an entry of `all`'s plan) asks for
/// first, for `all` to compile ahead: the instruction space's coarse grid, the same on every
/// GPU. Nothing for other spaces.
pub fn kernels_to_prebuild(args: &CacheArgs) -> Vec<crate::gpu::prebuilt::Generated> {
    if args.space != Space::Instruction {
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

/// The modules and entries a space loads first (proving the PTX loads on this driver).
fn entries(space: Space) -> Vec<(&'static str, &'static str)> {
    match space {
        // The instruction space's kernels are generated later; loading the cache module still
        // proves the PTX this binary carries (and whose ISA they declare) loads on the driver.
        Space::Instruction => vec![("cache", "chase_global")],
        Space::Tlb => vec![("cache", "chase_tlb"), ("cache", "tlb_chain_init")],
        Space::Global => vec![
            ("cache", "chase_global"),
            ("cache", "absolute_pointers"),
            ("cache", "chase_global_index"),
            ("cache", "storage_probe"),
        ],
        Space::L2 => vec![
            ("cache", "chase_l2"),
            ("cache", "chase_l2_block_warmed"),
            ("cache", "absolute_pointers"),
            ("l2_partition", "l2_partition_warm"),
            ("l2_partition", "l2_partition_probe"),
        ],
        Space::Readonly => vec![("cache", space.entry()), ("cache", "absolute_pointers")],
        _ => vec![("cache", space.entry())],
    }
}

/// `gpubench cache --space …`: sweep one space and read its levels.
pub fn run(args: &CacheArgs) -> Result<()> {
    let flags = Flags::check(args)?;
    let space = flags.space;
    let entries = entries(space);
    // The random-replacement rates the inference's model fits read, tabled while this process
    // waits for the GPU (host work beside another suite's measurement: background priority).
    std::thread::spawn(|| {
        crate::harness::sharing::lower_priority();
        crate::analysis::miss_fraction::table_random_rates();
    });
    let mut gpu = suite::open(&args.target, &entries)?;
    let properties = gpu.properties()?;
    let memory = properties.global_memory_bytes as u64;
    let l2_bytes = u64::try_from(properties.l2_cache_bytes).unwrap_or(0);
    let largest = flags.largest(args, l2_bytes, memory)?;
    if let Some(&first) = args.carveout.first() {
        gpu.chase_carveout_percent = first;
    }
    let isa = crate::kernels::module("cache")
        .and_then(|m| m.isa_version())
        .unwrap_or("7.0");
    let recorded = recorded(args, &flags, largest, isa, gpu.chase_carveout_percent);
    suite::run_opened(
        gpu,
        &Cache,
        &args.target,
        &["cache"],
        &recorded,
        |gpu, suite| {
            measure(
                gpu,
                suite,
                args,
                &flags,
                largest,
                isa,
                &properties.compute_capability,
            )
        },
    )
}

/// `metadata.json`'s settings: what the run resolved from its flags and the device.
fn recorded(
    args: &CacheArgs,
    flags: &Flags,
    largest: u64,
    isa: &str,
    carveout_percent: i32,
) -> Recorded {
    let Flags {
        space,
        order,
        stride,
        smallest,
        fine_points,
        ..
    } = *flags;
    Recorded {
        chain: match order {
            Order::Stride if space.descends() => format!("fixed stride, address order; each level up to {} MiB chased again in descending order at up to {} footprints on each side of its rise ({})", cache::DESCENDING_LARGEST_LEVEL >> 20, cache::DESCENDING_PER_SIDE, cache::DESCENDING_CSV),
            Order::Stride => "fixed stride, address order".to_string(),
            Order::Random(seed) => format!("fixed stride, random order (seed {seed})"),
            Order::Descending => "fixed stride, descending address order".to_string(),
        },
        coarse_points_per_doubling: Some(cache::COARSE_PER_DOUBLING),
        fine_points,
        max_bytes: largest,
        method: match space {
            Space::Instruction => format!("generated straight-line PTX (ISA {isa}, 8 independent fma.rn.f32 chains), one kernel per size, compiled ahead in batches on the host's cores with the driver's linker (each round's batch serves every rise's bisections at once; under gpubench all the coarse grid is compiled before the suite starts by the toolkit's ptxas, its SASS checked for one FFMA per instruction); two passes, the second timed; 16 bytes per instruction; bisection at each rise to 1/{} of the footprint", args.resolution),
            Space::Tlb => "one element per stride in one buffer allocated at the largest footprint, chain scattered on the device, ld.global.cg; one warm pass, then at least one full timed pass; final element checked; then a stride sweep past the first reach for the page size".to_string(),
            Space::L2 => format!("64-bit pointer chase (p = *p: nothing but the load on the chain), address-order chain built on the device; one warm pass made by a block of 1024 threads in address order, then one thread's timed loads from element 0 over the first {} MiB of the chain (>= 2048 loads, at most one pass: each element was last read in the warm pass with all others in between, as in a full pass); final element checked; four coarse points per doubling, bisection at each rise to 1/{} of the footprint, fine sweep after it", args.timed_span_mib, args.resolution),
            Space::Global | Space::Readonly => "64-bit pointer chase (p = *p: nothing but the load on the chain); one warm pass, then at least one full timed pass (>= 2048 loads); final element checked; four coarse points per doubling, bisection at each rise, fine sweep after it".to_string(),
            _ => "chain of byte offsets or indices loaded directly (no arithmetic between loads, checked in the SASS); one warm pass, then at least one full timed pass (>= 2048 loads); final index checked; four coarse points per doubling, bisection at each rise, fine sweep after it".to_string(),
        },
        min_bytes: smallest,
        per_load: args.per_load,
        preferred_shared_carveout_percent: space.global_loads().then_some(carveout_percent),
        space: space.name().to_string(),
        stride_bytes: stride,
        threads: args.threads,
    }
}

/// The measurement, with the GPU: the sweep, the inference and the side experiments, then
/// `chase.csv` and `cache.json`.
fn measure(
    gpu: &mut crate::gpu::Gpu,
    suite: &mut suite::SuiteRun,
    args: &CacheArgs,
    flags: &Flags,
    largest: u64,
    isa: &str,
    compute_capability: &str,
) -> Result<()> {
    let Flags {
        space,
        order,
        stride,
        smallest,
        span,
        ..
    } = *flags;
    let disassembly = disassemble_beside(space, compute_capability);
    let mut tlb_buffer = match space {
        Space::Tlb => Some(TlbBuffer::new(gpu, largest)?),
        _ => None,
    };
    let (sweep, generated_kernels, so_far) = sweep_space(
        gpu,
        args,
        flags,
        (largest, suite.run.path()),
        isa,
        tlb_buffer.as_mut(),
    )?;
    suite.run.write_csv("chase.csv", &sweep.points)?;
    so_far.finish()?;
    crate::harness::sharing::step_done("sweep");
    let report = infer_levels(gpu, suite, args, flags, &sweep)?;
    crate::harness::sharing::step_done("inference");
    let (tlb_summary, tlb_strides) =
        translation(gpu, suite, tlb_buffer, &report, args, flags, &sweep, largest)?;
    crate::harness::sharing::step_done("translation levels and strides");
    for gap in &sweep.unresolved {
        println!(
            "unresolved: {} B to {} B: {}",
            gap.from_bytes, gap.to_bytes, gap.why
        );
    }
    let (timed_loop, partition_window, storage_probe_loads) =
        read_timed_loop(suite, args, flags, disassembly)?;
    crate::harness::sharing::step_done("timed loop's SASS");
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
    crate::harness::sharing::step_done("index chase and fetch granularity");
    let line = granularity
        .as_ref()
        .and_then(|g| g.estimate.as_ref())
        .map(|e| e.bytes);
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
    crate::harness::sharing::step_done("conflict experiment");
    let partitions = match space {
        Space::L2 if args.threads == 1 && order == Order::Stride => {
            l2_partitions(gpu, suite)?
        }
        _ => None,
    };
    crate::harness::sharing::step_done("L2 partitions");
    let storage_probe_skipped = if runs_storage_probe(args, space) {
        shared_storage(gpu, suite)?
    } else {
        None
    };
    let carveouts = if args.carveout.len() > 1 {
        Some(carveout_sweep(gpu, suite, &args.carveout, flags, largest)?)
    } else {
        None
    };
    let per_load = args
        .per_load
        .then(|| per_load_sweep(gpu, suite, space, order, stride, smallest, largest))
        .transpose()?;
    suite.release_gpu(gpu)?;
    let device = &suite.metadata.device;
    print!("{}", cache_report::render_text(&report));
    print_sweep(space, &sweep, device.l2_cache_bytes);
    suite.run.write_json(
        "cache.json",
        &cache_report::CacheFile {
            carveout: carveouts,
            conflict,
            device_attributes: cache_report::DeviceAttributes {
                global_memory_bytes: device.global_memory_bytes as u64,
                l2_cache_bytes: device.l2_cache_bytes,
                shared_memory_per_multiprocessor_bytes: device.shared_memory_per_multiprocessor_bytes,
            },
            fetch_granularity: granularity,
            index_chain: index_overhead,
            l2_partition_timed_window: partitions.as_ref().and(partition_window),
            l2_partitions: partitions,
            per_load,
            report: cache_report::SavedReport::of(&report)?,
            space: space.name().to_string(),
            storage_probe_loads,
            storage_probe_skipped,
            sweep: cache_report::SweepRecord {
                generated_kernels,
                launches: sweep.launches,
                points: sweep.points.len(),
                seconds: sweep.seconds,
            },
            timed_loop: Some(timed_loop),
            tlb: tlb_summary,
            tlb_strides,
            unresolved: sweep.unresolved,
        },
    )?;
    Ok(())
}

/// The sweep's cost on the console, beside the L2 size the driver reports.
fn print_sweep(space: Space, sweep: &cache::SweepResult, l2_cache_bytes: i32) {
    println!(
        "{} space: {} points ({} launches) in {:.1} s; the driver reports an L2 of {} KiB",
        space.name(),
        sweep.points.len(),
        sweep.launches,
        sweep.seconds,
        l2_cache_bytes / 1024
    );
}

/// The shared-storage probe beside the global sweep ([`storage`]), its rows in `storage.csv`.
/// A device that refuses what it needs (GPGPU-Sim has no texture objects) costs the probe, not
/// the sweep and the side experiments before it: why, for `cache.json`.
fn shared_storage(gpu: &mut crate::gpu::Gpu, suite: &suite::SuiteRun) -> Result<Option<String>> {
    use crate::error::Exit;
    let skipped = match storage::measure(gpu) {
        Ok(storage) => {
            suite.run.write_csv(storage::FILE, &storage)?;
            None
        }
        Err(error) if Exit::for_error(&error) == Exit::Unsupported => {
            println!("shared-storage probe not run: {error:#}");
            Some(format!("{error:#}"))
        }
        Err(error) => return Err(error),
    };
    crate::harness::sharing::step_done("shared storage");
    Ok(skipped)
}

/// Host work beside the GPU's: ptxas and cuobjdump read the chase's SASS while the sweep
/// runs (none for the instruction space, whose kernels are generated). The L2 space also
/// times the partition probe's loads (`l2_partition`).
fn disassemble_beside(space: Space, compute_capability: &str) -> Option<crate::gpu::sass::Beside> {
    let modules: &[&'static str] = match space {
        Space::L2 => &["cache", "l2_partition"],
        _ => &["cache"],
    };
    (space != Space::Instruction).then(|| crate::gpu::sass::beside(modules, compute_capability))
}

/// Whether the shared-storage probe runs beside this sweep: in the global space, on one thread.
fn runs_storage_probe(args: &CacheArgs, space: Space) -> bool {
    space == Space::Global && args.threads == 1
}

/// The SASS read beside the sweep, joined: the timed loop of the entry the sweep ran
/// (`cache.sass`), where the L2 partition probe was read its timed window, and where the
/// shared-storage probe runs (the global space, one thread) its loads.
fn read_timed_loop(
    suite: &suite::SuiteRun,
    args: &CacheArgs,
    flags: &Flags,
    disassembly: Option<crate::gpu::sass::Beside>,
) -> Result<(
    cache_report::TimedLoop,
    Option<cache_report::TimedLoop>,
    Option<storage::ProbeLoads>,
)> {
    let Flags { space, order, .. } = *flags;
    let disassembly = disassembly.map(crate::gpu::sass::Beside::join);
    let entry = if space == Space::L2 && args.threads == 1 && order == Order::Stride {
        "chase_l2_block_warmed"
    } else {
        space.entry()
    };
    let disassembly = disassembly.transpose()?;
    let partition_window = disassembly
        .as_ref()
        .and_then(|(_, record)| partition_window(record));
    let storage_loads = match &disassembly {
        Some((Some(text), record)) if runs_storage_probe(args, space) => {
            let loads = storage::ProbeLoads::of(text, &record.arch);
            if let Some(loads) = &loads {
                println!("shared-storage probe ({}): loads {:?}; {}", loads.arch, loads.loads, loads.verdict);
            }
            loads
        }
        _ => None,
    };
    let timed_loop = timed_loop(suite, space, entry, disassembly)?;
    Ok((timed_loop, partition_window, storage_loads))
}

/// The levels read off the sweep. Where the space descends (address order), the levels up to
/// [`cache::DESCENDING_LARGEST_LEVEL`] are first chased again in descending order
/// (`descending.csv`) and read paired with the ascending sweep; otherwise the ascending sweep
/// alone.
fn infer_levels(
    gpu: &mut crate::gpu::Gpu,
    suite: &suite::SuiteRun,
    args: &CacheArgs,
    flags: &Flags,
    sweep: &cache::SweepResult,
) -> Result<cache_inference::CacheReport> {
    let Flags {
        space,
        order,
        stride,
        span,
        ..
    } = *flags;
    let minimum_rise = cache::RiseThreshold::of(space).minimum_rise();
    let report = if order == Order::Stride && space.descends() {
        // Where to chase down needs where the plateaus end, not `infer`'s model fits,
        // which ran here twice while the GPU waited (the same descending footprints
        // on every committed run): the one reading with fits is the paired one.
        let sizes = cache_inference::plateau_ends(&sweep.points, minimum_rise);
        let swept: Vec<u64> = sweep.points.iter().map(|p| p.footprint_bytes).collect();
        let down = cache::chase_descending(
            gpu,
            space,
            args.threads,
            &sizes,
            &swept,
            stride,
            span,
        )?;
        suite.run.write_csv(cache::DESCENDING_CSV, &down)?;
        crate::harness::sharing::step_done("descending chase");
        cache_inference::infer_paired(&sweep.points, &down, minimum_rise)
    } else {
        cache_inference::infer_with(&sweep.points, minimum_rise)
    }
    .ok_or_else(|| anyhow::anyhow!("the sweep gave fewer than 3 footprints"))?;
    Ok(report)
}

/// The TLB space's own readings on its one buffer (none for the other spaces): the levels'
/// reaches and page size, then the sweeps at further strides; the buffer is freed after them.
#[allow(clippy::too_many_arguments)]
fn translation(
    gpu: &mut crate::gpu::Gpu,
    suite: &suite::SuiteRun,
    mut tlb_buffer: Option<TlbBuffer>,
    report: &cache_inference::CacheReport,
    args: &CacheArgs,
    flags: &Flags,
    sweep: &cache::SweepResult,
    largest: u64,
) -> Result<(Option<cache_report::TlbSummary>, Option<Vec<cache_report::TlbStride>>)> {
    let Flags { order, stride, .. } = *flags;
    let tlb_summary = match tlb_buffer.as_mut() {
        Some(buffer) => Some(translation_levels(gpu, buffer, suite, report, stride)?),
        None => None,
    };
    let tlb_strides = match tlb_buffer.as_mut() {
        Some(buffer) => Some(translation_strides(
            gpu,
            buffer,
            suite,
            order,
            sweep.points.first().map_or(0, |p| p.stride_bytes),
            &args.tlb_strides,
            largest,
        )?),
        None => None,
    };
    drop(tlb_buffer);
    Ok((tlb_summary, tlb_strides))
}

/// The chase swept over the footprints (the instruction space's generated kernels, a TLB's
/// one buffer, or a chain per footprint), with what the instruction space compiled; each point
/// is kept in `dir` as it is measured ([`cache::SoFar`], to finish once `chase.csv` is
/// written).
fn sweep_space(
    gpu: &mut crate::gpu::Gpu,
    args: &CacheArgs,
    flags: &Flags,
    (largest, dir): (u64, &std::path::Path),
    isa: &str,
    mut tlb_buffer: Option<&mut TlbBuffer>,
) -> Result<(
    cache::SweepResult,
    Option<cache_report::GeneratedKernels>,
    cache::SoFar,
)> {
    let Flags {
        space,
        order,
        stride,
        smallest,
        fine_points,
        span,
        ..
    } = *flags;
    let grid = cache::Grid {
        stride,
        relative_resolution: match space {
            Space::L2 | Space::Instruction => 1.0 / f64::from(args.resolution),
            _ => 0.0,
        },
    };
    let threshold = cache::RiseThreshold::of(space);
    let mut generated_kernels = None;
    let mut so_far = cache::SoFar::create(dir, stride)?;
    let sweep = if space == Space::Instruction {
        let mut code = instruction::CodeProbe::new(gpu, isa);
        let mut kept = so_far.keeping(&mut code);
        let sweep =
            cache::sweep_with(threshold, grid, smallest, largest, fine_points, &mut kept)?;
        eprintln!(
            "instruction space: {} sizes measured, {} kernels compiled ahead on the host's cores, {} prebuilt by gpubench all",
            sweep.points.len(),
            code.kernels_compiled,
            code.kernels_prebuilt
        );
        generated_kernels = Some(cache_report::GeneratedKernels {
            code_checked: Some("every kernel's text section: 16 bytes per generated fma instruction plus the first kernel's prologue and epilogue, per compiler".into()),
            compiled_by_the_driver: code.kernels_compiled,
            prebuilt_by_all: code.kernels_prebuilt,
            prebuilt_sass_checked: None,
        });
        sweep
    } else {
        let mut chase = |footprint| match tlb_buffer.as_mut() {
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
        };
        let mut kept = so_far.keeping(&mut chase);
        cache::sweep_with(threshold, grid, smallest, largest, fine_points, &mut kept)?
    };
    Ok((sweep, generated_kernels, so_far))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_prebuilds_the_instruction_space_coarse_grid_and_nothing_else() {
        use crate::harness::Suite;
        for quick in [false, true] {
            let plans = Suite::plan(&Cache, quick);
            let instruction = plans
                .iter()
                .find(|p| p.name == "cache-instruction")
                .unwrap();
            let settings: CacheArgs = serde_json::from_value(instruction.settings.clone()).unwrap();
            let kernels = kernels_to_prebuild(&settings);
            let grid = cache::coarse_grid(
                settings.stride.unwrap(),
                1 << 10,
                256 << 10,
                cache::COARSE_PER_DOUBLING,
            );
            assert_eq!(kernels.len(), grid.len());
            for (kernel, bytes) in kernels.iter().zip(&grid) {
                assert_eq!(kernel.name, instruction::ENTRY);
                assert_eq!(
                    kernel.ptx.matches("fma.rn.f32").count() as u64,
                    bytes / instruction::INSTRUCTION_BYTES
                );
            }
            // The same through the object `all` walks, from the entry's settings as a value.
            assert_eq!(
                Suite::kernels_to_prebuild(&Cache, &instruction.settings).len(),
                grid.len()
            );
            for other in plans.iter().filter(|p| p != &instruction) {
                assert!(
                    Suite::kernels_to_prebuild(&Cache, &other.settings).is_empty(),
                    "{:?}",
                    other.settings
                );
            }
        }
        // Settings that are not the cache suite's build nothing ahead.
        for other in [r#"{"space": "nowhere"}"#, "[1, 2]"] {
            let settings: serde_json::Value = serde_json::from_str(other).unwrap();
            assert!(Suite::kernels_to_prebuild(&Cache, &settings).is_empty());
        }
    }
}

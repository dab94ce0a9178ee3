//! `gpubench tma`: the Tensor Memory Accelerator's bulk tensor copies: latency against footprint
//! beside the L2 load, with the cache each sees, streaming bandwidth against tile size and
//! blocks per SM, and the L2 read by bulk copies over lines private to one block and lines
//! shared by every SM ([`l2_read`]), and the DRAM copy by bulk copies through shared memory
//! ([`dram_copy`]). Everything that serves only this suite is in this folder: its launchers
//! ([`launch`]), measurements, files and figures.

pub mod analysis;
pub mod dram_copy;
pub mod dram_copy_report;
pub mod l2_read;
pub mod l2_read_report;
pub mod launch;
pub mod measure;
pub mod report;
pub mod settings;
pub mod shapes;
pub mod shapes_report;

pub use settings::TmaArgs;

use anyhow::Result;

use self::measure as tma;
use self::report as tma_report;
use self::dram_copy as dram_bulk_copy;
use self::l2_read::{self as l2_bulk_read, SmLimits};
use crate::gpu::launch::bandwidth as launcher;
use crate::harness::suite;
use crate::harness::{Redraw, SavedRun};
use self::dram_copy_report as copy_report;
use self::l2_read_report as l2_report;


pub fn run(args: &TmaArgs) -> Result<()> {
    let footprints = args.footprints_bytes()?;
    args.validate()?;
    // Built while the process waits for the GPU and the GPU measures.
    let chains = tma::start_chains(&footprints);
    let mut gpu = suite::open(&args.target, &[])?;
    let properties = gpu.properties()?;
    suite::require_hopper(
        &properties,
        args.target.device.index()?,
        "tma",
        "the Tensor Memory Accelerator",
    )?;
    for entry in [
        "tma_touch",
        "tma_latency",
        "tma_bandwidth",
        "tma_l2_read",
        "tma_dram_copy",
        "tma_tiles",
        "async_copy",
    ] {
        gpu.function("tma", entry)?;
    }
    let recorded = recorded(args, &footprints, &properties);
    suite::run_opened(
        gpu,
        &Tma,
        &args.target,
        &["tma"],
        &recorded,
        |gpu, suite| {
            let mhz = suite.metadata.sm_clock_before.mhz;
            let sms = u32::try_from(properties.multiprocessors).unwrap_or(1);
            let disassembly = crate::gpu::sass::beside(&["tma"], &properties.compute_capability);
            let latency = tma::latency(gpu, &footprints, chains, sms)?;
            crate::harness::sharing::step_done("latency chases");
            let streams = tma::bandwidth(
                gpu,
                sms,
                u32::try_from(properties.shared_memory_per_multiprocessor_bytes).unwrap_or(0),
                u32::try_from(properties.shared_memory_per_block_optin_bytes).unwrap_or(0),
                args.stream_mib << 20,
            )?;
            crate::harness::sharing::step_done("bandwidth streams");
            let attributes = launcher::memory_attributes(gpu)?;
            let limits = SmLimits {
                multiprocessors: sms,
                shared_per_sm: u32::try_from(properties.shared_memory_per_multiprocessor_bytes)
                    .unwrap_or(0),
                shared_per_block: u32::try_from(properties.shared_memory_per_block_optin_bytes)
                    .unwrap_or(0),
                max_blocks_per_sm: u32::try_from(attributes.max_blocks_per_sm).unwrap_or(16),
            };
            let l2_bytes = u64::try_from(properties.l2_cache_bytes).unwrap_or(0);
            let l2_read = l2_bulk_read::measure(
                gpu,
                limits,
                l2_bulk_read::footprint(l2_bytes),
                args.search_ms / 1e3,
            )?;
            crate::harness::sharing::step_done("L2 bulk read");
            let dram_copy =
                dram_bulk_copy::measure(gpu, sms, limits.shared_per_sm, limits.shared_per_block)?;
            crate::harness::sharing::step_done("DRAM bulk copy");
            let shapes = shapes::measure(
                gpu,
                shapes::Device {
                    sms,
                    mhz,
                    shared_per_sm: limits.shared_per_sm,
                    shared_per_block: limits.shared_per_block,
                    l2_bytes,
                },
                args.stream_mib << 20,
            )?;
            crate::harness::sharing::step_done("box shapes and asynchronous copies");
            let peak = attributes.dram_peak_bytes_per_second();
            suite.release_gpu(gpu)?;
            let sass = suite.keep_sass(disassembly, "tma.sass")?;
            let bandwidth = tma_report::bandwidth_rows(&streams, mhz);
            tma_report::write(
                &suite.run,
                &latency,
                &bandwidth,
                &sass,
            )?;
            let l2_rows = l2_report::rows(&l2_read, sms, mhz);
            l2_report::write(&suite.run, &l2_rows)?;
            let copy_rows = copy_report::rows(&dram_copy, peak);
            copy_report::write(&suite.run, &copy_rows)?;
            shapes_report::write(&suite.run, &shapes)?;
            print_readings(&latency, &bandwidth, &l2_rows, &copy_rows);
            print_shapes(&shapes);
            Ok(())
        },
    )
}

/// `metadata.json`'s settings: the footprints chased, the stream's and the searches' shapes,
/// the L2 read's footprint on this device, and the method in words.
fn recorded(
    args: &TmaArgs,
    footprints: &[u64],
    properties: &crate::gpu::DeviceProperties,
) -> settings::Recorded {
    settings::Recorded {
        dram_copy_figure_launches: dram_bulk_copy::FIGURE_LAUNCHES,
        dram_copy_search: settings::DramCopySearch {
            blocks_per_sm: dram_bulk_copy::BLOCKS_PER_SM.to_vec(),
            chunk_kib: dram_bulk_copy::CHUNK_KIB.to_vec(),
            stages: dram_bulk_copy::STAGES.to_vec(),
        },
        footprints_bytes: footprints.to_vec(),
        l2_read_figure_launches: l2_bulk_read::HEADLINE_LAUNCHES,
        l2_read_figure_min_ms: l2_bulk_read::HEADLINE_SECONDS * 1e3,
        l2_read_footprint_bytes: l2_bulk_read::footprint(
            u64::try_from(properties.l2_cache_bytes).unwrap_or(0),
        ),
        l2_read_search: settings::L2ReadSearch {
            blocks_per_sm: l2_bulk_read::BLOCKS_PER_SM.to_vec(),
            min_ms: args.search_ms,
            slice_kib: l2_bulk_read::SLICE_KIB.to_vec(),
            stages: l2_bulk_read::STAGES.to_vec(),
        },
        method: "latency: one thread chases random 128-byte tiles with 1-D cp.async.bulk.tensor copies completing on an mbarrier (next index read from the copied tile), beside the same chain with ld.global.cg, after every SM read the footprint; bandwidth: thread 0 of each block streams 2-D tiles through 4 mbarrier-tracked shared buffers, clock64 per block; L2 read: thread 0 of each block copies slices of a region a quarter of the L2's size with cp.async.bulk (private lines: each slice one block per pass; shared: every block every slice), every pattern that fits searched, the fastest of each kind re-timed over 5 launches of at least 8 ms; DRAM copy: two arrays of 4 GiB (an eighth of free memory each where less), thread 0 of each block takes chunks in order from an atomic ticket, loads them into shared buffers with cp.async.bulk and stores each back with cp.async.bulk.global.shared::cta, half the buffers awaiting stores, every pattern that fits timed over 2 launches, the fastest over 5, three stretches of the target checked; box shapes: thread 0 of 2 blocks per SM copies 4 KiB TMA boxes (2-D from 16 B x 256 rows to 1 KiB x 4 rows, three swizzled, two 3-D) of a tensor with 16 KiB rows, 8 in flight per block, from a region a quarter of the L2 (in whole 4 MiB, at most 16) and from 1 GiB in DRAM; copies into shared memory: 2 blocks of 256 threads per SM copy 4 KiB chunks, 16 bytes per thread, 1 to 8 in flight per block, by ld.global.cg + st.shared + barrier or by cp.async.cg with a commit group per chunk, beside the TMA copy of a 256 B x 16-row box with as many stages; each configuration one untimed launch, then 3 timed by events".into(),
        steps: tma::STEPS,
        stream_bytes_per_configuration: args.stream_mib << 20,
        stream_stages: tma::STAGES,
        stream_tensor_words: [tma::STREAM_COLUMNS, tma::STREAM_ROWS],
        tile_bytes: tma::TILE_WORDS * 4,
        warm_steps: tma::WARM,
    }
}

/// The console's account of a finished run: each footprint's latencies and the capacity
/// fits, each stream, the L2 read's figures and the DRAM copy's (the numbers of its files).
fn print_readings(
    latency: &[tma_report::LatencyRow],
    bandwidth: &[tma_report::BandwidthRow],
    l2_rows: &[l2_report::Row],
    copy_rows: &[copy_report::Row],
) {
    for row in latency {
        println!(
            "{:>10}: TMA {:>6.1} cycles per step, ld.global.cg {:>6.1}",
            crate::report::plot::binary_bytes(row.footprint_bytes as f64),
            row.tma_cycles,
            row.load_cycles
        );
    }
    let (t, l) = tma_report::fits(latency);
    for (fit, what) in [(t, "TMA"), (l, "load")] {
        if let Some(f) = fit {
            println!(
                "{what} fit: {:.1} cycles cached, {:.1} from memory, capacity {} ({}-{})",
                f.hit_cycles,
                f.miss_cycles,
                crate::report::plot::binary_bytes(f.capacity_bytes),
                crate::report::plot::binary_bytes(f.capacity_low_bytes),
                crate::report::plot::binary_bytes(f.capacity_high_bytes)
            );
        }
    }
    for row in bandwidth {
        match (row.gpu_gb_per_s, &row.skipped) {
            (Some(gbs), _) => println!(
                "stream {:>9} tiles, {} block(s)/SM: {:>7.0} GB/s",
                crate::report::plot::binary_bytes(f64::from(row.tile_bytes)),
                row.blocks_per_sm,
                gbs
            ),
            (None, Some(why)) => println!("skipped: {why}"),
            _ => {}
        }
    }
    for row in l2_rows.iter().filter(|r| r.role == "figure") {
        if let Some(gbs) = row.gb_per_s {
            println!(
                "{}: {gbs:>7.0} GB/s ({})",
                l2_report::quantity(&row.lines),
                l2_report::pattern(row)
            );
        }
    }
    match copy_rows.iter().find(|r| r.role != "search") {
        Some(row) if row.gb_per_s.is_some() => println!(
            "{}: {:.0} GB/s, {:.1} % of the theoretical peak ({}); {} of {} words read back differ",
            copy_report::QUANTITY,
            row.gb_per_s.unwrap_or(0.0),
            100.0 * row.fraction_of_peak.unwrap_or(0.0),
            copy_report::pattern(row),
            row.mismatched_words.unwrap_or(0),
            row.checked_words.unwrap_or(0)
        ),
        Some(row) => println!(
            "{}: {}",
            copy_report::QUANTITY,
            row.skipped.as_deref().unwrap_or("not measured")
        ),
        None => {}
    }
}

/// The console's account of the box shapes and the copies into shared memory.
fn print_shapes(shapes: &shapes::Shapes) {
    for row in &shapes.rows {
        let what = if row.experiment == shapes::BOXES {
            format!("TMA {}-D box {}", row.rank, shapes_report::box_words(row))
        } else {
            format!("{}, {} KiB in flight per SM", row.method, row.bytes_in_flight_per_sm >> 10)
        };
        let rate = row.bytes_per_clock_per_sm.map_or_else(
            || row.skipped.clone().unwrap_or_default(),
            |b| format!("{b:>6.1} B/clock/SM"),
        );
        println!("{what:<56} from {:>4}: {rate}", row.source);
    }
}

/// `gpubench tma` in the suite registry.
pub struct Tma;

impl crate::harness::SuiteDef for Tma {
    const NAME: &'static str = "tma";
    const ABOUT: &'static str = "Tensor Memory Accelerator: bulk tensor copy latency against footprint and streaming bandwidth (Luo et al. 2024)";
    type Args = TmaArgs;

    const RUN: crate::harness::Measure<TmaArgs> = run;

    const SECONDS_IN_ALL: (f64, f64) = (0.5, 1.0);

    fn quick(defaults: TmaArgs) -> TmaArgs {
        TmaArgs {
            footprints_mib: vec![1.0, 16.0, 32.0, 64.0, 128.0],
            stream_mib: 128,
            // The search at a third of its launch time (its waits on an H200 fell from
            // 0.75 to 0.34 s); the figure is still timed over five launches of 8 ms.
            search_ms: 1.0,
            ..defaults
        }
    }

    const FIGURES: crate::harness::ReadFigures = figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        let latency = tma_report::read_latency(run.dir)?;
        let bandwidth = tma_report::read_bandwidth(run.dir)?;
        let title = run.title(tma_report::title());
        out.plot("tma", |p| tma_report::draw(p, &title, &latency, &bandwidth))?;
        if run.dir.join(l2_report::FILE).exists() {
            let rows = l2_report::read_rows(run.dir)?;
            let title = run.title(l2_report::title());
            out.plot("tma-l2-read", |p| l2_report::draw(p, &title, &rows))?;
        }
        if let Some(shapes) = shapes_report::read(run.dir)? {
            let title = run.title(shapes_report::title());
            out.plot("tma-shapes", |p| shapes_report::draw(p, &title, &shapes))?;
        }
        Ok(())
    }
}

/// The summary's rows: the bulk copies', the L2 read's and the DRAM copy's.
fn figures(dir: &std::path::Path) -> Result<Vec<crate::report::figures::Figure>> {
    let mut figures = tma_report::figures(dir)?;
    figures.extend(l2_report::figures(dir)?);
    figures.extend(copy_report::figures(dir)?);
    let ceiling =
        crate::report::ceilings::chip_bytes(&crate::report::metadata::SavedMetadata::read(dir)?);
    figures.extend(shapes_report::figures(dir, ceiling.as_ref())?);
    Ok(figures)
}

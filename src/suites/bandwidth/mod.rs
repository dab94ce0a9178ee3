//! `gpubench bandwidth`: the occupancy search, the L1 and device sweeps, the levels read off
//! them, and the files (see `measure` for the method).

pub mod analysis;
pub mod levels;
pub mod measure;
mod plot;
pub mod report;
pub mod settings;

use std::time::Instant;

use anyhow::{Context, Result};

use self::analysis::{CurvePoint, levels};
use self::measure::{self as experiment, BandwidthConfig, Bench, Level, Limits, Point};
use self::report::{
    BandwidthFile, CopyEngineFigure, FalloffFigure, KernelAccesses, LevelFigure, PointRow,
    SassCheck,
};
use crate::experiments::copy_engines;
use crate::gpu::launch::bandwidth::{self as launcher, Buffers, Kernel};
use crate::harness::suite;
use crate::harness::{Redraw, SavedRun};
pub use settings::BandwidthArgs;

pub fn run(args: &BandwidthArgs) -> Result<()> {
    args.validate()?;
    let entries: Vec<(&str, &str)> = Kernel::ALL
        .iter()
        .map(|k| ("bandwidth", k.entry()))
        .collect();
    let gpu = suite::open(&args.target, &entries)?;
    let properties = gpu.properties()?;
    let memory = properties.global_memory_bytes as u64;
    let l2 = u64::try_from(properties.l2_cache_bytes).unwrap_or(0);
    let config = BandwidthConfig {
        repeats: args.repeats,
        sweep_repeats: args.sweep_repeats,
        min_seconds: args.min_ms / 1e3,
        headline_min_seconds: args.headline_ms / 1e3,
        points_per_doubling: args.points_per_doubling,
        max_device_bytes: args
            .max_device_bytes(|| experiment::far_past_l2(l2).min(memory / 4))?,
        max_sm_bytes: args.max_sm_bytes,
    };
    let sms = u32::try_from(properties.multiprocessors).context("a negative SM count")?;
    let source_bytes = config
        .max_device_bytes
        .max(config.max_sm_bytes * u64::from(sms));
    args.fits(Buffers::total_bytes(source_bytes), memory)?;
    let recorded = settings::Recorded {
        headline_ms: args.headline_ms,
        max_device_bytes: config.max_device_bytes,
        max_sm_bytes: config.max_sm_bytes,
        method: "16-byte vector accesses, 4 in flight per thread; occupancy per level by search; each launch calibrated to at least min_ms (the L2's headline points: headline_ms), then timed between CUDA events `repeats` times for a headline point and `sweep_repeats` times for a sweep point; median of the repeats with their range; device kernels cut the region into slices of 4 x threads vectors, one block per slice (never more blocks than slices), at DRAM taken in order from an atomic ticket, the L2's reads streamed (passes x slices blocks, block b reading slice b mod slices once, where the slices outnumber the resident blocks), the L2's write and copy and the sweeps each block keeping its own; each device sweep at its L2 winner with fixed slices (the reads search again with fixed slices and take, of the occupancies within 2 % of the best, the one with the most threads per SM); reads skip L1 (ld.global.L1::no_allocate); L1 reads give every block its own region, placed by %smid and an arrival ticket, the footprint being what one SM's blocks read together; the copy engines' DRAM copy (cuMemcpyDtoD, no kernel) of two 4 GiB arrays (an eighth of free memory where that is less), two copies back to back per timing, one warm-up and `repeats` timings, three stretches of the target checked".into(),
        min_ms: args.min_ms,
        points_per_doubling: config.points_per_doubling,
        repeats: config.repeats,
        sweep_repeats: config.sweep_repeats,
    };
    suite::run_opened(
        gpu,
        &Bandwidth,
        &args.target,
        &["bandwidth"],
        &recorded,
        |gpu, suite| {
            let started = Instant::now();
            let attributes = launcher::memory_attributes(gpu)?;
            let limits = Limits {
                multiprocessors: sms,
                max_threads_per_sm: u32::try_from(attributes.max_threads_per_sm).unwrap_or(1024),
                max_blocks_per_sm: u32::try_from(attributes.max_blocks_per_sm).unwrap_or(16),
                shared_per_sm: u64::try_from(properties.shared_memory_per_multiprocessor_bytes)
                    .unwrap_or(0),
                shared_per_block_optin: u64::try_from(
                    properties.shared_memory_per_block_optin_bytes,
                )
                .unwrap_or(0),
                l2_bytes: l2,
            };
            let buffers = Buffers::new(gpu, source_bytes, sms)?;
            let mut bench = Bench {
                gpu,
                buffers,
                limits,
                config: &config,
                launches: 0,
            };
            let measured = bench.measure()?;
            let copy_engines = copy_engines::measure(bench.gpu, config.repeats)?;
            // The GPU's part is over: the next suite may measure while this one writes.
            suite.release_gpu(bench.gpu)?;
            for (level, o) in &measured.winners {
                eprintln!(
                    "{}: {} threads x {} blocks per SM move the most bytes",
                    level.name(),
                    o.threads,
                    o.blocks_per_sm
                );
            }
            let mhz = suite.metadata.sm_clock_before.mhz;
            let peak = attributes.dram_peak_bytes_per_second();
            let rows = point_rows(&measured);
            let levels = level_figures(&measured, mhz, sms, peak);
            let falloffs = sweep_falloffs(&measured);
            let copy_engines = copy_engines.map(|c| copy_engine_figure(c, peak));
            let sass = sass_check(suite, &properties.compute_capability)?;
            let file = BandwidthFile {
                sm_clock_mhz: mhz,
                multiprocessors: sms,
                memory_clock_mhz: f64::from(attributes.memory_clock_khz) / 1e3,
                memory_bus_bits: u32::try_from(attributes.bus_width_bits).unwrap_or(0),
                dram_peak_bytes_per_second: peak,
                levels,
                falloffs,
                copy_engines: Some(copy_engines),
                launches: bench.launches,
                seconds: started.elapsed().as_secs_f64(),
                sass,
            };
            suite.run.write_csv("points.csv", &rows)?;
            suite.run.write_json("bandwidth.json", &file)?;
            print_file(&file);
            Ok(())
        },
    )
}

/// The console's account of a finished run: each level's figure, the copy engines' copy, each
/// fall-off, and the launches and seconds it took (the same numbers as `bandwidth.json`).
fn print_file(file: &BandwidthFile) {
    let peak = file.dram_peak_bytes_per_second;
    for l in &file.levels {
        println!(
            "{:>6} {:<5} {:>8.0} GB/s ({:.0} to {:.0}), {:6.1} B/clock/SM{} [{}; {} threads x {} blocks/SM{}]",
            l.level,
            l.operation,
            l.median_bytes_per_second / 1e9,
            l.min_bytes_per_second / 1e9,
            l.max_bytes_per_second / 1e9,
            l.bytes_per_clock_per_sm,
            l.fraction_of_peak.map_or(String::new(), |f| format!(
                ", {:.1} % of the {:.0} GB/s peak",
                100.0 * f,
                peak / 1e9
            )),
            l.from,
            l.threads,
            l.blocks_per_sm,
            l.slice_order
                .as_deref()
                .map_or(String::new(), |o| format!(", {o} slices"))
        );
    }
    match &file.copy_engines {
        Some(Ok(c)) => println!(
            "  dram copy by the copy engines (cuMemcpyDtoD, {} x {} MiB): {:.0} GB/s ({:.0} to {:.0}), {:.1} % of the peak; {} of {} words read back differ",
            c.copies_per_timing,
            c.array_bytes >> 20,
            c.median_bytes_per_second / 1e9,
            c.min_bytes_per_second / 1e9,
            c.max_bytes_per_second / 1e9,
            100.0 * c.fraction_of_peak,
            c.mismatched_words,
            c.checked_words
        ),
        Some(Err(why)) => println!("  dram copy by the copy engines: {why}"),
        None => {}
    }
    for f in &file.falloffs {
        println!(
            "{} falls off at {} bytes (between {} and {}): {:.0} -> {:.0} GB/s",
            f.sweep,
            f.bytes,
            f.low_bytes,
            f.high_bytes,
            f.before_bytes_per_second / 1e9,
            f.after_bytes_per_second / 1e9
        );
    }
    println!("{} launches in {:.1} s", file.launches, file.seconds);
}

/// Every point the run measured, as the rows of points.csv: the occupancy searches, the
/// sweeps' own searches, the allocations, the headlines, then the L1 and device sweeps.
fn point_rows(measured: &experiment::Measured) -> Vec<PointRow> {
    let mut rows: Vec<PointRow> = Vec::new();
    rows.extend(measured.search.iter().map(|p| row("search", p)));
    rows.extend(measured.sweep_search.iter().map(|p| row("sweep search", p)));
    rows.extend(measured.allocations.iter().map(|p| row("allocation", p)));
    rows.extend(measured.headline.iter().map(|p| row("headline", p)));
    rows.extend(measured.l1_sweep.iter().map(|p| row("sweep", p)));
    for (_, points) in &measured.device_sweeps {
        rows.extend(points.iter().map(|p| row("sweep", p)));
    }
    rows
}

/// Each headline point as a level's figure: where it was measured, its rate per SM and clock
/// (at `mhz` over `sms` SMs) and, for DRAM, its fraction of the `peak`.
fn level_figures(measured: &experiment::Measured, mhz: f64, sms: u32, peak: f64) -> Vec<LevelFigure> {
    let per_sm_clock = |rate: f64| rate / (mhz * 1e6 * f64::from(sms));
    measured
        .headline
        .iter()
        .map(|p| LevelFigure {
            level: p.level.name().into(),
            operation: p.operation.into(),
            from: match p.level {
                Level::L2 | Level::Dram => {
                    format!("at the {} {} search's winner", p.level.name(), p.operation)
                }
                _ => format!("at the {} read search's winner", p.level.name()),
            },
            footprint_bytes: p.footprint_bytes,
            threads: p.threads,
            blocks_per_sm: p.blocks_per_sm,
            median_bytes_per_second: p.median_bytes_per_second,
            min_bytes_per_second: p.min_bytes_per_second,
            max_bytes_per_second: p.max_bytes_per_second,
            bytes_per_clock_per_sm: per_sm_clock(p.median_bytes_per_second),
            fraction_of_peak: (p.level == Level::Dram).then(|| p.median_bytes_per_second / peak),
            slice_order: (p.placement == "device").then(|| p.order.name().to_string()),
            allocations: (p.allocations > 1).then_some(p.allocations),
        })
        .collect()
}

/// The fall-offs of every sweep: the L1 sweep's, then each device sweep's in the order measured.
fn sweep_falloffs(measured: &experiment::Measured) -> Vec<FalloffFigure> {
    let mut falloffs = falloffs_of(&report::sweep_name("sm", "read"), &measured.l1_sweep);
    for (kernel, points) in &measured.device_sweeps {
        let (operation, placement) = experiment::describe(*kernel);
        falloffs.extend(falloffs_of(&report::sweep_name(placement, operation), points));
    }
    falloffs
}

/// The copy engines' DRAM copy as bandwidth.json keeps it, with its fraction of the `peak`.
fn copy_engine_figure(c: copy_engines::CopyEngineReading, peak: f64) -> CopyEngineFigure {
    CopyEngineFigure {
        array_bytes: c.array_bytes,
        copies_per_timing: c.copies,
        repeats: c.rate.n,
        median_bytes_per_second: c.rate.median,
        min_bytes_per_second: c.rate.min,
        max_bytes_per_second: c.rate.max,
        fraction_of_peak: c.rate.median / peak,
        checked_words: c.checked_words,
        mismatched_words: c.mismatched_words,
    }
}

/// Compiles the PTX this run loaded for the device, writes `bandwidth.sass`, and checks each
/// kernel's memory instructions against the 16-byte accesses its method names.
fn sass_check(suite: &suite::SuiteRun, cc: &str) -> Result<SassCheck> {
    let Some(module) = crate::kernels::module("bandwidth") else {
        return Ok(SassCheck {
            status: "the bandwidth module is not embedded".into(),
            arch: String::new(),
            kernels: Vec::new(),
        });
    };
    let (text, record) = crate::gpu::sass::disassemble(module, cc);
    let Some(text) = text else {
        println!("kernels' SASS not read ({})", record.status);
        return Ok(SassCheck {
            status: record.status,
            arch: record.arch,
            kernels: Vec::new(),
        });
    };
    suite.run.write("bandwidth.sass", text.as_bytes())?;
    let found = crate::analysis::sass::memory_instructions(&text);
    let kernels = Kernel::ALL
        .iter()
        .map(|kernel| {
            let accesses = found.get(kernel.entry()).cloned().unwrap_or_default();
            let expected: Vec<String> = kernel
                .expected_accesses()
                .iter()
                .map(|e| e.to_string())
                .collect();
            let missing: Vec<&String> = expected
                .iter()
                .filter(|e| !accesses.contains_key(*e))
                .collect();
            let verdict = if missing.is_empty() {
                format!("as expected: {}", expected.join(" and "))
            } else {
                format!(
                    "UNEXPECTED: no {missing:?} among {:?}; this run does not measure what it says",
                    accesses.keys().collect::<Vec<_>>()
                )
            };
            println!("{}: {:?} ({verdict})", kernel.entry(), accesses);
            KernelAccesses {
                kernel: kernel.entry().into(),
                accesses,
                expected,
                verdict,
            }
        })
        .collect();
    Ok(SassCheck {
        status: record.status,
        arch: record.arch,
        kernels,
    })
}

/// One row of points.csv; a sweep point's level is left blank (its footprint decides it).
fn row(stage: &str, p: &Point) -> PointRow {
    PointRow {
        stage: stage.into(),
        level: if stage == "sweep" {
            String::new()
        } else {
            p.level.name().into()
        },
        operation: p.operation.into(),
        placement: p.placement.into(),
        threads: p.threads,
        blocks_per_sm: p.blocks_per_sm,
        slice_order: p.order.name().into(),
        footprint_bytes: p.footprint_bytes,
        passes: p.passes,
        bytes_per_launch: p.bytes_per_launch,
        median_bytes_per_second: p.median_bytes_per_second,
        min_bytes_per_second: p.min_bytes_per_second,
        max_bytes_per_second: p.max_bytes_per_second,
        repeats: p.repeats,
    }
}

/// The falloffs of one sweep's curve.
fn falloffs_of(sweep: &str, points: &[Point]) -> Vec<FalloffFigure> {
    let curve: Vec<CurvePoint> = points
        .iter()
        .map(|p| CurvePoint {
            footprint_bytes: p.footprint_bytes,
            bytes_per_second: p.median_bytes_per_second,
        })
        .collect();
    levels(&curve)
        .falloffs
        .into_iter()
        .map(|f| FalloffFigure {
            sweep: sweep.to_string(),
            bytes: f.bytes,
            low_bytes: f.low_bytes,
            high_bytes: f.high_bytes,
            descent_from_bytes: Some(f.descent_from_bytes),
            descent_to_bytes: Some(f.descent_to_bytes),
            before_bytes_per_second: f.before_bytes_per_second,
            after_bytes_per_second: f.after_bytes_per_second,
        })
        .collect()
}

/// `gpubench bandwidth` in the suite registry.
pub struct Bandwidth;

impl crate::harness::SuiteDef for Bandwidth {
    const NAME: &'static str = "bandwidth";
    const ABOUT: &'static str = "Read, write and copy bandwidth against footprint for shared memory, L1, L2 and DRAM, with the footprints where each level falls off";
    type Args = BandwidthArgs;

    const RUN: crate::harness::Measure<BandwidthArgs> = run;

    const SECONDS_IN_ALL: (f64, f64) = (0.9, 3.5);

    // Launches of 1 ms (not the default 2): a point's spread over its repeats stays well under
    // the figures' 5 % (bandwidth.json keeps each point's range). The L2's headline figures
    // keep the default 8 ms, where they repeat between runs.
    fn full(defaults: BandwidthArgs) -> BandwidthArgs {
        BandwidthArgs {
            min_ms: 1.0,
            ..defaults
        }
    }

    // Launches of 0.25 ms: the launch overhead (a few microseconds) stays near 1 %.
    fn quick(defaults: BandwidthArgs) -> BandwidthArgs {
        BandwidthArgs {
            repeats: 2,
            points_per_doubling: 1,
            min_ms: 0.25,
            headline_ms: 1.0,
            ..defaults
        }
    }

    const FIGURES: crate::harness::ReadFigures = report::figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        let rows: Vec<PointRow> = crate::report::saved::read_csv(run.dir, "points.csv")?;
        let file: BandwidthFile = crate::report::saved::read_json(run.dir, "bandwidth.json")?;
        let title = run.title(report::TITLE);
        out.plot("bandwidth", |p| report::draw(p, &title, &rows, &file))
    }

    fn curves(&self, dir: &std::path::Path) -> Result<Vec<crate::report::overlay::Curve>> {
        let rows: Vec<PointRow> = crate::report::saved::read_csv(dir, "points.csv")?;
        Ok(report::curves(&rows))
    }
}

//! `gpubench bandwidth`: the occupancy search, the L1 and device sweeps, the levels read off
//! them, and the files (see `experiments::bandwidth` for the method).

use std::time::Instant;

use anyhow::{Context, Result};
use serde_json::json;

use super::suite;
use crate::analysis::bandwidth::{CurvePoint, levels};
use crate::cli::BandwidthArgs;
use crate::experiments::bandwidth::{
    self as experiment, BandwidthConfig, Bench, Level, Limits, Point,
};
use crate::experiments::plan::PlannedSuite;
use crate::gpu::bandwidth::{self as launcher, Buffers, Kernel, Occupancy};
use crate::report::bandwidth::{
    self as report, BandwidthFile, FalloffFigure, LevelFigure, PointRow,
};

pub fn run(args: &BandwidthArgs) -> Result<()> {
    let entries: Vec<(&str, &str)> = Kernel::ALL
        .iter()
        .map(|k| ("bandwidth", k.entry()))
        .collect();
    let gpu = suite::open(args.device, args.output.as_deref(), &entries)?;
    let properties = gpu.properties()?;
    let memory = properties.global_memory_bytes as u64;
    let l2 = u64::try_from(properties.l2_cache_bytes).unwrap_or(0);
    let config = BandwidthConfig {
        repeats: args.repeats,
        min_seconds: args.min_ms / 1e3,
        points_per_doubling: args.points_per_doubling,
        max_device_bytes: args
            .max_bytes
            .unwrap_or_else(|| (16 * l2).max(1 << 30).min(memory / 4)),
        max_sm_bytes: args.max_sm_bytes,
    };
    config.validate()?;
    let sms = u32::try_from(properties.multiprocessors).context("a negative SM count")?;
    let source_bytes = config
        .max_device_bytes
        .max(config.max_sm_bytes * u64::from(sms));
    if source_bytes + source_bytes / 2 > memory / 10 * 9 {
        return Err(crate::error::UsageError::new(format!(
            "the buffers would need {} bytes of the device's {memory}; pass a smaller --max-bytes or --max-sm-bytes",
            source_bytes + source_bytes / 2
        ))
        .into());
    }
    let settings = json!({
        "repeats": config.repeats,
        "min_ms": args.min_ms,
        "points_per_doubling": config.points_per_doubling,
        "max_device_bytes": config.max_device_bytes,
        "max_sm_bytes": config.max_sm_bytes,
        "method": "16-byte vector accesses, 4 in flight per thread; occupancy per level by search; each launch calibrated to at least min_ms, then timed `repeats` times between CUDA events; median of the repeats with their range; device reads skip L1 (ld.global.L1::no_allocate), L1 reads give each SM its own region (%smid)",
    });
    suite::run_opened(
        gpu,
        "bandwidth",
        args.output.as_deref(),
        &["bandwidth"],
        settings,
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
            let mhz = suite.metadata.sm_clock_before.mhz;
            let per_sm_clock = |rate: f64| rate / (mhz * 1e6 * f64::from(sms));
            let mut rows: Vec<PointRow> = Vec::new();
            let push = |rows: &mut Vec<PointRow>, stage: &str, p: &Point| {
                rows.push(PointRow {
                    stage: stage.into(),
                    level: p.level.name().into(),
                    operation: p.operation.into(),
                    placement: p.placement.into(),
                    threads: p.threads,
                    blocks_per_sm: p.blocks_per_sm,
                    footprint_bytes: p.footprint_bytes,
                    passes: p.passes,
                    bytes_per_launch: p.bytes_per_launch,
                    median_bytes_per_second: p.median_bytes_per_second,
                    min_bytes_per_second: p.min_bytes_per_second,
                    max_bytes_per_second: p.max_bytes_per_second,
                    repeats: p.repeats,
                });
            };

            // The occupancy search: every candidate at each level's search footprint.
            let mut winners: Vec<(Level, Point)> = Vec::new();
            for level in Level::ALL {
                let kernel = match level {
                    Level::Shared => Kernel::SharedRead,
                    Level::L1 => Kernel::ReadSm,
                    _ => Kernel::ReadDevice,
                };
                let mut best: Option<Point> = None;
                for occupancy in experiment::candidates(level, &limits) {
                    let footprint = match level {
                        Level::Shared => experiment::shared_bytes(occupancy.threads),
                        _ => experiment::search_footprint(level, &limits, config.max_device_bytes),
                    };
                    let point = bench.point(level, kernel, occupancy, footprint, 3)?;
                    push(&mut rows, "search", &point);
                    if best
                        .is_none_or(|b| point.median_bytes_per_second > b.median_bytes_per_second)
                    {
                        best = Some(point);
                    }
                }
                let best =
                    best.with_context(|| format!("no occupancy fits the {} search", level.name()))?;
                eprintln!(
                    "{}: best at {} threads x {} blocks per SM: {:.0} GB/s",
                    level.name(),
                    best.threads,
                    best.blocks_per_sm,
                    best.median_bytes_per_second / 1e9
                );
                winners.push((level, best));
            }
            let winner = |level: Level| {
                winners
                    .iter()
                    .find(|(l, _)| *l == level)
                    .map(|(_, p)| Occupancy {
                        threads: p.threads,
                        blocks_per_sm: p.blocks_per_sm,
                    })
                    .expect("every level was searched")
            };

            // Headline points at the winners, with the full number of repeats.
            let mut headline: Vec<Point> = Vec::new();
            let shared = winner(Level::Shared);
            for kernel in [Kernel::SharedRead, Kernel::SharedWrite, Kernel::SharedCopy] {
                let footprint = experiment::shared_bytes(shared.threads);
                headline.push(bench.point(
                    Level::Shared,
                    kernel,
                    shared,
                    footprint,
                    config.repeats,
                )?);
            }
            for level in [Level::L1, Level::L2, Level::Dram] {
                let kernel = if level == Level::L1 {
                    Kernel::ReadSm
                } else {
                    Kernel::ReadDevice
                };
                let footprint =
                    experiment::search_footprint(level, &limits, config.max_device_bytes);
                headline.push(bench.point(
                    level,
                    kernel,
                    winner(level),
                    footprint,
                    config.repeats,
                )?);
            }
            for p in &headline {
                push(&mut rows, "headline", p);
            }

            // The sweeps.
            let l1 = winner(Level::L1);
            let unit = launcher::VECTOR_BYTES * u64::from(l1.threads);
            let mut l1_points = Vec::new();
            for footprint in experiment::footprints(
                16 << 10,
                config.max_sm_bytes,
                config.points_per_doubling,
                unit,
            ) {
                let p = bench.point(Level::L1, Kernel::ReadSm, l1, footprint, config.repeats)?;
                push(&mut rows, "sweep", &p);
                l1_points.push(p);
            }
            let l2 = winner(Level::L2);
            let slice = launcher::UNROLL * launcher::VECTOR_BYTES * u64::from(l2.threads);
            let mut device_points: Vec<(Kernel, Vec<Point>)> = Vec::new();
            for kernel in [Kernel::ReadDevice, Kernel::WriteDevice, Kernel::CopyDevice] {
                let unit = if kernel == Kernel::CopyDevice {
                    2 * slice
                } else {
                    slice
                };
                let mut points = Vec::new();
                for footprint in experiment::footprints(
                    1 << 20,
                    config.max_device_bytes,
                    config.points_per_doubling,
                    unit,
                ) {
                    let p = bench.point(Level::L2, kernel, l2, footprint, config.repeats)?;
                    push(&mut rows, "sweep", &p);
                    points.push(p);
                }
                device_points.push((kernel, points));
            }

            // Levels read off the sweeps.
            let curve = |points: &[Point]| -> Vec<CurvePoint> {
                points
                    .iter()
                    .map(|p| CurvePoint {
                        footprint_bytes: p.footprint_bytes,
                        bytes_per_second: p.median_bytes_per_second,
                    })
                    .collect()
            };
            let mut falloffs = Vec::new();
            let mut add_falloffs = |name: &str, points: &[Point]| {
                let found = levels(&curve(points));
                for f in found.falloffs {
                    falloffs.push(FalloffFigure {
                        sweep: name.to_string(),
                        bytes: f.bytes,
                        low_bytes: f.low_bytes,
                        high_bytes: f.high_bytes,
                        before_bytes_per_second: f.before_bytes_per_second,
                        after_bytes_per_second: f.after_bytes_per_second,
                    });
                }
                found.plateaus
            };
            add_falloffs("l1 read", &l1_points);
            let peak = 2.0
                * f64::from(attributes.memory_clock_khz)
                * 1e3
                * f64::from(attributes.bus_width_bits)
                / 8.0;
            let figure = |p: &Point, from: &str| LevelFigure {
                level: p.level.name().into(),
                operation: p.operation.into(),
                from: from.into(),
                footprint_bytes: p.footprint_bytes,
                threads: p.threads,
                blocks_per_sm: p.blocks_per_sm,
                median_bytes_per_second: p.median_bytes_per_second,
                min_bytes_per_second: p.min_bytes_per_second,
                max_bytes_per_second: p.max_bytes_per_second,
                bytes_per_clock_per_sm: per_sm_clock(p.median_bytes_per_second),
                fraction_of_peak: (p.level == Level::Dram)
                    .then(|| p.median_bytes_per_second / peak),
            };
            let mut figures: Vec<LevelFigure> = headline
                .iter()
                .map(|p| figure(p, "search winner"))
                .collect();
            for (kernel, points) in &device_points {
                let name = format!("device {}", kernel_operation(*kernel));
                let plateaus = add_falloffs(&name, points);
                if *kernel == Kernel::ReadDevice {
                    continue;
                }
                // Writes and copies: the first plateau is L2's, the last (past a falloff) DRAM's.
                let mut place = |plateau: &crate::analysis::bandwidth::Plateau, level: Level| {
                    let rate = plateau.median_bytes_per_second;
                    figures.push(LevelFigure {
                        level: level.name().into(),
                        operation: kernel_operation(*kernel).into(),
                        from: format!("sweep plateau, {} points", plateau.points),
                        footprint_bytes: plateau.to_bytes,
                        threads: l2.threads,
                        blocks_per_sm: l2.blocks_per_sm,
                        median_bytes_per_second: rate,
                        min_bytes_per_second: plateau.min_bytes_per_second,
                        max_bytes_per_second: plateau.max_bytes_per_second,
                        bytes_per_clock_per_sm: per_sm_clock(rate),
                        fraction_of_peak: (level == Level::Dram).then(|| rate / peak),
                    });
                };
                if let Some(first) = plateaus.first() {
                    place(first, Level::L2);
                }
                if plateaus.len() > 1 {
                    place(plateaus.last().expect("two plateaus"), Level::Dram);
                }
            }
            let file = BandwidthFile {
                sm_clock_mhz: mhz,
                multiprocessors: sms,
                memory_clock_mhz: f64::from(attributes.memory_clock_khz) / 1e3,
                memory_bus_bits: u32::try_from(attributes.bus_width_bits).unwrap_or(0),
                dram_peak_bytes_per_second: peak,
                levels: figures,
                falloffs,
                launches: bench.launches,
                seconds: started.elapsed().as_secs_f64(),
            };
            suite.run.write_csv("points.csv", &rows)?;
            suite.run.write_json("bandwidth.json", &file)?;
            let title = suite.title(report::TITLE);
            suite.run.write_with("bandwidth.png", |path| {
                report::draw(path, &title, &rows, &file)
            })?;
            for l in &file.levels {
                println!(
                    "{:>6} {:<5} {:>8.0} GB/s ({:.0} to {:.0}), {:6.1} B/clock/SM{} [{}; {} threads x {} blocks/SM]",
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
                    l.blocks_per_sm
                );
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
            Ok(())
        },
    )
}

fn kernel_operation(kernel: Kernel) -> &'static str {
    match kernel {
        Kernel::ReadDevice | Kernel::ReadSm | Kernel::SharedRead => "read",
        Kernel::WriteDevice | Kernel::SharedWrite => "write",
        Kernel::CopyDevice | Kernel::SharedCopy => "copy",
    }
}

/// `gpubench bandwidth` in the suite registry.
pub struct Bandwidth;

impl super::registry::Suite for Bandwidth {
    fn name(&self) -> &'static str {
        "bandwidth"
    }

    fn command(&self) -> clap::Command {
        super::registry::command::<BandwidthArgs>(
            "bandwidth",
            "Read, write and copy bandwidth against footprint for shared memory, L1, L2 and DRAM, with the footprints where each level falls off",
        )
    }

    fn measure(&self, matches: &clap::ArgMatches) -> Result<()> {
        run(&super::registry::parse::<BandwidthArgs>(matches)?)
    }

    fn plan(&self, quick: bool) -> Vec<PlannedSuite> {
        vec![if quick {
            PlannedSuite::new(
                "bandwidth",
                &["bandwidth", "--repeats", "3", "--points-per-doubling", "1"],
                3.0,
            )
        } else {
            PlannedSuite::new("bandwidth", &["bandwidth"], 6.0)
        }]
    }

    fn figures(&self, dir: &std::path::Path) -> Result<Vec<crate::report::figures::Figure>> {
        report::figures(dir)
    }

    fn redraw(
        &self,
        run: &super::registry::SavedRun,
        out: &mut super::registry::Redraw,
    ) -> Result<()> {
        let rows: Vec<PointRow> = crate::report::saved::read_csv(run.dir, "points.csv")?;
        let file: BandwidthFile = crate::report::figures::read(run.dir, "bandwidth.json")?;
        let title = run.title(report::TITLE);
        out.figure("bandwidth", |p| report::draw(p, &title, &rows, &file))
    }
}

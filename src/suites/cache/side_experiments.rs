//! What the cache suite measures beside the sweep: the fetch granularity (a stride sweep),
//! single loads, the timed loop's SASS, the index-chain overhead, the conflict experiment, the
//! L2 partitions and the carveout sweeps.

use anyhow::Result;

use super::measure::conflict::{self, ConflictRow};
use super::measure::{self as cache, Order, Space, per_load};
use super::report::{CarveoutRow, FetchGranularity, IndexChain, TimedLoop};
use super::settings::Flags;
use crate::analysis::cache_inference;
use crate::suites::cache::analysis::per_load as per_load_analysis;
use crate::gpu::Gpu;
use crate::harness::suite;

/// Writes a stride sweep at `footprint` as `name` (the chase CSV's columns) and reads its
/// fetch granularity.
pub(super) fn granularity_of(
    suite: &suite::SuiteRun,
    name: &str,
    footprint: u64,
    points: &[(u64, f64)],
) -> Result<Option<crate::suites::cache::analysis::granularity::Granularity>> {
    let rows: Vec<cache_inference::ChasePoint> = points
        .iter()
        .map(|&(stride_bytes, cycles)| cache_inference::ChasePoint {
            footprint_bytes: footprint,
            stride_bytes,
            cycles,
        })
        .collect();
    suite.run.write_csv(name, &rows)?;
    Ok(crate::suites::cache::analysis::granularity::granularity(points))
}

/// The first cache level's fetch granularity (line, or sector where the cache is sectored):
/// a stride sweep at twice its size or more (`strides.csv`), from an eighth of the sweep's
/// stride to eight times it, read by `analysis::granularity`.
pub(super) fn fetch_granularity(
    gpu: &mut Gpu,
    suite: &suite::SuiteRun,
    space: Space,
    report: &cache_inference::CacheReport,
    stride: u64,
    largest: u64,
    span: u64,
) -> Result<Option<FetchGranularity>> {
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
    Ok(Some(FetchGranularity {
        estimate,
        footprint_bytes: footprint,
        level: 1,
        strides,
    }))
}

/// `--per-load`: 1024 individually timed loads at every doubling footprint (`loads.csv`).
pub(super) fn per_load_sweep(
    gpu: &mut Gpu,
    suite: &suite::SuiteRun,
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
    // The chain's index counts 4-byte words.
    let loads: Vec<(u64, u64, f64)> = samples
        .iter()
        .map(|s| {
            (
                s.footprint_bytes,
                4 * s.index.max(0) as u64,
                s.cycles as f64,
            )
        })
        .collect();
    let summary = per_load_analysis::summarise(&loads, stride);
    println!("per load: footprint, median cycles, share slower than 1.5 x the first median");
    for row in &summary {
        println!(
            "  {:>10} B {:>8.1} {:>6.1} %",
            row.footprint_bytes,
            row.median_cycles,
            100.0 * row.slow_fraction
        );
        if let Some(modes) = row.block_modes {
            println!(
                "             two latencies by {} B block: {:.0} and {:.0} cycles ({:.0} % of the blocks slow)",
                modes.block_bytes,
                modes.fast_cycles,
                modes.slow_cycles,
                100.0 * modes.slow_share
            );
        }
    }
    Ok(summary)
}

/// The SASS of the space's chase kernel, compiled from the same PTX this run loaded
/// (`cache.sass` beside the results), and what its timed loop loads with: a space whose loop
/// executes another load than the space's own is flagged, never reported silently as that space.
pub(super) fn timed_loop(
    suite: &suite::SuiteRun,
    space: Space,
    entry: &str,
    disassembly: Option<(Option<String>, crate::gpu::sass::SassRecord)>,
) -> Result<TimedLoop> {
    let status = |status: &str| TimedLoop {
        status: Some(status.to_string()),
        ..TimedLoop::default()
    };
    if space == Space::Instruction {
        return Ok(status(
            "generated code: checked by the instruction space's own test (16 bytes of SASS per instruction)",
        ));
    }
    let Some((text, record)) = disassembly else {
        return Ok(status("the cache module is not embedded"));
    };
    if let Some(text) = text {
        suite.run.write("cache.sass", text.as_bytes())?;
    }
    let Some(kernel) = record.kernels.iter().find(|k| k.kernel == entry) else {
        println!("timed loop: SASS not read ({})", record.status);
        return Ok(TimedLoop {
            arch: Some(record.arch),
            kernel: Some(entry.to_string()),
            ..status(&record.status)
        });
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
    Ok(TimedLoop {
        expected_loads: Some(expected.iter().map(|l| l.to_string()).collect()),
        verdict: Some(verdict),
        ..TimedLoop::of(kernel, &record.arch, Some(&record.status))
    })
}

/// The global chase written with word indices at the sweep's smallest footprint, beside the
/// pointer chase there: the raw figure gpubench used to report and the load-to-use one.
pub(super) fn index_overhead(
    gpu: &mut Gpu,
    report: &cache_inference::CacheReport,
    smallest: u64,
    stride: u64,
) -> Result<IndexChain> {
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
    Ok(IndexChain {
        footprint_bytes: smallest,
        index_chain_cycles: index,
        level_1_latency_cycles: report.levels.first().map(|l| l.latency_cycles),
        overhead_cycles: index - pointer,
        pointer_chain_cycles: pointer,
    })
}

/// The conflict experiment on the first level (`conflict.csv`, `conflict.png`): strides from
/// the line (or four sweep strides) to sixteen times the size, the largest N of addresses at
/// each that still hits (below a quarter of the way from the level's latency to the next one's).
pub(super) fn conflict_experiment(
    gpu: &mut Gpu,
    suite: &suite::SuiteRun,
    space: Space,
    report: &cache_inference::CacheReport,
    stride: u64,
    line: Option<u64>,
) -> Result<Option<crate::suites::cache::analysis::conflict::ConflictReport>> {
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
    let found = super::measure::conflict::experiment(&strides, hit_below, most, |n, s| {
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
    let chase = first.capacity.as_ref().map(|c| c.first_miss());
    let analysis = crate::suites::cache::analysis::conflict::analyse(&points, line, chase);
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

/// One sweep per shared-memory carveout preference (`carveout.csv`): the L1 the chase sees,
/// beside the shared memory the preference asks for (the driver rounds it to a configuration
/// it supports; L1 + shared is the unified capacity when the preference is taken).
pub(super) fn carveout_sweep(
    gpu: &mut Gpu,
    suite: &suite::SuiteRun,
    carveouts: &[i32],
    flags: &Flags,
    largest: u64,
) -> Result<Vec<CarveoutRow>> {
    let Flags {
        space,
        stride,
        smallest,
        fine_points,
        span,
        ..
    } = *flags;
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
        let capacity = level.as_ref().and_then(|l| l.capacity);
        let size = capacity
            .map(|c| c.hits_up_to_bytes)
            .or_else(|| level.as_ref().and_then(|l| l.size_bytes));
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
            capacity_low_bytes: capacity.map(|c| c.low_bytes),
            capacity_high_bytes: capacity.map(|c| c.high_bytes),
        });
    }
    gpu.chase_carveout_percent = carveouts[0];
    suite.run.write_csv("carveout.csv", &rows)?;
    Ok(rows)
}

/// The figure's title, before the device.
pub(super) const PARTITIONS_TITLE: &str = "L2 first touch per SM";

/// The L2 partitions seen by first touches from every SM (`partitions.csv`: each SM's share
/// of slow first touches and medians, per sweep; `partitions.png`); printed as one line.
pub(super) fn l2_partitions(
    gpu: &mut Gpu,
    suite: &suite::SuiteRun,
) -> Result<Option<super::l2_partitions::Partitions>> {
    let sms = u32::try_from(gpu.properties()?.multiprocessors).unwrap_or(1);
    if sms < 2 {
        // Near and far partitions are told apart by comparing SMs' first touches; on one SM
        // (a shrunk simulated GPU) its 1,024-block launches would only cost time.
        println!(
            "L2 partitions: not measured (the device has one SM; the experiment compares SMs)"
        );
        return Ok(None);
    }
    let read = cache::partitions::measure(gpu, sms)?;
    if let Some(read) = &read {
        suite.run.write_csv("partitions.csv", &read.per_sm)?;
        println!("L2 partitions: {}", read.verdict);
    }
    Ok(read)
}

/// What the partition probe's timed window executes (`l2_partition_probe`'s SASS, from the
/// PTX this run loaded): its loads and the other instructions, printed as one line.
pub(super) fn partition_window(record: &crate::gpu::sass::SassRecord) -> Option<TimedLoop> {
    let kernel = record
        .kernels
        .iter()
        .find(|k| k.kernel == "l2_partition_probe")?;
    println!(
        "L2 partition probe window ({}): loads {:?}; other instructions {:?}",
        record.arch, kernel.timed_region_loads, kernel.timed_region_other
    );
    Some(TimedLoop::of(kernel, &record.arch, None))
}

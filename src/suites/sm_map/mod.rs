//! `gpubench sm-map`: the GPU seen from each SM (issue #52's proof of the suite-per-folder
//! shape). For every SM: its first-touch latency to L2 lines homed in its own partition and in
//! the other, its re-read, the partition it sits in, and its latency into the shared memory of
//! the other blocks of its thread-block cluster; drawn as a heat map, summed up in the summary
//! (median over the SMs, the range, the SMs that stand off), carried per SM into the machine
//! model and the Accel-Sim export.
//!
//! Method. The L2 part is the cache suite's partition experiment (`cuda/l2_partition.cu`: an SM
//! reads lines that one warming SM has just brought into the L2; a line homed across from the
//! reader costs the trip across on the first touch, and the touch leaves a copy on the reader's
//! side), made for every SM in one launch (`cuda/sm_map.cu`): each SM walks a region of its
//! own, so the walks do not disturb each other. Two sweeps, warmed from SM 0 and from the first
//! SM the first sweep found across, put each SM across from one warming SM, where its fast
//! first touches are lines homed in its own partition and its slow ones lines homed in the
//! other. The published method to set beside it is a per-SM L2 latency probe of all SMs in
//! one launch, which found 222-339 cycles across the SMs of an L40 (2026). The DSM part is
//! the dsm suite's chase (Luo et al. 2024, the distributed-shared-memory section) made by
//! every block of every cluster that fits at once (`cuda/sm_map_cluster.cu`), so each SM's
//! latency into each other SM of its cluster is read; Hopper only.

pub mod analysis;
pub mod measure;
pub mod report;
pub mod settings;

pub use settings::SmMapArgs;

use anyhow::Result;

use crate::harness::{Redraw, SavedRun, suite};

use self::report::{Reading, Saved};

const METHOD: &str = "L2: many one-warp blocks, the first on each SM claims it; one warming SM reads every SM's region of `lines` 128-byte lines with ld.global.cg, then every SM walks its own region twice (first touch, re-read), each load timed by itself (clock64, the load, a volatile shared store of its value, clock64); two sweeps, warmed from SM 0 and from the first SM the first sweep put across; fast and slow first touches split by two-means, a slow group of strays (under 2 %) or with no SM across set aside and the split made again below it; one partition read while the SMs' walks are of two widths (5-95 %), some as wide as an SM's across the L2 from the warming SM, is not identifiable. DSM: clusters of `cluster` blocks, as many as fit at once, one block per SM (the most dynamic shared memory a block may have); every block's thread 0 chases a 1024-word ring in every block of its cluster in turn through mapa + ld.shared::cluster, `steps` timed loads after one untimed lap";

pub fn run(args: &SmMapArgs) -> Result<()> {
    args.validate()?;
    let gpu = suite::open(&args.target, &[("sm_map", "sm_map_warm"), ("sm_map", "sm_map_probe")],
    )?;
    let properties = gpu.properties()?;
    let hopper = suite::compute_major(&properties) >= 9;
    let sms = u32::try_from(properties.multiprocessors).unwrap_or(0);
    let shared_bytes = u32::try_from(properties.shared_memory_per_block_optin_bytes).unwrap_or(0);
    let mut modules = vec!["sm_map"];
    if hopper {
        modules.push("sm_map_cluster");
    }
    let recorded = settings::Recorded {
        cluster: args.cluster,
        lines: args.lines,
        method: METHOD.into(),
        shared_bytes_per_block: shared_bytes,
        steps: args.steps,
    };
    suite::run_opened(
        gpu,
        &SmMap,
        &args.target,
        &modules.clone(),
        &recorded,
        |gpu, suite| {
            let disassembly = crate::gpu::sass::beside(&modules, &properties.compute_capability);
            let sweeps = measure::l2_sweeps(gpu, sms, args.lines)?;
            let (dsm, dsm_clusters, dsm_skipped) = if hopper {
                let (chases, clusters) =
                    measure::dsm_chases(gpu, args.cluster, shared_bytes, args.steps)?;
                let skipped = (clusters == 0)
                    .then(|| format!("the driver places no cluster of {} blocks", args.cluster));
                (chases, clusters, skipped)
            } else {
                let why = format!(
                    "clusters start with compute capability 9.0; this is {}",
                    properties.compute_capability
                );
                (Vec::new(), 0, Some(why))
            };
            suite.release_gpu(gpu)?;
            let sass = suite.keep_sass(disassembly, "sm-map.sass")?;
            let l2 = analysis::read_l2(&sweeps);
            let saved = Saved {
                sms: report::sm_rows(&l2, &dsm),
                reading: Reading {
                    sms: sms as usize,
                    lines: args.lines,
                    warm_sms: sweeps.iter().map(|s| s.warm_sm).collect(),
                    threshold_cycles: l2.threshold_cycles,
                    separated: l2.separated,
                    probed: l2.probed,
                    placed: l2.placed,
                    partitions: l2.partitions(),
                    partitions_unresolved: l2.unresolved.clone(),
                    cluster: args.cluster,
                    dsm_clusters,
                    dsm_skipped,
                    steps: args.steps,
                    method: METHOD.into(),
                    sass,
                },
                dsm,
            };
            report::write(&suite.run, &sweeps, &saved)?;
            print(&saved);
            Ok(())
        },
    )
}

fn print(saved: &Saved) {
    let reading = &saved.reading;
    match &reading.partitions_unresolved {
        Some(why) => println!("L2 partitions not identifiable from this run: {why}"),
        None => println!(
            "{} L2 partition(s); both sweeps place {} of {} SMs probed",
            reading.partitions, reading.placed, reading.probed
        ),
    }
    let median = |value: fn(&report::SmRow) -> Option<f64>| {
        analysis::spread(&saved.sms.iter().map(value).collect::<Vec<_>>())
    };
    for (what, value) in [
        (
            "L2 first touch, own partition",
            (|s| s.own_cycles) as fn(&report::SmRow) -> Option<f64>,
        ),
        ("L2 first touch, other partition", |s| s.other_cycles),
        ("L2 re-read", |s| s.reread_cycles),
        ("DSM load into another block", |s| s.dsm_cycles),
    ] {
        if let Some((m, low, high)) = median(value) {
            println!("{what:<32} {m:>6.1} cycles (SMs from {low:.1} to {high:.1})");
        }
    }
    if let Some(why) = &reading.dsm_skipped {
        println!("no DSM chase: {why}");
    }
}

/// `gpubench sm-map` in the suite registry.
pub struct SmMap;

impl crate::harness::SuiteDef for SmMap {
    const NAME: &'static str = "sm-map";
    const ABOUT: &'static str = "Every SM: L2 first-touch latency by the line's home partition, the SM-to-partition map, DSM latency within its cluster";
    type Args = SmMapArgs;

    const RUN: crate::harness::Measure<SmMapArgs> = run;

    const SECONDS_IN_ALL: (f64, f64) = (0.2, 0.3);

    fn quick(defaults: SmMapArgs) -> SmMapArgs {
        SmMapArgs {
            lines: 256,
            steps: 256,
            ..defaults
        }
    }

    const FIGURES: crate::harness::ReadFigures = report::figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        let saved = report::read(run.dir)?;
        let title = run.title(report::title());
        out.plot("sm-map", |p| report::draw(p, &title, &saved))
    }
}

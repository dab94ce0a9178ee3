//! `gpubench dsm`: distributed shared memory of thread-block clusters (Hopper): latency into
//! another block against local shared memory per cluster size, the clusters that fit, the
//! read and store bandwidth of the patterns that matter (stores and reads per block size too),
//! and a histogram's atomic adds into another block (`measure` says how each is timed).

pub mod analysis;
pub mod launch;
pub mod measure;
pub mod report;
pub mod settings;

pub use settings::DsmArgs;

use anyhow::Result;

use crate::harness::suite;
use crate::harness::{Redraw, SavedRun};

use self::measure as dsm;
use self::report as dsm_report;

pub fn run(args: &DsmArgs) -> Result<()> {
    args.validate()?;
    let mut gpu = suite::open(&args.target, &[])?;
    let properties = gpu.properties()?;
    suite::require_hopper(&properties, args.target.device.index()?, "dsm", "thread-block clusters")?;
    for entry in ["dsm_latency", "dsm_bandwidth", "dsm_store", "dsm_histogram"] {
        gpu.function("dsm", entry)?;
    }
    let shared_bytes = u32::try_from(properties.shared_memory_per_block_optin_bytes).unwrap_or(0);
    let mut sizes = args.bandwidth_sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    let recorded = settings::Recorded {
        bandwidth_bytes_per_pass: dsm::BW_BYTES,
        bandwidth_sizes: sizes.clone(),
        iterations: args.iterations,
        method: "clusters launched through cuLaunchKernelEx with the cluster dimension attribute and the non-portable size allowed; one block per SM (the most dynamic shared memory a block may have); latency: block 0 chases a ring in every block through mapa + ld.shared::cluster and its own with ld.shared; bandwidth: 16-byte loads of 64 KiB per pass, clock64 per block; stores: 16-byte stores of 64 KiB per pass (st.shared::cluster), a cluster-scope fence before the closing stamp; the pair partner's read and store at 128-1024 threads per block; histogram: 1, 32 or 1024 bins, red/atom.shared::cluster.add into the next rank's bins or atom.shared.add into its own, every block's bins checked to hold the adds sent".into(),
        ring_stride_words: dsm::RING_STRIDE,
        ring_words: dsm::RING_WORDS,
        shared_bytes_per_block: shared_bytes,
        steps: dsm::STEPS,
        histogram_bins: Some(dsm::HISTOGRAM_BINS.to_vec()),
        sweep_threads: Some(dsm::SWEEP_THREADS.to_vec()),
    };
    suite::run_opened(
        gpu,
        &Dsm,
        &args.target,
        &["dsm"],
        &recorded,
        |gpu, suite| {
            let mhz = suite.metadata.sm_clock_before.mhz;
            let disassembly = crate::gpu::sass::beside(&["dsm"], &properties.compute_capability);
            let results = dsm::measure(gpu, shared_bytes, &sizes, args.iterations)?;
            suite.release_gpu(gpu)?;
            let sass = suite.keep_sass(disassembly, "dsm.sass")?;
            let latency = dsm_report::latency_rows(&results);
            let occupancy = dsm_report::occupancy_rows(&results);
            let bandwidth = dsm_report::bandwidth_rows(&results, mhz);
            let writes = dsm_report::WriteRows::of(&results, mhz);
            dsm_report::write(
                &suite.run,
                &latency,
                &occupancy,
                &bandwidth,
                &writes,
                shared_bytes,
                &sass,
            )?;
            if let Some(row) = latency.iter().find(|r| !r.distinct_sms) {
                eprintln!(
                    "warning: the blocks of a cluster of {} shared SMs ({}): its remote loads may be local",
                    row.cluster, row.smids
                );
            }
            for o in &occupancy {
                println!(
                    "cluster of {:>2}: {:>3} clusters fit at once",
                    o.cluster, o.max_active_clusters
                );
            }
            for row in &latency {
                println!(
                    "cluster of {:>2}: remote {:>6.1} cycles ({:.1}-{:.1}), own through the window {:.1}, ld.shared {:.1}",
                    row.cluster,
                    row.remote_cycles,
                    row.remote_min,
                    row.remote_max,
                    row.own_through_window_cycles,
                    row.local_cycles
                );
            }
            for (verb, rows) in [("read", &bandwidth), ("store", &writes.stores)] {
                for row in rows {
                    println!(
                        "cluster of {:>2}, {verb:<5} {:<22} {:>7.1} B/clock/SM, {:>8.0} GB/s over the GPU",
                        row.cluster, row.pattern, row.bytes_per_clock_per_sm, row.gpu_gb_per_s
                    );
                }
            }
            for row in &writes.threads {
                println!(
                    "cluster of {:>2}, {:<5} pair partner, {:>4} threads per block {:>7.1} B/clock/SM",
                    row.cluster, row.operation, row.threads, row.bytes_per_clock_per_sm
                );
            }
            for row in &writes.histogram {
                println!(
                    "cluster of {:>2}, histogram of {:>4} bins {:<43} {:>8.2} adds/clock/SM",
                    row.cluster, row.bins, row.operation, row.adds_per_clock_per_sm
                );
            }
            Ok(())
        },
    )
}

/// `gpubench dsm` in the suite registry.
pub struct Dsm;

impl crate::harness::SuiteDef for Dsm {
    const NAME: &'static str = "dsm";
    const ABOUT: &'static str = "Distributed shared memory: latency into other blocks of a cluster, clusters that fit, read and store bandwidth, histogram atomics (Luo et al. 2024)";
    type Args = DsmArgs;

    const RUN: crate::harness::Measure<DsmArgs> = run;

    const SECONDS_IN_ALL: (f64, f64) = (0.3, 0.3);

    fn quick(defaults: DsmArgs) -> DsmArgs {
        DsmArgs {
            iterations: 32,
            ..defaults
        }
    }

    const FIGURES: crate::harness::ReadFigures = dsm_report::figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        let saved = dsm_report::read(run.dir)?;
        let title = run.title(dsm_report::title());
        out.plot("dsm", |p| {
            dsm_report::draw(
                p,
                &title,
                &saved.latency,
                &saved.occupancy,
                &saved.bandwidth,
            )
        })?;
        match &saved.writes {
            Some(writes) => {
                let title = run.title(dsm_report::writes_title());
                out.plot("dsm-writes", |p| dsm_report::draw_writes(p, &title, writes))
            }
            None => Ok(()),
        }
    }
}

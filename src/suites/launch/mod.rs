//! `gpubench launch`: what a kernel launch costs, on the host and on the GPU, and what a small
//! kernel delivers against its volume (issue #74). The peer is gpu-benches'
//! `gpu-small-kernels`, which fits the time of a streaming kernel against its data volume as
//! T(V) = a + V/b; Luo et al. do not measure launch overhead. Everything runs on the one
//! stream of the device; every figure is the median over its repeats, with the range.
//!
//! Method (`cuda/launch.cu`):
//! 1. **Launch call** (host): the wall time (`std::time::Instant`) of `queued` (256)
//!    back-to-back launches of the empty kernel (`launch_empty`, one block of 32 threads)
//!    with no wait between them, over the count: what one `cuLaunchKernel` costs the calling
//!    thread (through cudarc's launch builder, which adds a check of the current context). The
//!    batch stays well below the driver's queue of about 1024 pending launches, so no call
//!    waits for the GPU; the queue is empty at the start of every batch.
//! 2. **Round trip** (host): the wall time of one launch of the empty kernel and
//!    `cuStreamSynchronize`, `round_trips` (200) times after ten untimed: the least a program
//!    waits for a kernel's result, under the context's default scheduling (the driver spins
//!    or yields while it waits).
//! 3. **Back to back** (GPU): `back_to_back` (500) empty kernels between two CUDA events,
//!    over the count: the GPU's time per launch. The batch is queued behind a hold
//!    (`launch_hold`, one thread spinning on `%globaltimer`), so the GPU starts the kernels
//!    one after another as fast as it can rather than as fast as the host queues them; the
//!    hold is three times the host's queueing time of the batch, and is doubled (up to four
//!    times) where the host was still queueing when it ended. `launch.json` counts the
//!    batches the host outran even so. 500, not 1000: the whole batch must be queued while
//!    the hold runs, and the driver's queue holds about 1024.
//! 4. **Graph**: the same 500 launches captured into a CUDA graph, instantiated once and
//!    uploaded; its GPU time per kernel (events around one launch of the graph, behind a
//!    hold), and its round trip (host: one `cuGraphLaunch` and the synchronise).
//! 5. **Small kernels** (GPU): `launch_scale` (`y[i] = a * x[i]` over floats, grid-stride,
//!    256 threads a block, 8 blocks per SM or fewer where the volume has fewer floats) at
//!    volumes V (bytes read and written together, 8 per float) from 4 KiB to `max_bytes`
//!    (1 GiB, none over half the free memory) in doublings; per volume one untimed launch and
//!    `repeats` launches back to back behind a hold, an event between each two: the median
//!    GPU time per launch (events resolve about 0.5 µs, so a few µs carry that rounding).
//!    T(V) = a + V/b is fitted by ordinary least squares to the medians: the overhead a
//!    (µs, 95 % CI), the asymptotic bandwidth b (GB/s; its CI the reciprocals of the slope's)
//!    and the volume V½ = a·b where the kernel reaches half of b. Least squares on the raw
//!    times weighs the largest volumes most: b is their (DRAM) bandwidth, and a the intercept
//!    of that line, which the smallest volume's own time (a figure too) sets beside.
//!
//! Host-timed figures depend on the CPU, its clock and the driver as much as on the GPU; their
//! words say so. The SASS of the three kernels is written beside the run (`launch.sass`), and
//! the summary states the timed kernels' instructions. Files: `report`.

pub mod analysis;
pub mod measure;
pub mod report;
pub mod settings;

pub use settings::LaunchArgs;

use anyhow::Result;

use self::measure::{EMPTY, HOLD, MODULE, Plan, SCALE};
use self::report::Reading;
use crate::harness::{Redraw, SavedRun, suite};

const METHOD: &str = "one stream. Launch call: host wall time of `queued` back-to-back launches of launch_empty (1 block of 32 threads) with no wait, over the count. Round trip: host wall time of one launch and cuStreamSynchronize, after 10 untimed. Back to back: GPU time between two events around `back_to_back` launches of launch_empty queued behind launch_hold (a %globaltimer spin three times the host's queueing time, doubled up to four times where the host outran it), over the count. Graph: the same launches captured into a CUDA graph, instantiated once and uploaded; GPU time per kernel between events around one graph launch behind a hold, and the host round trip of one graph launch and the synchronise. Small kernels: launch_scale (y = a x over floats, grid-stride, 256 threads, up to 8 blocks per SM) at volumes of 4 KiB to max_bytes (read and written) in doublings; per volume one untimed launch and `repeats` launches behind a hold, an event between each two; T(V) = a + V/b fitted by OLS to the median per volume. Every figure the median over its repeats, with the range";


pub fn run(args: &LaunchArgs) -> Result<()> {
    args.validate()?;
    let entries = [(MODULE, EMPTY), (MODULE, HOLD), (MODULE, SCALE)];
    let gpu = suite::open(&args.target, &entries)?;
    let properties = gpu.properties()?;
    let volumes = measure::volumes(args.max_bytes, gpu.free_memory()?);
    if volumes.len() < 3 {
        anyhow::bail!(
            "the device has too little free memory for three volumes of the small-kernel sweep (16 KiB)"
        );
    }
    let recorded = settings::Recorded {
        back_to_back: args.back_to_back,
        method: METHOD.into(),
        queued: args.queued,
        repeats: args.repeats,
        round_trips: args.round_trips,
        scale_threads: measure::SCALE_THREADS,
        volumes_bytes: volumes.clone(),
    };
    suite::run_opened(
        gpu,
        &Launch,
        &args.target,
        &[MODULE],
        &recorded,
        |gpu, suite| {
            let disassembly = crate::gpu::sass::beside(&[MODULE], &properties.compute_capability);
            let plan = Plan {
                repeats: args.repeats,
                queued: args.queued,
                round_trips: args.round_trips,
                back_to_back: args.back_to_back,
                volumes_bytes: volumes,
                sms: u32::try_from(properties.multiprocessors).unwrap_or(1),
            };
            let samples = measure::measure(gpu, &plan)?;
            suite.release_gpu(gpu)?;
            let sass = suite.keep_instructions(disassembly, "launch.sass")?;
            let reading = Reading {
                repeats: args.repeats,
                queued: args.queued,
                round_trips: args.round_trips,
                back_to_back: args.back_to_back,
                samples,
                method: METHOD.into(),
                sass,
            };
            report::write(&suite.run, &reading)?;
            print(&reading);
            Ok(())
        },
    )
}

fn print(reading: &Reading) {
    let s = &reading.samples;
    let show = |what: &str, samples: &[f64]| {
        if let Some(m) = crate::analysis::stats::Summary::of(samples) {
            println!(
                "{what:<48} {:>8.2} µs ({:.2}-{:.2})",
                m.median, m.min, m.max
            );
        }
    };
    show("launch call, host", &s.launch_call_us);
    show("launch + synchronise round trip, host", &s.round_trip_us);
    show("back to back, GPU time per kernel", &s.back_to_back_us);
    show("in a graph, GPU time per kernel", &s.graph_per_kernel_us);
    show(
        &format!(
            "graph of {} launch + synchronise round trip, host",
            reading.back_to_back
        ),
        &s.graph_round_trip_us,
    );
    if s.hold.outrun_batches > 0 {
        println!(
            "warning: the host was still queueing when the hold ended in {} of {} batches",
            s.hold.outrun_batches, s.hold.batches
        );
    }
    let points = report::points(&report::rows(s));
    if let Some(fit) = analysis::fit(&points) {
        let a = fit.overhead_us;
        println!(
            "small kernels: T(V) = a + V/b with a = {:.2} µs [{:.2}, {:.2}], b = {:.0} GB/s, half of b at {:.1} MB",
            a.estimate,
            a.ci95_low,
            a.ci95_high,
            fit.bandwidth_gb_per_s.map_or(f64::NAN, |b| b.estimate),
            fit.half_bandwidth_bytes.map_or(f64::NAN, |h| h.estimate / 1e6)
        );
    }
    match report::sass_words(&reading.sass) {
        Some(words) => println!("SASS: {words}"),
        None => println!("no SASS: {}", reading.sass.status),
    }
}

/// `gpubench launch` in the suite registry.
pub struct Launch;

impl crate::harness::SuiteDef for Launch {
    const NAME: &'static str = "launch";
    const ABOUT: &'static str = "Launch overhead: the host's launch call and round trip, back-to-back and graph launches on the GPU, small kernels' time against volume (T = a + V/b)";
    type Args = LaunchArgs;

    const RUN: crate::harness::Measure<LaunchArgs> = run;

    const SECONDS_IN_ALL: (f64, f64) = (0.2, 0.7);

    fn quick(defaults: LaunchArgs) -> LaunchArgs {
        LaunchArgs {
            repeats: 7,
            round_trips: 50,
            max_bytes: 256 << 20,
            ..defaults
        }
    }

    const FIGURES: crate::harness::ReadFigures = report::figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        let points = report::read_points(run.dir)?;
        let title = run.title(report::title());
        out.plot("launch", |p| report::draw(p, &title, &points))
    }
}

//! The launches of `cuda/launch.cu` and the measurement, all on the one stream of the device:
//! the host's time to queue an empty kernel and to see it finish, the GPU's time per empty
//! kernel back to back and inside a CUDA graph, and the streaming kernel's time at every
//! volume of the sweep. Returns the samples; writes nothing.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use cudarc::driver::sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaEvent, CudaFunction, DevicePtr, PushKernelArg};
use serde::{Deserialize, Serialize};

use crate::gpu::launch::{WARP_LANES, launch, line_of, one_block, timed, zeros};
use crate::gpu::{Gpu, driver_error};

/// The module and its entry points (`cuda/launch.cu`).
pub const MODULE: &str = "launch";
pub const EMPTY: &str = "launch_empty";
pub const HOLD: &str = "launch_hold";
pub const SCALE: &str = "launch_scale";

/// Threads per block of the streaming kernel.
pub const SCALE_THREADS: u32 = 256;
/// Resident blocks per SM the streaming kernel's grid is sized for (2048 threads per SM).
const SCALE_BLOCKS_PER_SM: u32 = 8;
/// Bytes the streaming kernel moves per float: one read, one write.
pub const BYTES_PER_FLOAT: u64 = 8;
/// The smallest volume of the sweep.
pub const MIN_BYTES: u64 = 4 << 10;
/// Round trips, graph round trips and volumes timed first and left out (clocks ramped, code
/// and the graph resident on the GPU).
const WARM_UP: usize = 10;
/// The shortest hold, and the most times a hold the host outran is doubled.
const MIN_HOLD_NS: u64 = 100_000;
const HOLD_DOUBLINGS: usize = 4;
/// How long any one batch may take before the GPU is reported hung.
const DEADLINE: Duration = Duration::from_secs(10);

/// What one run asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub repeats: u32,
    pub queued: u32,
    pub round_trips: u32,
    pub back_to_back: u32,
    pub volumes_bytes: Vec<u64>,
    pub sms: u32,
}

/// Every sample the run took, in microseconds; `launch.json` holds them as they are.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Samples {
    /// Host wall time of one `cuLaunchKernel` of the empty kernel: each repeat's batch of
    /// `queued` launches over the count.
    pub launch_call_us: Vec<f64>,
    /// Host wall time of one launch of the empty kernel and the stream's synchronise.
    pub round_trip_us: Vec<f64>,
    /// GPU time per empty kernel of `back_to_back` queued behind a hold, between two events.
    pub back_to_back_us: Vec<f64>,
    /// GPU time per empty kernel of the graph of `back_to_back` kernels, between two events.
    pub graph_per_kernel_us: Vec<f64>,
    /// Host wall time of one launch of that graph and the stream's synchronise.
    pub graph_round_trip_us: Vec<f64>,
    /// Host wall time to capture the graph and instantiate it (once).
    pub graph_build_us: f64,
    /// The hold the back-to-back batches were queued behind, and how many of their batches
    /// the host was still queueing when it ended (their events may hold host time).
    pub hold: Hold,
    /// Per volume, the GPU time of each of its back-to-back launches.
    pub volumes: Vec<VolumeSamples>,
}

/// The hold ahead of every GPU-timed batch (`launch_hold`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Hold {
    /// The longest hold used, in microseconds.
    pub longest_us: f64,
    /// Batches whose queueing outlasted their hold even after [`HOLD_DOUBLINGS`] doublings.
    pub outrun_batches: u32,
    pub batches: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VolumeSamples {
    /// Bytes read and written by one launch.
    pub bytes: u64,
    pub blocks: u32,
    pub time_us: Vec<f64>,
}

/// The volumes of the sweep: 4 KiB to `max_bytes` in doublings, none over half of `free`
/// device memory.
pub fn volumes(max_bytes: u64, free_bytes: u64) -> Vec<u64> {
    let top = max_bytes.min(free_bytes / 2);
    std::iter::successors(Some(MIN_BYTES), |v| v.checked_mul(2))
        .take_while(|&v| v <= top)
        .collect()
}

/// The streaming kernel's grid for `floats`: enough 256-thread blocks to fill every SM, fewer
/// where the volume has fewer floats than threads.
pub fn scale_blocks(floats: u64, sms: u32) -> u32 {
    let needed = floats.div_ceil(u64::from(SCALE_THREADS)).max(1);
    u32::try_from(needed.min(u64::from(sms.max(1) * SCALE_BLOCKS_PER_SM))).unwrap_or(1)
}

/// The kernels of the module.
struct Kernels {
    empty: CudaFunction,
    hold: CudaFunction,
    scale: CudaFunction,
}

impl Kernels {
    /// Queues one empty kernel (one warp).
    fn empty(&self, gpu: &Gpu) -> Result<()> {
        let builder = gpu.stream().launch_builder(&self.empty);
        // SAFETY: launch_empty takes no arguments.
        unsafe { launch(EMPTY, builder, one_block(WARP_LANES as u32)) }?;
        Ok(())
    }

    /// Queues a hold of `ns` nanoseconds (one thread).
    fn hold(&self, gpu: &Gpu, ns: u64) -> Result<()> {
        let mut builder = gpu.stream().launch_builder(&self.hold);
        builder.arg(&ns);
        // SAFETY: launch_hold(unsigned long long ns) takes one 64-bit value.
        unsafe { launch(HOLD, builder, one_block(1)) }?;
        Ok(())
    }
}

/// Runs every measurement of `plan`.
pub fn measure(gpu: &mut Gpu, plan: &Plan) -> Result<Samples> {
    let kernels = Kernels {
        empty: gpu.function(MODULE, EMPTY)?,
        hold: gpu.function(MODULE, HOLD)?,
        scale: gpu.function(MODULE, SCALE)?,
    };
    for _ in 0..WARM_UP {
        kernels.empty(gpu)?;
    }
    gpu.wait(EMPTY, DEADLINE)?;
    let mut samples = Samples {
        launch_call_us: launch_calls(gpu, &kernels, plan)?,
        round_trip_us: round_trips(gpu, &kernels, plan.round_trips)?,
        ..Samples::default()
    };
    // A hold long enough for the host to queue a batch of `items` at three times the pace
    // it queued empty kernels at.
    let call_us = crate::analysis::stats::median(&samples.launch_call_us).unwrap_or(10.0);
    let hold_for = |items: u32| MIN_HOLD_NS.max((3.0 * call_us * 1e3 * f64::from(items)) as u64);
    let mut held = Held {
        hold: Hold::default(),
    };
    for _ in 0..plan.repeats {
        let ms = held.batch(gpu, &kernels, hold_for(plan.back_to_back), || {
            (0..plan.back_to_back).try_for_each(|_| kernels.empty(gpu))
        })?;
        samples
            .back_to_back_us
            .push(ms * 1e3 / f64::from(plan.back_to_back));
    }
    graph(gpu, &kernels, plan, &mut samples, &mut held, hold_for(1))?;
    samples.volumes = sweep(gpu, &kernels, plan, &mut held, hold_for(2 * plan.repeats + 2))?;
    samples.hold = held.hold;
    Ok(samples)
}

/// Per repeat, `queued` empty launches with no wait between them, timed on the host.
fn launch_calls(gpu: &Gpu, kernels: &Kernels, plan: &Plan) -> Result<Vec<f64>> {
    let mut calls = Vec::new();
    for _ in 0..plan.repeats {
        gpu.wait(EMPTY, DEADLINE)?;
        let started = Instant::now();
        for _ in 0..plan.queued {
            kernels.empty(gpu)?;
        }
        let took = started.elapsed();
        calls.push(took.as_secs_f64() * 1e6 / f64::from(plan.queued));
    }
    gpu.wait(EMPTY, DEADLINE)?;
    Ok(calls)
}

/// The stream's synchronise (the driver's own wait: what an application's round trip takes).
fn synchronize(gpu: &Gpu) -> Result<()> {
    gpu.stream()
        .synchronize()
        .map_err(driver_error("synchronising the stream"))?;
    Ok(())
}

/// `trips` round trips of one empty kernel, after [`WARM_UP`] untimed ones.
fn round_trips(gpu: &Gpu, kernels: &Kernels, trips: u32) -> Result<Vec<f64>> {
    let mut times = Vec::new();
    for trip in 0..WARM_UP + trips as usize {
        let started = Instant::now();
        kernels.empty(gpu)?;
        synchronize(gpu)?;
        let took = started.elapsed();
        if trip >= WARM_UP {
            times.push(took.as_secs_f64() * 1e6);
        }
    }
    Ok(times)
}

/// Batches queued behind a hold, so that the GPU runs them back to back whatever the host's
/// pace, and what the holds were.
struct Held {
    hold: Hold,
}

impl Held {
    /// Holds the stream for `hold_ns`, then times `enqueue`'s launches between two events
    /// (`gpu::launch::timed`); where the host was still queueing when the hold ended, the hold
    /// is doubled and the batch made again (up to [`HOLD_DOUBLINGS`] times). GPU milliseconds.
    fn batch(
        &mut self,
        gpu: &Gpu,
        kernels: &Kernels,
        mut hold_ns: u64,
        mut enqueue: impl FnMut() -> Result<()>,
    ) -> Result<f64> {
        let mut tries = 0;
        loop {
            let started = Instant::now();
            kernels.hold(gpu, hold_ns)?;
            let mut failed = None;
            let mut queued_ns = 0;
            let ms = timed(gpu, HOLD, DEADLINE, || {
                if let Err(error) = enqueue() {
                    failed = Some(error);
                }
                // Read here, not after `timed`: it waits for the batch to finish on the GPU,
                // which would make every batch look outrun.
                queued_ns = started.elapsed().as_nanos() as u64;
                Ok(())
            })?;
            if let Some(error) = failed {
                return Err(error);
            }
            self.hold.longest_us = self.hold.longest_us.max(hold_ns as f64 / 1e3);
            // The hold started on the GPU after its launch returned, so a batch queued within
            // `hold_ns` of that was queued before it ended (the timer is the host's; the rest
            // of the wait above is the GPU's).
            let outrun = queued_ns > hold_ns;
            if !outrun || tries == HOLD_DOUBLINGS {
                self.hold.batches += 1;
                self.hold.outrun_batches += u32::from(outrun);
                return Ok(ms);
            }
            tries += 1;
            hold_ns *= 2;
        }
    }
}

/// The back-to-back batch captured into a graph, instantiated once and uploaded; per repeat,
/// its GPU time per kernel behind a hold, then its host round trips.
fn graph(
    gpu: &Gpu,
    kernels: &Kernels,
    plan: &Plan,
    samples: &mut Samples,
    held: &mut Held,
    hold_ns: u64,
) -> Result<()> {
    let stream = gpu.stream();
    let started = Instant::now();
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .map_err(driver_error("starting a graph capture"))?;
    let captured = (0..plan.back_to_back).try_for_each(|_| kernels.empty(gpu));
    // The capture is ended whatever happened in it, so the stream is usable again.
    let ended = stream
        .end_capture(CUgraphInstantiate_flags(0))
        .map_err(driver_error("ending the graph capture and instantiating it"));
    captured.context("capturing the empty kernels into a graph")?;
    let graph = ended?.context("the capture made no graph")?;
    samples.graph_build_us = started.elapsed().as_secs_f64() * 1e6;
    graph
        .upload()
        .map_err(driver_error("uploading the graph"))?;
    let launch_graph = || -> Result<()> {
        graph
            .launch()
            .map_err(driver_error("launching the graph"))?;
        Ok(())
    };
    launch_graph()?;
    gpu.wait("the graph", DEADLINE)?;
    for _ in 0..plan.repeats {
        let ms = held.batch(gpu, kernels, hold_ns, launch_graph)?;
        samples
            .graph_per_kernel_us
            .push(ms * 1e3 / f64::from(plan.back_to_back));
    }
    for trip in 0..WARM_UP + plan.repeats as usize {
        let started = Instant::now();
        launch_graph()?;
        synchronize(gpu)?;
        let took = started.elapsed();
        if trip >= WARM_UP {
            samples.graph_round_trip_us.push(took.as_secs_f64() * 1e6);
        }
    }
    Ok(())
}

/// Per volume (ascending), one untimed launch of the streaming kernel and `repeats` timed
/// ones, back to back behind a hold with an event between each two: the GPU time of each.
fn sweep(
    gpu: &Gpu,
    kernels: &Kernels,
    plan: &Plan,
    held: &mut Held,
    hold_ns: u64,
) -> Result<Vec<VolumeSamples>> {
    let Some(&largest) = plan.volumes_bytes.last() else {
        return Ok(Vec::new());
    };
    let floats = usize::try_from(largest / BYTES_PER_FLOAT)?;
    let x = zeros::<f32>(gpu, floats, "the streaming kernel's input")?;
    let y = zeros::<f32>(gpu, floats, "the streaming kernel's output")?;
    let stream = gpu.stream();
    // Raw pointers: the launches carry no per-launch events of cudarc's stream tracking.
    let (x_ptr, _x_sync) = x.device_ptr(stream);
    let (y_ptr, _y_sync) = y.device_ptr(stream);
    let scale: f32 = 1.5;
    let mut out = Vec::new();
    for &bytes in &plan.volumes_bytes {
        let n = bytes / BYTES_PER_FLOAT;
        let blocks = scale_blocks(n, plan.sms);
        let config = line_of(blocks, SCALE_THREADS);
        let one = || -> Result<()> {
            let mut builder = stream.launch_builder(&kernels.scale);
            builder.arg(&x_ptr).arg(&y_ptr).arg(&n).arg(&scale);
            // SAFETY: launch_scale(const float *x, float *y, unsigned long long n, float a);
            // x and y hold `largest / 8` floats each, and n = bytes / 8 is at most that.
            unsafe { launch(SCALE, builder, config) }?;
            Ok(())
        };
        let mut events: Vec<CudaEvent> = Vec::new();
        held.batch(gpu, kernels, hold_ns, || {
            one()?;
            events.clear();
            for _ in 0..plan.repeats {
                events.push(event(gpu)?);
                one()?;
            }
            events.push(event(gpu)?);
            Ok(())
        })?;
        let time_us = events
            .windows(2)
            .map(|pair| Ok(f64::from(pair[0].elapsed_ms(&pair[1])?) * 1e3))
            .collect::<Result<Vec<f64>, cudarc::driver::DriverError>>()
            .map_err(driver_error("reading a timing event"))?;
        out.push(VolumeSamples {
            bytes,
            blocks,
            time_us,
        });
    }
    Ok(out)
}

fn event(gpu: &Gpu) -> Result<CudaEvent> {
    let event = gpu
        .stream()
        .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(driver_error("recording a timing event"))?;
    Ok(event)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweep_doubles_from_4_kib_and_stays_within_half_the_free_memory() {
        let all = volumes(1 << 30, 80 << 30);
        assert_eq!(all.first(), Some(&4096));
        assert_eq!(all.last(), Some(&(1 << 30)));
        assert_eq!(all.len(), 19);
        assert_eq!(volumes(1 << 30, 1 << 28).last(), Some(&(1 << 27)));
        assert!(volumes(1 << 30, 4096).is_empty());
    }

    #[test]
    fn the_grid_fills_the_gpu_or_covers_the_volume() {
        assert_eq!(scale_blocks(512, 132), 2);
        assert_eq!(scale_blocks(1, 132), 1);
        assert_eq!(scale_blocks(1 << 27, 132), 132 * 8);
    }

    #[test]
    fn every_entry_is_in_the_module() {
        let ptx = crate::kernels::module(MODULE).unwrap().ptx;
        for entry in [EMPTY, HOLD, SCALE] {
            assert!(ptx.contains(&format!(".entry {entry}(")), "{entry}");
        }
    }
}

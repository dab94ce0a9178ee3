//! The launcher of cuda/dsm.cu's `dsm_histogram` (atomic adds into a block's histogram, its
//! own or another's through the cluster window), through [`launch_cluster`], whose cluster
//! attribute cudarc's safe launcher lacks. `dsm_store` shares `dsm_bandwidth`'s signature and
//! launcher ([`crate::gpu::launch::dsm::dsm_passes`]).

use std::time::Duration;

use crate::error::GpuError;
use crate::gpu::Gpu;
use crate::gpu::launch::dsm::{ClusterArgs, ClusterShape, launch_cluster};
use crate::gpu::launch::{read, zeros};

/// What one histogram launch returned: every block's clock64 before and after, and the adds
/// that arrived in every block's bins.
pub struct HistogramStamps {
    pub stamps: Vec<i64>,
    pub arrived: Vec<u32>,
}

/// Every thread of `shape` adds 1 `iterations` times into the `bins`-word histogram of the block
/// `pattern` names; `op` 0 red, 1 atom through the cluster window (pattern 4: plain shared
/// atomics on its own).
///
/// Kernel signature: `dsm_histogram(long long *stamps[2 * blocks], unsigned *counts[2 *
/// blocks], int pattern, int op, int bins, int iterations)`; `bins` a power of two of at most
/// 16384 words (the histogram lies in the block's 64 KiB).
pub fn dsm_histogram(
    gpu: &mut Gpu,
    shape: ClusterShape,
    pattern: u32,
    op: u32,
    bins: u32,
    iterations: u32,
) -> Result<HistogramStamps, GpuError> {
    // The bins come from the suite's constant list (`measure::HISTOGRAM_BINS`, checked by a
    // test), never from a flag; the launch's safety rests on this, so a release build checks
    // it too.
    if !bins.is_power_of_two() || u64::from(bins) * 4 > u64::from(shape.shared_bytes) {
        return Err(GpuError::driver(
            "checking a dsm_histogram launch",
            format!(
                "{bins} bins are not a power of two of 4-byte words within the block's {} bytes",
                shape.shared_bytes
            ),
        ));
    }
    let blocks = (shape.cluster * shape.clusters) as usize;
    let stamps = zeros::<i64>(gpu, 2 * blocks, "the block stamps")?;
    let counts = zeros::<u32>(gpu, 2 * blocks, "the histogram counts")?;
    let stream = gpu.stream().clone();
    let args = ClusterArgs::new(&stream)
        .buffer(&stamps)
        .buffer(&counts)
        .int(pattern, "the pattern")?
        .int(op, "the operation")?
        .int(bins, "the bins")?
        .int(iterations, "iterations")?;
    let deadline = Duration::from_secs(30);
    // SAFETY: the arguments match dsm_histogram's signature; stamps and counts hold two per
    // block; the bins (checked above) lie in each block's dynamic shared memory.
    unsafe { launch_cluster(gpu, "dsm", "dsm_histogram", shape, args, deadline) }?;
    let mut arrived = read(gpu, &counts, "the histogram counts")?;
    arrived.truncate(blocks);
    Ok(HistogramStamps {
        stamps: read(gpu, &stamps, "the block stamps")?,
        arrived,
    })
}

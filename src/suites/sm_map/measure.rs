//! The launches of `cuda/sm_map.cu` and `cuda/sm_map_cluster.cu`, and the measurement: two
//! sweeps of every SM's first touches (warmed from SM 0, then from the first SM the first
//! sweep put across), and one launch of every cluster that fits, each block chasing the
//! others'.

use std::time::Duration;

use anyhow::Result;
use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::analysis::{self, DsmChase, Sweep, Walk};
use crate::gpu::Gpu;
use crate::gpu::launch::dsm::{ClusterArgs, ClusterShape, launch_cluster, max_active_clusters_of};
use crate::gpu::launch::{WARP_LANES, launch_and_wait, line_of, read, upload, zeros};

/// Words of a line (128 B), as in `cuda/sm_map.cu`.
const LINE_WORDS: usize = 32;
/// One-warp blocks per SM in a claiming launch: enough that every SM gets one.
const CLAIM_BLOCKS_PER_SM: u32 = 8;
/// Launches of the probe before an SM no block landed on is left without a walk.
const PROBE_TRIES: usize = 3;
/// Threads of a DSM block (the ring is built by all, chased by one).
const DSM_THREADS: u32 = 128;
/// Bytes of the DSM ring (`cuda/sm_map_cluster.cu`'s RING_WORDS words).
pub const RING_BYTES: u32 = 4096;

fn claiming(sms: u32) -> LaunchConfig {
    line_of(CLAIM_BLOCKS_PER_SM * sms, WARP_LANES as u32)
}

/// One sweep over fresh regions: SM `warm_sm` reads every SM's region into the L2, then every
/// SM walks its own. An SM no probe block landed on after [`PROBE_TRIES`] launches has an
/// empty walk; a warming SM no block landed on is an error.
fn sweep(gpu: &mut Gpu, warm_sm: u32, sms: u32, lines: u32) -> Result<Sweep> {
    let warm = gpu.function("sm_map", "sm_map_warm")?;
    let probe = gpu.function("sm_map", "sm_map_probe")?;
    let per_region = lines as usize * LINE_WORDS;
    let mut chain = vec![0u32; per_region * sms as usize];
    for region in chain.chunks_mut(per_region) {
        for j in 0..lines as usize {
            region[j * LINE_WORDS] = (((j + 1) % lines as usize) * LINE_WORDS) as u32;
        }
    }
    let regions = upload(gpu, &chain, "the regions")?;
    let words = u32::try_from(chain.len())?;
    let mut warm_flag = zeros::<i32>(gpu, 1, "the warming claim")?;
    let mut sink = zeros::<u32>(gpu, 1, "the sink")?;
    let stream = gpu.stream().clone();
    let mut warmed = false;
    for _ in 0..PROBE_TRIES {
        let mut builder = stream.launch_builder(&warm);
        builder
            .arg(&regions)
            .arg(&words)
            .arg(&warm_sm)
            .arg(&mut warm_flag)
            .arg(&mut sink);
        // SAFETY: the arguments match sm_map_warm's signature; `regions` holds `words` words.
        unsafe {
            launch_and_wait(gpu, "sm_map_warm", builder, claiming(sms), Duration::from_secs(10))
        }?;
        warmed = read(gpu, &warm_flag, "the warming claim")?[0] != 0;
        if warmed {
            break;
        }
    }
    if !warmed {
        anyhow::bail!("no block landed on SM {warm_sm} to warm the regions");
    }
    let per_sm = 2 * lines as usize;
    let mut out = zeros::<u32>(gpu, per_sm * sms as usize, "the first-touch cycles")?;
    let mut flags = zeros::<i32>(gpu, sms as usize, "the probe claims")?;
    let mut claimed = vec![0i32; sms as usize];
    for _ in 0..PROBE_TRIES {
        let mut builder = stream.launch_builder(&probe);
        builder
            .arg(&regions)
            .arg(&lines)
            .arg(&sms)
            .arg(&mut flags)
            .arg(&mut out);
        // SAFETY: the arguments match sm_map_probe's signature; `regions` holds `sms` regions
        // of `lines` lines, `out` 2 × `lines` values per SM and `flags` one int per SM.
        unsafe {
            launch_and_wait(gpu, "sm_map_probe", builder, claiming(sms), Duration::from_secs(30))
        }?;
        claimed = read(gpu, &flags, "the probe claims")?;
        if claimed.iter().all(|&c| c != 0) {
            break;
        }
    }
    let cycles = read(gpu, &out, "the first-touch cycles")?;
    let walks = cycles
        .chunks(per_sm)
        .zip(&claimed)
        .map(|(values, &claimed)| {
            if claimed == 0 {
                return Walk::default();
            }
            let (first, again) = values.split_at(lines as usize);
            Walk {
                first: first.iter().map(|&c| f64::from(c)).collect(),
                again: again.iter().map(|&c| f64::from(c)).collect(),
            }
        })
        .collect();
    Ok(Sweep { warm_sm, walks })
}

/// The two sweeps: from SM 0, then from the first SM the first put across (none where it put
/// none across: one partition).
pub fn l2_sweeps(gpu: &mut Gpu, sms: u32, lines: u32) -> Result<Vec<Sweep>> {
    let first = sweep(gpu, 0, sms, lines)?;
    let second = analysis::first_across(&first);
    let mut sweeps = vec![first];
    if let Some(across) = second {
        sweeps.push(sweep(gpu, across, sms, lines)?);
    }
    Ok(sweeps)
}

/// Clusters of `cluster` blocks, as many as fit at once, each block with the most shared
/// memory a block may have (one block per SM): every block chases every block of its cluster.
/// Returns the chases and the number of clusters launched.
pub fn dsm_chases(
    gpu: &mut Gpu,
    cluster: u32,
    shared_bytes: u32,
    steps: u32,
) -> Result<(Vec<DsmChase>, u32)> {
    // The kernel builds its ring in the block's dynamic shared memory, unchecked.
    anyhow::ensure!(
        shared_bytes >= RING_BYTES,
        "a block's shared memory ({shared_bytes} B) cannot hold the {RING_BYTES}-byte DSM ring"
    );
    let shape = |clusters| ClusterShape {
        cluster,
        clusters,
        threads: DSM_THREADS,
        shared_bytes,
    };
    let clusters = max_active_clusters_of(gpu, "sm_map_cluster", "sm_map_dsm", shape(1))?;
    if clusters == 0 {
        return Ok((Vec::new(), 0));
    }
    let blocks = (cluster * clusters) as usize;
    let n = cluster as usize;
    let out = zeros::<i64>(gpu, blocks * n, "the chase cycles")?;
    let smid = zeros::<u32>(gpu, blocks, "the SM numbers")?;
    let stream = gpu.stream().clone();
    let args = ClusterArgs::new(&stream)
        .buffer(&out)
        .buffer(&smid)
        .int(steps, "steps")?;
    let deadline = Duration::from_secs(10);
    // SAFETY: the arguments match sm_map_dsm's signature; out holds `cluster` values per block
    // and smid one; the ring lies in the block's dynamic shared memory (RING_BYTES of
    // shared_bytes, checked above).
    unsafe {
        launch_cluster(gpu, "sm_map_cluster", "sm_map_dsm", shape(clusters), args, deadline)
    }?;
    let cycles = read(gpu, &out, "the chase cycles")?;
    let smid = read(gpu, &smid, "the SM numbers")?;
    let steps = f64::from(steps);
    let mut chases = Vec::with_capacity(blocks * n);
    for block in 0..blocks {
        let (index, rank) = (block / n, block % n);
        for target in 0..n {
            chases.push(DsmChase {
                cluster_index: index as u32,
                rank: rank as u32,
                sm: smid[block],
                target_rank: target as u32,
                target_sm: smid[index * n + target],
                cycles_per_load: cycles[block * n + target] as f64 / steps,
            });
        }
    }
    Ok((chases, clusters))
}

#[cfg(test)]
mod tests {
    /// The ring the host makes room for is the kernel's.
    #[test]
    fn the_dsm_ring_is_the_kernels() {
        let source = include_str!("../../../cuda/sm_map_cluster.cu");
        let words = super::RING_BYTES / 4;
        assert!(source.contains(&format!("#define RING_WORDS {words}\n")));
    }
}

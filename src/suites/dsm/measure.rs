//! Distributed shared memory (cuda/dsm.cu), for issue #17 after Luo et al. 2024 ("Benchmarking and
//! Dissecting the Nvidia Hopper GPU Architecture", the distributed-shared-memory section), with
//! Wong et al.'s pointer chase. Every block asks for the most dynamic shared memory a block may
//! have, so one block fills an SM and the blocks of a cluster sit on distinct SMs. For each
//! cluster size the driver says how many clusters fit at once (`cuOccupancyMaxActiveClusters`);
//! for each size that fits, block 0 of one cluster chases a ring in every block's shared memory
//! through the cluster window (`mapa` + `ld.shared::cluster`) and one in its own with
//! `ld.shared`; and for sizes 2, 4, 8, 16 the GPU full of clusters reads 64 KiB per block per
//! pass with 16-byte loads in five patterns (own memory plainly and through the window, the
//! pair partner's, the next rank's, all of rank 0's).

use anyhow::{Context, Result};
use serde::Serialize;

use super::analysis::{self as dsm, ClusterLatency, PatternRate};
use crate::gpu::Gpu;
use crate::gpu::launch::{self, dsm::ClusterShape};

/// cuda/dsm.cu's ring size (words) and the bytes each bandwidth pass reads.
pub const RING_WORDS: u32 = 1024;
pub const BW_BYTES: u32 = 65536;
/// Words between two steps of a ring (coprime with its size: one cycle through every word).
pub const RING_STRIDE: u32 = 33;
/// Timed loads of every chase (after one untimed lap).
pub const STEPS: u32 = 2048;
/// Threads of a latency block (they build the rings) and of a bandwidth block.
pub const LATENCY_THREADS: u32 = 256;
pub const BANDWIDTH_THREADS: u32 = 1024;
/// The largest cluster the suite asks about (Hopper's non-portable limit).
pub const MAX_CLUSTER: u32 = 16;

/// The read patterns of dsm_bandwidth: its `pattern` argument and what it reads.
pub const PATTERNS: [(u32, &str); 5] = [
    (4, "own, ld.shared"),
    (0, "own, cluster window"),
    (1, "pair partner"),
    (2, "next rank (ring)"),
    (3, "all read rank 0"),
];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Occupancy {
    pub cluster: u32,
    /// Clusters of 1024-thread one-per-SM blocks that fit at once; 0: the size cannot launch.
    pub max_active_clusters: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Latency {
    pub latency: ClusterLatency,
    /// The cycles per load into each rank (rank 0: itself through the window).
    pub per_rank: Vec<f64>,
    pub smids: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bandwidth {
    pub cluster: u32,
    pub pattern: &'static str,
    pub clusters: u32,
    pub rate: PatternRate,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Results {
    pub shared_bytes_per_block: u32,
    pub occupancy: Vec<Occupancy>,
    pub latency: Vec<Latency>,
    pub bandwidth: Vec<Bandwidth>,
}

/// Runs the occupancy queries, the chases for every size from 2 to `MAX_CLUSTER` that fits and
/// the read patterns for `bandwidth_sizes` (those that fit), each pattern `iterations` passes.
pub fn measure(
    gpu: &mut Gpu,
    shared_bytes: u32,
    bandwidth_sizes: &[u32],
    iterations: u32,
) -> Result<Results> {
    let shape = |cluster: u32, clusters: u32, threads: u32| ClusterShape {
        cluster,
        clusters,
        threads,
        shared_bytes,
    };
    let mut occupancy = Vec::new();
    for cluster in 1..=MAX_CLUSTER {
        let fit = launch::dsm::max_active_clusters_of(
            gpu,
            "dsm",
            "dsm_bandwidth",
            shape(cluster, 1, BANDWIDTH_THREADS),
        )?;
        occupancy.push(Occupancy {
            cluster,
            max_active_clusters: fit,
        });
    }
    let fits = |cluster: u32| {
        occupancy
            .iter()
            .find(|o| o.cluster == cluster)
            .map_or(0, |o| o.max_active_clusters)
    };
    let mut latency = Vec::new();
    for cluster in (2..=MAX_CLUSTER).filter(|&c| fits(c) > 0) {
        let one = shape(cluster, 1, LATENCY_THREADS);
        let (cycles, smids) = launch::dsm::dsm_latency(gpu, one, STEPS, RING_STRIDE)?;
        let summary = dsm::cluster_latency(&cycles, &smids, STEPS)
            .with_context(|| format!("the chase in a cluster of {cluster} returned no cycles"))?;
        latency.push(Latency {
            latency: summary,
            per_rank: cycles[..cluster as usize]
                .iter()
                .map(|&c| c as f64 / f64::from(STEPS))
                .collect(),
            smids,
        });
    }
    let mut bandwidth = Vec::new();
    for &cluster in bandwidth_sizes.iter().filter(|&&c| fits(c) > 0) {
        let clusters = fits(cluster);
        let full = shape(cluster, clusters, BANDWIDTH_THREADS);
        for (code, pattern) in PATTERNS {
            // The first launch is untimed: clocks up, code in the caches.
            launch::dsm::dsm_bandwidth(gpu, full, code, 1)?;
            let stamps = launch::dsm::dsm_bandwidth(gpu, full, code, iterations)?;
            let bytes = f64::from(BW_BYTES) * f64::from(iterations);
            let rate = dsm::pattern_rate(&stamps, bytes).with_context(|| {
                format!("{pattern} in clusters of {cluster} returned unusable stamps")
            })?;
            bandwidth.push(Bandwidth {
                cluster,
                pattern,
                clusters,
                rate,
            });
        }
    }
    Ok(Results {
        shared_bytes_per_block: shared_bytes,
        occupancy,
        latency,
        bandwidth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_and_their_constants_are_the_hosts() {
        let ptx = crate::kernels::module("dsm").unwrap().ptx;
        for entry in ["dsm_latency", "dsm_bandwidth"] {
            assert!(ptx.contains(&format!(".entry {entry}(")), "{entry}");
        }
        let source = include_str!("../../../cuda/dsm.cu");
        for (name, value) in [("RING_WORDS", RING_WORDS), ("BW_BYTES", BW_BYTES)] {
            assert!(
                source.contains(&format!("#define {name} {value}\n")),
                "{name}"
            );
        }
        // The stride walks the whole ring before it returns.
        let mut at = 0;
        for step in 1..=RING_WORDS {
            at = (at + RING_STRIDE) % RING_WORDS;
            assert_eq!(at == 0, step == RING_WORDS);
        }
    }
}

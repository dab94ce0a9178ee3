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
//!
//! Writes (issue #74, after Luo et al.'s extended paper, arXiv 2501.12084, whose DSM section
//! times remote stores and a distributed histogram): the same GPU full of clusters stores
//! 64 KiB per block per pass with 16-byte `st.shared::cluster` (SASS: a generic `ST.E.128`)
//! into the four targets of the reads (own with `st.shared`, `STS.128`), each thread fencing at
//! cluster scope before the closing stamp so that the span covers the stores' arrival; the
//! pair partner's read and store are repeated at 128, 256, 512 and 1024 threads per block
//! (cluster of 2: how many accesses in flight an SM needs); and every thread adds 1
//! `iterations` times into a histogram of 1, 32 or 1024 bins in the next rank's shared memory
//! with `red.shared::cluster.add` or `atom.shared::cluster.add` (both `ATOM.E.ADD.STRONG.GPU`,
//! red's answer to `RZ`), or in its own with `atom.shared.add` (`ATOMS.ADD`); the bins every
//! block holds afterwards must sum to the adds sent, or the run stops.

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

/// The targets of dsm_store (dsm_bandwidth's codes): own memory plainly, and three others'.
pub const STORE_PATTERNS: [(u32, &str); 4] = [
    (4, "own, st.shared"),
    (1, "pair partner"),
    (2, "next rank (ring)"),
    (3, "all into rank 0"),
];

/// The pair partner's code and the block sizes its read and store are repeated at (cluster
/// of 2).
pub const SWEEP_PATTERN: u32 = 1;
pub const SWEEP_CLUSTER: u32 = 2;
pub const SWEEP_THREADS: [u32; 4] = [128, 256, 512, 1024];

/// dsm_histogram's (pattern, op) pairs and what each is: into the next rank's bins through the
/// cluster window, or into its own with plain shared atomics.
pub const HISTOGRAM_OPS: [(u32, u32, &str); 3] = [
    (4, 2, "in its own block, atom.shared.add"),
    (2, 0, "in the next rank, red.shared::cluster.add"),
    (2, 1, "in the next rank, atom.shared::cluster.add"),
];
/// Bins of the histogram: every add on one word, one warp's lanes on distinct words, spread.
pub const HISTOGRAM_BINS: [u32; 3] = [1, 32, 1024];

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

/// The pair partner's read or store at one block size (cluster of [`SWEEP_CLUSTER`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadsPoint {
    pub operation: &'static str,
    pub threads: u32,
    pub clusters: u32,
    pub rate: PatternRate,
}

/// One histogram: adds per clock of every block's span (`rate` in adds, not bytes).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Histogram {
    pub cluster: u32,
    pub operation: &'static str,
    pub bins: u32,
    pub clusters: u32,
    pub adds_per_block: u64,
    pub rate: PatternRate,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Results {
    pub shared_bytes_per_block: u32,
    pub occupancy: Vec<Occupancy>,
    pub latency: Vec<Latency>,
    pub bandwidth: Vec<Bandwidth>,
    pub stores: Vec<Bandwidth>,
    pub threads: Vec<ThreadsPoint>,
    pub histogram: Vec<Histogram>,
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
            launch::dsm::dsm_passes(gpu, "dsm_bandwidth", full, code, 1)?;
            let stamps = launch::dsm::dsm_passes(gpu, "dsm_bandwidth", full, code, iterations)?;
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
    let sizes: Vec<(u32, u32)> = bandwidth_sizes
        .iter()
        .filter(|&&c| fits(c) > 0)
        .map(|&c| (c, fits(c)))
        .collect();
    let stores = measure_stores(gpu, &sizes, |c, n| shape(c, n, BANDWIDTH_THREADS), iterations)?;
    let threads = match fits(SWEEP_CLUSTER) {
        0 => Vec::new(),
        clusters => measure_threads(gpu, |t| shape(SWEEP_CLUSTER, clusters, t), iterations)?,
    };
    let histogram =
        measure_histograms(gpu, &sizes, |c, n| shape(c, n, BANDWIDTH_THREADS), iterations)?;
    Ok(Results {
        shared_bytes_per_block: shared_bytes,
        occupancy,
        latency,
        bandwidth,
        stores,
        threads,
        histogram,
    })
}

/// Bytes per clock of `iterations` passes of 64 KiB through `launch` (one untimed launch
/// first: clocks up, code in the caches).
fn timed_pass(
    what: &str,
    iterations: u32,
    mut launch: impl FnMut(u32) -> Result<Vec<i64>, crate::error::GpuError>,
) -> Result<PatternRate> {
    launch(1)?;
    let stamps = launch(iterations)?;
    let bytes = f64::from(BW_BYTES) * f64::from(iterations);
    dsm::pattern_rate(&stamps, bytes).with_context(|| format!("{what} returned unusable stamps"))
}

/// The stores of [`STORE_PATTERNS`] at every (cluster size, clusters that fit) of `sizes`.
fn measure_stores(
    gpu: &mut Gpu,
    sizes: &[(u32, u32)],
    shape: impl Fn(u32, u32) -> ClusterShape,
    iterations: u32,
) -> Result<Vec<Bandwidth>> {
    let mut stores = Vec::new();
    for &(cluster, clusters) in sizes {
        for (code, pattern) in STORE_PATTERNS {
            let full = shape(cluster, clusters);
            let what = format!("storing into {pattern} in clusters of {cluster}");
            let rate = timed_pass(&what, iterations, |n| {
                launch::dsm::dsm_passes(gpu, "dsm_store", full, code, n)
            })?;
            stores.push(Bandwidth {
                cluster,
                pattern,
                clusters,
                rate,
            });
        }
    }
    Ok(stores)
}

/// The pair partner's read and store at every block size of [`SWEEP_THREADS`].
fn measure_threads(
    gpu: &mut Gpu,
    shape: impl Fn(u32) -> ClusterShape,
    iterations: u32,
) -> Result<Vec<ThreadsPoint>> {
    let mut points = Vec::new();
    for threads in SWEEP_THREADS {
        let at = shape(threads);
        for operation in ["read", "store"] {
            let what = format!("the pair partner's {operation} with {threads} threads");
            let entry = if operation == "read" { "dsm_bandwidth" } else { "dsm_store" };
            let rate = timed_pass(&what, iterations, |n| {
                launch::dsm::dsm_passes(gpu, entry, at, SWEEP_PATTERN, n)
            })?;
            points.push(ThreadsPoint {
                operation,
                threads,
                clusters: at.clusters,
                rate,
            });
        }
    }
    Ok(points)
}

/// Every histogram of [`HISTOGRAM_OPS`] × [`HISTOGRAM_BINS`] at every size of `sizes`; stops
/// where the bins do not hold every add sent.
fn measure_histograms(
    gpu: &mut Gpu,
    sizes: &[(u32, u32)],
    shape: impl Fn(u32, u32) -> ClusterShape,
    iterations: u32,
) -> Result<Vec<Histogram>> {
    let mut histograms = Vec::new();
    for &(cluster, clusters) in sizes {
        let full = shape(cluster, clusters);
        for (pattern, op, operation) in HISTOGRAM_OPS {
            for bins in HISTOGRAM_BINS {
                let run = |gpu: &mut Gpu, n: u32| {
                    super::launch::dsm_histogram(gpu, full, pattern, op, bins, n)
                };
                run(gpu, 1)?;
                let got = run(gpu, iterations)?;
                let adds_per_block = u64::from(full.threads) * u64::from(iterations);
                let what = format!("a histogram of {bins} bins {operation} in clusters of {cluster}");
                check_arrivals(&got.arrived, adds_per_block)
                    .with_context(|| format!("{what}: the histogram is wrong"))?;
                let rate = dsm::pattern_rate(&got.stamps, adds_per_block as f64)
                    .with_context(|| format!("{what} returned unusable stamps"))?;
                histograms.push(Histogram {
                    cluster,
                    operation,
                    bins,
                    clusters,
                    adds_per_block,
                    rate,
                });
            }
        }
    }
    Ok(histograms)
}

/// Every block's bins hold the adds one block sent (each block is the target of exactly one
/// other, or of itself): an add lost or doubled is a broken kernel, not a figure.
fn check_arrivals(arrived: &[u32], adds_per_block: u64) -> Result<()> {
    match arrived
        .iter()
        .position(|&a| u64::from(a) != adds_per_block)
    {
        None if !arrived.is_empty() => Ok(()),
        None => anyhow::bail!("no block reported its bins"),
        Some(block) => anyhow::bail!(
            "block {block}'s bins hold {} adds where {adds_per_block} were sent",
            arrived[block]
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_and_their_constants_are_the_hosts() {
        let ptx = crate::kernels::module("dsm").unwrap().ptx;
        for entry in ["dsm_latency", "dsm_bandwidth", "dsm_store", "dsm_histogram"] {
            assert!(ptx.contains(&format!(".entry {entry}(")), "{entry}");
        }
        // Every histogram fits the 64 KiB a block fills and indexes by mask.
        for bins in HISTOGRAM_BINS {
            assert!(bins.is_power_of_two() && 4 * bins <= BW_BYTES, "{bins}");
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

    #[test]
    fn a_histogram_holds_every_add_or_the_run_stops() {
        assert!(check_arrivals(&[512, 512, 512], 512).is_ok());
        let lost = check_arrivals(&[512, 511, 512], 512).unwrap_err();
        assert!(lost.to_string().contains("block 1's bins hold 511"), "{lost}");
        assert!(check_arrivals(&[512, 1024], 512).is_err());
        assert!(check_arrivals(&[], 512).is_err());
    }
}

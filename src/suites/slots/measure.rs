//! Wasted lane slots on the GPU (Gupta & Datta): six small workloads (cuda/slots.cu) with
//! every branch tagged intrinsic or extrinsic, each checked against a CPU reference. A tagged
//! run gives the counters (the suite's `analysis` turns them into the Fig. 6 branch table, the
//! Fig. 7 static/dynamic counts and the Fig. 8 slot fractions); then tagged and plain (tags
//! compiled out) runs alternate `repeats` times for the instrumentation's cost, as the median
//! GPU time of each.

use anyhow::{Result, bail, ensure};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng, rngs::StdRng};
use serde::Serialize;

use super::analysis::{self as slots, BranchRow, KindCounts, SlotFractions, SlotTotals};
use crate::analysis::stats;
use crate::gpu::Gpu;
use super::launch::{self, Graph, Timed, Tree, Variant};

/// The workloads, in the order they run and are reported.
pub const WORKLOADS: [&str; 6] = ["dot", "bfs", "gaussian", "backprop", "lud", "btree"];

/// Branch names per workload, by tag id (cuda/slots.cu lists the same ids).
pub fn branch_names(workload: &str) -> &'static [&'static str] {
    match workload {
        "dot" => &["element loop", "tid == 0 (serial sum)", "serial sum loop"],
        "bfs" => &[
            "expand: tid < n",
            "in frontier",
            "edge loop",
            "neighbour unvisited",
            "update: tid < n",
            "updated this level",
        ],
        "gaussian" => &[
            "Fan1: row in range",
            "Fan2: row in range",
            "Fan2: column in range",
            "Fan2: first column updates b",
        ],
        "backprop" => &[
            "tx == 0 loads input",
            "reduction step loop",
            "ty % power == 0",
            "ty == 0 writes sum",
        ],
        "lud" => &[
            "pivot step loop",
            "row below pivot",
            "element loop (strided mapping)",
            "in trailing submatrix",
        ],
        "btree" => &[
            "tid < queries",
            "level loop",
            "inner-node key scan",
            "leaf scan",
            "key found",
        ],
        _ => &[],
    }
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct NamedBranch {
    pub workload: String,
    pub name: String,
    #[serde(flatten)]
    pub row: BranchRow,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct WorkloadResult {
    pub workload: String,
    /// What was checked against the CPU reference, and how closely it matched.
    pub check: String,
    pub branches: Vec<NamedBranch>,
    pub totals: SlotTotals,
    pub fractions: SlotFractions,
    pub kinds: KindCounts,
    /// Median GPU milliseconds over the repeats, with and without tags.
    pub tagged_ms: f64,
    pub plain_ms: f64,
    pub tagged_ms_spread: (f64, f64),
    pub plain_ms_spread: (f64, f64),
}

impl WorkloadResult {
    pub fn overhead(&self) -> f64 {
        self.tagged_ms / self.plain_ms - 1.0
    }
}

fn runner(workload: &str, seed: u64) -> Result<Runner> {
    let mut rng = StdRng::seed_from_u64(seed);
    Ok(match workload {
        "dot" => dot_runner(&mut rng),
        "bfs" => bfs_runner(&mut rng),
        "gaussian" => gaussian_runner(&mut rng),
        "backprop" => backprop_runner(&mut rng),
        "lud" => lud_runner(&mut rng),
        "btree" => btree_runner(&mut rng),
        other => bail!("unknown workload {other}"),
    })
}

/// One checked run of the plain (untagged) variant: what `ncu` profiles.
pub fn run_plain(gpu: &mut Gpu, workload: &str, seed: u64) -> Result<()> {
    runner(workload, seed)?(gpu, Variant::Plain).map(|_| ())
}

/// Runs one workload: a checked tagged run, then `repeats` timed runs of each variant.
pub fn run(
    gpu: &mut Gpu,
    workload: &'static str,
    repeats: usize,
    seed: u64,
) -> Result<WorkloadResult> {
    let mut runner = runner(workload, seed)?;
    let (counters, _, check) = runner(gpu, Variant::Tagged)?;
    let (plain_counters, _, _) = runner(gpu, Variant::Plain)?;
    ensure!(
        plain_counters.iter().all(|&c| c == 0),
        "{workload}: the plain variant wrote tag counters"
    );
    let counted = slots::read_counters(&counters)?;
    let fractions = counted
        .totals
        .fractions()
        .ok_or_else(|| anyhow::anyhow!("{workload}: no tagged region ran"))?;
    let names = branch_names(workload);
    let branches = counted
        .branches
        .iter()
        .map(|row| NamedBranch {
            workload: workload.into(),
            name: names.get(row.id).copied().unwrap_or("untitled").into(),
            row: row.clone(),
        })
        .collect();
    let (mut tagged, mut plain) = (Vec::new(), Vec::new());
    for _ in 0..repeats.max(1) {
        tagged.push(runner(gpu, Variant::Tagged)?.1);
        plain.push(runner(gpu, Variant::Plain)?.1);
    }
    let spread = |v: &[f64]| {
        (
            v.iter().copied().fold(f64::INFINITY, f64::min),
            v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    };
    Ok(WorkloadResult {
        workload: workload.into(),
        check,
        kinds: slots::kind_counts(&counted.branches),
        branches,
        totals: counted.totals,
        fractions,
        tagged_ms: stats::median(&tagged).unwrap_or(f64::NAN),
        plain_ms: stats::median(&plain).unwrap_or(f64::NAN),
        tagged_ms_spread: spread(&tagged),
        plain_ms_spread: spread(&plain),
    })
}

type Runner = Box<dyn FnMut(&mut Gpu, Variant) -> Result<(Vec<u64>, f64, String)>>;

fn relative_error(gpu: &[f32], cpu: &[f64]) -> f64 {
    gpu.iter()
        .zip(cpu)
        .map(|(&g, &c)| (f64::from(g) - c).abs() / c.abs().max(1.0))
        .fold(0.0, f64::max)
}

fn finish<T>(timed: Timed<T>, check: String) -> (Vec<u64>, f64, String) {
    (timed.counters, timed.milliseconds, check)
}

fn dot_runner(rng: &mut StdRng) -> Runner {
    let n = 4096;
    let a: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let b: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let reference: f64 = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum();
    Box::new(move |gpu, variant| {
        let timed = launch::dot(gpu, variant, &a, &b, 256)?;
        let error = relative_error(&[timed.output], &[reference]);
        ensure!(
            error < 1e-4,
            "dot: GPU {} vs CPU {reference} (relative error {error:.1e})",
            timed.output
        );
        Ok(finish(
            timed,
            format!("dot product of {n} elements: relative error {error:.1e} against f64"),
        ))
    })
}

/// A random graph of `n` nodes, each with 0 to 8 edges to random nodes.
fn random_graph(rng: &mut StdRng, n: usize) -> (Vec<i32>, Vec<i32>) {
    let mut offsets = vec![0_i32];
    let mut edges = Vec::new();
    for _ in 0..n {
        for _ in 0..rng.random_range(0..=8) {
            edges.push(rng.random_range(0..n as i32));
        }
        offsets.push(edges.len() as i32);
    }
    (offsets, edges)
}

pub fn bfs_reference(offsets: &[i32], edges: &[i32]) -> Vec<i32> {
    let n = offsets.len() - 1;
    let mut cost = vec![-1; n];
    cost[0] = 0;
    let mut queue = std::collections::VecDeque::from([0_usize]);
    while let Some(u) = queue.pop_front() {
        for &v in &edges[offsets[u] as usize..offsets[u + 1] as usize] {
            if cost[v as usize] < 0 {
                cost[v as usize] = cost[u] + 1;
                queue.push_back(v as usize);
            }
        }
    }
    cost
}

fn bfs_runner(rng: &mut StdRng) -> Runner {
    let (offsets, edges) = random_graph(rng, 8192);
    let reference = bfs_reference(&offsets, &edges);
    let mut levels = None;
    Box::new(move |gpu, variant| {
        let graph = Graph {
            offsets: &offsets,
            edges: &edges,
        };
        let timed = launch::bfs(gpu, variant, &graph, levels)?;
        let (cost, ran) = &timed.output;
        levels.get_or_insert(*ran);
        let wrong = cost.iter().zip(&reference).filter(|(g, c)| g != c).count();
        ensure!(
            wrong == 0,
            "bfs: {wrong} of {} node costs differ from the CPU's",
            cost.len()
        );
        let reached = reference.iter().filter(|&&c| c >= 0).count();
        let check = format!(
            "BFS over {} nodes, {} edges, {ran} levels: all {} costs equal the CPU's ({reached} reached)",
            cost.len(),
            edges.len(),
            cost.len()
        );
        Ok(finish(timed, check))
    })
}

/// Forward elimination as Rodinia's Fan1/Fan2 do it, in f64.
pub fn eliminate(a: &mut [f64], b: &mut [f64], size: usize) {
    for t in 0..size - 1 {
        for row in t + 1..size {
            let m = a[row * size + t] / a[t * size + t];
            for col in t..size {
                a[row * size + col] -= m * a[t * size + col];
            }
            b[row] -= m * b[t];
        }
    }
}

fn gaussian_runner(rng: &mut StdRng) -> Runner {
    let size = 64_usize;
    // Diagonally dominant, so elimination without pivoting is stable.
    let mut a: Vec<f32> = (0..size * size)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    for i in 0..size {
        a[i * size + i] += size as f32;
    }
    let b: Vec<f32> = (0..size).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut ra: Vec<f64> = a.iter().map(|&x| f64::from(x)).collect();
    let mut rb: Vec<f64> = b.iter().map(|&x| f64::from(x)).collect();
    eliminate(&mut ra, &mut rb, size);
    Box::new(move |gpu, variant| {
        let timed = launch::gaussian(gpu, variant, &a, &b, size as u32)?;
        let (ga, gb) = &timed.output;
        // Below the diagonal the GPU leaves the multiplied-out values (zero up to rounding);
        // compare the upper triangle and b.
        let upper: Vec<(f32, f64)> = (0..size)
            .flat_map(|r| (r..size).map(move |c| r * size + c))
            .map(|i| (ga[i], ra[i]))
            .collect();
        let (g, c): (Vec<f32>, Vec<f64>) = upper.into_iter().unzip();
        let error = relative_error(&g, &c).max(relative_error(gb, &rb));
        ensure!(
            error < 1e-4,
            "gaussian: the eliminated system differs from the CPU's by {error:.1e}"
        );
        Ok(finish(
            timed,
            format!(
                "Gaussian elimination of a {size}x{size} system: max relative error {error:.1e} against f64"
            ),
        ))
    })
}

fn backprop_runner(rng: &mut StdRng) -> Runner {
    let inputs = 1024_usize;
    let input: Vec<f32> = (0..inputs).map(|_| rng.random_range(0.0..1.0)).collect();
    let weights: Vec<f32> = (0..inputs * 16)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    let reference: Vec<f64> = (0..inputs / 16)
        .flat_map(|block| {
            let (input, weights) = (&input, &weights);
            (0..16).map(move |h| {
                (0..16)
                    .map(|r| {
                        f64::from(weights[(block * 16 + r) * 16 + h])
                            * f64::from(input[block * 16 + r])
                    })
                    .sum()
            })
        })
        .collect();
    Box::new(move |gpu, variant| {
        let timed = launch::backprop(gpu, variant, &input, &weights)?;
        let error = relative_error(&timed.output, &reference);
        ensure!(
            error < 1e-4,
            "backprop: partial sums differ from the CPU's by {error:.1e}"
        );
        Ok(finish(
            timed,
            format!(
                "backprop layer, {inputs} inputs x 16 hidden: max relative error {error:.1e} against f64"
            ),
        ))
    })
}

/// Doolittle LU without pivoting, in place, in f64.
pub fn lu_reference(a: &mut [f64], n: usize) {
    for k in 0..n {
        for i in k + 1..n {
            a[i * n + k] /= a[k * n + k];
        }
        for i in k + 1..n {
            for j in k + 1..n {
                a[i * n + j] -= a[i * n + k] * a[k * n + j];
            }
        }
    }
}

fn lud_runner(rng: &mut StdRng) -> Runner {
    let n = 64_usize;
    let mut a: Vec<f32> = (0..n * n).map(|_| rng.random_range(-1.0..1.0)).collect();
    for i in 0..n {
        a[i * n + i] += n as f32;
    }
    let mut reference: Vec<f64> = a.iter().map(|&x| f64::from(x)).collect();
    lu_reference(&mut reference, n);
    Box::new(move |gpu, variant| {
        let timed = launch::lu(gpu, variant, &a, n as u32, 256)?;
        let error = relative_error(&timed.output, &reference);
        ensure!(
            error < 1e-4,
            "lud: the factors differ from the CPU's by {error:.1e}"
        );
        Ok(finish(
            timed,
            format!(
                "LU decomposition of a {n}x{n} matrix: max relative error {error:.1e} against f64"
            ),
        ))
    })
}

/// A static B+-tree over sorted `keys` (values = their positions): 7 keys a node, fanout 8.
pub struct BuiltTree {
    pub counts: Vec<i32>,
    pub keys: Vec<i32>,
    pub children: Vec<i32>,
    pub values: Vec<i32>,
    pub root: i32,
    pub depth: i32,
}

pub fn build_tree(sorted: &[i32]) -> BuiltTree {
    let mut tree = BuiltTree {
        counts: vec![],
        keys: vec![],
        children: vec![],
        values: vec![],
        root: 0,
        depth: 0,
    };
    // (node, smallest key below it) per node of the level being built.
    let mut level: Vec<(i32, i32)> = Vec::new();
    for (chunk_index, chunk) in sorted.chunks(7).enumerate() {
        let node = tree.counts.len() as i32;
        tree.counts.push(chunk.len() as i32);
        let mut keys = chunk.to_vec();
        keys.resize(7, i32::MAX);
        tree.keys.extend(keys);
        let mut values: Vec<i32> = (0..chunk.len())
            .map(|i| (chunk_index * 7 + i) as i32)
            .collect();
        values.resize(7, -1);
        tree.values.extend(values);
        tree.children.extend([-1; 8]);
        level.push((node, chunk[0]));
    }
    while level.len() > 1 {
        let mut next = Vec::new();
        for group in level.chunks(8) {
            let node = tree.counts.len() as i32;
            tree.counts.push(group.len() as i32 - 1);
            let mut keys: Vec<i32> = group[1..].iter().map(|&(_, min)| min).collect();
            keys.resize(7, i32::MAX);
            tree.keys.extend(keys);
            let mut children: Vec<i32> = group.iter().map(|&(child, _)| child).collect();
            children.resize(8, -1);
            tree.children.extend(children);
            tree.values.extend([-1; 7]);
            next.push((node, group[0].1));
        }
        level = next;
        tree.depth += 1;
    }
    tree.root = level[0].0;
    tree
}

fn btree_runner(rng: &mut StdRng) -> Runner {
    let sorted: Vec<i32> = (0..10_000).map(|i| 3 * i + 1).collect();
    let tree = build_tree(&sorted);
    let mut queries: Vec<i32> = (0..8192)
        .map(|i| {
            if i % 2 == 0 {
                sorted[rng.random_range(0..sorted.len())]
            } else {
                3 * rng.random_range(0..10_000)
            }
        })
        .collect();
    queries.shuffle(rng);
    let reference: Vec<i32> = queries
        .iter()
        .map(|q| sorted.binary_search(q).map_or(-1, |i| i as i32))
        .collect();
    Box::new(move |gpu, variant| {
        let view = Tree {
            counts: &tree.counts,
            keys: &tree.keys,
            children: &tree.children,
            values: &tree.values,
            root: tree.root,
            depth: tree.depth,
        };
        let timed = launch::btree(gpu, variant, &view, &queries)?;
        let wrong = timed
            .output
            .iter()
            .zip(&reference)
            .filter(|(g, c)| g != c)
            .count();
        ensure!(
            wrong == 0,
            "btree: {wrong} of {} lookups differ from a binary search",
            queries.len()
        );
        let hits = reference.iter().filter(|&&r| r >= 0).count();
        let check = format!(
            "B+-tree ({} nodes, depth {}) search of {} keys: all equal a binary search ({hits} found)",
            tree.counts.len(),
            tree.depth,
            queries.len()
        );
        Ok(finish(timed, check))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(tree: &BuiltTree, key: i32) -> i32 {
        let mut node = tree.root as usize;
        for _ in 0..tree.depth {
            let mut i = 0;
            while i < tree.counts[node] as usize && key >= tree.keys[node * 7 + i] {
                i += 1;
            }
            node = tree.children[node * 8 + i] as usize;
        }
        (0..tree.counts[node] as usize)
            .find(|&i| tree.keys[node * 7 + i] == key)
            .map_or(-1, |i| tree.values[node * 7 + i])
    }

    #[test]
    fn the_tree_finds_every_key_the_way_the_kernel_walks_it() {
        let sorted: Vec<i32> = (0..1000).map(|i| 3 * i + 1).collect();
        let tree = build_tree(&sorted);
        assert_eq!(tree.depth, 3, "143 leaves, 18, 3, 1 inner nodes");
        for (position, &key) in sorted.iter().enumerate() {
            assert_eq!(search(&tree, key), position as i32);
            assert_eq!(search(&tree, key + 1), -1);
        }
        assert_eq!(search(&tree, 0), -1);
    }

    #[test]
    fn the_references_are_right_on_small_cases() {
        // 0 -> 1 -> 2, 3 unreachable.
        assert_eq!(bfs_reference(&[0, 1, 2, 2, 2], &[1, 2]), vec![0, 1, 2, -1]);
        let mut a = vec![4.0, 3.0, 6.0, 3.0];
        lu_reference(&mut a, 2);
        assert_eq!(a, vec![4.0, 3.0, 1.5, -1.5]);
        let (mut a, mut b) = (vec![2.0, 1.0, 4.0, 3.0], vec![1.0, 2.0]);
        eliminate(&mut a, &mut b, 2);
        assert_eq!((a[3], b[1]), (1.0, 0.0));
    }

    #[test]
    fn every_workload_names_its_branches() {
        for workload in WORKLOADS {
            assert!(!branch_names(workload).is_empty(), "{workload}");
        }
    }
}

//! Launches of the lane-slot workloads (cuda/slots.cu), each as `NAME_tagged` or `NAME_plain`.
//! Like every launcher, every unsafe launch states its kernel's signature; every workload returns
//! its outputs, the tag counters (zero for the plain variant) and the GPU time between two
//! events around its launches.

use std::time::Duration;

use cudarc::driver::{CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg};

use crate::error::GpuError;
use crate::gpu::launch::*;
use crate::gpu::{Gpu, driver_error};

/// Counters per launch sequence: 16 branches × 6 fields, then 4 slot totals (slot_tags.cuh).
pub const SLOT_COUNTERS: usize = 16 * 6 + 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Tagged,
    Plain,
}

impl Variant {
    fn entry(self, name: &str) -> String {
        match self {
            Variant::Tagged => format!("{name}_tagged"),
            Variant::Plain => format!("{name}_plain"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Timed<T> {
    pub output: T,
    pub counters: Vec<u64>,
    pub milliseconds: f64,
}

const DEADLINE: Duration = Duration::from_secs(20);

fn grid(threads: u32, block: u32) -> LaunchConfig {
    line_of(threads.div_ceil(block), block)
}

/// The paper's dot product: one block of `threads`, thread 0 sums the partials.
pub fn dot(
    gpu: &mut Gpu,
    variant: Variant,
    a: &[f32],
    b: &[f32],
    threads: u32,
) -> Result<Timed<f32>, GpuError> {
    let entry = variant.entry("dot");
    let function = gpu.function("slots", &entry)?;
    let stream = gpu.stream().clone();
    let (da, db) = (
        upload(gpu, a, "workload input")?,
        upload(gpu, b, "workload input")?,
    );
    let mut partial = zeroed::<f32>(gpu, (threads as usize).max(1), "workload memory")?;
    let mut out = zeroed::<f32>(gpu, 1, "workload memory")?;
    let mut counters = zeroed::<u64>(gpu, SLOT_COUNTERS, "workload memory")?;
    let n = a.len().min(b.len()) as i32;
    let milliseconds = timed(gpu, &entry, DEADLINE, || {
        let mut builder = stream.launch_builder(&function);
        builder
            .arg(&da)
            .arg(&db)
            .arg(&n)
            .arg(&mut partial)
            .arg(&mut out)
            .arg(&mut counters);
        // SAFETY: (const float *a[n], const float *b[n], int n, float *partial[threads],
        // float *out[1], unsigned long long *c[SLOT_COUNTERS]); one block of `threads`.
        unsafe { launch("dot", builder, grid(threads, threads)) }
    })?;
    Ok(Timed {
        output: read(gpu, &out, "a workload result")?[0],
        counters: read(gpu, &counters, "a workload result")?,
        milliseconds,
    })
}

/// A graph in compressed rows: node i's neighbours are edges[offsets[i]..offsets[i + 1]].
pub struct Graph<'a> {
    pub offsets: &'a [i32],
    pub edges: &'a [i32],
}

/// Rodinia-style BFS from node 0 over `levels` levels (expand, then update, per level); with
/// `levels` None, levels run until one adds no node, and the count is returned.
pub fn bfs(
    gpu: &mut Gpu,
    variant: Variant,
    graph: &Graph,
    levels: Option<u32>,
) -> Result<Timed<(Vec<i32>, u32)>, GpuError> {
    let (expand_entry, update_entry) = (variant.entry("bfs_expand"), variant.entry("bfs_update"));
    let expand = gpu.function("slots", &expand_entry)?;
    let update = gpu.function("slots", &update_entry)?;
    let stream = gpu.stream().clone();
    let n = (graph.offsets.len() - 1) as i32;
    let (offsets, edges) = (
        upload(gpu, graph.offsets, "workload input")?,
        upload(gpu, graph.edges, "workload input")?,
    );
    let mut start = vec![false; n as usize];
    start[0] = true;
    let mut frontier = upload(gpu, &start, "workload input")?;
    let mut visited = upload(gpu, &start, "workload input")?;
    let mut updating = zeroed::<bool>(gpu, (n as usize).max(1), "workload memory")?;
    let mut cost_host = vec![-1_i32; n as usize];
    cost_host[0] = 0;
    let mut cost = upload(gpu, &cost_host, "workload input")?;
    let mut again = zeroed::<i32>(gpu, 1, "workload memory")?;
    let mut counters = zeroed::<u64>(gpu, SLOT_COUNTERS, "workload memory")?;
    let config = grid(n as u32, 256);
    let mut level = |again: &mut CudaSlice<i32>| -> Result<(), GpuError> {
        let mut builder = stream.launch_builder(&expand);
        builder
            .arg(&offsets)
            .arg(&edges)
            .arg(&mut frontier)
            .arg(&mut updating)
            .arg(&visited)
            .arg(&mut cost)
            .arg(&n)
            .arg(&mut counters);
        // SAFETY: (const int *offsets[n + 1], const int *edges[offsets[n]], bool *frontier[n],
        // bool *updating[n], const bool *visited[n], int *cost[n], int n,
        // unsigned long long *c[SLOT_COUNTERS]); every edge is a node below n.
        unsafe { launch("bfs_expand", builder, config) }?;
        let mut builder = stream.launch_builder(&update);
        builder
            .arg(&mut frontier)
            .arg(&mut updating)
            .arg(&mut visited)
            .arg(&mut *again)
            .arg(&n)
            .arg(&mut counters);
        // SAFETY: (bool *frontier[n], bool *updating[n], bool *visited[n], int *again[1], int n,
        // unsigned long long *c[SLOT_COUNTERS]).
        unsafe { launch("bfs_update", builder, config) }?;
        Ok(())
    };
    let (milliseconds, levels) = match levels {
        Some(levels) => {
            let ms = timed(gpu, &update_entry, DEADLINE, || {
                for _ in 0..levels {
                    level(&mut again)?;
                }
                Ok(())
            })?;
            (ms, levels)
        }
        None => {
            let mut total = 0.0;
            let mut count = 0;
            loop {
                stream
                    .memcpy_htod(&[0_i32], &mut again)
                    .map_err(driver_error("clearing the BFS flag"))?;
                total += timed(gpu, &update_entry, DEADLINE, || level(&mut again))?;
                count += 1;
                if read(gpu, &again, "a workload result")?[0] == 0 || count > n as u32 {
                    break;
                }
            }
            (total, count)
        }
    };
    Ok(Timed {
        output: (read(gpu, &cost, "a workload result")?, levels),
        counters: read(gpu, &counters, "a workload result")?,
        milliseconds,
    })
}

/// A linear system (a, b) after elimination.
pub type System = (Vec<f32>, Vec<f32>);

/// Rodinia-style Gaussian elimination of the `size` × `size` system (a, b): Fan1 then Fan2
/// for every step. Returns the eliminated (a, b).
pub fn gaussian(
    gpu: &mut Gpu,
    variant: Variant,
    a: &[f32],
    b: &[f32],
    size: u32,
) -> Result<Timed<System>, GpuError> {
    let (fan1_entry, fan2_entry) = (variant.entry("gauss_fan1"), variant.entry("gauss_fan2"));
    let fan1 = gpu.function("slots", &fan1_entry)?;
    let fan2 = gpu.function("slots", &fan2_entry)?;
    let stream = gpu.stream().clone();
    let (mut da, mut db) = (
        upload(gpu, a, "workload input")?,
        upload(gpu, b, "workload input")?,
    );
    let mut m = zeroed::<f32>(gpu, a.len().max(1), "workload memory")?;
    let mut counters = zeroed::<u64>(gpu, SLOT_COUNTERS, "workload memory")?;
    let size_arg = size as i32;
    let milliseconds = timed(gpu, &fan2_entry, DEADLINE, || {
        for t in 0..size_arg - 1 {
            let mut builder = stream.launch_builder(&fan1);
            builder
                .arg(&da)
                .arg(&mut m)
                .arg(&size_arg)
                .arg(&t)
                .arg(&mut counters);
            // SAFETY: (const float *a[size²], float *m[size²], int size, int t,
            // unsigned long long *c[SLOT_COUNTERS]); rows past size - 1 - t are guarded.
            unsafe { launch("Fan1", builder, grid(size, 64)) }?;
            let mut builder = stream.launch_builder(&fan2);
            builder
                .arg(&mut da)
                .arg(&mut db)
                .arg(&m)
                .arg(&size_arg)
                .arg(&t)
                .arg(&mut counters);
            let config = LaunchConfig {
                grid_dim: (size.div_ceil(16), size.div_ceil(16), 1),
                block_dim: (16, 16, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: (float *a[size²], float *b[size], const float *m[size²], int size, int t,
            // unsigned long long *c[SLOT_COUNTERS]); both indices are guarded.
            unsafe { launch("Fan2", builder, config) }?;
        }
        Ok(())
    })?;
    Ok(Timed {
        output: (
            read(gpu, &da, "a workload result")?,
            read(gpu, &db, "a workload result")?,
        ),
        counters: read(gpu, &counters, "a workload result")?,
        milliseconds,
    })
}

/// Backprop forward layer: `input.len()` (a multiple of 16) inputs, 16 hidden units; returns
/// the per-block partial sums, (inputs / 16) × 16.
pub fn backprop(
    gpu: &mut Gpu,
    variant: Variant,
    input: &[f32],
    weights: &[f32],
) -> Result<Timed<Vec<f32>>, GpuError> {
    let entry = variant.entry("backprop");
    let function = gpu.function("slots", &entry)?;
    let stream = gpu.stream().clone();
    let blocks = (input.len() / 16) as u32;
    let hidden = 16_i32;
    let (di, dw) = (
        upload(gpu, input, "workload input")?,
        upload(gpu, weights, "workload input")?,
    );
    let mut partial = zeroed::<f32>(gpu, (blocks as usize * 16).max(1), "workload memory")?;
    let mut counters = zeroed::<u64>(gpu, SLOT_COUNTERS, "workload memory")?;
    let milliseconds = timed(gpu, &entry, DEADLINE, || {
        let mut builder = stream.launch_builder(&function);
        builder
            .arg(&di)
            .arg(&dw)
            .arg(&mut partial)
            .arg(&hidden)
            .arg(&mut counters);
        let config = LaunchConfig {
            grid_dim: (1, blocks, 1),
            block_dim: (16, 16, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: (const float *input[blocks·16], const float *weights[blocks·16·16],
        // float *partial[blocks·16], int hidden = 16, unsigned long long *c[SLOT_COUNTERS]).
        unsafe { launch("backprop", builder, config) }
    })?;
    Ok(Timed {
        output: read(gpu, &partial, "a workload result")?,
        counters: read(gpu, &counters, "a workload result")?,
        milliseconds,
    })
}

/// In-place LU decomposition of the n × n matrix `a` by one block of `threads` (≥ n).
pub fn lu(
    gpu: &mut Gpu,
    variant: Variant,
    a: &[f32],
    n: u32,
    threads: u32,
) -> Result<Timed<Vec<f32>>, GpuError> {
    let entry = variant.entry("lu");
    let function = gpu.function("slots", &entry)?;
    let stream = gpu.stream().clone();
    let mut da = upload(gpu, a, "workload input")?;
    let mut counters = zeroed::<u64>(gpu, SLOT_COUNTERS, "workload memory")?;
    let n_arg = n as i32;
    let milliseconds = timed(gpu, &entry, DEADLINE, || {
        let mut builder = stream.launch_builder(&function);
        builder.arg(&mut da).arg(&n_arg).arg(&mut counters);
        // SAFETY: (float *a[n²], int n, unsigned long long *c[SLOT_COUNTERS]); one block of
        // `threads` ≥ n threads (the caller checks).
        unsafe { launch("lu", builder, grid(threads, threads)) }
    })?;
    Ok(Timed {
        output: read(gpu, &da, "a workload result")?,
        counters: read(gpu, &counters, "a workload result")?,
        milliseconds,
    })
}

/// A static B+-tree in arrays: node i has counts[i] keys at keys[7i..], children at
/// children[8i..] (inner nodes) and values at values[7i..] (leaves).
pub struct Tree<'a> {
    pub counts: &'a [i32],
    pub keys: &'a [i32],
    pub children: &'a [i32],
    pub values: &'a [i32],
    pub root: i32,
    pub depth: i32,
}

/// Looks every query up; returns its value, or -1.
pub fn btree(
    gpu: &mut Gpu,
    variant: Variant,
    tree: &Tree,
    queries: &[i32],
) -> Result<Timed<Vec<i32>>, GpuError> {
    let entry = variant.entry("btree");
    let function = gpu.function("slots", &entry)?;
    let stream = gpu.stream().clone();
    let counts = upload(gpu, tree.counts, "workload input")?;
    let keys = upload(gpu, tree.keys, "workload input")?;
    let children = upload(gpu, tree.children, "workload input")?;
    let values = upload(gpu, tree.values, "workload input")?;
    let dq = upload(gpu, queries, "workload input")?;
    let mut found = zeroed::<i32>(gpu, queries.len().max(1), "workload memory")?;
    let mut counters = zeroed::<u64>(gpu, SLOT_COUNTERS, "workload memory")?;
    let q = queries.len() as i32;
    let milliseconds = timed(gpu, &entry, DEADLINE, || {
        let mut builder = stream.launch_builder(&function);
        builder
            .arg(&counts)
            .arg(&keys)
            .arg(&children)
            .arg(&values)
            .arg(&tree.root)
            .arg(&tree.depth)
            .arg(&dq)
            .arg(&mut found)
            .arg(&q)
            .arg(&mut counters);
        // SAFETY: (const int *counts[nodes], const int *keys[7·nodes], const int
        // *children[8·nodes], const int *values[7·nodes], int root, int depth, const int
        // *queries[q], int *found[q], int q, unsigned long long *c[SLOT_COUNTERS]); every
        // child index is a node, and a path from the root has `depth` inner nodes.
        unsafe { launch("btree", builder, grid(q as u32, 128)) }
    })?;
    Ok(Timed {
        output: read(gpu, &found, "a workload result")?,
        counters: read(gpu, &counters, "a workload result")?,
        milliseconds,
    })
}

/// `n` zeros on the device, copied there rather than set by a memset: a memset runs as a
/// kernel on the SMs, and ncu sums every instruction of a workload's profiler range
/// (`super::ncu`), so the workloads' own instructions alone must run on them.
fn zeroed<T: DeviceRepr + Default + Clone>(
    gpu: &Gpu,
    n: usize,
    what: &str,
) -> Result<CudaSlice<T>, GpuError> {
    upload(gpu, &vec![T::default(); n], what)
}

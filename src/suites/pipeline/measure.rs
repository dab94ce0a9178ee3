//! Arithmetic pipelines (cuda/pipeline.cu), after Wong et al., section IV-B, Tables III–IV and
//! Fig. 6. Latency: one warp, one dependent chain per thread, cycles per operation. Throughput:
//! one block of 1024 threads, four independent chains each, operations per clock on the SM.
//! The warp sweep runs the latency kernel of one operation with 1..=32 warps (Fig. 6).

use anyhow::{Context, Result};

use super::analysis::{self as pipeline, WarpPoint};
use crate::analysis::sass::KernelSass;
use super::launch;
use crate::gpu::Gpu;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operation {
    /// The kernel suffix in cuda/pipeline.cu.
    pub name: &'static str,
    pub label: &'static str,
    pub kind: &'static str,
    /// Operations per loop trip (the kernel's unroll).
    pub unroll: u32,
    /// What else each chain step does, where it is not the operation alone.
    pub note: &'static str,
}

const fn op(
    name: &'static str,
    label: &'static str,
    kind: &'static str,
    unroll: u32,
    note: &'static str,
) -> Operation {
    Operation {
        name,
        label,
        kind,
        unroll,
        note,
    }
}

#[rustfmt::skip]
pub const OPERATIONS: [Operation; 28] = [
    op("int_add", "add", "int32", 32, "per PTX add.u32; ptxas may fuse pairs into IADD3"),
    op("int_mul", "mul", "int32", 32, ""),
    op("int_mad", "mad", "int32", 32, ""),
    op("int_mul24", "mul24", "int32", 32, "mul24.lo, emulated where there is no 24-bit unit"),
    op("int_div", "div", "uint32", 4, "x / y + z, y = 3 at run time (a subroutine)"),
    op("int_rem", "rem", "uint32", 4, "x % y + z, y = 7 at run time (a subroutine)"),
    op("popc", "popc", "int32", 32, "popc(x) + y"),
    op("clz", "clz", "int32", 32, "clz(x) + y"),
    op("shfl", "shfl.sync", "int32", 32, "from the next lane"),
    op("f32_add", "add", "fp32", 32, ""),
    op("f32_mul", "mul", "fp32", 32, ""),
    op("f32_fma", "fma", "fp32", 32, ""),
    op("f32_div", "div", "fp32", 4, "IEEE division (default -prec-div)"),
    op("f32_sqrt", "sqrtf", "fp32", 4, "IEEE square root (default -prec-sqrt)"),
    op("f32_rsqrt", "rsqrtf", "fp32", 4, ""),
    op("fast_sinf", "__sinf", "fp32", 32, ""),
    op("fast_cosf", "__cosf", "fp32", 32, ""),
    op("fast_expf", "__expf", "fp32", 32, "__expf(-x): includes a negation and a multiply"),
    op("fast_log2f", "__log2f", "fp32", 32, "__log2f(x) + 2"),
    op("libm_sinf", "sinf", "fp32", 4, "libm, |x| < 1"),
    op("libm_cosf", "cosf", "fp32", 4, "libm, |x| < 1"),
    op("libm_expf", "expf", "fp32", 4, "libm, expf(-x)"),
    op("libm_log2f", "log2f", "fp32", 4, "libm, log2f(x) + 2"),
    op("f64_add", "add", "fp64", 32, ""),
    op("f64_mul", "mul", "fp64", 32, ""),
    op("f64_fma", "fma", "fp64", 32, ""),
    op("f64_div", "div", "fp64", 4, "a subroutine"),
    op("f16x2_fma", "fma (half2)", "fp16x2", 32, "one instruction = two fp16 FMAs"),
];

pub const THROUGHPUT_THREADS: u32 = 1024;
pub const THROUGHPUT_CHAINS: u32 = 4;

#[derive(Debug, Clone, PartialEq)]
pub struct OperationResult {
    pub operation: Operation,
    pub latency_cycles: f64,
    pub ops_per_clock_per_sm: f64,
}

/// The SASS of `lat_NAME`'s timed region (the loop and the little set-up before it), most
/// frequent opcode first: "POPC ×32, IADD3 ×16, VIADD ×16, …" (static counts, per loop trip
/// of `unroll` operations).
pub fn timed_sass(operation: &Operation, kernels: &[KernelSass]) -> Option<String> {
    let entry = format!("lat_{}", operation.name);
    let kernel = kernels.iter().find(|k| k.kernel == entry)?;
    let mut counts: Vec<(String, usize)> = kernel.timed_opcodes().into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Some(
        counts
            .iter()
            .map(|(op, n)| format!("{op} ×{n}"))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// One untimed launch, so the code is in the instruction cache, then the timed one.
fn warm_then_time(gpu: &mut Gpu, entry: &str, threads: u32, iterations: u32) -> Result<Vec<i64>> {
    launch::pipeline(gpu, entry, threads, iterations)?;
    Ok(launch::pipeline(gpu, entry, threads, iterations)?)
}

pub fn measure(gpu: &mut Gpu, iterations: u32) -> Result<Vec<OperationResult>> {
    OPERATIONS
        .iter()
        .map(|operation| {
            let ops = u64::from(iterations) * u64::from(operation.unroll);
            let latency_entry = format!("lat_{}", operation.name);
            let throughput_entry = format!("thr_{}", operation.name);
            // One untimed launch of each, so the code is in the instruction cache.
            launch::pipeline(gpu, &latency_entry, 32, iterations)?;
            let latency = launch::pipeline(gpu, &latency_entry, 32, iterations)?;
            launch::pipeline(gpu, &throughput_entry, THROUGHPUT_THREADS, iterations)?;
            let throughput =
                launch::pipeline(gpu, &throughput_entry, THROUGHPUT_THREADS, iterations)?;
            Ok(OperationResult {
                operation: *operation,
                latency_cycles: pipeline::latency_cycles(&latency, ops)
                    .with_context(|| format!("{latency_entry} returned unusable stamps"))?,
                ops_per_clock_per_sm: pipeline::ops_per_clock(
                    &throughput,
                    THROUGHPUT_THREADS,
                    THROUGHPUT_CHAINS,
                    ops,
                )
                .with_context(|| format!("{throughput_entry} returned unusable stamps"))?,
            })
        })
        .collect()
}

/// Fig. 6: the dependent-chain kernel of `operation` with 1..=max_warps warps on one SM.
pub fn warp_sweep(
    gpu: &mut Gpu,
    operation: &Operation,
    iterations: u32,
    max_warps: u32,
) -> Result<Vec<WarpPoint>> {
    let entry = format!("lat_{}", operation.name);
    let ops = u64::from(iterations) * u64::from(operation.unroll);
    (1..=max_warps)
        .map(|warps| {
            let threads = warps * 32;
            let stamps = warm_then_time(gpu, &entry, threads, iterations)?;
            Ok(WarpPoint {
                warps,
                ops_per_clock: pipeline::ops_per_clock(&stamps, threads, 1, ops)
                    .context("unusable stamps")?,
                latency_cycles: pipeline::latency_cycles(&stamps, ops)
                    .context("unusable stamps")?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation the pipeline suite lists has both of its kernels in the PTX, and the
    /// unroll the host divides by is the one the kernel was generated with.
    #[test]
    fn pipeline_table_matches_the_kernels() {
        let ptx = crate::kernels::module("pipeline").unwrap().ptx;
        for op in OPERATIONS {
            for prefix in ["lat", "thr"] {
                assert!(
                    ptx.contains(&format!(".entry {prefix}_{}(", op.name)),
                    "{prefix}_{}",
                    op.name
                );
            }
        }
        use crate::suites::pipeline::chains::{Chains, INSTRUCTIONS};
        for instruction in INSTRUCTIONS {
            for chains in [Chains::Latency, Chains::Throughput] {
                for entry in instruction.entries(chains) {
                    assert!(ptx.contains(&format!(".entry {entry}(")), "{entry}");
                }
            }
        }
        let source = include_str!("../../../cuda/pipeline.cu");
        for op in OPERATIONS {
            let line = format!("PIPELINE_KERNELS({}, {},", op.name, op.unroll);
            assert!(source.contains(&line), "{line}");
        }
    }
}

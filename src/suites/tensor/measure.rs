//! Tensor cores (cuda/tensor.cu), after Luo et al. 2024 ("Benchmarking and Dissecting the Nvidia
//! Hopper GPU Architecture", the mma and wgmma sections). For every input type, two kernels per
//! instruction family: a latency kernel (one warp for `mma.sync`, one warpgroup for
//! `wgmma.mma_async`, each MMA needing the previous one's accumulator; every wgmma is
//! committed and waited for, so its cycles are the whole round trip) and a throughput kernel
//! (one block per SM: 16 warps with four independent accumulators each, or two warpgroups each
//! issuing eight wgmmas per commit group). wgmma's operands come from shared memory through
//! matrix descriptors; N is 256 by default, the largest shape, as throughput wants, and 128 or
//! 64 where a run asks (`--wgmma-n`, cuda/tensor_shapes.cu).

use anyhow::{Context, Result};

use super::analysis::{self as tensor, TensorRate};
use crate::analysis::stats::Summary;
use crate::gpu::{Gpu, launch};

/// The constants of cuda/tensor.cu the host counts MMAs with.
pub const MMA_UNROLL: u64 = 16;
pub const MMA_WARPS: u32 = 16;
pub const MMA_CHAINS: u32 = 4;
pub const WGMMA_UNROLL: u64 = 8;
pub const WGMMA_GROUPS: u32 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Family {
    #[serde(rename = "mma.sync")]
    MmaSync,
    #[serde(rename = "wgmma")]
    Wgmma,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::MmaSync => "mma.sync",
            Family::Wgmma => "wgmma",
        }
    }

    /// MMAs per loop trip of one warp or warpgroup.
    pub fn unroll(self) -> u64 {
        match self {
            Family::MmaSync => MMA_UNROLL,
            Family::Wgmma => WGMMA_UNROLL,
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Family::MmaSync => "mma",
            Family::Wgmma => "wgmma",
        }
    }

    /// Threads of the latency kernel's one block, and of each throughput block.
    fn threads(self) -> (u32, u32) {
        match self {
            Family::MmaSync => (32, MMA_WARPS * 32),
            Family::Wgmma => (128, WGMMA_GROUPS * 128),
        }
    }

    /// MMAs one warp (or warpgroup) issues per loop trip, and how many of them a throughput
    /// block holds.
    fn per_trip(self) -> (u64, u64) {
        let per_block = match self {
            Family::MmaSync => MMA_WARPS,
            Family::Wgmma => WGMMA_GROUPS,
        };
        (self.unroll(), u64::from(per_block))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernel {
    pub family: Family,
    /// The input type as cuda/tensor.cu names it (f16, bf16, tf32, e4m3, e5m2, s8).
    pub input: &'static str,
    /// Input → accumulator, for tables.
    pub types: &'static str,
    pub shape: &'static str,
    /// The N of the shape (the width of a wgmma's B and accumulator).
    pub n: u64,
    /// 2·M·N·K.
    pub flop_per_mma: u64,
}

const fn kernel(
    family: Family,
    input: &'static str,
    types: &'static str,
    shape: &'static str,
    (m, n, k): (u64, u64, u64),
) -> Kernel {
    Kernel {
        family,
        input,
        types,
        shape,
        n,
        flop_per_mma: 2 * m * n * k,
    }
}

/// The wgmma widths a run may ask for; N = 256 is the default (the most work per instruction,
/// what throughput wants), the others are cuda/tensor_shapes.cu's.
pub const WGMMA_WIDTHS: [u64; 3] = [64, 128, 256];

/// The wgmma kernels at N = 128 and 64, of every input type (cuda/tensor_shapes.cu).
pub const SHAPE_KERNELS: [Kernel; 12] = [
    kernel(
        Family::Wgmma,
        "f16",
        "FP16→FP32",
        "m64n128k16",
        (64, 128, 16),
    ),
    kernel(
        Family::Wgmma,
        "bf16",
        "BF16→FP32",
        "m64n128k16",
        (64, 128, 16),
    ),
    kernel(
        Family::Wgmma,
        "tf32",
        "TF32→FP32",
        "m64n128k8",
        (64, 128, 8),
    ),
    kernel(
        Family::Wgmma,
        "e4m3",
        "FP8 e4m3→FP32",
        "m64n128k32",
        (64, 128, 32),
    ),
    kernel(
        Family::Wgmma,
        "e5m2",
        "FP8 e5m2→FP32",
        "m64n128k32",
        (64, 128, 32),
    ),
    kernel(
        Family::Wgmma,
        "s8",
        "INT8→INT32",
        "m64n128k32",
        (64, 128, 32),
    ),
    kernel(Family::Wgmma, "f16", "FP16→FP32", "m64n64k16", (64, 64, 16)),
    kernel(
        Family::Wgmma,
        "bf16",
        "BF16→FP32",
        "m64n64k16",
        (64, 64, 16),
    ),
    kernel(Family::Wgmma, "tf32", "TF32→FP32", "m64n64k8", (64, 64, 8)),
    kernel(
        Family::Wgmma,
        "e4m3",
        "FP8 e4m3→FP32",
        "m64n64k32",
        (64, 64, 32),
    ),
    kernel(
        Family::Wgmma,
        "e5m2",
        "FP8 e5m2→FP32",
        "m64n64k32",
        (64, 64, 32),
    ),
    kernel(Family::Wgmma, "s8", "INT8→INT32", "m64n64k32", (64, 64, 32)),
];

/// Every kernel a run with wgmma widths `widths` measures: mma.sync, then wgmma at each width
/// asked for, widest first.
pub fn selected(widths: &[u64]) -> Vec<Kernel> {
    let mut chosen: Vec<Kernel> = KERNELS
        .iter()
        .filter(|k| k.family == Family::MmaSync || widths.contains(&k.n))
        .copied()
        .collect();
    for width in [128, 64] {
        if widths.contains(&width) {
            chosen.extend(SHAPE_KERNELS.iter().filter(|k| k.n == width));
        }
    }
    chosen
}

pub const KERNELS: [Kernel; 11] = [
    kernel(Family::MmaSync, "f16", "FP16→FP32", "m16n8k16", (16, 8, 16)),
    kernel(
        Family::MmaSync,
        "bf16",
        "BF16→FP32",
        "m16n8k16",
        (16, 8, 16),
    ),
    kernel(Family::MmaSync, "tf32", "TF32→FP32", "m16n8k8", (16, 8, 8)),
    kernel(
        Family::MmaSync,
        "e4m3",
        "FP8 e4m3→FP32",
        "m16n8k32",
        (16, 8, 32),
    ),
    kernel(Family::MmaSync, "s8", "INT8→INT32", "m16n8k32", (16, 8, 32)),
    kernel(
        Family::Wgmma,
        "f16",
        "FP16→FP32",
        "m64n256k16",
        (64, 256, 16),
    ),
    kernel(
        Family::Wgmma,
        "bf16",
        "BF16→FP32",
        "m64n256k16",
        (64, 256, 16),
    ),
    kernel(
        Family::Wgmma,
        "tf32",
        "TF32→FP32",
        "m64n256k8",
        (64, 256, 8),
    ),
    kernel(
        Family::Wgmma,
        "e4m3",
        "FP8 e4m3→FP32",
        "m64n256k32",
        (64, 256, 32),
    ),
    kernel(
        Family::Wgmma,
        "e5m2",
        "FP8 e5m2→FP32",
        "m64n256k32",
        (64, 256, 32),
    ),
    kernel(
        Family::Wgmma,
        "s8",
        "INT8→INT32",
        "m64n256k32",
        (64, 256, 32),
    ),
];

impl Kernel {
    /// The module holding the kernel: the smaller wgmma shapes have their own.
    pub fn module(&self) -> &'static str {
        if self.family == Family::Wgmma && self.n != 256 {
            "tensor_shapes"
        } else {
            "tensor"
        }
    }

    fn stem(&self) -> String {
        if self.module() == "tensor" {
            format!("{}_{}", self.family.prefix(), self.input)
        } else {
            format!("{}_{}_n{}", self.family.prefix(), self.input, self.n)
        }
    }

    pub fn latency_entry(&self) -> String {
        format!("{}_lat", self.stem())
    }

    pub fn throughput_entry(&self) -> String {
        format!("{}_thr", self.stem())
    }

    /// "wgmma m64n256k16 FP16→FP32".
    pub fn describe(&self) -> String {
        format!("{} {} {}", self.family.name(), self.shape, self.types)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct KernelResult {
    pub kernel: Kernel,
    pub latency_cycles: f64,
    pub rate: TensorRate,
}

/// Measures `kernels`: latency on one block, throughput on one block per SM, each after one
/// untimed launch (so the code is in the instruction cache and the clocks have ramped).
pub fn measure(
    gpu: &mut Gpu,
    kernels: &[Kernel],
    iterations: u32,
    sms: u32,
    mhz: f64,
    compute_capability: &str,
) -> Result<Vec<KernelResult>> {
    kernels
        .iter()
        .map(|kernel| {
            let (latency_threads, block_threads) = kernel.family.threads();
            let (per_trip, per_block) = kernel.family.per_trip();
            let mmas = u64::from(iterations) * per_trip;
            let module = kernel.module();
            let entry = kernel.latency_entry();
            launch::stamped::stamped_blocks(gpu, module, &entry, 1, latency_threads, iterations, 2)?;
            let stamps =
                launch::stamped::stamped_blocks(gpu, module, &entry, 1, latency_threads, iterations, 2)?;
            let latency_cycles = tensor::cycles_per_mma(&stamps, mmas)
                .with_context(|| format!("{entry} returned unusable stamps"))?;
            let entry = kernel.throughput_entry();
            launch::stamped::stamped_blocks(gpu, module, &entry, sms, block_threads, iterations, 2)?;
            let stamps =
                launch::stamped::stamped_blocks(gpu, module, &entry, sms, block_threads, iterations, 2)?;
            let flop_per_block = (mmas * per_block * kernel.flop_per_mma) as f64;
            let per_sm: Summary = tensor::flop_per_clock(&stamps, flop_per_block)
                .with_context(|| format!("{entry} returned unusable stamps"))?;
            let peak = tensor::dense_peak_flop_per_clock_per_sm(compute_capability, kernel.input);
            Ok(KernelResult {
                kernel: *kernel,
                latency_cycles,
                rate: tensor::rate(per_sm, sms, mhz, peak),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_is_in_the_embedded_ptx_with_the_flop_of_its_shape() {
        for kernel in KERNELS.iter().chain(&SHAPE_KERNELS) {
            let ptx = crate::kernels::module(kernel.module()).unwrap().ptx;
            for entry in [kernel.latency_entry(), kernel.throughput_entry()] {
                assert!(ptx.contains(&format!(".entry {entry}(")), "{entry}");
            }
            assert!(
                kernel.shape.contains(&format!("n{}k", kernel.n)),
                "{}",
                kernel.shape
            );
        }
        // The default is mma.sync and the widest wgmma; every width adds its six input types.
        assert_eq!(selected(&[256]).len(), KERNELS.len());
        assert_eq!(selected(&[64, 128, 256]).len(), KERNELS.len() + 12);
        assert_eq!(selected(&[64]).len(), 5 + 6);
        assert_eq!(SHAPE_KERNELS[6].throughput_entry(), "wgmma_f16_n64_thr");
        let wgmma_f16 = KERNELS
            .iter()
            .find(|k| k.family == Family::Wgmma && k.input == "f16")
            .unwrap();
        assert_eq!(wgmma_f16.flop_per_mma, 524_288);
        assert_eq!(wgmma_f16.describe(), "wgmma m64n256k16 FP16→FP32");
        // The unrolls the host counts with are the kernels'.
        let source = include_str!("../../../cuda/tensor.cuh");
        for (name, value) in [
            ("MMA_UNROLL", MMA_UNROLL),
            ("MMA_WARPS", u64::from(MMA_WARPS)),
            ("MMA_CHAINS", u64::from(MMA_CHAINS)),
            ("WGMMA_UNROLL", WGMMA_UNROLL),
            ("WGMMA_GROUPS", u64::from(WGMMA_GROUPS)),
        ] {
            assert!(
                source.contains(&format!("#define {name} {value}\n")),
                "{name}"
            );
        }
    }
}

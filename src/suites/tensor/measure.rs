//! Tensor cores (cuda/tensor.cu), after Luo et al. 2024 ("Benchmarking and Dissecting the Nvidia
//! Hopper GPU Architecture", the mma and wgmma sections). For every input type, two kernels per
//! instruction family: a latency kernel (one warp for `mma.sync`, one warpgroup for
//! `wgmma.mma_async`, each MMA needing the previous one's accumulator; every wgmma is
//! committed and waited for, so its cycles are the whole round trip) and a throughput kernel
//! (one block per SM: 16 warps with four independent accumulators each, or two warpgroups each
//! issuing eight wgmmas per commit group). wgmma's operands come from shared memory through
//! matrix descriptors; N is 256 by default, the largest shape, as throughput wants, and 128 or
//! 64 where a run asks (`--wgmma-n`, cuda/tensor_shapes.cu). The forms of issue #74 keep the
//! same two kernels per form and the same counting (cuda/tensor_variants.cu): FP16 wgmma at
//! N = 32, 16, 8; with A from registers (`--a-from-registers`, the RS form); and 2:4-sparse
//! `mma.sp` / `wgmma.sp` (`--sparse`), counted at the dense shape's FLOP against the sparse
//! peak. The sustained run (`--sustain`) is `super::sustain`.

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
    /// `mma.sp`: mma.sync with a 2:4-sparse A (cuda/tensor_variants.cu).
    #[serde(rename = "mma.sp")]
    MmaSp,
    /// `wgmma.mma_async.sp`: wgmma with a 2:4-sparse A (cuda/tensor_variants.cu).
    #[serde(rename = "wgmma.sp")]
    WgmmaSp,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::MmaSync => "mma.sync",
            Family::Wgmma => "wgmma",
            Family::MmaSp => "mma.sp",
            Family::WgmmaSp => "wgmma.sp",
        }
    }

    /// Whether the family is warpgroup-level (wgmma) rather than warp-level (mma).
    fn warpgroup(self) -> bool {
        matches!(self, Family::Wgmma | Family::WgmmaSp)
    }

    /// Whether A is 2:4-sparse: the rate is then against the sparse peak, twice the dense.
    pub const fn sparse(self) -> bool {
        matches!(self, Family::MmaSp | Family::WgmmaSp)
    }

    /// MMAs per loop trip of one warp or warpgroup.
    pub fn unroll(self) -> u64 {
        if self.warpgroup() {
            WGMMA_UNROLL
        } else {
            MMA_UNROLL
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Family::MmaSync => "mma",
            Family::Wgmma => "wgmma",
            Family::MmaSp => "mma_sp",
            Family::WgmmaSp => "wgmma_sp",
        }
    }

    /// Threads of the latency kernel's one block, and of each throughput block.
    fn threads(self) -> (u32, u32) {
        if self.warpgroup() {
            (128, WGMMA_GROUPS * 128)
        } else {
            (32, MMA_WARPS * 32)
        }
    }

    /// MMAs one warp (or warpgroup) issues per loop trip, and how many of them a throughput
    /// block holds.
    fn per_trip(self) -> (u64, u64) {
        let per_block = if self.warpgroup() {
            WGMMA_GROUPS
        } else {
            MMA_WARPS
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
    /// The shape's M, N and K (K the logical depth for a sparse shape). N is the width of a
    /// wgmma's B and accumulator.
    pub m: u64,
    pub n: u64,
    pub k: u64,
    /// A from registers (wgmma's RS form) rather than from shared memory (SS).
    pub a_registers: bool,
}

/// An input type: its name in cuda/tensor.cu, input → accumulator, and the K of its dense
/// shapes (the same for mma.sync and wgmma).
type Input = (&'static str, &'static str, u64);

/// Every input type, in the tables' order.
const INPUTS: [Input; 6] = [
    ("f16", "FP16→FP32", 16),
    ("bf16", "BF16→FP32", 16),
    ("tf32", "TF32→FP32", 8),
    ("e4m3", "FP8 e4m3→FP32", 32),
    ("e5m2", "FP8 e5m2→FP32", 32),
    ("s8", "INT8→INT32", 32),
];

const F16: Input = INPUTS[0];

const fn kernel(family: Family, (input, types, k): Input, m: u64, n: u64) -> Kernel {
    // 2:4 sparsity doubles the logical depth of the dense shape.
    let k = if family.sparse() { 2 * k } else { k };
    Kernel {
        family,
        input,
        types,
        m,
        n,
        k,
        a_registers: false,
    }
}

/// [`kernel`] with A from registers.
const fn registers(kernel: Kernel) -> Kernel {
    Kernel {
        a_registers: true,
        ..kernel
    }
}

/// The wgmma widths a run may ask for; N = 256 is the default (the most work per instruction,
/// what throughput wants), 128 and 64 are cuda/tensor_shapes.cu's (every input type), 32, 16
/// and 8 cuda/tensor_variants.cu's (FP16 only, as Luo et al. compare them).
pub const WGMMA_WIDTHS: [u64; 6] = [8, 16, 32, 64, 128, 256];

/// What a run measures besides mma.sync and wgmma with A in shared memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extras {
    /// wgmma with A from registers (FP16) at every width asked for.
    pub a_registers: bool,
    /// mma.sp and wgmma.sp (FP16; wgmma.sp also from registers where `a_registers`).
    pub sparse: bool,
}

/// Every kernel a run with wgmma widths `widths` measures, in this order: mma.sync m16n8 (every
/// input type but e5m2; cuda/tensor.cu); wgmma m64 of every input type at N = 256 (cuda/tensor.cu),
/// 128 and 64 (cuda/tensor_shapes.cu) and of FP16 at 32, 16 and 8, widest first; then what
/// `extras` adds (cuda/tensor_variants.cu): FP16 wgmma with A from registers at each width, and
/// the 2:4-sparse mma.sp m16n8 and wgmma.sp m64n256, SS then RS.
pub fn selected(widths: &[u64], extras: Extras) -> Vec<Kernel> {
    let asked = || WGMMA_WIDTHS.into_iter().rev().filter(|n| widths.contains(n));
    let mut chosen: Vec<Kernel> = INPUTS
        .into_iter()
        .filter(|input| input.0 != "e5m2")
        .map(|input| kernel(Family::MmaSync, input, 16, 8))
        .collect();
    for n in asked() {
        let inputs = if n >= 64 { &INPUTS[..] } else { &INPUTS[..1] };
        chosen.extend(inputs.iter().map(|&input| kernel(Family::Wgmma, input, 64, n)));
    }
    if extras.a_registers {
        chosen.extend(asked().map(|n| registers(kernel(Family::Wgmma, F16, 64, n))));
    }
    if extras.sparse {
        let wgmma_sp = kernel(Family::WgmmaSp, F16, 64, 256);
        chosen.extend([kernel(Family::MmaSp, F16, 16, 8), wgmma_sp]);
        if extras.a_registers {
            chosen.push(registers(wgmma_sp));
        }
    }
    chosen
}

impl Kernel {
    /// The module holding the kernel: the smaller wgmma shapes have their own, and the forms
    /// beyond them (narrow, A from registers, sparse) theirs.
    pub fn module(&self) -> &'static str {
        if self.family.sparse() || self.a_registers || (self.family.warpgroup() && self.n < 64) {
            "tensor_variants"
        } else if self.family == Family::Wgmma && self.n != 256 {
            "tensor_shapes"
        } else {
            "tensor"
        }
    }

    fn stem(&self) -> String {
        let rs = if self.a_registers { "_rs" } else { "" };
        if self.module() == "tensor" || !self.family.warpgroup() {
            format!("{}_{}", self.family.prefix(), self.input)
        } else {
            format!("{}_{}{rs}_n{}", self.family.prefix(), self.input, self.n)
        }
    }

    /// The family as the tables name it: the instruction, and where A comes from when it is
    /// not shared memory ("wgmma (A in registers)").
    pub fn family_label(&self) -> String {
        if self.a_registers {
            format!("{} (A in registers)", self.family.name())
        } else {
            self.family.name().to_string()
        }
    }

    pub fn latency_entry(&self) -> String {
        format!("{}_lat", self.stem())
    }

    pub fn throughput_entry(&self) -> String {
        format!("{}_thr", self.stem())
    }

    /// 2·M·N·K (for a sparse shape, as the sparse peak counts it).
    pub fn flop_per_mma(&self) -> u64 {
        2 * self.m * self.n * self.k
    }

    /// "m64n256k16".
    pub fn shape(&self) -> String {
        format!("m{}n{}k{}", self.m, self.n, self.k)
    }

    /// "wgmma m64n256k16 FP16→FP32".
    pub fn describe(&self) -> String {
        format!("{} {} {}", self.family_label(), self.shape(), self.types)
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
            // The second of two launches, the first untimed.
            let mut stamped = |entry: &str, blocks, threads| {
                let mut launch = || {
                    let module = kernel.module();
                    launch::stamped::stamped_blocks(gpu, module, entry, blocks, threads, iterations, 2)
                };
                launch()?;
                launch()
            };
            let entry = kernel.latency_entry();
            let stamps = stamped(&entry, 1, latency_threads)?;
            let latency_cycles = tensor::cycles_per_mma(&stamps, mmas)
                .with_context(|| format!("{entry} returned unusable stamps"))?;
            let entry = kernel.throughput_entry();
            let stamps = stamped(&entry, sms, block_threads)?;
            let flop_per_block = (mmas * per_block * kernel.flop_per_mma()) as f64;
            let per_sm: Summary = tensor::flop_per_clock(&stamps, flop_per_block)
                .with_context(|| format!("{entry} returned unusable stamps"))?;
            let dense = tensor::dense_peak_flop_per_clock_per_sm(compute_capability, kernel.input);
            // 2:4 sparsity doubles the peak, counted at the dense shape's FLOP.
            let peak = dense.map(|p| if kernel.family.sparse() { 2.0 * p } else { p });
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
        let both = Extras {
            a_registers: true,
            sparse: true,
        };
        let every = selected(&WGMMA_WIDTHS, both);
        assert_eq!(every.len(), 5 + 3 * 6 + 3 + 6 + 3);
        for kernel in &every {
            let ptx = crate::kernels::module(kernel.module()).unwrap().ptx;
            for entry in [kernel.latency_entry(), kernel.throughput_entry()] {
                assert!(ptx.contains(&format!(".entry {entry}(")), "{entry}");
            }
        }
        let described: Vec<String> = every.iter().map(Kernel::describe).collect();
        for shape in [
            "mma.sync m16n8k16 BF16→FP32",
            "mma.sync m16n8k8 TF32→FP32",
            "mma.sync m16n8k32 INT8→INT32",
            "wgmma m64n256k16 FP16→FP32",
            "wgmma m64n128k32 FP8 e5m2→FP32",
            "wgmma m64n64k8 TF32→FP32",
            "wgmma m64n8k16 FP16→FP32",
            "wgmma (A in registers) m64n256k16 FP16→FP32",
            "mma.sp m16n8k32 FP16→FP32",
            "wgmma.sp (A in registers) m64n256k32 FP16→FP32",
        ] {
            assert!(described.iter().any(|d| d == shape), "{shape}");
        }
        // The default is mma.sync and the widest wgmma; every width adds its six input types.
        let none = Extras::default();
        let base = selected(&[256], none);
        assert_eq!(base.len(), 5 + 6);
        assert_eq!(selected(&[64, 128, 256], none).len(), 5 + 18);
        assert_eq!(selected(&[64], none).len(), 5 + 6);
        assert_eq!(selected(&[64], none)[5].throughput_entry(), "wgmma_f16_n64_thr");
        // Below 64 FP16 only; A from registers at each width asked; the sparse forms, their
        // register form only where registers are asked for.
        assert_eq!(selected(&[8, 16, 32], none).len(), 5 + 3);
        assert_eq!(selected(&[8, 256], both).len(), 5 + 6 + 1 + 2 + 3);
        let sparse = Extras {
            sparse: true,
            ..none
        };
        let with_sparse = selected(&[256], sparse);
        assert_eq!(with_sparse.len(), 5 + 6 + 2);
        assert_eq!(selected(&[8], none)[5].latency_entry(), "wgmma_f16_n8_lat");
        let registers = selected(&[256], both);
        assert_eq!(registers[11].throughput_entry(), "wgmma_f16_rs_n256_thr");
        assert_eq!(registers[12].throughput_entry(), "mma_sp_f16_thr");
        assert_eq!(registers[13].latency_entry(), "wgmma_sp_f16_n256_lat");
        assert_eq!(registers[14].latency_entry(), "wgmma_sp_f16_rs_n256_lat");
        assert_eq!(registers[13].flop_per_mma(), 2 * 524_288);
        let wgmma_f16 = base
            .iter()
            .find(|k| k.family == Family::Wgmma && k.input == "f16")
            .unwrap();
        assert_eq!(wgmma_f16.flop_per_mma(), 524_288);
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

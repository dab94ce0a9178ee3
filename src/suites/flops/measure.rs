//! Peak arithmetic rate of the CUDA cores (cuda/flops.cu, cuda/flops_bf16.cu): the compute
//! ceilings of the roofline beside the tensor suite's (issue #32, part 3). The method is that
//! of LBNL's Empirical Roofline Toolkit: every SM busy with many independent FMAs. One block
//! of 1024 threads per SM; each thread keeps 16 independent accumulators and applies 16 FMAs
//! to each per loop trip (256 FMA instructions per trip and thread, which hide the FMA latency
//! with every warp and leave the loop's counter and branch at about 1 % of what is issued).
//! Sixteen, not eight: on an H100 eight accumulators held DFMA at 118 of 128 FLOP per clock
//! per SM however the loop was unrolled or the block sized, sixteen reach 128.0 (a probe of
//! 2026-11-24, docs/results-h100.md). Each block stamps its loop in clock64 and %globaltimer
//! after a barrier on both sides: FLOP per clock of each SM (median and range), and the chip's
//! FLOP per second over the wall time of the whole launch, at whatever clock it held under
//! that load. The same kernel on one block alone gives one SM's rate with the rest of the chip
//! idle, which tells a limit of the chip's (power, clock) from one of the SM's.

use anyhow::{Context, Result};

use super::analysis::{ChipRate, chip_rate};
use crate::analysis::peaks::cuda_core_peak_flop_per_clock_per_sm;
use crate::gpu::{Gpu, launch};

/// The constants of cuda/flops.cu (and cuda/flops_bf16.cu) the host counts FMAs with.
pub const THREADS: u32 = 1024;
pub const CHAINS: u64 = 16;
pub const UNROLL: u64 = 16;

/// FMA instructions one thread issues per loop trip.
pub const FMAS_PER_TRIP: u64 = CHAINS * UNROLL;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernel {
    /// "FP32 FFMA": the precision and the SASS instruction, for tables.
    pub name: &'static str,
    pub module: &'static str,
    pub entry: &'static str,
    /// The instruction the timed loop must consist of.
    pub sass: &'static str,
    /// FLOP of one thread's instruction: 2 for an FMA, 4 for a paired-half FMA.
    pub flop_per_lane: u64,
    /// The lowest compute capability (major) whose PTX target the module needs.
    pub min_major: u32,
}

pub const KERNELS: [Kernel; 4] = [
    Kernel {
        name: "FP32 FFMA",
        module: "flops",
        entry: "flops_ffma",
        sass: "FFMA",
        flop_per_lane: 2,
        min_major: 7,
    },
    Kernel {
        name: "FP64 DFMA",
        module: "flops",
        entry: "flops_dfma",
        sass: "DFMA",
        flop_per_lane: 2,
        min_major: 7,
    },
    Kernel {
        name: "FP16x2 HFMA2",
        module: "flops",
        entry: "flops_hfma2",
        sass: "HFMA2",
        flop_per_lane: 4,
        min_major: 7,
    },
    Kernel {
        name: "BF16x2 HFMA2",
        module: "flops_bf16",
        entry: "flops_bf16x2",
        sass: "HFMA2.BF16_V2",
        flop_per_lane: 4,
        min_major: 8,
    },
];

/// The kernels a GPU of compute capability `major` can load.
pub fn runnable(major: u32) -> Vec<Kernel> {
    KERNELS
        .iter()
        .copied()
        .filter(|k| major >= k.min_major)
        .collect()
}

/// Stamps each block of the kernels writes (cuda/flops.cuh).
const STAMPS_PER_BLOCK: usize = 4;

#[derive(Debug, Clone, PartialEq)]
pub struct KernelResult {
    pub kernel: Kernel,
    /// One block per SM, all at once.
    pub chip: ChipRate,
    /// One block alone: one SM's FLOP per clock with the others idle.
    pub one_sm_flop_per_clock: f64,
    /// The whitepaper's FLOP per clock per SM, where known.
    pub peak_flop_per_clock_per_sm: Option<f64>,
}

/// Measures `kernels` on one block per SM and on one block alone, each after one untimed
/// launch (the code in the instruction cache, the clocks ramped).
pub fn measure(
    gpu: &mut Gpu,
    kernels: &[Kernel],
    iterations: u32,
    sms: u32,
    compute_capability: &str,
) -> Result<Vec<KernelResult>> {
    let flop_per_block = |kernel: &Kernel| {
        (u64::from(iterations) * FMAS_PER_TRIP * u64::from(THREADS) * kernel.flop_per_lane) as f64
    };
    kernels
        .iter()
        .map(|kernel| {
            let (module, entry) = (kernel.module, kernel.entry);
            let mut timed = |blocks: u32| -> Result<ChipRate> {
                let launch = |gpu: &mut Gpu| {
                    launch::stamped::stamped_blocks(
                        gpu,
                        module,
                        entry,
                        blocks,
                        THREADS,
                        iterations,
                        STAMPS_PER_BLOCK,
                    )
                };
                launch(gpu)?;
                let stamps = launch(gpu)?;
                chip_rate(&stamps, flop_per_block(kernel))
                    .with_context(|| format!("{entry} returned unusable stamps"))
            };
            let chip = timed(sms)?;
            let alone = timed(1)?;
            Ok(KernelResult {
                kernel: *kernel,
                chip,
                one_sm_flop_per_clock: alone.flop_per_clock_per_sm.median,
                peak_flop_per_clock_per_sm: cuda_core_peak_flop_per_clock_per_sm(
                    compute_capability,
                    kernel.sass,
                ),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_is_in_its_module_and_the_loop_constants_are_the_kernels() {
        for kernel in KERNELS {
            let ptx = crate::kernels::module(kernel.module).unwrap().ptx;
            assert!(
                ptx.contains(&format!(".entry {}(", kernel.entry)),
                "{}",
                kernel.entry
            );
        }
        {
            let source = include_str!("../../../cuda/flops.cuh");
            for (name, value) in [
                ("FLOPS_THREADS", u64::from(THREADS)),
                ("FLOPS_CHAINS", CHAINS),
                ("FLOPS_UNROLL", UNROLL),
            ] {
                assert!(
                    source.contains(&format!("#define {name} {value}\n")),
                    "{name}"
                );
            }
        }
        assert_eq!(runnable(7).len(), 3);
        assert_eq!(runnable(9).len(), 4);
    }
}

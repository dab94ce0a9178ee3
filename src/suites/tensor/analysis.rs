//! Tensor-core arithmetic from clock64 stamps (the suite's `measure`): cycles per MMA of one
//! dependent chain, FLOP per clock of one SM when every block's warps keep independent
//! accumulators busy, and what that is in TFLOPS at the measured clock and as a share of the
//! dense peak the device's architecture states.

use serde::{Deserialize, Serialize};

use crate::analysis::stats::{Summary, block_spans, per_clock_of_blocks};

/// Cycles per MMA of a chain: the block's span over the MMAs each warp issued in order.
pub fn cycles_per_mma(stamps: &[i64], mmas: u64) -> Option<f64> {
    let span = block_spans(stamps).into_iter().next()?;
    (mmas > 0).then(|| span / mmas as f64)
}

/// FLOP per clock of each block that ran on its own SM: `flop_per_block` over its span. The
/// median over blocks, with the range, describes the SMs; a block that shared an SM with
/// another would read half and shows as the minimum.
pub fn flop_per_clock(stamps: &[i64], flop_per_block: f64) -> Option<Summary> {
    Summary::of(&per_clock_of_blocks(stamps, flop_per_block)?)
}

pub use crate::analysis::peaks::dense_peak_flop_per_clock_per_sm;

/// One kernel's figures.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TensorRate {
    pub flop_per_clock_per_sm: Summary,
    pub tflops: f64,
    pub peak_flop_per_clock_per_sm: Option<f64>,
    pub fraction_of_peak: Option<f64>,
}

/// `rate` (per SM per clock) on `sms` SMs at `mhz`, set against `peak` where one is known.
pub fn rate(rate: Summary, sms: u32, mhz: f64, peak: Option<f64>) -> TensorRate {
    TensorRate {
        tflops: rate.median * f64::from(sms) * mhz * 1e6 / 1e12,
        fraction_of_peak: peak.map(|p| rate.median / p),
        peak_flop_per_clock_per_sm: peak,
        flop_per_clock_per_sm: rate,
    }
}

/// What one tensor kernel's timed loop executes, read from `cuobjdump -sass`: the MMA opcode,
/// how many MMAs the code holds and how many warpgroup waits (`WARPGROUP.DEPBAR`) sit between
/// them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct MmaSass {
    pub kernel: String,
    /// The MMA instruction with its shape and types (`HGMMA.64x256x16.F32`, `HMMA.16816.F32`).
    pub instruction: Option<String>,
    pub mmas: usize,
    pub waits: usize,
}

impl MmaSass {
    /// Whether the code is the kernel as written: at least the `unroll` MMAs of one loop trip
    /// (fewer means the instruction was emulated and its loop-invariant product hoisted, as
    /// ptxas does with FP8 mma.sync on sm_90), and waits no more often than the kernel asks:
    /// a latency kernel after every wgmma, a throughput kernel once per commit group of
    /// `unroll`; `mma.sync` never. A wait the compiler adds inside a group (ptxas does when it
    /// cannot prove the accumulators untouched) would serialise the wgmmas.
    pub fn as_written(&self, latency: bool, unroll: usize) -> bool {
        if self.mmas < unroll.max(1) {
            return false;
        }
        let wgmma = self
            .instruction
            .as_deref()
            .is_some_and(|i| i.contains("GMMA"));
        match (wgmma, latency) {
            (false, _) => self.waits == 0,
            (true, true) => self.waits == self.mmas,
            (true, false) => self.waits * unroll <= self.mmas + unroll,
        }
    }
}

/// The MMA opcodes of the tensor cores: HMMA (16-bit and TF32 mma.sync), IMMA (integer),
/// QMMA (FP8 mma.sync), and the warpgroup forms HGMMA, IGMMA, QGMMA.
fn is_mma(opcode: &str) -> bool {
    let family = opcode.split('.').next().unwrap_or("");
    ["HMMA", "IMMA", "QMMA", "HGMMA", "IGMMA", "QGMMA"].contains(&family)
}

/// Per function of `cuobjdump -sass` text, what [`MmaSass`] says.
pub fn mma_instructions(sass: &str) -> Vec<MmaSass> {
    let mut kernels: Vec<MmaSass> = Vec::new();
    for line in sass.lines() {
        if let Some(name) = line.trim().strip_prefix("Function : ") {
            kernels.push(MmaSass {
                kernel: name.trim().to_string(),
                instruction: None,
                mmas: 0,
                waits: 0,
            });
            continue;
        }
        let Some(kernel) = kernels.last_mut() else {
            continue;
        };
        // "/*07f0*/  HGMMA.64x256x16.F32 R24, gdesc[UR8], R24, gsb0 ;  /* 0x… */"
        let Some(code) = line
            .trim()
            .strip_prefix("/*")
            .and_then(|l| l.split_once("*/"))
        else {
            continue;
        };
        let mut words = code.1.split_whitespace();
        let mut opcode = words.next().unwrap_or("");
        if opcode.starts_with('@') {
            opcode = words.next().unwrap_or("");
        }
        if is_mma(opcode) {
            kernel.mmas += 1;
            kernel.instruction.get_or_insert_with(|| opcode.to_string());
        } else if opcode.starts_with("WARPGROUP.DEPBAR") {
            kernel.waits += 1;
        }
    }
    kernels
}

#[cfg(test)]
mod tests {
    use super::*;

    const SASS: &str = "\t\tFunction : wgmma_f16_thr
        /*07d0*/                   WARPGROUP.ARRIVE ;                /* 0x00000000000079c5 */
        /*07f0*/                   HGMMA.64x256x16.F32 R24, gdesc[UR8], R24 ; /* 0x03e0 */
        /*0820*/                   HGMMA.64x256x16.F32 R24, gdesc[UR8], R24, gsb0 ; /* 0x03e0 */
        /*0830*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;   /* 0x00008000000079c5 */
\t\tFunction : wgmma_f16_lat
        /*07f0*/                   HGMMA.64x256x16.F32 R24, gdesc[UR8], R24, gsb0 ; /* 0x03e0 */
        /*0810*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;   /* 0x00008000000079c5 */
        /*0840*/                   HGMMA.64x256x16.F32 R24, gdesc[UR8], R24, gsb0 ; /* 0x03e0 */
        /*0850*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;   /* 0x00008000000079c5 */
\t\tFunction : mma_f16_lat
        /*0320*/                   HMMA.16816.F32 R4, R8, R2, R4 ;   /* 0x000000020804723c */
        /*0330*/              @!P0 BRA 0x320 ;                       /* 0x0 */
";

    #[test]
    fn the_sass_names_each_kernels_mma_and_counts_its_waits() {
        let kernels = mma_instructions(SASS);
        assert_eq!(kernels.len(), 3);
        assert_eq!(kernels[0].kernel, "wgmma_f16_thr");
        assert_eq!(
            kernels[0].instruction.as_deref(),
            Some("HGMMA.64x256x16.F32")
        );
        assert_eq!((kernels[0].mmas, kernels[0].waits), (2, 1));
        assert!(kernels[0].as_written(false, 2));
        assert!(!kernels[0].as_written(false, 8));
        assert_eq!((kernels[1].mmas, kernels[1].waits), (2, 2));
        assert!(kernels[1].as_written(true, 2));
        // A throughput kernel of 8 per group that waits after every wgmma.
        let serialised = MmaSass {
            mmas: 8,
            waits: 8,
            ..kernels[1].clone()
        };
        assert!(!serialised.as_written(false, 8));
        // Two wgmmas where a loop trip asks for 8.
        assert!(!kernels[1].as_written(true, 8));
        assert_eq!(kernels[2].instruction.as_deref(), Some("HMMA.16816.F32"));
        assert!(kernels[2].as_written(true, 1));
        // One HMMA where the loop asks for 16: emulated and hoisted.
        assert!(!kernels[2].as_written(true, 16));
        assert!(
            !MmaSass {
                kernel: "x".into(),
                instruction: None,
                mmas: 0,
                waits: 0
            }
            .as_written(true, 1)
        );
    }

    #[test]
    fn a_chain_of_mmas_is_its_span_over_their_count() {
        assert_eq!(cycles_per_mma(&[1000, 1000 + 33 * 64], 64), Some(33.0));
        assert_eq!(cycles_per_mma(&[5, 5], 64), None);
        assert_eq!(cycles_per_mma(&[], 64), None);
        assert_eq!(cycles_per_mma(&[0, 10], 0), None);
    }

    #[test]
    fn the_rate_of_an_sm_is_its_blocks_flop_over_its_span() {
        // Three SMs at 4096 FLOP per clock, one block sharing an SM (half the rate).
        let flop = 4096.0 * 1000.0;
        let stamps = [0, 1000, 50, 1050, 7, 1007, 0, 2000];
        let summary = flop_per_clock(&stamps, flop).unwrap();
        assert_eq!(summary.median, 4096.0);
        assert_eq!(summary.min, 2048.0);
        // A block with no span spoils the whole measurement rather than vanishing from it.
        assert!(flop_per_clock(&[0, 1000, 5, 5], flop).is_none());
        let r = rate(summary, 132, 1980.0, Some(4096.0));
        assert!((r.tflops - 4096.0 * 132.0 * 1980e6 / 1e12).abs() < 1e-9);
        assert_eq!(r.fraction_of_peak, Some(1.0));
    }
}

//! Instruction-cache space (Wong et al., "Instruction cache"): the footprint is code. A kernel
//! of straight-line code is generated as PTX and JIT-compiled by the driver; it runs the code
//! twice (the pass count is a kernel argument, so ptxas cannot unroll the loop and double the
//! code) and times the second pass with clock64. The latency is cycles per instruction: flat
//! while the code fits a cache level, higher once each pass refetches from the next.
//!
//! The code is eight independent chains of `fma.rn.f32` with distinct immediates: one SASS
//! instruction per PTX instruction, nothing the compiler may fold (floating-point
//! multiply-add does not reassociate), and enough independent chains that issue, not
//! latency, paces a warp. Code bytes are counted as 16 per instruction, the fixed SASS
//! encoding since Volta (a unit test checks the count against ptxas where one is installed).
//!
//! One kernel serves many footprints: each pass enters the code through an indirect branch
//! (`brx.idx`) at one of its labels, so the executed suffix is the footprint, chosen by a
//! kernel argument. The sweep needs few JIT compiles instead of one per point: one module over
//! the whole range with a label every [`COARSE_LABELS`]-th of it for the coarse grid, and a
//! module with a label at every stride around each footprint the bisection and the fine sweep
//! ask for. The pass overhead (clock reads, the branch, the loop) is measured once with an
//! empty suffix and subtracted.

use std::fmt::Write;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::gpu::Gpu;
use crate::gpu::launch::StraightLine;

pub const ENTRY: &str = "straight_line";

/// Bytes of one SASS instruction (sm_70 and later).
pub const INSTRUCTION_BYTES: u64 = 16;

const CHAINS: u32 = 8;

/// Labels of the module that serves the coarse grid: ptxas's time grows with them (about 1.5 s
/// for 32 768 instructions with 512 labels, 2.9 s with 2048).
pub const COARSE_LABELS: u64 = 1024;

/// Labels either side of a footprint in a fine module.
const FINE_HALF_WIDTH: u64 = 256;

/// PTX (ISA `isa`, e.g. "8.8") of a kernel `straight_line(u64 out, f32 m, u32 passes, u32
/// target)` whose loop body is `instructions` fma instructions over eight independent chains,
/// entered at the label after which `suffixes[target]` instructions remain (`suffixes`
/// strictly decreasing, each at most `instructions`). It writes out[0] = cycles of the last
/// pass, out[1] = the chains' sum (so nothing is dead).
pub fn straight_line_ptx(isa: &str, instructions: u32, suffixes: &[u32]) -> String {
    let mut ptx = String::with_capacity(instructions as usize * 48 + suffixes.len() * 16 + 2048);
    let _ = write!(
        ptx,
        ".version {isa}\n.target sm_75\n.address_size 64\n\n\
         .visible .entry {ENTRY}(.param .u64 out, .param .f32 m, .param .u32 passes, .param .u32 target)\n{{\n\
         .reg .pred %p;\n.reg .b32 %r<5>;\n.reg .f32 %f<{}>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [out];\ncvta.to.global.u64 %rd1, %rd1;\n\
         ld.param.f32 %f0, [m];\nld.param.u32 %r1, [passes];\nld.param.u32 %r3, [target];\n\
         mov.u32 %r2, 0;\nmov.u64 %rd2, 0;\n",
        CHAINS + 2
    );
    for c in 1..=CHAINS {
        let _ = writeln!(ptx, "cvt.rn.f32.u32 %f{c}, %r1;");
    }
    let labels: Vec<String> = (0..suffixes.len()).map(|t| format!("L{t}")).collect();
    let _ = writeln!(ptx, "TARGETS: .branchtargets {};", labels.join(", "));
    ptx.push_str("PASS:\nmov.u64 %rd3, %clock64;\nbrx.idx %r3, TARGETS;\n");
    let mut next = 0;
    for i in 0..=instructions {
        while next < suffixes.len() && instructions - suffixes[next] == i {
            let _ = writeln!(ptx, "L{next}:");
            next += 1;
        }
        if i == instructions {
            break;
        }
        let c = 1 + i % CHAINS;
        // Immediates 1 + i / 2^20: distinct, exact in f32, never zero.
        let constant = 1.0_f32 + (i as f32) * (1.0 / 1_048_576.0);
        let _ = writeln!(
            ptx,
            "fma.rn.f32 %f{c}, %f{c}, %f0, 0f{:08X};",
            constant.to_bits()
        );
    }
    ptx.push_str(
        "mov.u64 %rd4, %clock64;\nsub.s64 %rd2, %rd4, %rd3;\nadd.u32 %r2, %r2, 1;\n\
         setp.lt.u32 %p, %r2, %r1;\n@%p bra PASS;\n",
    );
    let sink = CHAINS + 1;
    let _ = writeln!(ptx, "mov.f32 %f{sink}, %f1;");
    for c in 2..=CHAINS {
        let _ = writeln!(ptx, "add.f32 %f{sink}, %f{sink}, %f{c};");
    }
    let _ = write!(
        ptx,
        "st.global.u64 [%rd1], %rd2;\nst.global.f32 [%rd1+8], %f{sink};\nret;\n}}\n"
    );
    ptx
}

/// A loaded kernel and the footprints it serves: `lowest`, `lowest + step`, … `highest` bytes.
struct Module {
    lowest: u64,
    highest: u64,
    step: u64,
    kernel: StraightLine,
}

impl Module {
    fn compile(gpu: &Gpu, isa: &str, lowest: u64, highest: u64, step: u64) -> Result<Module> {
        let instructions = u32::try_from(highest / INSTRUCTION_BYTES)?;
        let suffixes: Vec<u32> = (0..=(highest - lowest) / step)
            .map(|k| ((highest - k * step) / INSTRUCTION_BYTES) as u32)
            .collect();
        let ptx = straight_line_ptx(isa, instructions, &suffixes);
        let kernel = StraightLine::load(gpu, ptx, ENTRY, suffixes.len() as u32)?;
        Ok(Module {
            lowest,
            highest,
            step,
            kernel,
        })
    }

    fn target(&self, footprint: u64) -> Option<u32> {
        target_of(self.lowest, self.highest, self.step, footprint)
    }
}

/// The branch target that leaves `footprint` bytes of a module serving `lowest`, `lowest +
/// step`, … `highest` (target 0 leaves `highest`).
fn target_of(lowest: u64, highest: u64, step: u64, footprint: u64) -> Option<u32> {
    (lowest..=highest)
        .contains(&footprint)
        .then(|| footprint - lowest)
        .filter(|offset| offset.is_multiple_of(step))
        .map(|offset| ((highest - lowest - offset) / step) as u32)
}

/// Cycles per instruction at any footprint of the sweep, from as few JIT compiles as it can.
pub struct InstructionSweep {
    isa: String,
    stride: u64,
    smallest: u64,
    largest: u64,
    modules: Vec<Module>,
    overhead_cycles: Option<i64>,
}

impl InstructionSweep {
    /// A sweep over multiples of `stride` (of 16 bytes) from `smallest` to `largest` bytes.
    pub fn new(isa: &str, stride: u64, smallest: u64, largest: u64) -> Result<Self> {
        if stride == 0 || !stride.is_multiple_of(INSTRUCTION_BYTES) {
            bail!("the instruction space's stride must be a multiple of 16 bytes");
        }
        Ok(InstructionSweep {
            isa: isa.to_string(),
            stride,
            smallest,
            largest,
            modules: Vec::new(),
            overhead_cycles: None,
        })
    }

    /// The coarse grid's spacing: the stride, or a multiple of it that keeps the coarse
    /// module to [`COARSE_LABELS`] labels.
    pub fn coarse_stride(&self) -> u64 {
        self.stride * (self.largest / self.stride).div_ceil(COARSE_LABELS).max(1)
    }

    /// How many modules were JIT-compiled so far.
    pub fn modules_compiled(&self) -> usize {
        self.modules.len() + usize::from(self.overhead_cycles.is_some())
    }

    /// Cycles per instruction of `code_bytes` (a multiple of the stride) of straight-line code.
    pub fn measure(&mut self, gpu: &Gpu, code_bytes: u64) -> Result<f64> {
        let instructions = code_bytes / INSTRUCTION_BYTES;
        if instructions == 0 {
            bail!("the instruction space needs code of at least 16 bytes");
        }
        let deadline = Duration::from_secs(10);
        let overhead = match self.overhead_cycles {
            Some(cycles) => cycles,
            None => {
                let empty = Module::compile(gpu, &self.isa, 0, 0, INSTRUCTION_BYTES)?;
                let mut least = i64::MAX;
                for _ in 0..3 {
                    least = least.min(empty.kernel.run(gpu, 0, 2, deadline)?);
                }
                *self.overhead_cycles.insert(least)
            }
        };
        if !self.modules.iter().any(|m| m.target(code_bytes).is_some()) {
            let coarse = self.coarse_stride();
            let module = if self.modules.is_empty() && code_bytes.is_multiple_of(coarse) {
                Module::compile(
                    gpu,
                    &self.isa,
                    coarse,
                    self.largest / coarse * coarse,
                    coarse,
                )?
            } else {
                let width = FINE_HALF_WIDTH * self.stride;
                let lowest = code_bytes.saturating_sub(width).max(self.smallest);
                let lowest = lowest.div_ceil(self.stride).max(1) * self.stride;
                let highest = (code_bytes + width).min(self.largest.max(code_bytes));
                let highest = lowest + (highest - lowest) / self.stride * self.stride;
                Module::compile(gpu, &self.isa, lowest, highest, self.stride)?
            };
            self.modules.push(module);
        }
        let module = self
            .modules
            .iter()
            .find(|m| m.target(code_bytes).is_some())
            .ok_or_else(|| anyhow::anyhow!("no module serves {code_bytes} B of code"))?;
        let target = module.target(code_bytes).unwrap_or(0);
        let cycles = module.kernel.run(gpu, target, 2, deadline)?;
        Ok((cycles - overhead).max(0) as f64 / instructions as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_has_one_fma_per_instruction_over_eight_chains() {
        let ptx = straight_line_ptx("8.8", 20, &[20]);
        assert_eq!(ptx.matches("fma.rn.f32").count(), 20);
        assert!(ptx.starts_with(".version 8.8\n.target sm_75"));
        assert!(ptx.contains("fma.rn.f32 %f1, %f1, %f0, 0f3F800000;"));
        assert!(ptx.contains("fma.rn.f32 %f8, %f8, %f0,"));
        assert!(!ptx.contains("%f9, %f9, %f0"), "only eight chains");
        let immediates: std::collections::BTreeSet<&str> = ptx
            .lines()
            .filter(|l| l.starts_with("fma"))
            .map(|l| l.rsplit(' ').next().unwrap())
            .collect();
        assert_eq!(immediates.len(), 20, "every immediate distinct");
    }

    /// Entering at target t leaves exactly suffixes[t] instructions before the pass ends.
    #[test]
    fn each_branch_target_leaves_its_suffix() {
        let suffixes = [20, 12, 5, 0];
        let ptx = straight_line_ptx("8.8", 20, &suffixes);
        assert!(
            ptx.contains("TARGETS: .branchtargets L0, L1, L2, L3;"),
            "{ptx}"
        );
        assert!(ptx.contains("brx.idx %r3, TARGETS;"));
        let lines: Vec<&str> = ptx.lines().collect();
        for (t, &suffix) in suffixes.iter().enumerate() {
            let at = lines.iter().position(|l| *l == format!("L{t}:")).unwrap();
            let after = lines[at..]
                .iter()
                .take_while(|l| !l.starts_with("mov.u64 %rd4"))
                .filter(|l| l.starts_with("fma"))
                .count();
            assert_eq!(after, suffix as usize, "target {t}");
        }
    }

    #[test]
    fn a_module_serves_the_footprints_on_its_grid_only() {
        assert_eq!(target_of(512, 4096, 512, 4096), Some(0));
        assert_eq!(target_of(512, 4096, 512, 512), Some(7));
        assert_eq!(target_of(512, 4096, 512, 1000), None);
        assert_eq!(target_of(512, 4096, 512, 8192), None);
        assert_eq!(target_of(512, 4096, 512, 0), None);
        // The suffixes `Module::compile` generates put footprint f at target_of(f).
        let (lowest, highest, step) = (1024_u64, 3072_u64, 64_u64);
        for k in 0..=(highest - lowest) / step {
            let suffix_bytes = highest - k * step;
            assert_eq!(
                target_of(lowest, highest, step, suffix_bytes),
                Some(k as u32)
            );
        }
    }

    /// Where ptxas is on PATH (or in `$NVCC`'s folder), the generated kernel assembles and
    /// its code grows by 16 bytes per instruction, as the sweep assumes.
    #[test]
    fn code_grows_sixteen_bytes_per_instruction_where_ptxas_is_installed() {
        let Some(ptxas) = find_ptxas() else {
            eprintln!("no ptxas here; the code-size check is skipped");
            return;
        };
        let size = |n: u32| -> u64 {
            let dir = tempfile::tempdir().unwrap();
            let source = dir.path().join("k.ptx");
            let cubin = dir.path().join("k.cubin");
            // The same labels in both, so the difference is the instructions alone.
            std::fs::write(&source, straight_line_ptx("7.0", n, &[n, n / 2, 256, 0])).unwrap();
            let status = std::process::Command::new(&ptxas)
                .args(["-arch=sm_90", "-O3", "-o"])
                .arg(&cubin)
                .arg(&source)
                .status()
                .unwrap();
            assert!(status.success());
            std::fs::metadata(&cubin).unwrap().len()
        };
        let grown = size(1024 + 512) - size(1024);
        assert!(
            (512 * 16..=512 * 16 + 256).contains(&grown),
            "512 more instructions grew the cubin by {grown} bytes"
        );
    }

    fn find_ptxas() -> Option<std::path::PathBuf> {
        let mut candidates: Vec<std::path::PathBuf> = Vec::new();
        if let Ok(nvcc) = std::env::var("NVCC") {
            candidates.push(std::path::Path::new(&nvcc).with_file_name("ptxas"));
        }
        if let Some(path) = std::env::var_os("PATH") {
            candidates.extend(std::env::split_paths(&path).map(|d| d.join("ptxas")));
        }
        candidates.push(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("target/cuda-toolchain/nvidia/cu13/bin/ptxas"),
        );
        candidates.into_iter().find(|p| p.is_file())
    }
}

//! Instruction-cache space (Wong et al., "Instruction cache"): the footprint is code. For each
//! size a kernel of straight-line code is generated as PTX and JIT-compiled by the driver; it
//! runs the code twice (the pass count is a kernel argument, so ptxas cannot unroll the loop
//! and double the code) and times the second pass with clock64. The latency is cycles per
//! instruction: flat while the code fits a cache level, higher once each pass refetches from
//! the next.
//!
//! The code is eight independent chains of `fma.rn.f32` with distinct immediates: one SASS
//! instruction per PTX instruction, nothing the compiler may fold (floating-point
//! multiply-add does not reassociate), and enough independent chains that issue, not
//! latency, paces a warp. Code bytes are counted as 16 per instruction, the fixed SASS
//! encoding since Volta (a unit test checks the count against ptxas where one is installed).
//! Generating at run time rather than build time keeps nvcc out of it and lets the sweep
//! choose sizes.
//!
//! Every size is its own kernel, entered at its start (labels inside the timed code would
//! end basic blocks, where ptxas puts conservative stalls: a brx.idx entry every four
//! instructions measured 1.6 to 2.2 cycles per instruction on a plateau of 1.0). The cost is
//! one JIT compile per size, which [`CodeProbe`] takes off the critical path: it compiles the
//! sizes the sweep will probably ask for next (the whole coarse grid, the midpoints of the
//! next bisection steps, the fine points) on every host core at once with the driver's
//! linker, then loads each cubin when its size is measured. Under `gpubench all` the coarse
//! grid (the first batch) is compiled before the suite starts, by the toolkit's ptxas while
//! other suites measure, the largest kernels first. Each later batch is compiled off the GPU
//! ([`crate::harness::sharing::off_gpu`]): the suite hands the GPU back to `all`, which lets the
//! next suites measure while it compiles. Every kernel's code, whoever compiled it, is read
//! from its cubin's text section before it runs ([`check_code`]): 16 bytes per fma plus the
//! prologue and epilogue of the first kernel from the same compiler. That costs nothing, where
//! disassembling every kernel to count its FFMAs took cuobjdump 0.3-0.5 s a kernel (the unit
//! tests count them in ptxas's SASS where the toolkit is installed).

use std::collections::HashMap;
use std::fmt::Write;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use cudarc::nvrtc::Ptx;

use crate::gpu::prebuilt::{self, Generated};
use crate::gpu::{Gpu, jit};
use crate::suites::cache::launch;

pub const ENTRY: &str = "straight_line";

/// Bytes of one SASS instruction (sm_70 and later).
pub const INSTRUCTION_BYTES: u64 = 16;

const CHAINS: u32 = 8;

/// PTX (ISA `isa`, e.g. "8.8") of a kernel `straight_line(u64 out, f32 m, u32 passes)` whose
/// loop body is `instructions` fma instructions over eight independent chains. It writes
/// out[0] = cycles of the last pass, out[1] = the chains' sum (so nothing is dead).
pub fn straight_line_ptx(isa: &str, instructions: u32) -> String {
    let mut ptx = String::with_capacity(instructions as usize * 48 + 2048);
    let _ = write!(
        ptx,
        ".version {isa}\n.target sm_75\n.address_size 64\n\n\
         .visible .entry {ENTRY}(.param .u64 out, .param .f32 m, .param .u32 passes)\n{{\n\
         .reg .pred %p;\n.reg .b32 %r<4>;\n.reg .f32 %f<{}>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [out];\ncvta.to.global.u64 %rd1, %rd1;\n\
         ld.param.f32 %f0, [m];\nld.param.u32 %r1, [passes];\nmov.u32 %r2, 0;\nmov.u64 %rd2, 0;\n",
        CHAINS + 2
    );
    for c in 1..=CHAINS {
        let _ = writeln!(ptx, "cvt.rn.f32.u32 %f{c}, %r1;");
    }
    ptx.push_str("PASS:\nmov.u64 %rd3, %clock64;\n");
    for i in 0..instructions {
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

/// The kernel of `instructions` fma instructions as `gpubench all` compiles it ahead
/// ([`crate::gpu::prebuilt`]).
pub fn generated(isa: &str, instructions: u32) -> Generated {
    Generated {
        name: ENTRY,
        ptx: straight_line_ptx(isa, instructions),
    }
}

/// Bytes of the straight-line kernel's code in `cubin`: its `.text.straight_line` section.
pub fn code_bytes(cubin: &[u8]) -> Result<u64> {
    use object::{Object, ObjectSection};
    let file = object::File::parse(cubin).context("reading a straight-line kernel's cubin")?;
    let section = file
        .section_by_name(&format!(".text.{ENTRY}"))
        .with_context(|| format!("the straight-line kernel's cubin has no .text.{ENTRY}"))?;
    Ok(section.size())
}

/// The code of a kernel of `instructions` fma instructions: 16 bytes each, plus a prologue and
/// epilogue (sm_90, ptxas 13.0: 640 bytes with the padding) that must be the same, to within
/// the 128-byte padding, as in the first kernel of the same compiler (`first`, the code beyond
/// 16 bytes per instruction, set by the first). Fewer bytes would mean a compiler folded some
/// of the multiply-adds, and the footprint would be overstated.
fn check_code(bytes: u64, instructions: u32, first: &mut Option<u64>, compiler: &str) -> Result<()> {
    let body = u64::from(instructions) * INSTRUCTION_BYTES;
    let Some(beyond) = bytes.checked_sub(body) else {
        bail!(
            "the straight-line kernel of {instructions} fma instructions has {bytes} bytes of code, less than 16 per instruction ({compiler}): the code size would be wrong"
        );
    };
    let first = *first.get_or_insert(beyond);
    if beyond.abs_diff(first) >= 128 {
        bail!(
            "the straight-line kernel of {instructions} fma instructions has {beyond} bytes of code beyond 16 per instruction where the first kernel {compiler} compiled had {first}: its code is not one instruction per fma"
        );
    }
    Ok(())
}

/// The instruction space's probe: cycles per instruction at a code size, from cubins compiled
/// ahead in batches, or by `gpubench all` before the suite started.
pub struct CodeProbe<'a> {
    gpu: &'a Gpu,
    isa: String,
    compiled: HashMap<u64, Vec<u8>>,
    /// By compiler (the toolkit's ptxas, or the driver): the code beyond 16 bytes per
    /// instruction in the first kernel it compiled ([`check_code`]).
    beyond: HashMap<String, Option<u64>>,
    /// Kernels compiled by the driver here, used or not.
    pub kernels_compiled: usize,
    /// Kernels found prebuilt, each with its SASS checked to hold one FFMA per instruction.
    pub kernels_prebuilt: usize,
}

impl<'a> CodeProbe<'a> {
    pub fn new(gpu: &'a Gpu, isa: &str) -> Self {
        CodeProbe {
            gpu,
            isa: isa.to_string(),
            compiled: HashMap::new(),
            beyond: HashMap::new(),
            kernels_compiled: 0,
            kernels_prebuilt: 0,
        }
    }

    fn instructions(code_bytes: u64) -> Result<u32> {
        let instructions = u32::try_from(code_bytes / INSTRUCTION_BYTES)?;
        if instructions == 0 {
            bail!("the instruction space needs code of at least 16 bytes");
        }
        Ok(instructions)
    }
}

/// Cubins by code size, each with the compiler that made it.
type Kernels = Vec<(u64, Vec<u8>, String)>;

/// The cubin of each (size, PTX): prebuilt by `gpubench all` where it was, else compiled
/// here; and how many were prebuilt.
fn find_or_compile(gpu: &Gpu, sized: Vec<(u64, String)>) -> Result<(Kernels, usize)> {
    let mut kernels = Vec::with_capacity(sized.len());
    // (size, PTX) of the sizes `all` did not compile ahead.
    let mut to_compile: Vec<(u64, String)> = Vec::new();
    for (size, ptx) in sized {
        match prebuilt::find_ptx(ENTRY, &ptx) {
            Some(found) => kernels.push((size, found.cubin, found.tools)),
            None => to_compile.push((size, ptx)),
        }
    }
    let prebuilt = kernels.len();
    let jobs: Vec<(&str, Option<u32>)> = to_compile
        .iter()
        .map(|(_, ptx)| (ptx.as_str(), None))
        .collect();
    let cubins = jit::compile_here(gpu, &jobs)?;
    kernels.extend(
        to_compile
            .into_iter()
            .zip(cubins)
            .map(|((size, _), cubin)| (size, cubin, "the driver".to_string())),
    );
    Ok((kernels, prebuilt))
}

impl super::Probe for CodeProbe<'_> {
    fn prepare(&mut self, sizes: &[u64]) -> Result<()> {
        let mut wanted: Vec<u64> = sizes
            .iter()
            .copied()
            .filter(|size| !self.compiled.contains_key(size))
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let mut sized = Vec::with_capacity(wanted.len());
        for size in wanted {
            sized.push((size, straight_line_ptx(&self.isa, Self::instructions(size)?)));
        }
        // Host work only: waiting for the kernels `all` is still compiling and compiling the
        // rest. Under `gpubench all` another suite may measure meanwhile, so the suite steps
        // off the GPU for it, unless every kernel is there already.
        let ready = sized
            .iter()
            .all(|(_, ptx)| prebuilt::ready_ptx(ENTRY, ptx));
        let gpu = self.gpu;
        let work = || find_or_compile(gpu, sized);
        let (kernels, prebuilt) = if ready {
            work()?
        } else {
            crate::harness::sharing::off_gpu(work)??
        };
        self.kernels_prebuilt += prebuilt;
        self.kernels_compiled += kernels.len() - prebuilt;
        if let Some(largest) = kernels.iter().map(|(size, ..)| *size).max() {
            crate::harness::sharing::step_done(&format!(
                "{} kernels ready ({prebuilt} prebuilt), up to {} KiB",
                kernels.len(),
                largest / 1024
            ));
        }
        for (size, cubin, compiler) in kernels {
            let first = self.beyond.entry(compiler.clone()).or_default();
            check_code(code_bytes(&cubin)?, Self::instructions(size)?, first, &compiler)?;
            self.compiled.insert(size, cubin);
        }
        Ok(())
    }

    /// Cycles per instruction of straight-line code of `code_bytes` (a multiple of 16).
    fn measure(&mut self, code_bytes: u64) -> Result<f64> {
        let instructions = Self::instructions(code_bytes)?;
        if !self.compiled.contains_key(&code_bytes) {
            self.prepare(&[code_bytes])?;
        }
        let cubin = self
            .compiled
            .remove(&code_bytes)
            .ok_or_else(|| anyhow::anyhow!("no kernel was compiled for {code_bytes} B"))?;
        let deadline = Duration::from_secs(10);
        let cycles = launch::straight_line(self.gpu, Ptx::from_binary(cubin), ENTRY, 2, deadline)?;
        Ok(cycles as f64 / f64::from(instructions))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_has_one_fma_per_instruction_over_eight_chains() {
        let ptx = straight_line_ptx("8.8", 20);
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
            std::fs::write(&source, straight_line_ptx("7.0", n)).unwrap();
            let status = std::process::Command::new(&ptxas)
                .args(["-arch=sm_90", "-O3", "-o"])
                .arg(&cubin)
                .arg(&source)
                .status()
                .unwrap();
            assert!(status.success());
            code_bytes(&std::fs::read(&cubin).unwrap()).unwrap()
        };
        let grown = size(1024 + 512) - size(1024);
        assert!(
            (512 * 16..512 * 16 + 128).contains(&grown),
            "512 more instructions grew the code by {grown} bytes"
        );
    }

    /// Where ptxas and cuobjdump are installed, the SASS of a generated kernel holds one FFMA
    /// per generated fma, as the check of prebuilt kernels requires.
    #[test]
    fn the_sass_holds_one_ffma_per_instruction_where_the_tools_are_installed() {
        let (Some(ptxas), Some(cuobjdump)) = (find_ptxas(), find_cuobjdump()) else {
            eprintln!("no ptxas or cuobjdump here; the SASS check is skipped");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("k.ptx");
        let cubin = dir.path().join("k.cubin");
        std::fs::write(&source, straight_line_ptx("7.0", 777)).unwrap();
        let status = std::process::Command::new(&ptxas)
            .args(["-arch=sm_90", "-o"])
            .arg(&cubin)
            .arg(&source)
            .status()
            .unwrap();
        assert!(status.success());
        let sass = std::process::Command::new(&cuobjdump)
            .arg("-sass")
            .arg(&cubin)
            .output()
            .unwrap();
        assert_eq!(ffma_count(&String::from_utf8_lossy(&sass.stdout)), 777);
    }

    fn find_cuobjdump() -> Option<std::path::PathBuf> {
        crate::gpu::toolchain::find_tool("cuobjdump").or_else(|| {
            find_ptxas()
                .map(|p| p.with_file_name("cuobjdump"))
                .filter(|p| p.is_file())
        })
    }

    /// A kernel of 64 fma instructions as ptxas 13.0 built it for sm_90
    /// (tests/fixtures/straight_line_64_sm90.cubin): 1664 bytes of code, 640 beyond the fmas.
    #[test]
    fn the_code_is_read_from_the_kernels_text_section() {
        let cubin = include_bytes!("../../../../tests/fixtures/straight_line_64_sm90.cubin");
        assert_eq!(code_bytes(cubin).unwrap(), 64 * 16 + 640);
        assert!(code_bytes(b"not an ELF file").is_err());
    }

    #[test]
    fn every_kernel_of_a_compiler_has_the_first_ones_code_beyond_its_fmas() {
        let mut first = None;
        check_code(1024 * 16 + 640, 1024, &mut first, "ptxas").unwrap();
        assert_eq!(first, Some(640));
        // Padding to 128 bytes moves it by less than 128.
        check_code(1031 * 16 + 640 + 112, 1031, &mut first, "ptxas").unwrap();
        // Eight fmas folded away: 128 bytes fewer.
        let folded = check_code(2048 * 16 + 640 - 128, 2048, &mut first, "ptxas").unwrap_err();
        assert!(folded.to_string().contains("not one instruction per fma"), "{folded}");
        // Less code than the fmas alone.
        assert!(check_code(100 * 16 - 16, 100, &mut None, "the driver").is_err());
    }

    /// How many FFMA instructions `sass` (cuobjdump's listing of one straight-line kernel)
    /// holds: one per generated fma when ptxas folded none away.
    fn ffma_count(sass: &str) -> usize {
        sass.lines()
            .filter(|line| line.split_whitespace().any(|word| word == "FFMA"))
            .count()
    }

    #[test]
    fn ffma_lines_are_counted_not_their_control_words() {
        let sass = "        /*00e0*/                   FFMA R9, R11, R0.reuse, 1 ;    /* 0x3f8000000b097423 */\n\
                    /* 0x081fe20000000000 */\n\
                    /*00f0*/                   FADD R1, R2, R3 ;\n\
                    /*0100*/                   FFMA R11, R4, R0.reuse, 1.5 ;";
        assert_eq!(ffma_count(sass), 2);
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

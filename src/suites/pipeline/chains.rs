//! Latency and throughput per SASS instruction (cuda/pipeline.cu's `sass_*` kernels), in the
//! manner of Jia et al.'s Volta and Turing dissections: every instruction runs as a chain of
//! dependent steps at two lengths per loop trip (latency: one warp, 32 and 128 steps;
//! throughput: 1024 threads of four independent chains each, 16 and 32 steps), and `analysis::instruction_latency` turns the two timings
//! and the two loops' SASS into the instruction's own figures. Wong et al.'s per-operation
//! table (the suite's `measure`) stays beside it: a PTX operation may be several
//! instructions, or half of one.

use anyhow::{Context, Result};

// The throughput kernels run as Wong et al.'s table's do: one block of 1024 threads.
use super::analysis as pipeline;
use super::measure::THROUGHPUT_THREADS;
use crate::suites::pipeline::instruction_latency::{self, ChainTimings, InstructionLatency};
use crate::analysis::sass::KernelSass;
use super::launch;
use crate::gpu::Gpu;

/// One instruction of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instruction {
    /// The kernel infix in cuda/pipeline.cu (`sass_lat_NAME_16`, …).
    pub name: &'static str,
    /// The SASS opcodes (with modifiers as far as given) that count as this instruction.
    pub sass: &'static [&'static str],
    /// The PTX the chain step is written in.
    pub ptx: &'static str,
}

const fn instruction(
    name: &'static str,
    sass: &'static [&'static str],
    ptx: &'static str,
) -> Instruction {
    Instruction { name, sass, ptx }
}

/// Pure chains first: a later row may subtract the latency of an earlier one (MUFU.SIN's step
/// also holds an FMUL.RZ).
pub const INSTRUCTIONS: [Instruction; 28] = [
    instruction("iadd3", &["IADD3"], "add.u32 twice (x + y + z)"),
    instruction("imad", &["IMAD"], "mad.lo.u32"),
    instruction("imad_hi", &["IMAD.HI"], "mul.hi.u32"),
    instruction("lop3", &["LOP3.LUT"], "lop3.b32"),
    instruction("shf", &["SHF"], "shf.l.wrap.b32"),
    instruction("prmt", &["PRMT"], "prmt.b32"),
    instruction("popc", &["POPC"], "popc.b32"),
    instruction("flo", &["FLO"], "bfind.u32"),
    instruction("brev", &["BREV"], "brev.b32"),
    instruction("i2f", &["I2FP", "I2F"], "cvt.rn.f32.u32"),
    instruction("f2i", &["F2I"], "cvt.rzi.u32.f32"),
    instruction("fadd", &["FADD"], "add.rn.f32"),
    instruction("fmul", &["FMUL"], "mul.rn.f32"),
    instruction("ffma", &["FFMA"], "fma.rn.f32"),
    instruction("hadd2", &["HADD2"], "add.rn.f16x2"),
    instruction("hmul2", &["HMUL2", "HFMA2.MMA"], "mul.rn.f16x2"),
    instruction("hfma2", &["HFMA2"], "fma.rn.f16x2"),
    instruction("dadd", &["DADD"], "add.rn.f64"),
    instruction("dmul", &["DMUL"], "mul.rn.f64"),
    instruction("dfma", &["DFMA"], "fma.rn.f64"),
    instruction("mufu_ex2", &["MUFU.EX2"], "ex2.approx.ftz.f32"),
    instruction("mufu_lg2", &["MUFU.LG2"], "lg2.approx.ftz.f32"),
    instruction("mufu_rsq", &["MUFU.RSQ"], "rsqrt.approx.ftz.f32"),
    instruction("mufu_rcp", &["MUFU.RCP"], "rcp.approx.ftz.f32 of -x"),
    instruction("mufu_sqrt", &["MUFU.SQRT"], "sqrt.approx.ftz.f32"),
    instruction("mufu_sin", &["MUFU.SIN"], "sin.approx.ftz.f32"),
    instruction("mufu_tanh", &["MUFU.TANH"], "tanh.approx.f32"),
    instruction("shfl", &["SHFL"], "shfl.sync.idx.b32 from the next lane"),
];

/// Steps per loop trip of the short and the long latency chain.
pub const LATENCY_LENGTHS: [u32; 2] = [32, 128];
/// Steps per loop trip (of each of four chains) of the short and the long throughput kernel.
pub const THROUGHPUT_LENGTHS: [u32; 2] = [16, 32];
/// Timed launches of each kernel (each after one untimed launch).
pub const REPEATS: usize = 5;

/// A latency or a throughput kernel pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chains {
    Latency,
    Throughput,
}

impl Chains {
    fn prefix(self) -> &'static str {
        match self {
            Chains::Latency => "lat",
            Chains::Throughput => "thr",
        }
    }

    pub fn lengths(self) -> [u32; 2] {
        match self {
            Chains::Latency => LATENCY_LENGTHS,
            Chains::Throughput => THROUGHPUT_LENGTHS,
        }
    }
}

impl Instruction {
    /// The short and the long kernel of `chains`.
    pub fn entries(&self, chains: Chains) -> [String; 2] {
        chains
            .lengths()
            .map(|steps| format!("sass_{}_{}_{steps}", chains.prefix(), self.name))
    }
}

/// Raw timings of one instruction: per repeat, (short, long) cycles.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainSpans {
    pub instruction: Instruction,
    /// Warp 0's span of the one-warp latency chains.
    pub latency: Vec<(i64, i64)>,
    /// The block's busy span of the throughput chains.
    pub throughput: Vec<(i64, i64)>,
}

fn spans(
    gpu: &mut Gpu,
    instruction: &Instruction,
    chains: Chains,
    iterations: u32,
) -> Result<Vec<(i64, i64)>> {
    let threads = match chains {
        Chains::Latency => 32,
        Chains::Throughput => THROUGHPUT_THREADS,
    };
    let [short, long] = instruction.entries(chains);
    for entry in [&short, &long] {
        launch::pipeline(gpu, entry, threads, iterations)?;
    }
    let span = |stamps: Vec<i64>, entry: &str| {
        let cycles = if chains == Chains::Latency {
            stamps
                .get(1)
                .zip(stamps.first())
                .map(|(end, start)| end - start)
        } else {
            pipeline::elapsed_cycles(&stamps)
        };
        cycles
            .filter(|c| *c > 0)
            .with_context(|| format!("{entry} returned unusable stamps"))
    };
    // Short and long alternate, so a drift of the clock touches both alike.
    (0..REPEATS)
        .map(|_| {
            let s = span(launch::pipeline(gpu, &short, threads, iterations)?, &short)?;
            let l = span(launch::pipeline(gpu, &long, threads, iterations)?, &long)?;
            Ok((s, l))
        })
        .collect()
}

pub fn measure(gpu: &mut Gpu, iterations: u32) -> Result<Vec<ChainSpans>> {
    INSTRUCTIONS
        .iter()
        .map(|instruction| {
            Ok(ChainSpans {
                instruction: *instruction,
                latency: spans(gpu, instruction, Chains::Latency, iterations)?,
                throughput: spans(gpu, instruction, Chains::Throughput, iterations)?,
            })
        })
        .collect()
}

/// Each instruction's figures from its timings and the SASS of the module's kernels (empty
/// where no SASS could be made: then no instruction count, and no figure).
pub fn read(
    spans: &[ChainSpans],
    kernels: &[KernelSass],
    iterations: u32,
) -> Vec<(Instruction, InstructionLatency)> {
    let counts = |instruction: &Instruction, chains: Chains| {
        let [short, long] = instruction.entries(chains).map(|entry| {
            kernels
                .iter()
                .find(|k| k.kernel == entry)
                .map(KernelSass::timed_opcodes)
        });
        short.zip(long)
    };
    let timings: Vec<ChainTimings> = spans
        .iter()
        .map(|s| ChainTimings {
            targets: s.instruction.sass,
            latency_counts: counts(&s.instruction, Chains::Latency),
            throughput_counts: counts(&s.instruction, Chains::Throughput),
            iterations,
            latency_spans: &s.latency,
            throughput_spans: &s.throughput,
            throughput_threads: THROUGHPUT_THREADS,
        })
        .collect();
    spans
        .iter()
        .map(|s| s.instruction)
        .zip(instruction_latency::read_table(&timings))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SASS the committed H100 run recorded (`results/h100/all/pipeline/pipeline.sass.gz`,
    /// ptxas 13.0 for sm_90): every instruction's long chain has exactly its own instruction
    /// beyond the short one (MUFU.SIN with the FMUL.RZ ptxas puts before it), so every row
    /// gets a figure; with timings of 4 cycles an instruction the figure is 4.
    #[test]
    fn every_chain_of_the_committed_sass_measures_its_instruction() {
        use std::io::Read;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("results/h100/all/pipeline/pipeline.sass.gz");
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap())
            .read_to_string(&mut text)
            .unwrap();
        // The recorded file carries two columns of marks before each cuobjdump line.
        let raw: String = text
            .lines()
            .skip_while(|l| l.starts_with("//"))
            .map(|l| format!("{}\n", l.get(2..).unwrap_or("")))
            .collect();
        let (_, kernels) = crate::analysis::sass::annotate(&raw);
        let iterations = 100;
        let spans: Vec<ChainSpans> = INSTRUCTIONS
            .iter()
            .map(|instruction| {
                let per_trip = |steps: u32| {
                    let step = if instruction.name == "mufu_sin" { 8 } else { 4 };
                    i64::from(iterations * (steps * step + 7))
                };
                let [s, l] = LATENCY_LENGTHS.map(per_trip);
                ChainSpans {
                    instruction: *instruction,
                    latency: vec![(s, l)],
                    throughput: vec![(1000, 2000)],
                }
            })
            .collect();
        for (instruction, reading) in read(&spans, &kernels, iterations) {
            assert!(
                instruction
                    .sass
                    .iter()
                    .any(|target| reading.sass.contains(target)),
                "{instruction:?}: {reading:?}"
            );
            // MUFU.SIN's steps take 8 cycles, of which its FMUL.RZ's 4 (FMUL's own chain)
            // are subtracted.
            let latency = reading.latency_cycles.unwrap_or(f64::NAN);
            assert!((latency - 4.0).abs() < 1e-9, "{instruction:?}: {reading:?}");
            assert!(reading.throughput_per_clock_per_sm.is_some(), "{reading:?}");
        }
    }
}

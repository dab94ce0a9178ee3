//! The launches of `cuda/dpx.cu` and the measurement: per function, its one-thread latency
//! chains (short and long) and its full-occupancy throughput kernels (short and long); per mix,
//! its throughput kernels. Returns the cycles as taken (per SM for the throughput kernels);
//! writes nothing.

use std::time::Duration;

use anyhow::{Context, Result};
use cudarc::driver::PushKernelArg;
use serde::{Deserialize, Serialize};

use crate::gpu::Gpu;
use crate::gpu::launch::{as_i32, launch_and_wait, line_of, one_block, read, zeros};

/// The module (`cuda/dpx.cu`).
pub const MODULE: &str = "dpx";
/// Calls per loop trip of the short and the long latency chain (`dpx_lat_NAME_32`, `_128`).
pub const LATENCY_STEPS: [u32; 2] = [32, 128];
/// Calls per loop trip of each chain of the short and the long throughput kernel.
pub const THROUGHPUT_STEPS: [u32; 2] = [8, 16];
/// Independent chains per thread of the throughput kernels (`CHAINS` in the kernel).
pub const CHAINS: u32 = 8;
/// Threads per block and blocks per SM of the throughput kernels: 2048 threads, a full SM.
pub const THREADS: u32 = 256;
pub const BLOCKS_PER_SM: u32 = 8;
/// The chains' operands y and z: kernel arguments, so that nothing folds at compile time.
const Y: i32 = 3;
const Z: i32 = -5;
/// How long any one launch may take before the GPU is reported hung.
const DEADLINE: Duration = Duration::from_secs(10);

/// One function of the table: its kernel name and what it calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Function {
    /// The kernel infix (`dpx_lat_NAME_32`, …).
    pub name: &'static str,
    /// What one call is, in CUDA.
    pub call: &'static str,
    /// A DPX function of the CUDA Math API (the others are the integer pipe's references).
    pub dpx: bool,
}

const fn dpx(name: &'static str, call: &'static str) -> Function {
    Function {
        name,
        call,
        dpx: true,
    }
}

const fn reference(name: &'static str, call: &'static str) -> Function {
    Function {
        name,
        call,
        dpx: false,
    }
}

/// The functions, in the order of `cuda/dpx.cu`.
pub const FUNCTIONS: [Function; 15] = [
    dpx("vimax3_s32", "__vimax3_s32"),
    dpx("vimin3_s32", "__vimin3_s32"),
    dpx("vimax3_s32_relu", "__vimax3_s32_relu"),
    dpx("vimax_s32_relu", "__vimax_s32_relu"),
    dpx("viaddmax_s32", "__viaddmax_s32"),
    dpx("viaddmin_s32", "__viaddmin_s32"),
    dpx("viaddmax_s32_relu", "__viaddmax_s32_relu"),
    dpx("viaddmax_u32", "__viaddmax_u32"),
    dpx("vibmax_s32", "__vibmax_s32 (its predicate counted)"),
    dpx("vimax3_s16x2", "__vimax3_s16x2"),
    dpx("viaddmax_s16x2", "__viaddmax_s16x2"),
    dpx("vimax_s16x2_relu", "__vimax_s16x2_relu"),
    reference("imax", "PTX max.s32"),
    reference("iadd3", "PTX add.u32 twice (x + y + z)"),
    reference("imad", "PTX mad.lo.u32"),
];

/// A mix: chains of `a` and of `b` alternating in one kernel (`dpx_thr_mix_A_B_8`, `_16`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mix {
    pub a: &'static str,
    pub b: &'static str,
}

impl Mix {
    pub fn name(&self) -> String {
        format!("mix_{}_{}", self.a, self.b)
    }
}

pub const MIXES: [Mix; 3] = [
    Mix {
        a: "viaddmax_s32",
        b: "iadd3",
    },
    Mix {
        a: "viaddmax_s32",
        b: "imad",
    },
    Mix {
        a: "vimax3_s32",
        b: "iadd3",
    },
];

/// The short and the long latency kernel of `name`.
pub fn latency_entries(name: &str) -> [String; 2] {
    LATENCY_STEPS.map(|steps| format!("dpx_lat_{name}_{steps}"))
}

/// The short and the long throughput kernel of `name` (a function or a mix).
pub fn throughput_entries(name: &str) -> [String; 2] {
    THROUGHPUT_STEPS.map(|steps| format!("dpx_thr_{name}_{steps}"))
}

/// Every kernel of the module the suite launches.
pub fn entries() -> Vec<String> {
    let mut all = Vec::new();
    for f in &FUNCTIONS {
        all.extend(latency_entries(f.name));
        all.extend(throughput_entries(f.name));
    }
    for m in &MIXES {
        all.extend(throughput_entries(&m.name()));
    }
    all
}

/// What one run asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub repeats: u32,
    pub latency_iterations: u32,
    pub throughput_iterations: u32,
    pub sms: u32,
}

/// One SM's share of a throughput launch: its blocks and the cycles from the first block's
/// start to the last one's end (its own clock64); zero blocks where none ran there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SmSpan {
    pub blocks: u32,
    pub cycles: i64,
}

/// The latency chains of one function: per repeat, the short and the long chain's cycles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySamples {
    pub name: String,
    pub cycles: Vec<[i64; 2]>,
}

/// The throughput kernels of one function or mix: per repeat, the short and the long
/// launch's span on every SM (indexed by %smid).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThroughputSamples {
    pub name: String,
    pub per_sm: Vec<[Vec<SmSpan>; 2]>,
}

/// Every sample the run took.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Samples {
    pub latency: Vec<LatencySamples>,
    pub throughput: Vec<ThroughputSamples>,
}

/// Runs every kernel of `plan`'s functions and mixes.
pub fn measure(gpu: &mut Gpu, plan: &Plan) -> Result<Samples> {
    let mut samples = Samples::default();
    for f in &FUNCTIONS {
        samples.latency.push(LatencySamples {
            name: f.name.into(),
            cycles: latency(gpu, f.name, plan)?,
        });
    }
    let names = FUNCTIONS
        .iter()
        .map(|f| f.name.to_string())
        .chain(MIXES.iter().map(Mix::name));
    for name in names {
        let per_sm = throughput(gpu, &name, plan)?;
        samples.throughput.push(ThroughputSamples { name, per_sm });
    }
    Ok(samples)
}

/// One launch of a latency kernel: the cycles between its two clock reads.
fn latency_launch(gpu: &mut Gpu, entry: &str, iterations: i32) -> Result<i64> {
    let function = gpu.function(MODULE, entry)?;
    let stream = gpu.stream().clone();
    let mut stamps = zeros::<i64>(gpu, 2, "latency stamps")?;
    let mut sink = zeros::<u32>(gpu, 1, "the sink")?;
    let mut builder = stream.launch_builder(&function);
    builder
        .arg(&mut stamps)
        .arg(&mut sink)
        .arg(&iterations)
        .arg(&Y)
        .arg(&Z);
    // SAFETY: dpx_lat_*(long long *stamps[2], unsigned *sink[1], int iterations, int y, int z),
    // one thread: stamps holds two values and sink one.
    unsafe { launch_and_wait(gpu, entry, builder, one_block(1), DEADLINE) }?;
    let stamps = read(gpu, &stamps, "latency stamps")?;
    let cycles = stamps[1] - stamps[0];
    anyhow::ensure!(cycles > 0, "{entry} returned unusable stamps {stamps:?}");
    Ok(cycles)
}

/// Per repeat, the short and the long chain of `name`, after one untimed launch of each.
fn latency(gpu: &mut Gpu, name: &str, plan: &Plan) -> Result<Vec<[i64; 2]>> {
    let [short, long] = latency_entries(name);
    let iterations = as_i32(plan.latency_iterations, "--latency-iterations")?;
    for entry in [&short, &long] {
        latency_launch(gpu, entry, iterations)?;
    }
    (0..plan.repeats)
        .map(|_| {
            Ok([
                latency_launch(gpu, &short, iterations)?,
                latency_launch(gpu, &long, iterations)?,
            ])
        })
        .collect()
}

/// One launch of a throughput kernel over every SM: each SM's span.
fn throughput_launch(
    gpu: &mut Gpu,
    entry: &str,
    iterations: i32,
    sms: u32,
) -> Result<Vec<SmSpan>> {
    let function = gpu.function(MODULE, entry)?;
    let stream = gpu.stream().clone();
    let blocks = sms * BLOCKS_PER_SM;
    let mut stamps = zeros::<i64>(gpu, 2 * blocks as usize, "throughput stamps")?;
    let mut smids = zeros::<u32>(gpu, blocks as usize, "the blocks' SMs")?;
    let mut sink = zeros::<u32>(gpu, (blocks * THREADS) as usize, "the sink")?;
    let mut builder = stream.launch_builder(&function);
    builder
        .arg(&mut stamps)
        .arg(&mut smids)
        .arg(&mut sink)
        .arg(&iterations)
        .arg(&Y)
        .arg(&Z);
    let config = line_of(blocks, THREADS);
    // SAFETY: dpx_thr_*(long long *stamps[2 * blocks], unsigned *smids[blocks],
    // unsigned *sink[blocks * THREADS], int iterations, int y, int z), launched with `blocks`
    // blocks of THREADS threads: every buffer holds what the kernel writes.
    unsafe { launch_and_wait(gpu, entry, builder, config, DEADLINE) }?;
    let stamps = read(gpu, &stamps, "throughput stamps")?;
    let smids = read(gpu, &smids, "the blocks' SMs")?;
    super::analysis::sm_spans(&stamps, &smids, sms)
        .with_context(|| format!("{entry} returned unusable stamps"))
}

/// Per repeat, the short and the long kernel of `name` over every SM, after one untimed
/// launch of each.
fn throughput(gpu: &mut Gpu, name: &str, plan: &Plan) -> Result<Vec<[Vec<SmSpan>; 2]>> {
    let [short, long] = throughput_entries(name);
    let iterations = as_i32(plan.throughput_iterations, "--throughput-iterations")?;
    for entry in [&short, &long] {
        throughput_launch(gpu, entry, iterations, plan.sms)?;
    }
    (0..plan.repeats)
        .map(|_| {
            Ok([
                throughput_launch(gpu, &short, iterations, plan.sms)?,
                throughput_launch(gpu, &long, iterations, plan.sms)?,
            ])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_in_the_module() {
        let ptx = crate::kernels::module(MODULE).unwrap().ptx;
        let all = entries();
        assert_eq!(all.len(), FUNCTIONS.len() * 4 + MIXES.len() * 2);
        for entry in all {
            assert!(ptx.contains(&format!(".entry {entry}(")), "{entry}");
        }
        for mix in &MIXES {
            for name in [mix.a, mix.b] {
                assert!(FUNCTIONS.iter().any(|f| f.name == name), "{name}");
            }
        }
    }

    #[test]
    fn the_module_is_built_for_hopper() {
        let ptx = crate::kernels::module(MODULE).unwrap().ptx;
        assert!(ptx.contains(".target sm_90"), "dpx.ptx is not compute_90 PTX");
    }
}

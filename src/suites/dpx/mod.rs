//! `gpubench dpx`: Hopper's DPX functions (the CUDA Math API's `__vimax3_s32`,
//! `__viaddmax_s32`, … for dynamic programming): latency and throughput per function, and
//! whether they issue to the SM's integer pipe (issue #74). The peer is Luo et al.
//! ("Benchmarking and Dissecting the Nvidia Hopper GPU Architecture", IPDPS 2024), who time
//! each function's loop with `%clock` on an H800: one thread for latency, one block of 1024
//! threads for the rate per SM. Here every timing is the difference of two chain lengths, so
//! the loop and the clock reads cancel, the rate fills every SM, and the SASS of one call is
//! read off the same two kernels.
//!
//! Method (`cuda/dpx.cu`, compute_90 PTX):
//! 1. **Latency**: one thread, a dependent chain x = f(x, y, z) of 32 and of 128 calls per
//!    loop trip (unrolled), `latency_iterations` (64) trips, clock64 around the loop; y and z
//!    are kernel arguments. Cycles per call = (long − short) / (96 × trips), median over
//!    `repeats` (5) with the range.
//! 2. **Throughput**: 8 blocks of 256 threads per SM on every SM (2048 threads, a full SM),
//!    8 independent chains per thread of 8 and of 16 calls per trip, `throughput_iterations`
//!    (32) trips; thread 0 of each block reads clock64 after a barrier before and after the
//!    loop and records its SM. Per SM: (the calls its blocks add in the long kernel) over (the
//!    cycles its span adds), median over the repeats; the figure is the median over the SMs,
//!    with every SM's value.
//! 3. **Integer pipe**: IADD3 (PTX `add.u32` twice) and IMAD (`mad.lo.u32`) alone, as above,
//!    and three 1:1 mixes (chains of A and of B alternating in one kernel): `__viaddmax_s32`
//!    with IADD3, with IMAD, and `__vimax3_s32` with IADD3. One pipe serving both predicts
//!    2 / (1/rate_A + 1/rate_B) for the mix, two pipes 2 · min(rate_A, rate_B) (less where
//!    the schedulers' issue caps it). The verdict is the prediction the mix lies nearer (in
//!    log terms, by a third of their distance); it is left unidentified where the
//!    predictions are within 20 % of each other or the mix lies between them. This is an
//!    inference from rates: it says whether two instructions compete for one issue port, not
//!    which unit the die has.
//!
//! **What the GPU executes** (`dpx.sass` beside every run; the summary states one call's SASS
//! per function, from the difference of the two latency kernels' opcode counts). ptxas of
//! CUDA 13.0 for sm_90, from this module's compute_90 PTX:
//!
//! | function | SASS per call |
//! |---|---|
//! | `__vimax3_s32`, `__vimin3_s32` | `VIMNMX3` (max `!PT`, min `PT`) |
//! | `__vimax3_s32_relu` | `VIMNMX3.RELU` |
//! | `__vimax_s32_relu` | `VIMNMX3.RELU` ×0.5: ptxas fuses two dependent calls into one three-input instruction, the operand twice |
//! | `__viaddmax_s32`, `__viaddmin_s32` | `VIADDMNMX` (max `!PT`, min `PT`) |
//! | `__viaddmax_s32_relu`, `__viaddmax_u32` | `VIADDMNMX.RELU`, `VIADDMNMX.U32` |
//! | `__vibmax_s32` | `ISETP.GE.AND` + `SEL`: no DPX instruction; counting its predicate adds `VIADD` and a predicated `IMAD.MOV` |
//! | `__vimax3_s16x2`, `__viaddmax_s16x2` | `VIMNMX3.S16x2`, `VIADDMNMX.S16x2` |
//! | `__vimax_s16x2_relu` | `VIMNMX3.S16x2.RELU` ×0.5 (fused pairs, as above) |
//! | PTX `max.s32` (reference) | `VIMNMX3` ×0.5 (fused pairs) |
//! | IADD3, IMAD (references) | `IADD3`, `IMAD` |
//!
//! So a chain of a two-input function measures half a three-input instruction per call: its
//! latency and rate are per call, as a program's chain of calls runs, not per instruction. In
//! the timed loops nothing else grows with the chain but the loop's own counter and branch.
//!
//! **Why the arch line matters**: below compute_90 the headers implement DPX in plain C
//! (`max(a + b, c)`; the 16x2 forms lane by lane). The same source compiled to compute_75 PTX
//! and JIT-compiled for sm_90 gives the same `VIADDMNMX`/`VIMNMX3` for the 32-bit functions
//! (ptxas fuses the add and the max itself), but `__vimax3_s16x2` becomes four `VIMNMX` and
//! four bit operations, `__viaddmax_s16x2` two `VIMNMX`, two `IMAD.IADD`, three `LOP3.LUT`
//! and more, and the compiler folds the `__vibmax_s32` chain away (max(max(x, y), y) is
//! max(x, y)), leaving one `VIMNMX` per loop trip: that chain would time nothing.
//!
//! Luo et al.'s H800 numbers for comparison (their repository's log; a loop of 1024 calls
//! whose branch and counter are in the count): latency 2 cycles for `__vimax_s32_relu` and
//! `__vimax_s16x2_relu`, 4 for `__vimax3_s32_relu`, `__vimax3_s16x2` and `__viaddmax_s16x2`,
//! 8 for `__vimax3_s32` and `__vibmax_s32`, 10 for `__viaddmax_s32`; about 59 calls/clk/SM for
//! the add-max functions, 32 for `__vimax3_s32` and `__vibmax_s32`, 72 for the two-input relu
//! functions (more than one instruction per lane per clock: the fused pairs above).
//!
//! Refused before compute capability 9.0 (the compute_90 module does not load there).
//! Files: `report`.

pub mod analysis;
pub mod measure;
pub mod report;
pub mod settings;

pub use settings::DpxArgs;

use anyhow::Result;

use self::measure::{
    BLOCKS_PER_SM, CHAINS, FUNCTIONS, LATENCY_STEPS, MIXES, MODULE, Mix, Plan, THREADS,
    THROUGHPUT_STEPS,
};
use self::report::Reading;
use crate::harness::{Redraw, SavedRun, suite};

const METHOD: &str = "compute_90 PTX (cuda/dpx.cu). Latency: one thread, a dependent chain x = f(x, y, z) (y, z kernel arguments) of 32 and of 128 calls per loop trip, unrolled, latency_iterations trips, clock64 around the loop; cycles per call = (long - short) / (96 x trips), median over the repeats. Throughput: 8 blocks of 256 threads per SM on every SM, 8 independent chains per thread of 8 and of 16 calls per trip, throughput_iterations trips; thread 0 of each block reads clock64 after a barrier before and after the loop and records %smid; per SM the calls its blocks add in the long kernel over the cycles its span adds, median over the repeats; the figure the median over the SMs. Integer pipe: IADD3 and IMAD chains alone, and 1:1 mixes (chains of A and B alternating); one shared pipe predicts 2/(1/rate_A + 1/rate_B), two pipes 2 min(rate_A, rate_B); the verdict is the prediction the mix lies nearer in log terms (by a third of their distance; unidentified where they are within 20%). SASS of one call: the difference of the two latency kernels' opcode counts over 96. Each kernel launched once untimed before its repeats";


pub fn run(args: &DpxArgs) -> Result<()> {
    args.validate()?;
    let device = args.target.device.index()?;
    let mut gpu = suite::open(&args.target, &[])?;
    let properties = gpu.properties()?;
    suite::require_hopper(&properties, device, "dpx", "DPX instructions")?;
    for entry in measure::entries() {
        gpu.function(MODULE, &entry)?;
    }
    let recorded = settings::Recorded {
        repeats: args.repeats,
        latency_iterations: args.latency_iterations,
        throughput_iterations: args.throughput_iterations,
        latency_steps: LATENCY_STEPS,
        throughput_steps: THROUGHPUT_STEPS,
        chains_per_thread: CHAINS,
        threads_per_block: THREADS,
        blocks_per_sm: BLOCKS_PER_SM,
        functions: FUNCTIONS.iter().map(|f| f.name.to_string()).collect(),
        mixes: MIXES.iter().map(Mix::name).collect(),
        method: METHOD.into(),
    };
    suite::run_opened(
        gpu,
        &Dpx,
        &args.target,
        &[MODULE],
        &recorded,
        |gpu, suite| {
            let disassembly = crate::gpu::sass::beside(&[MODULE], &properties.compute_capability);
            let plan = Plan {
                repeats: args.repeats,
                latency_iterations: args.latency_iterations,
                throughput_iterations: args.throughput_iterations,
                sms: u32::try_from(properties.multiprocessors).unwrap_or(1).max(1),
            };
            let samples = measure::measure(gpu, &plan)?;
            suite.release_gpu(gpu)?;
            let sass = suite.keep_instructions(disassembly, "dpx.sass")?;
            let reading = Reading {
                repeats: args.repeats,
                latency_iterations: args.latency_iterations,
                throughput_iterations: args.throughput_iterations,
                samples,
                method: METHOD.into(),
                sass,
            };
            report::write(&suite.run, &reading)?;
            print(&reading);
            Ok(())
        },
    )
}

fn print(reading: &Reading) {
    let table = report::table(reading);
    println!(
        "{:<40} {:>16} {:>20}  SASS of one call",
        "function", "latency, cycles", report::RATE_UNIT
    );
    let show = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
    for (row, _) in &table.functions {
        println!(
            "{:<40} {:>16} {:>20}  {}",
            row.call,
            show(row.latency_cycles),
            show(row.calls_per_clk_sm),
            if row.sass_per_call.is_empty() {
                "(no SASS)"
            } else {
                &row.sass_per_call
            }
        );
    }
    for (row, _) in &table.mixes {
        println!("{} + {}: {}", row.a, row.b, report::pipes_words(row));
    }
    if reading.sass.instructions.is_empty() {
        println!("no SASS: {}", reading.sass.status);
    }
}

/// `gpubench dpx` in the suite registry.
pub struct Dpx;

impl crate::harness::SuiteDef for Dpx {
    const NAME: &'static str = "dpx";
    const ABOUT: &'static str = "Hopper's DPX functions (__vimax3_s32, __viaddmax_s32, ...): latency and throughput per function, the SASS each becomes, and whether they share the integer pipe";
    type Args = DpxArgs;

    const RUN: crate::harness::Measure<DpxArgs> = run;

    const SECONDS_IN_ALL: (f64, f64) = (0.1, 0.2);

    fn quick(defaults: DpxArgs) -> DpxArgs {
        DpxArgs {
            repeats: 3,
            ..defaults
        }
    }

    const FIGURES: crate::harness::ReadFigures = report::figures;

    fn redraw(&self, _run: &SavedRun, _out: &mut Redraw) -> Result<()> {
        // No plot: the table of functions is the result.
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::defaults;

    #[test]
    fn the_flags_are_checked() {
        assert!(defaults::<DpxArgs>().validate().is_ok());
        for bad in [
            DpxArgs {
                repeats: 0,
                ..defaults()
            },
            DpxArgs {
                latency_iterations: 0,
                ..defaults()
            },
            DpxArgs {
                throughput_iterations: 200_000,
                ..defaults()
            },
        ] {
            assert!(bad.validate().is_err());
        }
    }
}

//! `gpubench flops`: the peak FMA rate of the CUDA cores over all SMs (FP32, FP64, FP16x2 and
//! BF16x2), the compute ceilings of the roofline beside the tensor suite's.

pub mod analysis;
pub mod measure;
pub mod report;
pub mod settings;

pub use settings::FlopsArgs;

use anyhow::Result;

use self::measure::{self as flops, CHAINS, THREADS, UNROLL};
use self::report as flops_report;
use crate::harness::suite;
use crate::harness::{Redraw, SavedRun};

pub fn run(args: &FlopsArgs) -> Result<()> {
    args.validate()?;
    let mut gpu = suite::open(&args.target, &[])?;
    let properties = gpu.properties()?;
    let kernels = flops::runnable(suite::compute_major(&properties));
    for kernel in &kernels {
        gpu.function(kernel.module, kernel.entry)?;
    }
    let mut modules: Vec<&'static str> = kernels.iter().map(|k| k.module).collect();
    modules.dedup();
    let recorded = settings::Recorded {
        accumulators_per_thread: CHAINS,
        fmas_per_accumulator_per_trip: UNROLL,
        iterations: args.iterations,
        kernels: kernels.iter().map(|k| k.entry.to_string()).collect(),
        method: "one block per SM, then one block alone; clock64 and globaltimer stamps of thread 0 around the loop after a barrier on both sides; FLOP per clock of each SM, median and range over SMs; TFLOPS over the launch's wall time".into(),
        threads_per_block: THREADS,
    };
    suite::run_opened(
        gpu,
        &Flops,
        &args.target,
        &modules,
        &recorded,
        |gpu, suite| {
            let sms = u32::try_from(properties.multiprocessors).unwrap_or(1);
            let disassembly = crate::gpu::sass::beside(&modules, &properties.compute_capability);
            let results = flops::measure(
                gpu,
                &kernels,
                args.iterations,
                sms,
                &properties.compute_capability,
            )?;
            suite.release_gpu(gpu)?;
            let (_, record) = suite.keep_disassembly(disassembly, "flops.sass")?;
            let rows = flops_report::rows(&results, &record.kernels);
            flops_report::write(&suite.run, &rows, &record.status)?;
            for row in &rows {
                if let Some(problem) = &row.sass_problem {
                    eprintln!("warning: {problem}; its figures are left out of the summary");
                }
            }
            for row in rows.iter().filter(|r| r.sass_problem.is_none()) {
                println!(
                    "{:<13} {:>6.1} FLOP/clock/SM (SMs {:.1}-{:.1}; one SM alone {:.1}), {:.1} TFLOPS at {:.0} MHz{}",
                    row.name,
                    row.flop_per_clock_per_sm,
                    row.flop_per_clock_per_sm_min,
                    row.flop_per_clock_per_sm_max,
                    row.one_sm_flop_per_clock,
                    row.tflops,
                    row.sm_mhz_during,
                    row.fraction_of_peak.map_or(String::new(), |f| format!(
                        ", {:.1} % of the whitepaper peak",
                        100.0 * f
                    ))
                );
            }
            Ok(())
        },
    )
}

/// `gpubench flops` in the suite registry.
pub struct Flops;

impl crate::harness::SuiteDef for Flops {
    const NAME: &'static str = "flops";
    const ABOUT: &'static str = "Peak FMA rate of the CUDA cores over all SMs: FP32, FP64, FP16x2, BF16x2 (the roofline's compute ceilings)";
    type Args = FlopsArgs;

    const RUN: crate::harness::Measure<FlopsArgs> = run;

    const SECONDS_IN_ALL: (f64, f64) = (0.2, 0.2);

    fn quick(defaults: FlopsArgs) -> FlopsArgs {
        FlopsArgs {
            iterations: 256,
            ..defaults
        }
    }

    const FIGURES: crate::harness::ReadFigures = flops_report::figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        let rows = flops_report::read_rows(run.dir)?;
        let title = run.title(flops_report::title());
        out.plot("flops", |p| flops_report::draw(p, &title, &rows))
    }
}

//! `gpubench tensor`: latency and throughput of the tensor cores through `mma.sync` and
//! Hopper's `wgmma.mma_async`, for every input type, against the device's dense peak; with
//! flags also wgmma with A from registers, below N = 64, and the 2:4-sparse forms
//! (`measure`, cuda/tensor_variants.cu).

pub mod analysis;
pub mod measure;
pub mod report;
pub mod settings;
pub mod sustain;

pub use settings::TensorArgs;

use anyhow::Result;

use self::measure::{self as tensor, WGMMA_UNROLL};
use self::report as tensor_report;
use crate::harness::suite;
use crate::harness::{Redraw, SavedRun};

pub fn run(args: &TensorArgs) -> Result<()> {
    let widths = args.widths()?;
    let extras = tensor::Extras {
        a_registers: args.a_from_registers,
        sparse: args.sparse,
    };
    let kernels = tensor::selected(&widths, extras);
    // The kernels are loaded only once the device is known to be able to run them.
    let mut gpu = suite::open(&args.target, &[])?;
    let properties = gpu.properties()?;
    // The kernels are PTX for sm_90a (wgmma exists nowhere else), which the driver compiles
    // for compute capability 9.0 only.
    if properties.compute_capability != "9.0" {
        return Err(crate::error::Unsupported(format!(
            "the tensor suite needs a GPU of compute capability 9.0 (Hopper: H100, H200), whose wgmma its kernels use; device {} is a {} (CC {})",
            args.target.device.index()?, properties.name, properties.compute_capability
        ))
        .into());
    }
    let entries: Vec<(&str, String)> = kernels
        .iter()
        .flat_map(|k| {
            [
                (k.module(), k.latency_entry()),
                (k.module(), k.throughput_entry()),
            ]
        })
        .collect();
    let mut modules: Vec<&str> = kernels.iter().map(|k| k.module()).collect();
    if args.sustain > 0.0 {
        modules.push(sustain::MODULE);
    }
    modules.sort_unstable();
    modules.dedup();
    let recorded = settings::Recorded {
        iterations: args.iterations,
        method: "clock64 stamps around each block's loop (after a barrier on both sides); latency: one warp or warpgroup, every MMA dependent on the last (each wgmma committed and waited for); throughput: one block per SM, FLOP per clock of each block's SM, median over SMs".into(),
        mma_chains_per_warp: tensor::MMA_CHAINS,
        mma_unroll: tensor::MMA_UNROLL,
        mma_warps_per_block: tensor::MMA_WARPS,
        wgmma_operands: if args.a_from_registers {
            "A and B from shared memory through descriptors, no swizzle; and A from registers (FP16), B from shared memory".into()
        } else {
            "A and B from shared memory through descriptors, no swizzle".into()
        },
        wgmma_unroll: WGMMA_UNROLL,
        wgmma_warpgroups_per_block: tensor::WGMMA_GROUPS,
        wgmma_widths: widths,
        wgmma_a_from_registers: args.a_from_registers,
        sparse: args.sparse,
        sustain_seconds: (args.sustain > 0.0).then_some(args.sustain),
    };
    for (module, entry) in &entries {
        gpu.function(module, entry)?;
    }
    if args.sustain > 0.0 {
        gpu.function(sustain::MODULE, sustain::ENTRY)?;
    }
    suite::run_opened(
        gpu,
        &Tensor,
        &args.target,
        &modules,
        &recorded,
        |gpu, suite| {
            let mhz = suite.metadata.sm_clock_before.mhz;
            let sms = u32::try_from(properties.multiprocessors).unwrap_or(1);
            // ptxas on the 22 kernels takes seconds of host time: it runs beside the GPU work.
            let disassembly = crate::gpu::sass::beside(&modules, &properties.compute_capability);
            let results = tensor::measure(
                gpu,
                &kernels,
                args.iterations,
                sms,
                mhz,
                &properties.compute_capability,
            )?;
            if args.sustain > 0.0 {
                // The short figures are written before the GPU is held for seconds: a
                // sustained part that fails, or is stopped, leaves them (and the launches it
                // saved so far) behind.
                write_short(suite, disassembly, &results)?;
                // The power cap that the sustained run reaches says nothing of the short
                // figures, measured before it: NVML judges the two apart.
                suite.judge_apart_from_here(&[tensor_report::SUSTAINED]);
                let sustained = sustain::measure(
                    gpu,
                    || suite.nvml_sample(),
                    |rows| suite.run.write_csv(tensor_report::SUSTAINED, rows),
                    sms,
                    args.sustain,
                )?;
                suite.release_gpu(gpu)?;
                print_sustained(&sustained);
            } else {
                suite.release_gpu(gpu)?;
                write_short(suite, disassembly, &results)?;
            }
            Ok(())
        },
    )
}

/// The short measurements' files (the SASS, `tensor.csv`, `tensor.json`) and their console
/// lines, once the disassembly read beside the run is in.
fn write_short(
    suite: &crate::harness::suite::SuiteRun,
    disassembly: crate::gpu::sass::Beside,
    results: &[tensor::KernelResult],
) -> Result<()> {
    let (text, record) = suite.keep_disassembly(disassembly, "tensor.sass")?;
    let sass = text
        .as_deref()
        .map(self::analysis::mma_instructions)
        .unwrap_or_default();
    let rows = tensor_report::rows(results, &sass);
    tensor_report::write(&suite.run, &rows, &sass, &record.status)?;
    for row in &rows {
        if let Some(problem) = &row.sass_problem {
            eprintln!("warning: {problem}; its figures are left out of the summary");
        }
    }
    for row in rows.iter().filter(|r| r.sass_problem.is_none()) {
        println!(
            "{:<9} {:<11} {:<14} latency {:>7.1} cycles, {:>7.0} FLOP/clock/SM ({:.1} TFLOPS{})",
            row.family,
            row.shape,
            row.types,
            row.latency_cycles,
            row.flop_per_clock_per_sm,
            row.tflops,
            row.fraction_of_peak.map_or(String::new(), |f| format!(
                ", {:.1} % of {} peak",
                100.0 * f,
                if row.family.contains(".sp") { "the sparse" } else { "dense" }
            ))
        );
    }
    Ok(())
}

/// The sustained run's settled state per fill, on the console.
fn print_sustained(sustained: &[sustain::SustainedRow]) {
    for s in sustain::settled(sustained) {
        println!(
            "sustained FP16 wgmma, {} operands: first launch {:.1} TFLOPS, settled {:.1} TFLOPS at {:.0} MHz{}",
            s.fill,
            s.first_tflops,
            s.tflops.median,
            s.sm_mhz.median,
            s.power_watts.as_ref().map_or(String::new(), |p| format!(
                ", {:.0} W, {:.2} TFLOPS/W",
                p.median,
                s.tflops_per_watt().unwrap_or(f64::NAN)
            ))
        );
    }
}

/// `gpubench tensor` in the suite registry.
pub struct Tensor;

impl crate::harness::SuiteDef for Tensor {
    const NAME: &'static str = "tensor";
    const ABOUT: &'static str = "Tensor cores: mma.sync and wgmma latency and throughput per input type (Luo et al. 2024)";
    type Args = TensorArgs;

    const RUN: crate::harness::Measure<TensorArgs> = run;

    const SECONDS_IN_ALL: (f64, f64) = (0.3, 0.3);

    fn quick(defaults: TensorArgs) -> TensorArgs {
        TensorArgs {
            iterations: 128,
            ..defaults
        }
    }

    const FIGURES: crate::harness::ReadFigures = tensor_report::figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        let rows = tensor_report::read_rows(run.dir)?;
        let title = run.title(tensor_report::title());
        out.plot("tensor", |p| tensor_report::draw(p, &title, &rows))?;
        if crate::report::saved::find(run.dir, tensor_report::SUSTAINED).is_none() {
            return Ok(());
        }
        let sustained: Vec<sustain::SustainedRow> =
            crate::report::saved::read_csv(run.dir, tensor_report::SUSTAINED)?;
        let title = run.title(tensor_report::sustained_title());
        out.plot("tensor-sustained", |p| {
            tensor_report::draw_sustained(p, &title, &sustained)
        })
    }
}

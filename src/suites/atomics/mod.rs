//! `gpubench atomics`: latency and throughput of atom / red on global and shared memory, 32 and
//! 64 bit, uncontended and under contention, and which unit serves the global ones.

pub mod analysis;
pub mod launch;
pub mod measure;
pub mod report;
pub mod settings;

pub use settings::AtomicsArgs;

use anyhow::Result;

use self::measure as atomics;
use self::report as atomics_report;
use crate::harness::suite;
use crate::harness::{Redraw, SavedRun};


pub fn run(args: &AtomicsArgs) -> Result<()> {
    let plan = args.plan()?;
    let entries = atomics::entries();
    let pairs: Vec<(&str, &str)> = entries.iter().map(|e| ("atomics", e.as_str())).collect();
    let recorded = settings::Recorded {
        block_threads: atomics::BLOCK_THREADS,
        chain_stride_bytes: atomics::CHAIN_STRIDE_BYTES,
        footprints_bytes: plan.footprints.clone(),
        method: "latency: one thread chases a random chain (one element per 128-byte line) with the atomic returning the next index and leaving memory unchanged, beside the same chase with ld.global.cg or ld.shared; throughput: one 1024-thread block per SM, events around the launch, operations per SM clock over the GPU".into(),
        repeats: plan.repeats,
        shared_ring_stride_words: atomics::SHARED_STRIDE_WORDS,
        shared_ring_words: atomics::SHARED_WORDS,
        steps: atomics::STEPS,
        storm_ms: plan.storm_ms,
        unroll: atomics::ATOMIC_UNROLL,
    };
    // Built while the process waits for the GPU and the GPU measures.
    let chains = atomics::start_chains(&plan);
    suite::run(
        &Atomics,
        &args.target,
        &pairs,
        &recorded,
        |gpu, suite| {
            let properties = gpu.properties()?;
            let mhz = suite.metadata.sm_clock_before.mhz;
            let sms = u32::try_from(properties.multiprocessors).unwrap_or(1);
            let disassembly =
                crate::gpu::sass::beside(&["atomics"], &properties.compute_capability);
            let results = atomics::measure(gpu, &plan, chains, sms, mhz)?;
            crate::harness::sharing::step_done("atomics measured");
            suite.release_gpu(gpu)?;
            let (text, record) = suite.keep_disassembly(disassembly, "atomics.sass")?;
            let sass = text
                .as_deref()
                .map(self::analysis::atomic_instructions)
                .unwrap_or_default();
            let latency = atomics_report::latency_rows(&results, &sass);
            let throughput = atomics_report::throughput_rows(&results, &sass);
            atomics_report::write(&suite.run, &latency, &throughput, &sass, &record.status)?;
            for problem in latency
                .iter()
                .filter_map(|r| r.sass_problem.as_ref())
                .chain(throughput.iter().filter_map(|r| r.sass_problem.as_ref()))
            {
                eprintln!("warning: {problem}; its figures are left out of the summary");
            }
            for row in &latency {
                println!(
                    "{:<6} {:<4} {:<4} {:>10}: {:>7.1} cycles per step{}",
                    row.space,
                    row.width,
                    row.op,
                    crate::report::plot::binary_bytes(row.footprint_bytes as f64),
                    row.cycles_per_step,
                    row.sass_instruction
                        .as_deref()
                        .map_or(String::new(), |i| format!(" ({i})"))
                );
            }
            for row in &throughput {
                println!(
                    "{:<6} {:<4} {:<9} {:<30} {:>9.2} ops/clock",
                    row.space, row.width, row.variant, row.pattern, row.ops_per_clock
                );
            }
            Ok(())
        },
    )
}

/// `gpubench atomics` in the suite registry.
pub struct Atomics;

impl crate::harness::SuiteDef for Atomics {
    const NAME: &'static str = "atomics";
    const ABOUT: &'static str = "Atomics: atom/red latency and throughput on global and shared memory under contention (Luo et al. 2024)";
    type Args = AtomicsArgs;

    const RUN: crate::harness::Measure<AtomicsArgs> = run;

    const SECONDS_IN_ALL: (f64, f64) = (1.0, 1.2);

    fn quick(defaults: AtomicsArgs) -> AtomicsArgs {
        AtomicsArgs {
            repeats: 1,
            // Half the storm: the suite's GPU time on an H200 fell from 1.1 to 0.8 s
            // (each storm's probe and calibration launches are the rest); a storm
            // still lasts about 50 times a launch's overhead.
            storm_ms: 0.5,
            ..defaults
        }
    }

    const FIGURES: crate::harness::ReadFigures = atomics_report::figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        let latency = atomics_report::read_latency(run.dir)?;
        let throughput = atomics_report::read_throughput(run.dir)?;
        let title = run.title(atomics_report::title());
        out.plot("atomics", |p| {
            atomics_report::draw(p, &title, &latency, &throughput)
        })
    }
}

//! `gpubench pipeline`: latency and throughput of arithmetic operations, and Fig. 6's sweep.

pub mod analysis;
pub mod chains;
pub mod instruction_latency;
pub mod launch;
pub mod measure;
pub mod report;
pub mod settings;

pub use settings::PipelineArgs;

use anyhow::{Context, Result};

use self::analysis::saturation_warps;
use self::chains::{self as instruction_chains, Chains, INSTRUCTIONS};
use self::measure::{self as pipeline, OPERATIONS};
use self::report as pipeline_report;
use self::settings::Recorded;
use crate::harness::suite;
use crate::harness::{Redraw, SavedRun};

pub fn run(args: &PipelineArgs) -> Result<()> {
    let swept = args.swept()?;
    let chain_entries = INSTRUCTIONS.iter().flat_map(|i| {
        [Chains::Latency, Chains::Throughput]
            .into_iter()
            .flat_map(move |chains| i.entries(chains).map(|entry| ("pipeline", entry)))
    });
    let entries: Vec<(&str, String)> = OPERATIONS
        .iter()
        .flat_map(|o| {
            [
                ("pipeline", format!("lat_{}", o.name)),
                ("pipeline", format!("thr_{}", o.name)),
            ]
        })
        .chain(chain_entries)
        .collect();
    let entries: Vec<(&str, &str)> = entries.iter().map(|(m, e)| (*m, e.as_str())).collect();
    let recorded = Recorded {
        instruction_latency_chain_lengths: Some(instruction_chains::LATENCY_LENGTHS.to_vec()),
        instruction_repeats: Some(instruction_chains::REPEATS),
        instruction_throughput_chain_lengths: Some(
            instruction_chains::THROUGHPUT_LENGTHS.to_vec(),
        ),
        iterations: args.iterations,
        latency_warps: 1,
        method: "clock64 stamps by lane 0 of every warp around the op loop; one untimed launch before each timed one".into(),
        sweep_op: args.sweep_op.clone(),
        throughput_chains_per_thread: pipeline::THROUGHPUT_CHAINS,
        throughput_threads: pipeline::THROUGHPUT_THREADS,
    };
    suite::run(
        &Pipeline,
        &args.target,
        &entries,
        &recorded,
        |gpu, suite| {
            let disassembly =
                crate::gpu::sass::beside(&["pipeline"], &suite.metadata.device.compute_capability);
            let results = pipeline::measure(gpu, args.iterations)?;
            let chains = instruction_chains::measure(gpu, args.iterations)?;
            let sweep = pipeline::warp_sweep(gpu, swept, args.iterations, 32)?;
            suite.release_gpu(gpu)?;
            let saturation = saturation_warps(&sweep, 0.95);
            let (_, record) = suite.keep_disassembly(disassembly, "pipeline.sass")?;
            let read = instruction_chains::read(&chains, &record.kernels, args.iterations);
            let instructions = pipeline_report::instruction_rows(&read);
            let operations_sass: Vec<Option<String>> = OPERATIONS
                .iter()
                .map(|o| pipeline::timed_sass(o, &record.kernels))
                .collect();
            pipeline_report::write(
                &suite.run,
                &pipeline_report::Measured {
                    operations: &results,
                    operations_sass: &operations_sass,
                    instructions: &instructions,
                    sass_status: &record.status,
                    sweep: &sweep,
                    saturation,
                    swept: swept.name,
                },
            )?;
            print!("{}", pipeline_report::render_table(&results));
            print!("{}", pipeline_report::render_instructions(&instructions));
            if let (Some(knee), Some(best)) = (
                saturation,
                sweep.iter().map(|p| p.ops_per_clock).reduce(f64::max),
            ) {
                println!(
                    "{} {}: throughput reaches 95% of its peak ({best:.1} ops/clock/SM) at {knee} warps",
                    swept.kind, swept.label
                );
            }
            Ok(())
        },
    )
}

/// `gpubench pipeline` in the suite registry.
pub struct Pipeline;

impl crate::harness::SuiteDef for Pipeline {
    const NAME: &'static str = "pipeline";
    const ABOUT: &'static str = "Latency and throughput of arithmetic operations (Wong Tables III-IV, Fig. 6)";
    type Args = PipelineArgs;

    const RUN: crate::harness::Measure<PipelineArgs> = run;

    const SECONDS_IN_ALL: (f64, f64) = (0.4, 0.4);

    fn quick(defaults: PipelineArgs) -> PipelineArgs {
        PipelineArgs {
            iterations: 64,
            ..defaults
        }
    }

    const FIGURES: crate::harness::ReadFigures = self::report::figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        let sweep_op = match run.requested::<PipelineArgs>()? {
            Some(asked) => asked.sweep_op,
            None => run.metadata.settings::<Recorded>()?.sweep_op,
        };
        let sweep: Vec<self::analysis::WarpPoint> =
            crate::report::saved::read_csv(run.dir, "pipeline_warps.csv")?;
        let saturation = self::analysis::saturation_warps(&sweep, 0.95);
        let operation = pipeline::OPERATIONS
            .iter()
            .find(|o| o.name == sweep_op)
            .with_context(|| format!("unknown swept operation {sweep_op}"))?;
        let title = run.title(&pipeline_report::title(operation));
        out.plot("pipeline", |p| {
            pipeline_report::draw(p, &title, &sweep, saturation)
        })
    }
}

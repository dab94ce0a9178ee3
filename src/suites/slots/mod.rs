//! `gpubench slots`: the six tagged workloads, their slot accounting, the tags' cost, and
//! (where ncu is installed) Nsight Compute's warp execution efficiency beside it.

pub mod analysis;
pub mod launch;
pub mod measure;
pub mod ncu;
mod profiler;
pub mod report;
pub mod settings;

pub use settings::SlotsArgs;

use std::collections::BTreeMap;

use anyhow::Result;

use self::measure::{self as slots, WORKLOADS};
use self::settings::Recorded;
use ncu::Efficiency;
use crate::gpu::Gpu;
use crate::harness::suite;
use crate::harness::{PlannedSuite, Redraw, SavedRun};


pub fn run(args: &SlotsArgs) -> Result<()> {
    let chosen = args.workloads()?;
    if args.child_plain {
        let mut gpu = Gpu::open(args.target.device.index()?)?;
        // ncu sets itself up on an empty first range, while the suite that profiles this
        // program waits off the GPU (`ncu::NcuRun::hand_over`); then the GPU is this program's again.
        if let Some(set_up) = crate::harness::sharing::program_files() {
            std::fs::File::create(set_up.with_extension("context"))?;
            profiler::profiled(&mut gpu, |_| Ok::<(), anyhow::Error>(()))?;
            crate::harness::sharing::step_done("ncu set up on an empty range");
            std::fs::File::create(set_up.with_extension("set-up"))?;
            crate::harness::sharing::wait_for(&set_up.with_extension("again"))?;
            crate::harness::sharing::step_done("the GPU again");
        }
        // One profiler range per workload: ncu reports each as one sum (`ncu::start`).
        for workload in chosen {
            profiler::profiled(&mut gpu, |gpu| slots::run_plain(gpu, workload, args.seed))?;
            crate::harness::sharing::step_done(&format!("{workload}'s profiler range"));
        }
        // The suite that handed this program the GPU takes it back on this word, while ncu
        // still reads the counters and prints. The word comes before the context goes: under
        // ncu its teardown took 0.4-1.0 s on an H200, and a context's destruction does not
        // disturb another process's timing (no kernel of this one runs any more).
        crate::harness::sharing::done_with_gpu();
        drop(gpu);
        return Ok(());
    }
    args.validate()?;
    let recorded = Recorded {
        method: "tagged kernels count per branch (warp-vote + leader atomics) and one slot per lane per tagged region; tags compiled out in the plain variant; GPU time between events, median of the repeats".into(),
        ncu: !args.no_ncu,
        repeats: args.repeats,
        seed: args.seed,
        workloads: chosen.iter().map(|w| w.to_string()).collect(),
    };
    // ncu starts up while this process waits for the GPU and measures; its program
    // gets the GPU once this one is done with it.
    let profile: Result<ncu::NcuRun, String> = if args.no_ncu {
        Err("skipped (--no-ncu)".into())
    } else {
        match ncu::find() {
            None => Err("ncu is not on PATH".into()),
            Some(path) => {
                eprintln!("slots: profiling the plain kernels with {}", path.display());
                plain_child(args, &chosen)
                    .and_then(|program| ncu::start(&path, &program, &chosen))
                    .map_err(|e| format!("{e:#}"))
            }
        }
    };
    suite::run(
        &Slots,
        &args.target,
        &[("slots", "dot_tagged")],
        &recorded,
        |gpu, suite| {
            let mut results = Vec::new();
            for &workload in &chosen {
                eprintln!("slots: {workload}");
                results.push(slots::run(gpu, workload, args.repeats, args.seed)?);
            }
            // ncu's program has the GPU next; once it is done with it, so is this suite, and
            // ncu's reading and printing of its table (and this suite's report) overlap the
            // next suite.
            let handed = profile.and_then(|mut run| match run.hand_over() {
                Ok(held) => Ok((run, held)),
                Err(e) => Err(format!("{e:#}")),
            });
            suite.release_gpu(gpu)?;
            let ended = std::time::Instant::now();
            let ncu_outcome: Result<BTreeMap<&'static str, Efficiency>, String> =
                handed.and_then(|(run, held)| {
                    let sums = run.finish().map_err(|e| format!("{e:#}"));
                    eprintln!(
                        "slots: ncu's program had the GPU {:.2} s; ncu ended {:.2} s after this suite's time on the GPU",
                        held.as_secs_f64(),
                        ended.elapsed().as_secs_f64()
                    );
                    sums
                });
            let rows = report::rows(&results, ncu_outcome.as_ref().ok());
            report::write(&suite.run, &results, &rows, ncu_outcome.as_ref().err())?;
            print!("{}", report::render_text(&rows));
            if let Err(reason) = &ncu_outcome {
                println!("ncu cross-check: {reason}");
            }
            Ok(())
        },
    )
}

/// `gpubench slots` in the suite registry.
pub struct Slots;

impl crate::harness::SuiteDef for Slots {
    const NAME: &'static str = "slots";
    const ABOUT: &'static str = "Lane slots left idle by intrinsic and extrinsic branches in six tagged workloads (Gupta & Datta Figs 6-8), with the tags' cost and an ncu cross-check";
    type Args = SlotsArgs;

    const RUN: crate::harness::Measure<SlotsArgs> = run;

    const SECONDS_IN_ALL: (f64, f64) = (0.4, 3.7);

    // Nsight Compute's cross-check takes about 5 s of a quick run; `gpubench slots`
    // and the full run keep it.
    fn quick(defaults: SlotsArgs) -> SlotsArgs {
        SlotsArgs {
            repeats: 3,
            no_ncu: true,
            ..defaults
        }
    }

    fn plan(&self, quick: bool) -> Vec<PlannedSuite> {
        let (settings, seconds) = Self::in_all(quick);
        let planned = PlannedSuite::new::<Self>(Self::NAME, &settings, seconds);
        // ncu starts up while the suites before measure (its program waits for the GPU).
        vec![if quick {
            planned
        } else {
            planned.prepared_from_start()
        }]
    }

    const FIGURES: crate::harness::ReadFigures = self::report::figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        let rows: Vec<self::report::WorkloadRow> =
            crate::report::saved::read_csv(run.dir, "slots.csv")?;
        let title = run.title(self::report::TITLE);
        out.plot("slots", |p| self::report::draw(p, &title, &rows))
    }
}

/// The command line of the child ncu profiles: these settings with `--child-plain` and the
/// chosen workloads, turned into flags by clap's description of them.
fn plain_child(args: &SlotsArgs, chosen: &[&str]) -> Result<Vec<String>> {
    let child = SlotsArgs {
        child_plain: true,
        no_ncu: args.no_ncu,
        only: Some(chosen.join(",")),
        repeats: args.repeats,
        seed: args.seed,
        target: crate::cli::Target {
            device: args.target.device.clone(),
            output: None,
        },
    };
    let mut program = vec![<Slots as crate::harness::SuiteDef>::NAME.to_string()];
    program.extend(crate::harness::Suite::flags(
        &Slots,
        &serde_json::to_value(&child)?,
    )?);
    Ok(program)
}

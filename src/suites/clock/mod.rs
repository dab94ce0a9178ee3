//! `gpubench clock`: timer overheads, the SM clock, and whether SMs share a cycle counter. Its
//! measurements (`experiments::clock`) and their reading (`analysis::clock`) stay in the core:
//! every suite measures the SM clock before and after it runs.

pub mod report;
pub mod settings;

pub use settings::ClockArgs;

use std::time::Duration;

use anyhow::{Context, Result};

use self::report as clock_report;
use self::settings::Recorded;
use crate::analysis::clock::counter_scope;
use crate::experiments::clock::{
    TWO_TIMERS_PAIRS, measure_counter_scope, measure_sm_clock, measure_timer_overheads,
    measure_two_timers,
};
use crate::harness::suite;
use crate::harness::{Redraw, SavedRun};

pub fn run(args: &ClockArgs) -> Result<()> {
    args.validate()?;
    let entries = [("clock", "timer_overheads"), ("clock", "clock_scope")];
    let recorded = Recorded {
        blocks_per_sm: args.blocks_per_sm,
        method: "overheads: back-to-back reads in one thread; SM clock against two timers: pairs of a 10 and a 110 ms busy-wait stamped in clock64 and %globaltimer and timed by the host's monotonic clock around launch and wait (the pair's difference cancels both); scope: thread 0 of each block stamps clock64 and %globaltimer around a busy-wait, and the SMs' clock64 − f·globaltimer offsets are compared".into(),
        pairs: args.pairs,
        spin_us: args.spin_us,
    };
    suite::run(
        &Clock,
        &args.target,
        &entries,
        &recorded,
        |gpu, suite| {
            let overheads = measure_timer_overheads(gpu, args.pairs)?;
            let sm_clock = measure_sm_clock(gpu)?;
            // Not on the simulated device: its %globaltimer is its simulated cycles, and 110 ms
            // of them are hours of host time.
            let against = if gpu.simulated {
                None
            } else {
                let two_timers = measure_two_timers(gpu, TWO_TIMERS_PAIRS)?;
                let nvml = suite.nvml_sample();
                Some(clock_report::ClockAgainstTimers {
                    two_timers,
                    nvml_sm_mhz: nvml.and_then(|s| s.clocks).map(|c| c.sm_mhz),
                    nvml_max_sm_mhz: suite
                        .metadata
                        .nvml
                        .identity
                        .as_ref()
                        .and_then(|i| i.max_clocks)
                        .map(|c| c.sm_mhz),
                })
            };
            let blocks = u32::try_from(suite.metadata.device.multiprocessors)
                .context("the device reports a negative SM count")?
                * args.blocks_per_sm;
            let stamps = measure_counter_scope(gpu, blocks, Duration::from_micros(args.spin_us))?;
            suite.release_gpu(gpu)?;
            let scope = counter_scope(&stamps, sm_clock.mhz);
            let file = clock_report::ClockFile {
                against_timers: against,
                counter_scope: scope,
                sm_clock,
                timer_overheads: overheads,
            };
            clock_report::write(&suite.run, &file, &stamps)?;
            let show = |name: &str, s: &crate::analysis::stats::Summary, unit: &str| {
                println!(
                    "{name} back-to-back: min {} / median {} / max {} {unit} over {} pairs",
                    s.min, s.median, s.max, s.n
                )
            };
            let overheads = &file.timer_overheads;
            show("clock64", &overheads.clock64_cycles, "cycles");
            show("clock (32-bit)", &overheads.clock32_cycles, "cycles");
            show("%globaltimer", &overheads.globaltimer_ns, "ns");
            let sm_clock = &file.sm_clock;
            println!(
                "SM clock: {:.1} MHz (clock64 over {:.1} ms of %globaltimer)",
                sm_clock.mhz,
                sm_clock.interval_ns as f64 / 1e6
            );
            if let Some(a) = &file.against_timers {
                let t = &a.two_timers;
                println!(
                    "SM clock: {:.1} ± {:.2} MHz over the host's clock, {:.1} MHz over %globaltimer in the same busy-waits ({:.0} ms apart); NVML {} of a maximum {}",
                    t.host_mhz,
                    t.host_error_mhz,
                    t.globaltimer_mhz,
                    t.window_ns / 1e6,
                    a.nvml_sm_mhz.map_or("-".into(), |m| format!("{m} MHz")),
                    a.nvml_max_sm_mhz.map_or("-".into(), |m| format!("{m} MHz")),
                );
                if t.disagree() {
                    eprintln!(
                        "warning: %globaltimer and the host's clock disagree by {:+.2} %",
                        100.0 * t.disagreement()
                    );
                }
            }
            if let Some(scope) = &file.counter_scope {
                println!("cycle counter: {} ({})", scope.verdict, scope.explanation);
            }
            Ok(())
        },
    )
}

/// `gpubench clock` in the suite registry.
pub struct Clock;

impl crate::harness::SuiteDef for Clock {
    const NAME: &'static str = "clock";
    const ABOUT: &'static str = "Timer overheads, the SM clock, and whether SMs share one cycle counter (Wong Fig. 5)";
    type Args = ClockArgs;

    const RUN: crate::harness::Measure<ClockArgs> = run;

    const SECONDS_IN_ALL: (f64, f64) = (0.2, 0.2);

    const FIGURES: crate::harness::ReadFigures = self::report::figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        let stamps: Vec<crate::analysis::clock::BlockStamp> =
            crate::report::saved::read_csv(run.dir, "clock_scope.csv")?;
        let file: clock_report::ClockFile = crate::report::saved::read_json(run.dir, "clock.json")?;
        let scope = counter_scope(&stamps, file.sm_clock.mhz);
        let title = run.title(clock_report::TITLE);
        out.plot("clock", |p| {
            clock_report::draw(p, &title, &stamps, scope.as_ref())
        })
    }
}

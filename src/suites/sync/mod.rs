//! `gpubench sync`: the probes in a child process, each with a deadline; verdicts in a table.

pub mod analysis;
pub mod launch;
pub mod measure;
pub mod report;
pub mod settings;

pub use settings::SyncArgs;

use std::time::Duration;

use anyhow::Result;

use self::analysis as verdicts;
use self::measure::{self as sync, ChildOutcome, PROBES};
use self::report as sync_report;
use self::settings::Recorded;
use crate::error::UsageError;
use crate::gpu::Gpu;
use crate::harness::suite;
use crate::harness::{Redraw, SavedRun};
use crate::report::run_dir::write_atomically;

/// A probe's deadline, counted from its kernel's launch (the child's start and module load
/// come before and are not part of it): the timeout until one probe has finished; then the
/// watchdog (the longest a spinning lane may rightly wait) plus four times the slowest
/// launch-to-result time beyond the watchdog measured so far, that part at least
/// [`DEADLINE_FLOOR`]; never more than the timeout.
fn probe_deadline(
    timeout: Duration,
    watchdog: Duration,
    slowest_finished: Option<Duration>,
) -> Duration {
    match slowest_finished {
        None => timeout,
        Some(slowest) => (watchdog + (slowest * 4).max(DEADLINE_FLOOR)).min(timeout),
    }
}

/// The least allowance beyond the watchdog. A probe's launch-to-result is a few milliseconds
/// on an H100; this leaves room for the host scheduling the child late while `gpubench all`
/// compiles on the other cores.
const DEADLINE_FLOOR: Duration = Duration::from_millis(100);

pub fn run(args: &SyncArgs) -> Result<()> {
    if let Some(name) = &args.child_probe {
        return child(args, name);
    }
    args.validate()?;
    let entries: Vec<(&str, &str)> = PROBES.iter().map(|p| ("sync", p.entry)).collect();
    let recorded = Recorded {
        method: "the probes run one after another in a child process, killed at a probe's deadline counted from its kernel's launch (the child reports each launch and each result); a probe that hangs or fails ends its process and the probes after it run in a new one. Deadline: the timeout for the first probe, then watchdog_ms plus four times the slowest launch-to-result time beyond the watchdog of the probes that finished so far (that part at least 100 ms), at most the timeout; spinning loops carry a clock64 watchdog of watchdog_ms at the measured SM clock; deadlines.json records each probe's times, deadline and process".into(),
        timeout_seconds: args.timeout_seconds,
        watchdog_ms: args.watchdog_ms,
    };
    suite::run(
        &Sync,
        &args.target,
        &entries,
        &recorded,
        |gpu, suite| {
            let mhz = suite.metadata.sm_clock_before.mhz;
            let budget_cycles = (args.watchdog_ms as f64 * mhz * 1000.0) as i64;
            let timeout = Duration::from_secs_f64(args.timeout_seconds);
            let mut slowest_finished: Option<Duration> = None;
            let mut deadlines = Vec::new();
            let mut results = Vec::new();
            let watchdog = Duration::from_millis(args.watchdog_ms);
            let dir = suite.run.path().to_path_buf();
            // Probes run one after another in one child process; one that hangs or fails ends
            // it, and the probes after it get a new one.
            let mut child: Option<sync::ProbesChild> = None;
            let mut children = 0;
            for (index, probe) in PROBES.iter().enumerate() {
                let running = match child.as_mut() {
                    Some(running) => running,
                    None => {
                        children += 1;
                        let rest: Vec<&sync::Probe> = PROBES[index..].iter().collect();
                        let go = dir.join(format!("probes-{children}.go"));
                        let started =
                            sync::spawn_probes(&rest, args.target.device.index()?, budget_cycles, &dir, &go)?;
                        started.let_measure()?;
                        child.insert(started)
                    }
                };
                let deadline = probe_deadline(timeout, watchdog, slowest_finished);
                let started = std::time::Instant::now();
                let run = running.next(probe, timeout, deadline)?;
                if !matches!(run.outcome, ChildOutcome::Values(_)) {
                    child = None;
                }
                // The child's kernel ran in this suite's time on the GPU: GPU time of this suite's,
                // though no wait of this process saw it.
                if let Some(busy) = run.on_gpu {
                    gpu.spent
                        .note_other_process_wait(&format!("{} (probe process)", probe.entry), busy);
                }
                if let Some(took) = run.launch_to_result {
                    let beyond = if sync::spins(probe) {
                        took.saturating_sub(watchdog)
                    } else {
                        took
                    };
                    slowest_finished = Some(slowest_finished.map_or(beyond, |s| s.max(beyond)));
                }
                deadlines.push(sync_report::ProbeDeadline {
                    deadline_seconds: deadline.as_secs_f64(),
                    launch_to_result_seconds: run.launch_to_result.map(|d| d.as_secs_f64()),
                    probe: probe.info.name.to_string(),
                    process: children,
                    seconds: started.elapsed().as_secs_f64(),
                });
                let verdict = match run.outcome {
                    ChildOutcome::Values(values) => {
                        sync::judge(probe, &values, mhz)
                    }
                    ChildOutcome::Hung { seconds } => verdicts::hung(&probe.info, seconds),
                    ChildOutcome::Failed(error) => verdicts::failed(&probe.info, &error),
                };
                eprintln!("{}: {}", probe.info.name, verdict.outcome.label());
                crate::harness::sharing::step_done(&format!("probe {}", probe.info.name));
                results.push((probe.listing, verdict));
            }
            if let Some(done) = child {
                done.finish()?;
            }
            suite.run.write_json("deadlines.json", &deadlines)?;
            sync_report::write(&suite.run, &results)?;
            print!("{}", sync_report::render_table(&results));
            Ok(())
        },
    )
}

/// The child side: the probes `--child-probe` lists, one after another, each one's raw values
/// written atomically into the directory `--child-output`.
fn child(args: &SyncArgs, names: &str) -> Result<()> {
    let probes = names
        .split(',')
        .map(|name| {
            sync::probe(name)
                .ok_or_else(|| UsageError::new(format!("there is no sync probe named {name}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let dir = args.child_output_dir()?;
    let mut gpu = Gpu::open(args.target.device.index()?)?;
    let deadline = Duration::from_secs_f64(args.timeout_seconds + 10.0);
    // The module is loaded first, so the parent's deadline, counted from the launch line,
    // covers the kernel alone.
    for probe in &probes {
        gpu.function("sync", probe.entry)?;
    }
    let say = |what: &str, name: &str| -> Result<()> {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{what} {name}")?;
        stdout.flush()?;
        Ok(())
    };
    for probe in probes {
        say(sync::LAUNCHING, probe.info.name)?;
        let values = sync::run_probe(&mut gpu, probe, args.child_budget_cycles, deadline)?;
        let text = serde_json::to_vec_pretty(&sync::ProbeResult {
            probe: probe.info.name.to_string(),
            values,
        })?;
        write_atomically(&sync::result_file(dir, probe.info.name), &text)?;
        say(sync::DONE, probe.info.name)?;
    }
    Ok(())
}

/// `gpubench sync` in the suite registry.
pub struct Sync;

impl crate::harness::SuiteDef for Sync {
    const NAME: &'static str = "sync";
    const ABOUT: &'static str = "Barrier and SIMT-deadlock probes (Wong Listings 4-7), each in a child process with a deadline";
    type Args = SyncArgs;

    const RUN: crate::harness::Measure<SyncArgs> = run;

    const SECONDS_IN_ALL: (f64, f64) = (0.7, 0.8);

    // A 25 ms watchdog: Listing 6 spins that long, and every deadline after it is that
    // much shorter.
    fn quick(defaults: SyncArgs) -> SyncArgs {
        SyncArgs {
            watchdog_ms: 25,
            ..defaults
        }
    }

    const FIGURES: crate::harness::ReadFigures = self::report::figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        // Listing 7's figure exists only where the pairing probe finished (it hangs on Volta
        // and later, where its result file is never written).
        let pairing: Option<sync::ProbeResult> =
            crate::report::saved::read_json_optional(run.dir, "probe-barrier-pairing.json")?;
        match pairing.filter(|p| p.values.len() == 96) {
            Some(probe) => {
                let title = run.title("Listing 7 barrier departures");
                out.plot("sync", |p| {
                    sync_report::draw_pairing(p, &title, &probe.values)
                })
            }
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadline_follows_the_slowest_finished_probe_within_bounds() {
        let timeout = Duration::from_secs(5);
        let ms = Duration::from_millis;
        let watchdog = ms(100);
        assert_eq!(probe_deadline(timeout, watchdog, None), timeout);
        assert_eq!(probe_deadline(timeout, watchdog, Some(ms(5))), ms(200));
        assert_eq!(probe_deadline(timeout, watchdog, Some(ms(50))), ms(300));
        assert_eq!(probe_deadline(timeout, watchdog, Some(ms(3000))), timeout);
        assert_eq!(probe_deadline(ms(150), watchdog, Some(ms(1))), ms(150));
        assert_eq!(probe_deadline(timeout, ms(1), Some(ms(1))), ms(101));
    }
}

//! `gpubench sync`: every probe in a child process with a deadline; verdicts in a table.

use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::json;

use super::suite;
use crate::analysis::sync as verdicts;
use crate::cli::SyncArgs;
use crate::error::UsageError;
use crate::experiments::plan::PlannedSuite;
use crate::experiments::sync::{self, ChildOutcome, PROBES};
use crate::gpu::Gpu;
use crate::report::run_dir::write_atomically;
use crate::report::sync as sync_report;

/// A probe's deadline, counted from its kernel's launch (the child's start and module load
/// come before and are not part of it): the timeout until one probe has finished, then four
/// times the slowest launch-to-exit time measured so far, at least [`DEADLINE_FLOOR`] and at
/// most the timeout.
fn probe_deadline(timeout: Duration, slowest_finished: Option<Duration>) -> Duration {
    match slowest_finished {
        None => timeout,
        Some(slowest) => (slowest * 4).clamp(DEADLINE_FLOOR.min(timeout), timeout),
    }
}

/// The least deadline: ten times the parent's 5 ms polling step, so a probe that ends is
/// never killed for the poll's granularity.
const DEADLINE_FLOOR: Duration = Duration::from_millis(50);

pub fn run(args: &SyncArgs) -> Result<()> {
    if let Some(name) = &args.child_probe {
        return child(args, name);
    }
    if !(0.1..=600.0).contains(&args.timeout_seconds) {
        return Err(UsageError::new("--timeout-seconds must be between 0.1 and 600").into());
    }
    if !(1..=10_000).contains(&args.watchdog_ms) {
        return Err(UsageError::new("--watchdog-ms must be between 1 and 10000").into());
    }
    let entries: Vec<(&str, &str)> = PROBES.iter().map(|p| ("sync", p.entry)).collect();
    let settings = json!({
        "timeout_seconds": args.timeout_seconds,
        "watchdog_ms": args.watchdog_ms,
        "method": "each probe runs in a child process killed at its deadline, counted from the kernel's launch (the child reports it): the timeout for the first, then four times the slowest launch-to-exit time of the probes that finished so far (at least 50 ms, at most the timeout); spinning loops carry a clock64 watchdog of watchdog_ms at the measured SM clock; deadlines.json records each probe's times and deadline",
    });
    suite::run(
        "sync",
        args.device,
        args.output.as_deref(),
        &entries,
        settings,
        |_gpu, suite| {
            let mhz = suite.metadata.sm_clock_before.mhz;
            let budget_cycles = (args.watchdog_ms as f64 * mhz * 1000.0) as i64;
            let timeout = Duration::from_secs_f64(args.timeout_seconds);
            let mut slowest_finished: Option<Duration> = None;
            let mut deadlines = Vec::new();
            let mut results = Vec::new();
            let mut pairing_stamps = None;
            let probe_file = |probe: &sync::Probe| {
                suite
                    .run
                    .path()
                    .join(format!("probe-{}.json", probe.info.name))
            };
            // Each probe's child starts while the one before runs (see gpu::turn).
            let spawn = |probe: &sync::Probe| {
                sync::spawn_probe(probe, args.device, budget_cycles, &probe_file(probe))
            };
            let mut next = PROBES.first().map(spawn).transpose()?;
            for (index, probe) in PROBES.iter().enumerate() {
                let child = next
                    .take()
                    .context("every probe is started while the one before runs")?;
                let deadline = probe_deadline(timeout, slowest_finished);
                let started = std::time::Instant::now();
                let turn = child.give_turn()?;
                next = PROBES.get(index + 1).map(spawn).transpose()?;
                let (outcome, launched) = turn.wait(deadline)?;
                let took = started.elapsed();
                let since_launch = launched.map(|at| at.elapsed());
                if !matches!(outcome, ChildOutcome::Hung { .. })
                    && let Some(ran) = since_launch
                {
                    slowest_finished = Some(slowest_finished.map_or(ran, |s| s.max(ran)));
                }
                deadlines.push(json!({
                    "probe": probe.info.name,
                    "seconds": took.as_secs_f64(),
                    "launch_to_end_seconds": since_launch.map(|d| d.as_secs_f64()),
                    "deadline_seconds": deadline.as_secs_f64(),
                }));
                let verdict = match outcome {
                    ChildOutcome::Values(values) => {
                        if probe.info.name == "barrier-pairing" {
                            pairing_stamps = Some(values.clone());
                        }
                        sync::judge(probe, &values, mhz)
                    }
                    ChildOutcome::Hung { seconds } => verdicts::hung(&probe.info, seconds),
                    ChildOutcome::Failed(error) => verdicts::failed(&probe.info, &error),
                };
                eprintln!("{}: {}", probe.info.name, verdict.outcome.label());
                results.push((probe.listing, verdict));
            }
            suite.run.write_json("deadlines.json", &deadlines)?;
            sync_report::write(&suite.run, &results)?;
            if let Some(stamps) = pairing_stamps.filter(|s| s.len() == 96) {
                let title = suite.title("Listing 7 barrier departures");
                suite.run.write_figure("sync", |path| {
                    sync_report::draw_pairing(path, &title, &stamps)
                })?;
            }
            print!("{}", sync_report::render_table(&results));
            Ok(())
        },
    )
}

/// The child side: one probe, its raw values written atomically to `--child-output`.
fn child(args: &SyncArgs, name: &str) -> Result<()> {
    let probe = sync::probe(name)
        .ok_or_else(|| UsageError::new(format!("there is no sync probe named {name}")))?;
    let output = args
        .child_output
        .as_deref()
        .ok_or_else(|| UsageError::new("--child-probe needs --child-output"))?;
    let mut gpu = Gpu::open(args.device)?;
    let deadline = Duration::from_secs_f64(args.timeout_seconds + 10.0);
    // The module is loaded first, so the parent's deadline, counted from the line below,
    // covers the kernel alone.
    gpu.function("sync", probe.entry)?;
    {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{}", sync::LAUNCHING)?;
        stdout.flush()?;
    }
    let values = sync::run_probe(&mut gpu, probe, args.child_budget_cycles, deadline)?;
    let text = serde_json::to_vec_pretty(&json!({ "probe": name, "values": values }))?;
    write_atomically(output, &text)
}

/// `gpubench sync` in the suite registry.
pub struct Sync;

impl super::registry::SuiteDef for Sync {
    const NAME: &'static str = "sync";
    const ABOUT: &'static str = "Barrier and SIMT-deadlock probes (Wong Listings 4-7), each in a child process with a deadline";
    type Args = SyncArgs;

    fn run(args: &SyncArgs) -> Result<()> {
        run(args)
    }

    fn plan(&self, _quick: bool) -> Vec<PlannedSuite> {
        vec![PlannedSuite::new("sync", &["sync"], 6.6)]
    }

    fn figures(&self, dir: &std::path::Path) -> Result<Vec<crate::report::figures::Figure>> {
        crate::report::sync::figures(dir)
    }

    fn redraw(
        &self,
        run: &super::registry::SavedRun,
        out: &mut super::registry::Redraw,
    ) -> Result<()> {
        // Listing 7's figure exists only where the pairing probe finished (it hangs on Volta
        // and later, where its result file is never written).
        #[derive(serde::Deserialize)]
        struct Probe {
            values: Vec<i64>,
        }
        let pairing: Option<Probe> =
            crate::report::saved::read_json_optional(run.dir, "probe-barrier-pairing.json")?;
        match pairing.filter(|p| p.values.len() == 96) {
            Some(probe) => {
                let title = run.title("Listing 7 barrier departures");
                out.figure("sync", |p| {
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
        assert_eq!(probe_deadline(timeout, None), timeout);
        let ms = Duration::from_millis;
        assert_eq!(probe_deadline(timeout, Some(ms(5))), ms(50));
        assert_eq!(probe_deadline(timeout, Some(ms(100))), ms(400));
        assert_eq!(probe_deadline(timeout, Some(ms(3000))), timeout);
        assert_eq!(probe_deadline(ms(300), Some(ms(100))), ms(300));
        assert_eq!(probe_deadline(ms(20), Some(ms(1))), ms(20));
    }
}

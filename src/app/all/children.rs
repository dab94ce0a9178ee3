//! The suites' child processes as `all` supervises them: each in a process group of its own,
//! waited for up to its deadline and killed with its probes when it passes; an interrupt of
//! `all` passed on to every group it started; a killing signal named for `all.json`.

use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;

/// How a child's run ended.
#[derive(Debug, Clone, Copy)]
pub(super) enum End {
    Exited(std::process::ExitStatus),
    /// Killed at its deadline.
    TimedOut,
}

/// Where waiting for a child stopped.
pub(super) enum Wait {
    Ended(End),
    /// The caller's `tick` asked to stop waiting; the child still runs.
    Released,
}

/// A process `all` waits for: a plain child, or a suite run by a worker process (which ends
/// when the worker says so, or when the worker does).
pub(super) trait Watched {
    /// How it ended, once it has.
    fn ended(&mut self) -> std::io::Result<Option<std::process::ExitStatus>>;
    /// Its process group (0: none known).
    fn group(&self) -> i32;
    /// Kills its process group and reaps the process.
    fn kill(&mut self);
}

impl Watched for std::process::Child {
    fn ended(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> {
        self.try_wait()
    }

    fn group(&self) -> i32 {
        i32::try_from(self.id()).unwrap_or(0)
    }

    fn kill(&mut self) {
        kill_group(self);
        let _ = self.wait();
    }
}

/// Waits for `child` (started in its own process group) up to `deadline`, calling `tick`
/// with the seconds elapsed every 5 ms, until it ends, or the deadline passes (its group is
/// killed), or `tick` returns true (it is left running). While it runs an interrupt of
/// `gpubench all` is passed on to it.
pub(super) fn wait_with_deadline(
    child: &mut dyn Watched,
    deadline: Duration,
    mut tick: impl FnMut(f64) -> bool,
) -> Result<Wait> {
    let started = Instant::now();
    RUNNING_GROUP.store(child.group(), Ordering::SeqCst);
    let outcome = loop {
        if let Some(exit) = child.ended()? {
            break Wait::Ended(End::Exited(exit));
        }
        if started.elapsed() > deadline {
            child.kill();
            break Wait::Ended(End::TimedOut);
        }
        if tick(started.elapsed().as_secs_f64()) {
            break Wait::Released;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    RUNNING_GROUP.store(0, Ordering::SeqCst);
    Ok(outcome)
}

/// SIGKILL to the process group `child` heads (a suite started with `process_group(0)`), so
/// the probe processes a suite started (sync's) go with it; the child alone if that fails.
pub(super) fn kill_group(child: &mut std::process::Child) {
    let killed = i32::try_from(child.id()).is_ok_and(|group| {
        // SAFETY: kill(2) with a negative pid signals that process group; it reads no memory of
        // ours, and the group is the child's own, created for it by process_group(0).
        unsafe { libc::kill(-group, libc::SIGKILL) == 0 }
    });
    if !killed {
        let _ = child.kill();
    }
}

/// The process group of the suite running now (0: none). A suite has its own group so that a
/// timeout can kill it with its probes; that also keeps it out of the terminal's foreground
/// group, so an interrupt of `gpubench all` is passed on to it by [`forward_interrupts`].
pub(super) static RUNNING_GROUP: AtomicI32 = AtomicI32::new(0);

/// The process group of the suite started ahead of its turn (0: none), killed with the
/// running one on an interrupt.
pub(super) static WAITING_GROUP: AtomicI32 = AtomicI32::new(0);

/// The process groups of suites parked while they work aside (0: a free slot), killed with
/// the running one on an interrupt. More than fit here would still end on their own: a parked
/// child that finds its parent gone when it asks for the GPU again exits.
pub(super) static PARKED_GROUPS: [AtomicI32; 8] = [const { AtomicI32::new(0) }; 8];

extern "C" fn interrupted(signal: libc::c_int) {
    // SAFETY: kill, signal and raise are async-signal-safe; the handler touches nothing else.
    unsafe {
        let groups = [&RUNNING_GROUP, &WAITING_GROUP]
            .into_iter()
            .chain(&PARKED_GROUPS)
            .map(|g| g.load(Ordering::SeqCst));
        for group in groups {
            if group > 0 {
                libc::kill(-group, libc::SIGKILL);
            }
        }
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

/// On SIGINT or SIGTERM, kill the running suite's group, then end as the signal would.
pub(super) fn forward_interrupts() {
    let handler = interrupted as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: installs a handler that only calls async-signal-safe functions.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

/// Why a suite's process ended on `signal`, for `all.json`: the signal's name, and for one the
/// process raised itself (SIGABRT) the last line it logged before, which is the aborting
/// library's or simulator's own reason (GPGPU-Sim prints its deadlock report, then aborts);
/// a process killed from outside wrote no sentence, and its last line would mislead.
pub(super) fn killed_reason(signal: i32, last_line: Option<String>) -> String {
    match last_line.filter(|_| signal == libc::SIGABRT) {
        Some(line) => format!("killed by {}; its last words: {line}", signal_name(signal)),
        None => format!("killed by {}", signal_name(signal)),
    }
}

/// How a suite's process that ended on `signal` is recorded, as (status, reason): a simulated
/// GPU that aborts (GPGPU-Sim reports a deadlock, then calls abort()) costs the suite, which
/// is skipped with the simulator's own last words; anything else failed ([`killed_reason`]).
pub(super) fn killed_outcome(
    signal: i32,
    last_line: Option<String>,
    simulated: bool,
) -> (&'static str, String) {
    match last_line {
        Some(line) if simulated && signal == libc::SIGABRT => (
            super::SKIPPED,
            format!("the simulator aborted the suite (SIGABRT): {line}"),
        ),
        last_line => ("failed", killed_reason(signal, last_line)),
    }
}

/// A signal as a reader of `all.json` needs it: its name, and for the ones a run meets, why.
pub(super) fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGXFSZ => "SIGXFSZ (a file outgrew the file-size limit, ulimit -f)".to_string(),
        libc::SIGKILL => {
            "SIGKILL (from outside: the out-of-memory killer, a scheduler)".to_string()
        }
        libc::SIGSEGV => "SIGSEGV (a crash; please report it with the command line)".to_string(),
        libc::SIGABRT => {
            "SIGABRT (the process aborted itself: a library's failed check, or a simulator giving up)"
                .to_string()
        }
        libc::SIGTERM => "SIGTERM".to_string(),
        libc::SIGINT => "SIGINT".to_string(),
        other => format!("signal {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_abort_keeps_the_last_words_and_a_kill_from_outside_does_not() {
        let line = || Some("GPGPU-Sim uArch: ERROR ** deadlock detected".to_string());
        let aborted = killed_reason(libc::SIGABRT, line());
        assert!(aborted.starts_with("killed by SIGABRT (the process aborted itself"));
        assert!(aborted.ends_with("its last words: GPGPU-Sim uArch: ERROR ** deadlock detected"));
        assert_eq!(
            killed_reason(libc::SIGABRT, None),
            format!("killed by {}", signal_name(libc::SIGABRT))
        );
        let killed = killed_reason(libc::SIGKILL, line());
        assert!(killed.starts_with("killed by SIGKILL") && !killed.contains("deadlock"));
    }

    #[test]
    fn a_simulator_that_aborts_skips_the_suite_and_a_gpu_that_aborts_fails_it() {
        let line = || Some("GPGPU-Sim uArch: ERROR ** deadlock detected".to_string());
        let (status, why) = killed_outcome(libc::SIGABRT, line(), true);
        assert_eq!(status, super::super::SKIPPED);
        assert!(
            why.ends_with("(SIGABRT): GPGPU-Sim uArch: ERROR ** deadlock detected"),
            "{why}"
        );
        // On a real GPU an abort is a failure; so is a simulator killed from outside, or one
        // that said nothing.
        assert_eq!(killed_outcome(libc::SIGABRT, line(), false).0, "failed");
        assert_eq!(killed_outcome(libc::SIGKILL, line(), true).0, "failed");
        assert_eq!(killed_outcome(libc::SIGABRT, None, true).0, "failed");
    }
}

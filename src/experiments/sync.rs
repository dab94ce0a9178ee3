//! Barrier and SIMT-deadlock probes (cuda/sync.cu), after Wong et al., section IV-D,
//! Listings 4–7, plus a __syncwarp() variant of Listing 5.
//!
//! A probe can hang the GPU in a way no in-kernel watchdog can end (lanes waiting in a barrier
//! never reach a watchdog check), and a hung kernel cannot be stopped from inside its own
//! process. So every probe runs in a child process (`gpubench sync --child-probe NAME`) that
//! the parent kills at a deadline; a kill is a verdict, "hung". Spinning loops also carry an
//! in-kernel clock64 watchdog, so a deadlock that can be caught is caught and reported with
//! what each lane saw.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::analysis::sync::{self, Outcome, ProbeInfo, Verdict};
use crate::gpu::{Gpu, launch};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub info: ProbeInfo,
    pub entry: &'static str,
    pub listing: &'static str,
    pub threads: u32,
    pub out_len: usize,
}

pub const PROBES: [Probe; 6] = [
    Probe {
        info: ProbeInfo {
            name: "simt-spin",
            pre_volta: "deadlock: the lane whose turn it is waits at the loop's reconvergence point for lanes that can never leave",
            pre_volta_outcome: Some(Outcome::DeadlockedWatchdog),
        },
        entry: "sync_simt_spin",
        listing: "Listing 4",
        threads: 32,
        out_len: 65,
    },
    Probe {
        info: ProbeInfo {
            name: "divergent-syncthreads",
            pre_volta: "no deadlock; the consumers read the old values: __syncthreads() works per warp and the else branch ran first",
            pre_volta_outcome: Some(Outcome::Completed),
        },
        entry: "sync_divergent_syncthreads",
        listing: "Listing 5",
        threads: 32,
        out_len: 32,
    },
    Probe {
        info: ProbeInfo {
            name: "divergent-syncwarp",
            pre_volta: "not in the paper: __syncwarp() arrived with Volta",
            pre_volta_outcome: None,
        },
        entry: "sync_divergent_syncwarp",
        listing: "Listing 5 with __syncwarp()",
        threads: 32,
        out_len: 32,
    },
    Probe {
        info: ProbeInfo {
            name: "syncwarp-exited",
            pre_volta: "not in the paper: __syncwarp() arrived with Volta",
            pre_volta_outcome: None,
        },
        entry: "sync_syncwarp_exited",
        listing: "__syncwarp() naming exited lanes",
        threads: 32,
        out_len: 32,
    },
    Probe {
        info: ProbeInfo {
            name: "two-warp-spin",
            pre_volta: "deadlock: __syncthreads() has no timeout, so warp 0 waits for ever on a warp that spins instead of arriving",
            pre_volta_outcome: Some(Outcome::DeadlockedWatchdog),
        },
        entry: "sync_two_warp_spin",
        listing: "Listing 6",
        threads: 64,
        out_len: 3,
    },
    Probe {
        info: ProbeInfo {
            name: "barrier-pairing",
            pre_volta: "block 2 (the taken path, run first) met warp 1's first __syncthreads(), block 1 its second",
            pre_volta_outcome: Some(Outcome::Completed),
        },
        entry: "sync_barrier_pairing",
        listing: "Listing 7",
        threads: 64,
        out_len: 96,
    },
];

pub fn probe(name: &str) -> Option<&'static Probe> {
    PROBES.iter().find(|p| p.info.name == name)
}

/// In the child process: run one probe and return what its kernel wrote.
pub fn run_probe(
    gpu: &mut Gpu,
    probe: &Probe,
    budget_cycles: i64,
    deadline: Duration,
) -> Result<Vec<i64>> {
    Ok(launch::sync_probe(
        gpu,
        probe.entry,
        probe.threads,
        probe.out_len,
        budget_cycles,
        deadline,
    )?)
}

/// The verdict on a probe's raw values.
pub fn judge(probe: &Probe, values: &[i64], mhz: f64) -> Verdict {
    if values.len() != probe.out_len {
        return sync::failed(
            &probe.info,
            &format!(
                "{} values where {} were expected",
                values.len(),
                probe.out_len
            ),
        );
    }
    match probe.info.name {
        "simt-spin" => sync::simt_spin(&probe.info, values),
        "divergent-syncthreads" | "divergent-syncwarp" => {
            sync::divergent_barrier(&probe.info, values)
        }
        "two-warp-spin" => sync::two_warp_spin(&probe.info, values, mhz),
        "syncwarp-exited" => sync::syncwarp_exited(&probe.info, values),
        _ => sync::barrier_pairing(&probe.info, values),
    }
}

/// How a child run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ChildOutcome {
    Values(Vec<i64>),
    Hung { seconds: f64 },
    Failed(String),
}

/// The line a probe's child prints on stdout just before it launches the kernel.
pub const LAUNCHING: &str = "launching";

/// A probe's child process, started ahead of its turn on the GPU: it loads the driver, then
/// waits for the file `go` before it creates its context (see [`crate::gpu::turn`]), so the
/// parent starts the next probe's child while one probe runs.
pub struct ProbeChild {
    child: std::process::Child,
    go: std::path::PathBuf,
    result_file: std::path::PathBuf,
    launches: std::sync::mpsc::Receiver<Instant>,
}

/// In the parent: starts `probe` in a child process of this executable, which will write its
/// values as JSON to `result_file` once given its turn ([`ProbeChild::run`]).
pub fn spawn_probe(
    probe: &Probe,
    device: usize,
    budget_cycles: i64,
    result_file: &Path,
) -> Result<ProbeChild> {
    let exe = std::env::current_exe().context("cannot find this executable to start a probe")?;
    let go = result_file.with_extension("go");
    let mut child = Command::new(exe)
        .args(["sync", "--device", &device.to_string()])
        .args(["--child-probe", probe.info.name])
        .args(["--child-budget-cycles", &budget_cycles.to_string()])
        .arg("--child-output")
        .arg(result_file)
        .env(crate::gpu::turn::GO_ENV, &go)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start a probe's child process")?;
    let (tx, launches) = std::sync::mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            use std::io::BufRead;
            let mut lines = std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok);
            if lines.any(|line| line == LAUNCHING) {
                let _ = tx.send(Instant::now());
            }
            // Read to the end, so the child never writes into a closed pipe.
            lines.for_each(drop);
        });
    }
    Ok(ProbeChild {
        child,
        go,
        result_file: result_file.to_path_buf(),
        launches,
    })
}

/// A probe's child on its turn.
pub struct ProbeTurn {
    probe: ProbeChild,
    started: Instant,
}

impl ProbeChild {
    /// Lets the child create its context and launch; its deadline counts from now.
    pub fn give_turn(self) -> Result<ProbeTurn> {
        crate::gpu::turn::give(&self.go)
            .with_context(|| format!("creating {}", self.go.display()))?;
        Ok(ProbeTurn {
            probe: self,
            started: Instant::now(),
        })
    }
}

impl ProbeTurn {
    /// Waits for the probe: kills the child `deadline` after it reports its launch (or after
    /// its turn began, if it never does). Returns how it ended and when it launched.
    pub fn wait(mut self, deadline: Duration) -> Result<(ChildOutcome, Option<Instant>)> {
        let outcome = self.wait_for_child(deadline);
        let _ = std::fs::remove_file(&self.probe.go);
        outcome
    }

    fn wait_for_child(&mut self, deadline: Duration) -> Result<(ChildOutcome, Option<Instant>)> {
        let started = self.started;
        let probe = &mut self.probe;
        let (child, launches, result_file) =
            (&mut probe.child, &probe.launches, &probe.result_file);
        let mut launched: Option<Instant> = None;
        loop {
            if launched.is_none() {
                launched = launches.try_recv().ok();
            }
            if let Some(status) = child
                .try_wait()
                .context("waiting for a probe's child process")?
            {
                // The launch line, if the child printed one, is read before its stdout closes.
                if launched.is_none() {
                    launched = launches.recv().ok();
                }
                if !status.success() {
                    let mut message = String::new();
                    if let Some(mut stderr) = child.stderr.take() {
                        use std::io::Read;
                        let _ = stderr.read_to_string(&mut message);
                    }
                    return Ok((
                        ChildOutcome::Failed(format!("{status}: {}", message.trim())),
                        launched,
                    ));
                }
                let text = std::fs::read_to_string(result_file).with_context(|| {
                    format!("the probe wrote no result to {}", result_file.display())
                })?;
                let values: Vec<i64> = serde_json::from_str::<serde_json::Value>(&text)?["values"]
                    .as_array()
                    .context("a probe result without values")?
                    .iter()
                    .map(|v| v.as_i64().unwrap_or(i64::MIN))
                    .collect();
                return Ok((ChildOutcome::Values(values), launched));
            }
            if launched.unwrap_or(started).elapsed() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Ok((
                    ChildOutcome::Hung {
                        seconds: started.elapsed().as_secs_f64(),
                    },
                    launched,
                ));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

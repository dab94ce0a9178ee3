//! Barrier and SIMT-deadlock probes (cuda/sync.cu), after Wong et al., section IV-D,
//! Listings 4–7, plus a __syncwarp() variant of Listing 5.
//!
//! A probe can hang the GPU in a way no in-kernel watchdog can end (lanes waiting in a barrier
//! never reach a watchdog check), and a hung kernel cannot be stopped from inside its own
//! process. So the probes run in a child process (`gpubench sync --child-probe A,B,…`, one
//! after another, each announcing its launch and its result) that the parent kills at a
//! probe's deadline; a kill is a verdict, "hung", and the probes after it get a new process. Spinning loops also carry an
//! in-kernel clock64 watchdog, so a deadlock that can be caught is caught and reported with
//! what each lane saw.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::analysis::{self as sync, Outcome, ProbeInfo, Verdict};
use super::launch;
use crate::gpu::Gpu;

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

/// What a probes' child prints on stdout: `launching NAME` just before it launches a probe's
/// kernel, `done NAME` once the probe's values are in its file ([`result_file`]).
pub const LAUNCHING: &str = "launching";
pub const DONE: &str = "done";

/// `probe-NAME.json`: what a probes' child writes, and the parent and `report`'s redraw read
/// back as the same type.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct ProbeResult {
    pub probe: String,
    pub values: Vec<i64>,
}

/// Where a probes' child writes the values of probe `name`, in the directory `dir`.
pub fn result_file(dir: &Path, name: &str) -> std::path::PathBuf {
    dir.join(format!("probe-{name}.json"))
}

/// Whether `probe`'s kernel spins in a loop that its clock64 watchdog ends: it may rightly
/// run for the whole watchdog.
pub fn spins(probe: &Probe) -> bool {
    launch::sync_probe_spins(probe.entry)
}

/// A line a probes' child printed, and when the parent read it; or the end of its output.
enum Said {
    Launching(String, Instant),
    Done(String, Instant),
    Closed,
}

/// A child process that runs probes one after another (`gpubench sync --child-probe A,B`),
/// started before the GPU is its: it loads the driver, then waits for the file `go` before it
/// creates its context ([`crate::harness::sharing::child_measures_after`]).
pub struct ProbesChild {
    child: std::process::Child,
    go: std::path::PathBuf,
    dir: std::path::PathBuf,
    said: std::sync::mpsc::Receiver<Said>,
}

/// How one probe went in a probes' child, and its launch-to-result time where it has one.
pub struct ProbeRun {
    pub outcome: ChildOutcome,
    pub launch_to_result: Option<Duration>,
    /// From its kernel's launch to its result, or to the kill of a probe that hung: the time
    /// the GPU ran the probe's kernel.
    pub on_gpu: Option<Duration>,
}

/// In the parent: starts `probes` in a child process of this executable, which writes each
/// probe's values as JSON into `dir` once let measure ([`ProbesChild::let_measure`]).
pub fn spawn_probes(
    probes: &[&Probe],
    device: usize,
    budget_cycles: i64,
    dir: &Path,
    go: &Path,
) -> Result<ProbesChild> {
    let exe = std::env::current_exe().context("cannot find this executable to start a probe")?;
    let names: Vec<&str> = probes.iter().map(|p| p.info.name).collect();
    // The child's settings, a value of the subcommand's own type, turned into its flags.
    let settings = super::SyncArgs {
        target: crate::cli::Target {
            device: crate::cli::DeviceSelection::One(device),
            output: None,
        },
        child_probe: Some(names.join(",")),
        child_output: Some(dir.to_path_buf()),
        child_budget_cycles: budget_cycles,
        ..crate::harness::defaults()
    };
    let flags = crate::harness::Suite::flags(&super::Sync, &serde_json::to_value(&settings)?)?;
    let mut command = Command::new(exe);
    crate::harness::sharing::child_measures_after(&mut command, go);
    let mut child = command
        .arg(<super::Sync as crate::harness::SuiteDef>::NAME)
        .args(flags)
                .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start a probe's child process")?;
    let (tx, said) = std::sync::mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            use std::io::BufRead;
            // Read to the end, so the child never writes into a closed pipe.
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                let now = Instant::now();
                let event = match line.split_once(' ') {
                    Some((LAUNCHING, name)) => Said::Launching(name.to_string(), now),
                    Some((DONE, name)) => Said::Done(name.to_string(), now),
                    _ => continue,
                };
                let _ = tx.send(event);
            }
            let _ = tx.send(Said::Closed);
        });
    }
    Ok(ProbesChild {
        child,
        go: go.to_path_buf(),
        dir: dir.to_path_buf(),
        said,
    })
}

impl ProbesChild {
    /// Lets the child create its context and start its probes.
    pub fn let_measure(&self) -> Result<()> {
        crate::harness::sharing::let_child_measure(&self.go)
            .with_context(|| format!("creating {}", self.go.display()))
    }

    /// Waits for `probe`, the child's next: for its launch (up to `timeout` from now), then
    /// for its values, up to `deadline` after the launch. A child that misses either is killed
    /// (the probe hung); one that ends without the probe's values failed on it. After either
    /// the child is gone and the next probe needs a new one.
    pub fn next(
        &mut self,
        probe: &Probe,
        timeout: Duration,
        deadline: Duration,
    ) -> Result<ProbeRun> {
        let waiting = Instant::now();
        let mut launched: Option<Instant> = None;
        let mut exited = None;
        loop {
            // Once the child has ended, its last lines are read to the end of its output.
            let said = match exited {
                None => self.said.try_recv().ok(),
                Some(_) => self.said.recv_timeout(Duration::from_secs(1)).ok(),
            };
            match said {
                Some(Said::Launching(name, at)) if name == probe.info.name => {
                    launched = Some(at);
                    continue;
                }
                Some(Said::Done(name, at)) if name == probe.info.name => {
                    let took = launched.map(|l| at.duration_since(l));
                    return Ok(ProbeRun {
                        outcome: ChildOutcome::Values(read_values(&result_file(&self.dir, &name))?),
                        launch_to_result: took,
                        on_gpu: took,
                    });
                }
                Some(Said::Closed) | None if exited.is_some() => {
                    return Ok(ProbeRun {
                        outcome: ChildOutcome::Failed(self.why_it_ended(exited)),
                        launch_to_result: None,
                        on_gpu: None,
                    });
                }
                Some(_) => continue,
                None => {}
            }
            if let Some(status) = self
                .child
                .try_wait()
                .context("waiting for a probe's child process")?
            {
                exited = Some(status);
                continue;
            }
            let overdue = match launched {
                Some(at) => at.elapsed() > deadline,
                None => waiting.elapsed() > timeout,
            };
            if overdue {
                self.kill();
                return Ok(ProbeRun {
                    outcome: ChildOutcome::Hung {
                        seconds: launched.unwrap_or(waiting).elapsed().as_secs_f64(),
                    },
                    launch_to_result: None,
                    on_gpu: launched.map(|at| at.elapsed()),
                });
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The child's exit status and what it printed on stderr.
    fn why_it_ended(&mut self, status: Option<std::process::ExitStatus>) -> String {
        let mut message = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            use std::io::Read;
            let _ = stderr.read_to_string(&mut message);
        }
        let status = status.map_or("ended".to_string(), |s| s.to_string());
        match message.trim() {
            "" => format!("the probe's process ended ({status}) without its values"),
            message => format!("{status}: {message}"),
        }
    }

    /// Ends the child.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for a child whose probes are all done to exit.
    pub fn finish(mut self) -> Result<()> {
        self.child
            .wait()
            .context("waiting for a probe's child process")?;
        Ok(())
    }
}

impl Drop for ProbesChild {
    /// A child left behind (its parent failed) is killed; its `go` file goes either way.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        }
        let _ = std::fs::remove_file(&self.go);
    }
}

fn read_values(file: &Path) -> Result<Vec<i64>> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("the probe wrote no result to {}", file.display()))?;
    let result: ProbeResult = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a probe's result", file.display()))?;
    Ok(result.values)
}

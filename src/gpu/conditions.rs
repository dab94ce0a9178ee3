//! The conditions a measurement ran under, checked in one place (the suites do not check
//! them): which other processes hold a context on the GPU (NVML's compute and graphics
//! process lists), whether MIG partitions it, and whether pages wait to be retired; beside
//! them the health samples of [`super::health`] (clocks against their maximum, clock-limit
//! reasons, ECC, temperature, power limit, persistence mode).
//!
//! - **When a run starts** (`all`, or a suite on its own, before gpubench creates a context):
//!   any process on the GPU that is not gpubench's own is another user of the GPU, and the run
//!   is refused in one sentence naming it ([`crate::error::SharedGpu`], exit 7), unless
//!   `--allow-shared` was given. Where NVML cannot list processes, the GPU's utilization
//!   while gpubench has no work on it tells the same.
//! - **While a suite measures**, a thread lists the GPU's processes every
//!   [`WATCH_INTERVAL`]; a process not gpubench's that appears is recorded with the suite, and
//!   the summary marks every figure of that suite unresolved ("shared GPU"), naming it.
//!
//! gpubench's own processes are the ones whose line of parents reaches the topmost gpubench
//! process above this one (`all`, its worker processes, sync's probes, ncu's program).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use nvml_wrapper::Nvml;
use nvml_wrapper::enums::device::UsedGpuMemory;
use serde::{Deserialize, Serialize};

/// How often a suite's watch lists the GPU's processes (an NVML call of about 0.1 ms).
pub const WATCH_INTERVAL: Duration = Duration::from_millis(100);

/// Utilization (NVML's percent of the last sample period with a kernel running) above which
/// an idle gpubench takes the GPU for busy, where NVML cannot list its processes.
pub const BUSY_UTILIZATION_PERCENT: u32 = 10;

/// A process NVML lists on the GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuProcess {
    pub pid: u32,
    /// Its command name (`/proc/PID/comm`), or NVML's, or "?" where neither is readable.
    pub name: String,
    /// Device memory it holds, where NVML says.
    pub used_memory_bytes: Option<u64>,
    /// "compute" or "graphics".
    pub kind: String,
}

impl GpuProcess {
    /// "PID 4242 (python3, 714 MiB)".
    pub fn describe(&self) -> String {
        let memory = self
            .used_memory_bytes
            .map_or(String::new(), |b| format!(", {} MiB", b / (1 << 20)));
        format!("PID {} ({}{memory})", self.pid, self.name)
    }
}

/// `metadata.json`'s `conditions`: what was checked of the GPU's other users and state, and
/// what it found. Read back with every field defaulted (runs before it have none).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Conditions {
    /// `--allow-shared` was given: a run that found another process measured anyway.
    pub allow_shared: bool,
    /// Processes not gpubench's on the GPU when the run started (before its context).
    pub others_at_start: Vec<GpuProcess>,
    /// Processes not gpubench's that the watch saw while the suite measured.
    pub others_during: Vec<GpuProcess>,
    /// How many times the watch listed the GPU's processes during the suite.
    pub watch_samples: u32,
    /// Why the processes could not be listed or told apart, where they could not.
    pub processes_unknown: Option<String>,
    /// NVML's utilization when the run started, where processes could not be listed.
    pub utilization_at_start_percent: Option<u32>,
    pub mig_enabled: Option<bool>,
    pub pages_pending_retirement: Option<bool>,
}

impl Conditions {
    /// Records the GPU's MIG mode and whether pages wait to be retired, where NVML says.
    fn read_device_state(&mut self, nvml: &Nvml, uuid: &str) {
        if let Ok(device) = nvml.device_by_uuid(uuid) {
            self.mig_enabled = device.mig_mode().ok().map(|m| m.current == 1);
            self.pages_pending_retirement = device.are_pages_pending_retired().ok();
        }
    }

    /// Why the suite's figures are not figures, where another process shared the GPU.
    pub fn shared(&self) -> Option<String> {
        let name = |list: &[GpuProcess]| {
            list.iter()
                .map(GpuProcess::describe)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match (
            self.others_at_start.is_empty(),
            self.others_during.is_empty(),
        ) {
            (true, true) => None,
            (false, true) => Some(format!(
                "measured with --allow-shared beside {}",
                name(&self.others_at_start)
            )),
            (true, false) => Some(format!(
                "{} used the GPU while the suite measured",
                name(&self.others_during)
            )),
            (false, false) => Some(format!(
                "measured with --allow-shared beside {}; {} also used the GPU while the suite measured",
                name(&self.others_at_start),
                name(&self.others_during)
            )),
        }
    }
}

/// Whether this process was told `--allow-shared` (a worker is told per suite).
static ALLOW_SHARED: AtomicBool = AtomicBool::new(false);

pub fn set_allow_shared(allow: bool) {
    ALLOW_SHARED.store(allow, Ordering::SeqCst);
}

pub fn allow_shared() -> bool {
    ALLOW_SHARED.load(Ordering::SeqCst)
}

/// What NVML lists on the GPU with `uuid`: every process, or why it cannot.
pub fn list_processes(nvml: &Nvml, uuid: &str) -> Result<Vec<GpuProcess>, String> {
    let device = nvml
        .device_by_uuid(uuid)
        .map_err(|e| format!("NVML does not know the device {uuid} ({e})"))?;
    let compute = device
        .running_compute_processes()
        .map_err(|e| format!("NVML cannot list the GPU's processes ({e})"))?;
    // Graphics contexts are listed where the driver can; where it cannot, compute is enough.
    let graphics = device.running_graphics_processes().unwrap_or_default();
    let mut listed: Vec<GpuProcess> = Vec::new();
    for (kind, processes) in [("compute", compute), ("graphics", graphics)] {
        for p in processes {
            if listed.iter().any(|l| l.pid == p.pid) {
                continue;
            }
            listed.push(GpuProcess {
                pid: p.pid,
                name: process_name(p.pid).unwrap_or_else(|| {
                    nvml.sys_process_name(p.pid, 64)
                        .unwrap_or_else(|_| "?".into())
                }),
                used_memory_bytes: match p.used_gpu_memory {
                    UsedGpuMemory::Used(bytes) => Some(bytes),
                    UsedGpuMemory::Unavailable => None,
                },
                kind: kind.into(),
            });
        }
    }
    Ok(listed)
}

fn process_name(pid: u32) -> Option<String> {
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(name.trim().to_string()).filter(|n| !n.is_empty())
}

/// A process's parent, from `/proc/PID/stat` (its fourth field, after the name in parentheses).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

fn executable_of(pid: u32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/exe")).ok()
}

/// The topmost gpubench process above this one (itself if its parent is no gpubench): its
/// line of processes is gpubench's own.
pub fn own_root() -> u32 {
    let me = std::process::id();
    let Some(exe) = executable_of(me) else {
        return me;
    };
    let mut root = me;
    while let Some(parent) = parent_of(root).filter(|&p| p > 1) {
        if executable_of(parent).as_ref() != Some(&exe) {
            break;
        }
        root = parent;
    }
    root
}

/// Whose a listed process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// gpubench's: its line of parents reaches `root`.
    Ours,
    /// Another program's.
    Other,
    /// Not visible from here (another PID namespace).
    Unseen,
}

/// Whose process `pid` is, given gpubench's topmost process `root`.
pub fn owner(pid: u32, root: u32) -> Owner {
    if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
        return Owner::Unseen;
    }
    let mut at = pid;
    for _ in 0..64 {
        if at == root {
            return Owner::Ours;
        }
        match parent_of(at) {
            Some(parent) if parent > 0 && parent != at => at = parent,
            _ => break,
        }
    }
    Owner::Other
}

/// The processes of `listed` that are not gpubench's. Where NVML's process IDs are of another
/// PID namespace than this process's (none of them is visible here), none can be told apart:
/// `unseen_are_others` says whether to count them (true when gpubench holds no context on
/// the GPU, so that nothing listed can be its own).
pub fn others(listed: &[GpuProcess], root: u32, unseen_are_others: bool) -> Vec<GpuProcess> {
    listed
        .iter()
        .filter(|p| match owner(p.pid, root) {
            Owner::Ours => false,
            Owner::Other => true,
            Owner::Unseen => unseen_are_others,
        })
        .cloned()
        .collect()
}

/// The GPU's state when a run starts, before gpubench holds a context on it: the processes
/// found there (every one not gpubench's), MIG and pending retirements, or why NVML could not
/// tell.
pub fn at_start(uuid: &str, allow_shared: bool) -> Conditions {
    let mut conditions = Conditions {
        allow_shared,
        ..Conditions::default()
    };
    let nvml = match Nvml::init() {
        Ok(nvml) => nvml,
        Err(e) => {
            conditions.processes_unknown = Some(format!("NVML could not start ({e})"));
            return conditions;
        }
    };
    conditions.read_device_state(&nvml, uuid);
    match list_processes(&nvml, uuid) {
        Ok(listed) => conditions.others_at_start = others(&listed, own_root(), true),
        Err(why) => {
            conditions.processes_unknown = Some(why);
            conditions.utilization_at_start_percent = nvml
                .device_by_uuid(uuid)
                .and_then(|d| d.utilization_rates())
                .ok()
                .map(|u| u.gpu);
        }
    }
    conditions
}

/// The GPU's state when a suite of `all` starts, in a worker that holds a context: the
/// processes not gpubench's on it now (with `--allow-shared`, those `all` measured beside;
/// else ones that came after `all` checked), MIG and pending retirements.
pub fn in_worker(uuid: &str, allow_shared: bool) -> Conditions {
    let mut conditions = Conditions {
        allow_shared,
        ..Conditions::default()
    };
    let Ok(nvml) = Nvml::init() else {
        return conditions;
    };
    conditions.read_device_state(&nvml, uuid);
    if let Ok(listed) = list_processes(&nvml, uuid) {
        let found = others(&listed, own_root(), false);
        if allow_shared {
            conditions.others_at_start = found;
        } else {
            conditions.others_during = found;
        }
    }
    conditions
}

/// The refusal of a run that found the GPU in use, where `--allow-shared` was not given; `None`
/// where the GPU was free (or gpubench was told to measure anyway).
pub fn refusal(conditions: &Conditions, device: usize) -> Option<crate::error::SharedGpu> {
    if conditions.allow_shared {
        return None;
    }
    let using = if !conditions.others_at_start.is_empty() {
        conditions
            .others_at_start
            .iter()
            .map(GpuProcess::describe)
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        match conditions.utilization_at_start_percent {
            Some(busy) if busy > BUSY_UTILIZATION_PERCENT => format!(
                "a process NVML cannot name (the GPU is {busy} % busy before gpubench starts)"
            ),
            _ => return None,
        }
    };
    Some(crate::error::SharedGpu(format!(
        "device {device} is in use by {using}, so every figure would be wrong; stop it, or pass --allow-shared to measure anyway with every figure marked unresolved"
    )))
}

/// What a watch saw: the processes not gpubench's, how many listings it made, and why the
/// processes could not be told apart, where they could not.
type Seen = (Vec<GpuProcess>, u32, Option<String>);

/// Lists the GPU's processes every [`WATCH_INTERVAL`] on a thread, from [`Watch::start`] until
/// [`Watch::stop`], and keeps those not gpubench's.
pub struct Watch {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Seen>>,
}

impl Watch {
    /// A watch of the GPU `uuid` (NVML opened on its own thread), or none where NVML is missing.
    pub fn start(uuid: &str) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let uuid = uuid.to_string();
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("gpu-watch".into())
            .spawn(move || watch(&uuid, &stopping))
            .ok();
        Watch { stop, thread }
    }

    /// Stops the watch and writes what it saw into `conditions`.
    pub fn stop(mut self, conditions: &mut Conditions) {
        self.stop.store(true, Ordering::SeqCst);
        let Some(thread) = self.thread.take() else {
            return;
        };
        if let Ok((seen, samples, unknown)) = thread.join() {
            conditions.add_seen(seen, samples, unknown);
        }
    }
}

impl Conditions {
    /// Adds what a watch saw: each process not already named at the start or before.
    fn add_seen(&mut self, seen: Vec<GpuProcess>, samples: u32, unknown: Option<String>) {
        for process in seen {
            let known = self
                .others_at_start
                .iter()
                .chain(&self.others_during)
                .any(|p| p.pid == process.pid);
            if !known {
                self.others_during.push(process);
            }
        }
        self.watch_samples += samples;
        if self.processes_unknown.is_none() {
            self.processes_unknown = unknown;
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn watch(uuid: &str, stop: &AtomicBool) -> Seen {
    let nvml = match Nvml::init() {
        Ok(nvml) => nvml,
        Err(e) => return (Vec::new(), 0, Some(format!("NVML could not start ({e})"))),
    };
    let root = own_root();
    let me = std::process::id();
    let mut seen: Vec<GpuProcess> = Vec::new();
    let mut samples = 0;
    let mut unknown = None;
    loop {
        match list_processes(&nvml, uuid) {
            Ok(listed) => {
                samples += 1;
                // This process holds a context: where NVML does not list it, its process IDs
                // are of another PID namespace and none can be told apart from gpubench's.
                let comparable = listed.iter().any(|p| p.pid == me)
                    || listed.iter().any(|p| owner(p.pid, root) != Owner::Unseen);
                if comparable || listed.is_empty() {
                    for other in others(&listed, root, false) {
                        if !seen.iter().any(|p| p.pid == other.pid) {
                            seen.push(other);
                        }
                    }
                } else {
                    unknown = Some(
                        "NVML's process IDs are of another PID namespace: processes that appeared while suites measured cannot be told from gpubench's own".into(),
                    );
                }
            }
            Err(why) => {
                unknown = Some(why);
                break;
            }
        }
        // Sleeps in short steps, so that a stop is seen within a few milliseconds.
        let mut slept = Duration::ZERO;
        while slept < WATCH_INTERVAL {
            if stop.load(Ordering::SeqCst) {
                return (seen, samples, unknown);
            }
            std::thread::sleep(Duration::from_millis(5));
            slept += Duration::from_millis(5);
        }
    }
    (seen, samples, unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(pid: u32, name: &str) -> GpuProcess {
        GpuProcess {
            pid,
            name: name.into(),
            used_memory_bytes: Some(714 << 20),
            kind: "compute".into(),
        }
    }

    #[test]
    fn this_process_and_its_children_are_ours_and_pid_1_is_not() {
        let root = own_root();
        assert_eq!(owner(std::process::id(), root), Owner::Ours);
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        assert_eq!(owner(child.id(), root), Owner::Ours);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(owner(1, root), Owner::Other);
        assert_eq!(owner(u32::MAX - 1, root), Owner::Unseen);
    }

    #[test]
    fn an_unseen_process_counts_only_when_gpubench_holds_no_context() {
        let listed = [
            process(u32::MAX - 1, "?"),
            process(std::process::id(), "me"),
        ];
        assert_eq!(others(&listed, own_root(), true).len(), 1);
        assert!(others(&listed, own_root(), false).is_empty());
    }

    #[test]
    fn another_process_at_start_is_refused_naming_it_unless_allowed() {
        let found = Conditions {
            others_at_start: vec![process(4242, "python3")],
            ..Conditions::default()
        };
        let refused = refusal(&found, 0).unwrap().0;
        assert!(
            refused.starts_with("device 0 is in use by PID 4242 (python3, 714 MiB)"),
            "{refused}"
        );
        assert!(refused.contains("--allow-shared"), "{refused}");
        let allowed = Conditions {
            allow_shared: true,
            ..found.clone()
        };
        assert!(refusal(&allowed, 0).is_none());
        assert!(allowed.shared().unwrap().contains("PID 4242"));
        assert!(refusal(&Conditions::default(), 0).is_none());
        assert!(Conditions::default().shared().is_none());
    }

    #[test]
    fn a_busy_gpu_whose_processes_nvml_cannot_list_is_refused() {
        let busy = Conditions {
            processes_unknown: Some("NVML cannot list the GPU's processes".into()),
            utilization_at_start_percent: Some(100),
            ..Conditions::default()
        };
        assert!(refusal(&busy, 1).unwrap().0.contains("100 % busy"));
        let idle = Conditions {
            utilization_at_start_percent: Some(0),
            ..busy
        };
        assert!(refusal(&idle, 1).is_none());
    }

    #[test]
    fn a_process_seen_during_the_suite_is_named_once() {
        let mut conditions = Conditions::default();
        conditions.add_seen(vec![process(7, "stress")], 3, None);
        conditions.add_seen(vec![process(7, "stress")], 2, None);
        assert_eq!(conditions.others_during.len(), 1);
        assert_eq!(conditions.watch_samples, 5);
        let said = conditions.shared().unwrap();
        assert_eq!(
            said,
            "PID 7 (stress, 714 MiB) used the GPU while the suite measured"
        );
    }

    #[test]
    fn records_from_older_runs_read_back_empty() {
        let conditions: Conditions = serde_json::from_str("{}").unwrap();
        assert_eq!(conditions, Conditions::default());
    }
}

//! Nsight Compute as a cross-check of the slot accounting: `gpubench slots` re-runs itself
//! under `ncu` (plain kernels only, clocks left as they are) and reads, per kernel launch,
//! the threads executed and the warp instructions executed; their ratio over 32 is the warp
//! execution efficiency the paper's active fraction corresponds to.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::harness::sharing;

pub const THREADS: &str = "smsp__thread_inst_executed.sum";
pub const INSTRUCTIONS: &str = "smsp__inst_executed.sum";
/// What ncu's table names a result of application range replay in its kernel column.
const RANGE: &str = "range";

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Efficiency {
    /// Kernel launches profiled (none where ncu summed a whole range).
    pub launches: Option<u64>,
    pub thread_instructions: f64,
    pub warp_instructions: f64,
}

impl Efficiency {
    /// Threads per warp instruction over 32.
    pub fn warp_efficiency(&self) -> f64 {
        self.thread_instructions / self.warp_instructions / 32.0
    }
}

/// The workload a plain kernel belongs to (cuda/slots.cu names).
pub fn workload_of(kernel: &str) -> Option<&'static str> {
    let name = kernel.split('(').next()?.trim();
    let base = name.strip_suffix("_plain")?;
    Some(match base {
        "dot" => "dot",
        "bfs_expand" | "bfs_update" => "bfs",
        "gauss_fan1" | "gauss_fan2" => "gaussian",
        "backprop" => "backprop",
        "lu" => "lud",
        "btree" => "btree",
        _ => return None,
    })
}

/// Sums `ncu --csv` rows per workload. A row is one metric of one result: of a kernel launch
/// (kernel replay: its kernel's name gives the workload, and the launches are counted) or of a
/// profiler range (application range replay: the program makes one range per workload, in
/// `order`, so the n-th result is the n-th workload; a range's launches are not counted). Any
/// other kernel is left out.
pub fn parse(csv_text: &str, order: &[&'static str]) -> Result<BTreeMap<&'static str, Efficiency>> {
    // ncu prints its own "==PROF==" lines and the program's output before the table.
    let start = csv_text
        .find("\"ID\"")
        .context("no CSV table in ncu's output")?;
    let mut reader = csv::Reader::from_reader(&csv_text.as_bytes()[start..]);
    let headers = reader.headers()?.clone();
    let column = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .with_context(|| format!("ncu's table has no '{name}' column"))
    };
    let (id_at, metric_at, value_at) = (
        column("ID")?,
        column("Metric Name")?,
        column("Metric Value")?,
    );
    let kernel_at = column("Kernel Name").ok();
    let mut sums: BTreeMap<&'static str, Efficiency> = BTreeMap::new();
    let mut launches: BTreeMap<&'static str, std::collections::BTreeSet<String>> = BTreeMap::new();
    let records: Vec<csv::StringRecord> = reader.records().collect::<Result<_, _>>()?;
    let is_range = |record: &csv::StringRecord| kernel_at.is_none_or(|k| &record[k] == RANGE);
    let mut ranges = crate::analysis::distinct(
        records
            .iter()
            .filter(|r| is_range(r))
            .map(|r| r[id_at].to_string()),
    );
    // The program's first range is empty where it set ncu up ahead ([`SET_UP_FILES`]); where ncu
    // reports a result for it, that result is no workload's.
    if ranges.len() == order.len() + 1 {
        ranges.remove(0);
    }
    for record in records {
        let id = record[id_at].to_string();
        let workload = match kernel_at.and_then(|k| workload_of(&record[k])) {
            Some(workload) => {
                launches.entry(workload).or_default().insert(id);
                workload
            }
            // A kernel that is no workload's plain one (kernel replay profiles every launch).
            None if kernel_at.is_some_and(|k| &record[k] != RANGE) => continue,
            None => {
                let Some(rank) = ranges.iter().position(|r| *r == id) else {
                    continue;
                };
                *order.get(rank).with_context(|| {
                    format!(
                        "ncu reported more results than the {} workloads profiled",
                        order.len()
                    )
                })?
            }
        };
        let value: f64 = record[value_at]
            .replace(',', "")
            .parse()
            .with_context(|| format!("unreadable metric value '{}'", &record[value_at]))?;
        let entry = sums.entry(workload).or_insert(Efficiency {
            launches: None,
            thread_instructions: 0.0,
            warp_instructions: 0.0,
        });
        match &record[metric_at] {
            THREADS => entry.thread_instructions += value,
            INSTRUCTIONS => entry.warp_instructions += value,
            _ => continue,
        }
    }
    for (workload, ids) in launches {
        if let Some(entry) = sums.get_mut(workload) {
            entry.launches = Some(ids.len() as u64);
        }
    }
    Ok(sums)
}

pub fn find() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("ncu"))
        .find(|p| p.is_file())
}

/// `gpubench slots --child-plain …` under ncu, started before it may use the GPU: ncu
/// starts up (about 0.9 s on an H100 host) and the program loads the driver while the caller
/// still measures, then waits for [`NcuRun::hand_over`] to give it the GPU
/// ([`crate::harness::sharing::let_child_measure`]); it says when it will launch nothing more
/// ([`crate::harness::sharing::done_with_gpu`], after its last range), so the caller may give
/// the GPU back while ncu still reads the counters it collected and prints its table. On an H100, twelve ncu-started processes
/// loading the driver beside 1200 timed L2 chases left every chase within 0.1 cycles of
/// undisturbed ones. Dropped unfinished, it kills ncu.
pub struct NcuRun {
    child: Option<std::process::Child>,
    go: PathBuf,
    done: PathBuf,
    /// The stem of the set-up files ([`SET_UP_FILES`]).
    set_up: PathBuf,
    /// ncu's standard output and error, read as they come (a full pipe would stop it).
    output: Option<std::thread::JoinHandle<(Vec<u8>, Vec<u8>)>>,
    /// Whether the program was given the GPU.
    handed_over: bool,
    /// The workloads in the order the program runs them, one profiler range each.
    order: Vec<&'static str>,
}

/// Starts ncu on this executable run with `program` (a subcommand and its flags, which the
/// suite that profiles makes from its own settings; see [`NcuRun`]), which runs `order`'s
/// workloads in that order, one profiler range each ([`super::profiler::profiled`]).
pub fn start(ncu: &std::path::Path, program: &[String], order: &[&'static str]) -> Result<NcuRun> {
    static UNIQUE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let me = std::env::current_exe().context("finding gpubench's own path")?;
    let stem = std::env::temp_dir().join(format!(
        "gpubench-ncu-{}-{}",
        std::process::id(),
        UNIQUE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let (go, done) = (stem.with_extension("go"), stem.with_extension("done"));
    let set_up = stem.with_extension("ncu");
    for file in [&go, &done]
        .into_iter()
        .cloned()
        .chain(SET_UP_FILES.map(|f| set_up.with_extension(f)))
    {
        let _ = std::fs::remove_file(file);
    }
    let mut command = Command::new(ncu);
    command
        // Instruction counts do not depend on what the caches hold, so ncu need not flush them
        // (identical values on an H100; 5.3 s → 3.4 s). Both metrics come from one pass, so
        // ncu runs the program once; and it sums each workload's range (the program makes one
        // per workload) rather than stopping after each of the ~300 launches to read them.
        .args([
            "--csv",
            "--clock-control",
            "none",
            "--cache-control",
            "none",
            "--replay-mode",
            "app-range",
        ])
        .arg("--metrics")
        .arg(format!("{THREADS},{INSTRUCTIONS}"))
        .arg(me)
        .args(program)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    sharing::child_measures_after(&mut command, &go);
    sharing::child_says_when_done(&mut command, &done);
    sharing::tell_program(&mut command, &set_up);
    let mut child = command
        .spawn()
        .with_context(|| format!("running {}", ncu.display()))?;
    let (mut stdout, mut stderr) = (child.stdout.take(), child.stderr.take());
    let output = std::thread::spawn(move || {
        use std::io::Read;
        let errors = std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(stderr) = stderr.as_mut() {
                let _ = stderr.read_to_end(&mut text);
            }
            text
        });
        let mut text = Vec::new();
        if let Some(stdout) = stdout.as_mut() {
            let _ = stdout.read_to_end(&mut text);
        }
        (text, errors.join().unwrap_or_default())
    });
    Ok(NcuRun {
        child: Some(child),
        go,
        done,
        set_up,
        output: Some(output),
        handed_over: false,
        order: order.to_vec(),
    })
}

/// The extensions of the files by which the profiled program and the suite sequence ncu's
/// set-up ([`NcuRun::hand_over`], [`sharing::tell_program`]): ".context" (the program has its
/// context), ".set-up" (ncu is set up), ".again" (the GPU is the program's again).
pub const SET_UP_FILES: [&str; 3] = ["context", "set-up", "again"];

impl NcuRun {
    /// Gives the profiled program the GPU (nothing of the caller's may run on it any more) and
    /// waits until it is done with it, or has ended; ncu may still be writing its table. How
    /// long the program had the GPU.
    ///
    /// ncu sets itself up in the program's first cuProfilerStart, 0.6-1.1 s of host work (H100,
    /// H200) before any kernel of the range: once the program has made its context (with the
    /// GPU its), it starts and stops an empty range for that while this suite waits off the GPU
    /// ([`sharing::off_gpu`]: another suite measures meanwhile, beside a context that runs
    /// nothing), and it gets the GPU again for the ranges that count.
    pub fn hand_over(&mut self) -> Result<std::time::Duration> {
        let started = std::time::Instant::now();
        sharing::let_child_measure(&self.go)
            .with_context(|| format!("creating {}", self.go.display()))?;
        self.handed_over = true;
        let set_up = |f: &str| self.set_up.with_extension(f);
        let child = self.child.as_mut().context("ncu was already waited for")?;
        // The program's context, or (where it made no empty range) its end with the GPU.
        while !set_up("context").exists() && !self.done.exists() && child.try_wait()?.is_none() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        // Until `file` exists or ncu has ended.
        let mut until = |file: &std::path::Path| -> Result<()> {
            while !file.exists() && child.try_wait()?.is_none() {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Ok(())
        };
        let mut off_gpu = std::time::Duration::ZERO;
        if set_up("context").exists() && !self.done.exists() {
            let waiting = std::time::Instant::now();
            sharing::off_gpu(|| until(&set_up("set-up")))??;
            off_gpu = waiting.elapsed();
            sharing::let_child_measure(&set_up("again"))
                .with_context(|| format!("creating {}", set_up("again").display()))?;
        }
        until(&self.done)?;
        Ok(started.elapsed().saturating_sub(off_gpu))
    }

    /// Waits for ncu (giving its program the GPU first, unless [`NcuRun::hand_over`] did) and
    /// sums its table.
    pub fn finish(mut self) -> Result<BTreeMap<&'static str, Efficiency>> {
        if !self.handed_over {
            self.hand_over()?;
        }
        let mut child = self.child.take().context("ncu was already waited for")?;
        let status = child.wait().context("waiting for ncu")?;
        let (stdout, stderr) = self
            .output
            .take()
            .context("ncu's output was already read")?
            .join()
            .map_err(|_| anyhow::anyhow!("reading ncu's output failed"))?;
        let stdout = String::from_utf8_lossy(&stdout);
        // The program's own account of its steps ([`sharing::step_done`]), passed on to the
        // caller's log.
        for line in String::from_utf8_lossy(&stderr)
            .lines()
            .filter(|l| l.starts_with("trace: "))
        {
            eprintln!("ncu's program: {line}");
        }
        if !status.success() {
            let stderr = String::from_utf8_lossy(&stderr);
            let last = stderr
                .lines()
                .chain(stdout.lines())
                .rfind(|l| !l.trim().is_empty())
                .unwrap_or("");
            bail!("ncu exited with {status}: {last}");
        }
        parse(&stdout, &self.order)
    }
}

impl Drop for NcuRun {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(output) = self.output.take() {
            let _ = output.join();
        }
        let _ = std::fs::remove_file(&self.go);
        let _ = std::fs::remove_file(&self.done);
        for file in SET_UP_FILES {
            let _ = std::fs::remove_file(self.set_up.with_extension(file));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ncu_tables_are_summed_per_workload() {
        let text = "==PROF== Connected to process 1\nsome program output\n\
\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
\"0\",\"1\",\"gpubench\",\"h\",\"dot_plain\",\"1\",\"7\",\"(256, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"smsp__inst_executed.sum\",\"inst\",\"1,000\"\n\
\"0\",\"1\",\"gpubench\",\"h\",\"dot_plain\",\"1\",\"7\",\"(256, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"smsp__thread_inst_executed.sum\",\"inst\",\"16000\"\n\
\"1\",\"1\",\"gpubench\",\"h\",\"bfs_expand_plain\",\"1\",\"7\",\"(256, 1, 1)\",\"(32, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"smsp__inst_executed.sum\",\"inst\",\"10\"\n\
\"1\",\"1\",\"gpubench\",\"h\",\"bfs_expand_plain\",\"1\",\"7\",\"(256, 1, 1)\",\"(32, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"smsp__thread_inst_executed.sum\",\"inst\",\"320\"\n\
\"2\",\"1\",\"gpubench\",\"h\",\"bfs_update_plain\",\"1\",\"7\",\"(256, 1, 1)\",\"(32, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"smsp__inst_executed.sum\",\"inst\",\"10\"\n\
\"2\",\"1\",\"gpubench\",\"h\",\"bfs_update_plain\",\"1\",\"7\",\"(256, 1, 1)\",\"(32, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"smsp__thread_inst_executed.sum\",\"inst\",\"0\"\n\
\"3\",\"1\",\"gpubench\",\"h\",\"clock_rate\",\"1\",\"7\",\"(32, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"smsp__inst_executed.sum\",\"inst\",\"99\"\n";
        let sums = parse(text, &["dot", "bfs"]).unwrap();
        assert_eq!(sums.len(), 2);
        assert_eq!(sums["dot"].warp_efficiency(), 0.5);
        assert_eq!(sums["bfs"].launches, Some(2));
        assert_eq!(sums["bfs"].warp_efficiency(), 0.5);
        assert!(parse("no table", &[]).is_err());
    }

    #[test]
    fn ranges_are_the_workloads_in_the_order_the_program_ran_them() {
        // As ncu 2025.3 prints application range replay (one result per profiler range).
        let text = "==PROF== Disconnected from process 505\n\
\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
\"0\",\"505\",\"gpubench\",\"h\",\"range\",\"1\",\"n/a\",\"0\",\"9.0\",\"Command line profiler metrics\",\"smsp__inst_executed.sum\",\"inst\",\"1,813\"\n\
\"0\",\"505\",\"gpubench\",\"h\",\"range\",\"1\",\"n/a\",\"0\",\"9.0\",\"Command line profiler metrics\",\"smsp__thread_inst_executed.sum\",\"inst\",\"38,269\"\n\
\"1\",\"505\",\"gpubench\",\"h\",\"range\",\"1\",\"n/a\",\"0\",\"9.0\",\"Command line profiler metrics\",\"smsp__inst_executed.sum\",\"inst\",\"100\"\n\
\"1\",\"505\",\"gpubench\",\"h\",\"range\",\"1\",\"n/a\",\"0\",\"9.0\",\"Command line profiler metrics\",\"smsp__thread_inst_executed.sum\",\"inst\",\"1,600\"\n";
        let sums = parse(text, &["btree", "dot"]).unwrap();
        assert_eq!(sums["btree"].thread_instructions, 38269.0);
        assert_eq!(sums["btree"].warp_instructions, 1813.0);
        assert_eq!(sums["dot"].warp_efficiency(), 0.5);
        assert_eq!(sums["dot"].launches, None);
        // One result more than the workloads: the empty range ncu was set up on comes first.
        let after_set_up = parse(text, &["dot"]).unwrap();
        assert_eq!(after_set_up.len(), 1);
        assert_eq!(after_set_up["dot"].warp_efficiency(), 0.5);
        // Two more: no reading of them is sure.
        let third = text.replace("\"1\",\"505\"", "\"2\",\"505\"");
        let text = format!("{text}{}", &third[third.find("\"2\",").unwrap()..]);
        let refused = parse(&text, &["btree"]).unwrap_err();
        assert!(format!("{refused:#}").contains("more results than the 1 workloads"));
    }

    #[test]
    fn kernels_map_to_their_workloads() {
        assert_eq!(workload_of("gauss_fan2_plain"), Some("gaussian"));
        assert_eq!(workload_of("lu_plain"), Some("lud"));
        assert_eq!(workload_of("lu_tagged"), None);
        assert_eq!(workload_of("chase_global"), None);
    }
}

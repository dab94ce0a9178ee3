//! End-to-end runs on a real GPU. Ignored by default; on a GPU machine run the prebuilt test
//! binary with `--ignored` (set GPUBENCH_BIN when the binary is not where cargo built it).

use std::path::PathBuf;
use std::process::Command;

fn gpubench() -> Command {
    // Absolute, so tests that change the working directory still find it.
    let binary = std::env::var_os("GPUBENCH_BIN")
        .map(|path| std::fs::canonicalize(PathBuf::from(path)).expect("GPUBENCH_BIN exists"))
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_gpubench")));
    Command::new(binary)
}

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn info_measures_a_running_clock() {
    let output = gpubench().args(["info", "--json"]).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(info["sm_clock"]["mhz"].as_f64().unwrap() > 0.0);
    assert!(info["sm_clock"]["interval_ns"].as_i64().unwrap() >= 10_000_000);
    assert!(
        info["clock64_read_overhead_cycles"]["min"]
            .as_f64()
            .unwrap()
            >= 0.0
    );
    assert!(info["device"]["multiprocessors"].as_i64().unwrap() > 0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn divergence_writes_a_complete_run() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let output = gpubench()
        .args(["divergence", "--samples", "16", "--output"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for name in [
        "samples.csv",
        "summary.csv",
        "fit.json",
        "divergence.png",
        "metadata.json",
    ] {
        assert!(run.join(name).is_file(), "{name} missing");
    }
    let metadata = json(&run.join("metadata.json"));
    assert_eq!(metadata["status"], "complete");
    assert!(metadata["sm_clock_after"]["mhz"].as_f64().unwrap() > 0.0);
    let model = json(&run.join("model.json"));
    assert!(model["model"] == "linear" || model["model"] == "stack");
    assert!(model["double_loop_prediction"]["max_abs_error_cycles"].is_number());
    // SASS is written where the toolkit is installed, and the metadata says which.
    let sass = &metadata["settings"]["sass"];
    let arch = sass["arch"].as_str().unwrap();
    let written = run.join(format!("divergence.{arch}.sass")).is_file();
    assert_eq!(
        written,
        !sass["kernels"].as_array().unwrap().is_empty(),
        "{sass}"
    );
    let fit = json(&run.join("fit.json"));
    assert_eq!(fit["fits"].as_array().unwrap().len(), 2);
    let samples = std::fs::read_to_string(run.join("samples.csv")).unwrap();
    assert_eq!(samples.lines().count(), 1 + 2 * 32 * 16 * 32);
    // Every lane timed a loop of at least one iteration: no zero or negative cycle counts.
    assert!(samples.lines().skip(1).all(|line| {
        let raw: i64 = line.rsplit(',').next().unwrap().parse().unwrap();
        raw > 0
    }));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_device_index_out_of_range_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let output = gpubench()
        .current_dir(dir.path())
        .args(["divergence", "--device", "7"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("there is no CUDA device 7"), "{stderr}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// A CSV file's rows, each a map from its header's names to the row's text.
fn csv_rows(path: &std::path::Path) -> Vec<std::collections::HashMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    reader.deserialize().map(Result::unwrap).collect()
}

fn run_suite(args: &[&str]) -> (tempfile::TempDir, PathBuf, std::time::Duration) {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let started = std::time::Instant::now();
    let output = gpubench()
        .args(args)
        .arg("--output")
        .arg(&run)
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(json(&run.join("metadata.json"))["status"], "complete");
    (dir, run, elapsed)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn clock_reports_overheads_and_a_counter_scope() {
    let (_dir, run, _) = run_suite(&["clock"]);
    let clock = json(&run.join("clock.json"));
    assert!(
        clock["timer_overheads"]["clock64_cycles"]["median"]
            .as_f64()
            .unwrap()
            >= 0.0
    );
    let verdict = clock["counter_scope"]["verdict"].as_str().unwrap();
    assert!(
        ["shared", "per-SM", "per-group"].contains(&verdict),
        "{verdict}"
    );
    assert!(run.join("clock.png").is_file() && run.join("clock_scope.csv").is_file());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn shared_fits_a_cost_per_conflict_way() {
    let (_dir, run, _) = run_suite(&["shared", "--max-stride", "8"]);
    let shared = json(&run.join("shared.json"));
    assert!(shared["load_latency_cycles"].as_f64().unwrap() > 0.0);
    assert!(shared["fit"]["cycles_per_extra_way"]["estimate"].is_number());
    let rows = std::fs::read_to_string(run.join("shared.csv")).unwrap();
    assert_eq!(rows.lines().count(), 1 + 3 * 8);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sync_returns_within_seconds_with_a_verdict_for_every_probe() {
    let (_dir, run, elapsed) = run_suite(&["sync", "--timeout-seconds", "3"]);
    // Six probes, each killed after 3 s at worst, plus start-up.
    assert!(elapsed.as_secs_f64() < 6.0 * 3.0 + 20.0, "took {elapsed:?}");
    let verdicts = json(&run.join("sync.json"));
    assert_eq!(verdicts.as_array().unwrap().len(), 6);
    for verdict in verdicts.as_array().unwrap() {
        assert_ne!(verdict["outcome"], "failed", "{verdict}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn branch_records_every_path_of_every_order() {
    let (_dir, run, _) = run_suite(&["branch"]);
    let summary = json(&run.join("branch.json"));
    for order in ["ascending", "descending", "random", "two warps"] {
        let clauses = summary[order]["report"]["clause_order"].as_array().unwrap();
        assert_eq!(clauses.len(), 32, "{order}");
    }
    assert!(summary["two warps"]["warp_overlap"].is_number());
    let rows = std::fs::read_to_string(run.join("branch.csv")).unwrap();
    assert_eq!(rows.lines().count(), 1 + 32 * 3 + 64);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn regs_finds_the_largest_block_per_register_count() {
    let (_dir, run, _) = run_suite(&["regs", "--min-registers", "64", "--step", "29"]);
    // What the run was asked, as its settings type serializes it.
    let asked = json(&run.join("settings.json"));
    assert_eq!(
        (asked["min_registers"].as_u64(), asked["step"].as_u64()),
        (Some(64), Some(29))
    );
    let rows = std::fs::read_to_string(run.join("regs.csv")).unwrap();
    // caps 64, 93, ..., 238, and 255
    assert_eq!(rows.lines().count(), 1 + 7 + 1);
    let regs = json(&run.join("regs.json"));
    assert!(
        regs["allocation"]["largest_block_registers"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pipeline_measures_every_operation() {
    let (_dir, run, _) = run_suite(&["pipeline", "--iterations", "16"]);
    let table = json(&run.join("pipeline.json"));
    let operations = table["operations"].as_array().unwrap();
    assert_eq!(operations.len(), 28);
    for op in operations {
        assert!(op["latency_cycles"].as_f64().unwrap() > 0.0, "{op}");
        assert!(op["ops_per_clock_per_sm"].as_f64().unwrap() > 0.0, "{op}");
    }
    assert_eq!(table["warp_sweep"]["points"].as_array().unwrap().len(), 32);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cache_sweeps_shared_memory_flat() {
    let (_dir, run, _) = run_suite(&["cache", "--space", "shared", "--max-bytes", "16384"]);
    let cache = json(&run.join("cache.json"));
    // Shared memory has no cache in front of it: one level, no size.
    let levels = cache["report"]["levels"].as_array().unwrap();
    assert!(!levels.is_empty());
    assert!(levels.last().unwrap()["size_bytes"].is_null());
    assert!(run.join("chase.csv").is_file() && run.join("cache.png").is_file());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cache_chases_constant_memory_in_random_order() {
    let (_dir, run, _) = run_suite(&[
        "cache",
        "--space",
        "constant",
        "--chain",
        "random",
        "--max-bytes",
        "8192",
    ]);
    let cache = json(&run.join("cache.json"));
    assert!(!cache["report"]["levels"].as_array().unwrap().is_empty());
    let metadata = json(&run.join("metadata.json"));
    assert!(
        metadata["settings"]["chain"]
            .as_str()
            .unwrap()
            .contains("random")
    );
}

/// Both constant paths, named by the SASS their timed loops run; on the register path the
/// curve fit and the conflict experiment agree on the constant L1's ways and way size.
#[test]
#[ignore = "needs a CUDA GPU"]
fn constant_memory_paths_are_named_and_the_fit_agrees_with_the_conflict_experiment() {
    let (_dir, run, _) = run_suite(&["cache", "--space", "constant"]);
    let cache = json(&run.join("cache.json"));
    let loads = cache["timed_loop"]["loads"].as_object().unwrap();
    assert!(loads.keys().all(|k| k == "LDC"), "{loads:?}");
    let level = &cache["report"]["levels"][0];
    let conflict = &cache["conflict"];
    assert_eq!(level["ways"], conflict["ways"], "{level} {conflict}");
    assert_eq!(
        level["sets"].as_u64().unwrap() * level["line_bytes"].as_u64().unwrap(),
        conflict["way_bytes"].as_u64().unwrap()
    );
    let (_dir, run, _) = run_suite(&["cache", "--space", "constant-uniform"]);
    let cache = json(&run.join("cache.json"));
    let loads = cache["timed_loop"]["loads"].as_object().unwrap();
    assert!(loads.keys().all(|k| k == "ULDC"), "{loads:?}");
}

/// The global chase is load-to-use: no faster than the word-index chase it replaced, which
/// pays for an address computation per load. Beside it the shared-storage probe: every path's
/// own walk of the evict chain evicts its fill chain (each path has a cache to probe).
#[test]
#[ignore = "needs a CUDA GPU"]
fn global_chase_is_load_to_use_and_every_path_evicts_itself() {
    let (_dir, run, _) = run_suite(&["cache", "--space", "global", "--max-bytes", "1048576"]);
    let cache = json(&run.join("cache.json"));
    let index = &cache["index_chain"];
    assert!(index["overhead_cycles"].as_f64().unwrap() > 1.0, "{index}");
    assert_eq!(
        cache["timed_loop"]["loads"]["LDG.E.64"].as_u64(),
        Some(16),
        "{}",
        cache["timed_loop"]
    );
    // The probe's SASS, from the PTX this run loaded, loads through every path it compares.
    let probe = &cache["storage_probe_loads"];
    assert!(
        probe["verdict"]
            .as_str()
            .unwrap()
            .starts_with("as expected"),
        "{probe}"
    );
    assert!(
        probe["loads"]["LDC c[0x3]"].as_u64().unwrap() >= 1,
        "{probe}"
    );
    let rows = csv_rows(&run.join("storage.csv"));
    assert_eq!(rows.len(), 27);
    let cycles = |fill: &str, evict: &str| {
        rows.iter()
            .filter(|r| r["fill"] == fill && r["evict"] == evict && r["fill_passes"] == "1")
            .map(|r| r["cycles_per_load"].parse::<f64>().unwrap())
            .fold(0.0, f64::max)
    };
    for path in ["l1", "readonly", "texture", "constant"] {
        let (untouched, evicted) = (cycles(path, "none"), cycles(path, path));
        assert!(
            evicted > untouched + 10.0,
            "{path}: {untouched} then {evicted}"
        );
    }
}

/// Every SM reads the L2 partition probe's lines in the first sweep (a block landed on each),
/// and where two partitions are stated, their SMs are every SM once.
#[test]
#[ignore = "needs a CUDA GPU"]
fn cache_l2_probes_the_partitions_from_every_sm() {
    let (_dir, run, _) = run_suite(&["cache", "--space", "l2", "--max-bytes", "16777216"]);
    let cache = json(&run.join("cache.json"));
    let metadata = json(&run.join("metadata.json"));
    let sms = metadata["device"]["multiprocessors"].as_u64().unwrap();
    let partitions = &cache["l2_partitions"];
    let first_sweep = partitions["per_sm"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["sweep"] == 0)
        .count();
    assert_eq!(first_sweep as u64, sms, "{partitions}");
    assert!(!partitions["verdict"].as_str().unwrap().is_empty());
    if let Some(groups) = partitions["groups"].as_array() {
        let mut all: Vec<u64> = groups
            .iter()
            .flat_map(|g| g.as_array().unwrap().iter().map(|s| s.as_u64().unwrap()))
            .collect();
        all.sort_unstable();
        assert_eq!(all, (0..sms).collect::<Vec<_>>());
    }
    assert!(run.join("partitions.csv").is_file());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cache_chases_through_a_texture_object() {
    let (_dir, run, _) = run_suite(&["cache", "--space", "texture", "--max-bytes", "65536"]);
    let cache = json(&run.join("cache.json"));
    let levels = cache["report"]["levels"].as_array().unwrap();
    assert!(levels[0]["latency_cycles"].as_f64().unwrap() > 0.0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cache_times_generated_straight_line_code() {
    let (_dir, run, _) = run_suite(&[
        "cache",
        "--space",
        "instruction",
        "--max-bytes",
        "8192",
        "--fine-points",
        "4",
    ]);
    let points = std::fs::read_to_string(run.join("chase.csv")).unwrap();
    // Cycles per instruction: a warp issues at most one instruction a cycle.
    for line in points.lines().skip(1) {
        let cycles: f64 = line.rsplit(',').next().unwrap().parse().unwrap();
        assert!(cycles >= 0.9, "{line}: code was shortened");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cache_chases_pages_for_the_tlb_and_reads_a_page_size() {
    let (_dir, run, _) = run_suite(&[
        "cache",
        "--space",
        "tlb",
        "--max-bytes",
        "1073741824",
        "--fine-points",
        "4",
    ]);
    let cache = json(&run.join("cache.json"));
    assert!(
        cache["tlb"]["levels"]
            .as_array()
            .is_some_and(|l| !l.is_empty())
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cache_runs_many_threads_and_times_single_loads() {
    let (_dir, run, _) = run_suite(&[
        "cache",
        "--max-bytes",
        "65536",
        "--threads",
        "32",
        "--per-load",
    ]);
    let cache = json(&run.join("cache.json"));
    let per_load = cache["per_load"].as_array().unwrap();
    assert_eq!(per_load.len(), 5, "4, 8, 16, 32 and 64 KiB");
    assert!(run.join("loads.csv").is_file());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn slots_checks_every_workload_and_accounts_every_slot() {
    let (_dir, run, _) = run_suite(&["slots", "--repeats", "2", "--no-ncu"]);
    let slots = json(&run.join("slots.json"));
    let rows = slots["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    for row in rows {
        let sum: f64 = ["f_active", "f_extrinsic", "f_intrinsic", "f_untagged"]
            .iter()
            .map(|k| row[k].as_f64().unwrap())
            .sum();
        assert!((sum - 1.0).abs() < 1e-9, "{row}");
    }
    // The paper's dot product: thread 0's serial sum leaves 31 of 32 lanes idle, extrinsically.
    let dot = &rows[0];
    assert_eq!(dot["workload"], "dot");
    assert!(dot["f_extrinsic"].as_f64().unwrap() > 0.5, "{dot}");
    assert!(run.join("slots.png").is_file() && run.join("branches.csv").is_file());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_suite_that_steps_aside_lets_the_next_one_measure_and_is_served_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("all");
    // regs compiles its register caps aside (about 1 s), so tensor (after it in the plan)
    // measures meanwhile and regs gets the GPU back once tensor is done with it.
    let output = gpubench()
        .args(["all", "--only", "regs,tensor", "--output"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let manifest = json(&run.join("all.json"));
    let suites = manifest["suites"].as_array().unwrap();
    let names: Vec<&str> = suites.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["regs", "tensor"],
        "plan order, whatever order they ended in"
    );
    assert!(suites.iter().all(|s| s["status"] == "complete"));
    assert!(
        suites[0]["time_split"]["waiting_for_gpu_seconds"].is_number(),
        "regs records its wait for the GPU: {:#}",
        suites[0]
    );
    // tensor's turn came while regs was aside, and regs had the GPU back only after tensor
    // handed it on (had regs kept the GPU, tensor's one turn would have come after regs').
    let turns = |suite: &serde_json::Value| -> Vec<(f64, f64)> {
        suite["gpu_intervals_seconds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t[0].as_f64().unwrap(), t[1].as_f64().unwrap()))
            .collect()
    };
    let (regs, tensor) = (turns(&suites[0]), turns(&suites[1]));
    assert!(regs.len() >= 2, "regs stepped aside: {regs:?}");
    let (first, back) = (regs[0], regs[regs.len() - 1]);
    assert!(
        first.1 <= tensor[0].0 && tensor[tensor.len() - 1].1 <= back.0,
        "tensor's turns {tensor:?} lie between regs' {regs:?}"
    );
    // No turn files are left behind.
    let leftovers: Vec<String> = std::fs::read_dir(run.join("logs"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| !n.ends_with(".log"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn all_records_a_suite_that_overruns_and_still_runs_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("all");
    // The L2 sweep takes about 5 s: a 3-second limit kills it, with its process group, while
    // clock (about 0.6 s, with its two-timer busy-waits) completes.
    let output = gpubench()
        .args([
            "all",
            "--only",
            "cache-l2,clock",
            "--suite-timeout-seconds",
            "3",
            "--output",
        ])
        .arg(&run)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let manifest = json(&run.join("all.json"));
    let suites = manifest["suites"].as_array().unwrap();
    let status = |name: &str| {
        suites.iter().find(|s| s["name"] == name).unwrap()["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(status("clock"), "complete");
    assert_eq!(status("cache-l2"), "timed out");
    let summary = std::fs::read_to_string(run.join("summary.md")).unwrap();
    assert!(
        summary.contains("| Clocks and timers | clock64 back-to-back |"),
        "{summary}"
    );
    assert!(summary.contains("| cache-l2 | timed out"), "{summary}");
    // Nothing of the killed suite outlived the kill.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let survivors: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&*run.join("cache-l2").to_string_lossy()))
        .collect();
    assert!(survivors.is_empty(), "{survivors:?}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bandwidth_measures_every_level_and_checks_its_kernels() {
    let (_dir, run, _) = run_suite(&[
        "bandwidth",
        "--repeats",
        "2",
        "--min-ms",
        "0.5",
        "--points-per-doubling",
        "1",
        "--max-bytes",
        "268435456",
        "--max-sm-bytes",
        "1048576",
    ]);
    let file = json(&run.join("bandwidth.json"));
    let levels = file["levels"].as_array().unwrap();
    for (level, operation) in [
        ("shared", "read"),
        ("l1", "read"),
        ("l2", "read"),
        ("l2", "shared-line read"),
        ("dram", "copy"),
    ] {
        let found = levels
            .iter()
            .find(|l| l["level"] == level && l["operation"] == operation)
            .unwrap_or_else(|| panic!("no {level} {operation}"));
        assert!(found["median_bytes_per_second"].as_f64().unwrap() > 1e9);
        assert!(found["bytes_per_clock_per_sm"].as_f64().unwrap() > 0.1);
    }
    // Shared memory is faster than DRAM on every GPU gpubench knows.
    let rate = |level: &str| {
        levels
            .iter()
            .find(|l| l["level"] == level && l["operation"] == "read")
            .unwrap()["median_bytes_per_second"]
            .as_f64()
            .unwrap()
    };
    assert!(rate("shared") > rate("dram"));
    assert!(file["dram_peak_bytes_per_second"].as_f64().unwrap() > rate("dram"));
    // Past the L2 the kernels of private slices take them by ticket; within it the reads
    // stream where the slices outnumber the resident blocks (else, and for the rest, each
    // block keeps its slices).
    for l in levels {
        let order = l["slice_order"].as_str();
        match (l["level"].as_str(), l["operation"].as_str()) {
            (Some("dram"), Some("read" | "strong read" | "write" | "copy")) => {
                assert_eq!(order, Some("ticket"), "{l}");
            }
            (Some("l2"), Some("read" | "strong read")) => {
                assert!(matches!(order, Some("stream" | "fixed")), "{l}");
            }
            (Some("l2" | "dram"), Some(_)) => assert_eq!(order, Some("fixed"), "{l}"),
            _ => assert_eq!(order, None, "{l}"),
        }
    }
    // The copy engines reproduced the source, at a rate below the theoretical peak.
    let engines = &file["copy_engines"]["Ok"];
    assert_eq!(engines["mismatched_words"], 0, "{engines}");
    assert!(engines["checked_words"].as_u64().unwrap() > 0);
    let fraction = engines["fraction_of_peak"].as_f64().unwrap();
    assert!(fraction > 0.3 && fraction < 1.0, "{engines}");
    for kernel in file["sass"]["kernels"].as_array().unwrap() {
        assert!(
            kernel["verdict"]
                .as_str()
                .unwrap()
                .starts_with("as expected"),
            "{kernel}"
        );
    }
    let figures = json(&run.join("figures.json"));
    assert!(figures["figures"].as_array().unwrap().len() > 10);
}

/// Slices handed out by ticket cover the region: a copy by ticket reproduces every word of its
/// source and a write by ticket overwrites every word, at both orders' occupancies.
#[test]
#[ignore = "needs a CUDA GPU"]
fn slices_by_ticket_cover_the_whole_region() {
    use gpubench::gpu::Gpu;
    use gpubench::gpu::launch::bandwidth::{self, Buffers, Kernel, Launch, Occupancy, SliceOrder};
    let mut gpu = Gpu::open(0).unwrap();
    let sms = u32::try_from(gpu.properties().unwrap().multiprocessors).unwrap();
    let region: u64 = 64 << 20;
    let mut buffers = Buffers::new(&gpu, region, sms).unwrap();
    let deadline = std::time::Duration::from_secs(20);
    // One launch over the region; the bytes it covers (a copy: its source and its target).
    let run = |gpu: &mut Gpu, buffers: &mut Buffers, occupancy, kernel, order, passes| {
        let launch = Launch {
            kernel,
            occupancy,
            footprint_bytes: region,
            passes,
            order,
        };
        bandwidth::run(gpu, buffers, &launch, deadline).unwrap();
        launch.covered_bytes()
    };
    // Words of the first `bytes` of the target (or the source) that are not `want`.
    let differing = |gpu: &Gpu, buffers: &Buffers, target: bool, bytes: u64, want: u32| {
        let words = buffers.read_back(gpu, target).unwrap();
        let words = &words[..(bytes / 4) as usize];
        (words.iter().filter(|&&w| w != want).count(), words.len())
    };
    for (threads, blocks_per_sm) in [(1024, 1), (256, 2), (128, 8)] {
        let occupancy = Occupancy {
            threads,
            blocks_per_sm,
        };
        // Fixed slices write pass values 0 then 1: the source holds 1s.
        let written = run(
            &mut gpu,
            &mut buffers,
            occupancy,
            Kernel::WriteDevice,
            SliceOrder::Fixed,
            2,
        );
        // The copy's footprint is its source and its target: half the region each.
        let copied = run(
            &mut gpu,
            &mut buffers,
            occupancy,
            Kernel::CopyDevice,
            SliceOrder::Ticket,
            1,
        ) / 2;
        let (missed, words) = differing(&gpu, &buffers, true, copied, 1);
        assert_eq!(
            missed, 0,
            "{occupancy:?}: the copy by ticket left {missed} of {words} words"
        );
        // One pass by ticket writes 0 over every 1.
        run(
            &mut gpu,
            &mut buffers,
            occupancy,
            Kernel::WriteDevice,
            SliceOrder::Ticket,
            1,
        );
        let (missed, words) = differing(&gpu, &buffers, false, written, 0);
        assert_eq!(
            missed, 0,
            "{occupancy:?}: the write by ticket left {missed} of {words} words"
        );
        // Clear the target for the next occupancy's copy.
        run(
            &mut gpu,
            &mut buffers,
            occupancy,
            Kernel::WriteDevice,
            SliceOrder::Fixed,
            1,
        );
        run(
            &mut gpu,
            &mut buffers,
            occupancy,
            Kernel::CopyDevice,
            SliceOrder::Fixed,
            1,
        );
    }
}

/// The address-order chain built on the device is the chain the host builds: a chase over
/// either ends on the same word after the same loads, at the same latency.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_device_built_chain_is_the_host_built_one() {
    use gpubench::experiments::chain::{Order, chain};
    use gpubench::gpu::Gpu;
    use gpubench::suites::cache::launch;
    let mut gpu = Gpu::open(0).unwrap();
    let deadline = std::time::Duration::from_secs(20);
    // Timing is compared on the L1 and L2 plateaus only. Past about 25 MiB a chase's hit rate
    // (and in DRAM its latency) depends on where the chain's pages landed, which differs
    // between the two allocations: one H200 read 394.2 and 409.5 cycles per load at 30 MiB in
    // one process (results/h200/gpu-tests/gpu-tests-488a0d2.txt). Every footprint still checks
    // that the device-built chain ends on the host-built one's word.
    for (footprint, stride, compare_timing) in [
        (64_u64 << 10, 128_u64, true),
        (96 << 10, 32, true),
        (8 << 20, 128, true),
        (20 << 20, 128, true),
        (30 << 20, 128, false),
        (64 << 20, 128, false),
    ] {
        let (words, visit) = chain(footprint, stride, Order::Stride);
        let n = visit.len() as u32;
        let start = visit[3] as u32 * (stride / 4) as u32;
        let laps = gpubench::gpu::launch::Laps {
            warm: n,
            steps: n,
            deadline,
        };
        let host = launch::chase(&mut gpu, "chase_l2", &words, &[0, start], laps).unwrap();
        let elements = (u64::from(n), stride);
        let device = launch::chase_stride(&mut gpu, "chase_l2", elements, &[0, 3], laps).unwrap();
        for (h, d) in host.iter().zip(&device) {
            assert_eq!(h.1, d.1, "{footprint} B at {stride} B: final words differ");
            let (h, d) = (h.0 as f64 / f64::from(n), d.0 as f64 / f64::from(n));
            eprintln!(
                "{footprint} B at {stride} B: host-built {h:.1}, device-built {d:.1} cycles per load"
            );
            assert!(
                !compare_timing || (h - d).abs() < 0.01 * h,
                "{footprint} B: {h} against {d} cycles"
            );
        }
    }
}

/// The TMA chase's chain expanded on the device from its successors is, word for word, the
/// chain the host builds.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_tma_chain_expanded_on_the_device_is_the_host_built_one() {
    use gpubench::experiments::chain::{Order, chain, successors};
    use gpubench::gpu::{Gpu, launch};
    let mut gpu = Gpu::open(0).unwrap();
    let sms = u32::try_from(gpu.properties().unwrap().multiprocessors).unwrap();
    for footprint in [256_u64, 128 << 10, 24 << 20] {
        let (words, _) = chain(footprint, 128, Order::Random(0x7a11 ^ footprint));
        let (next, _) = successors(
            (footprint / 128) as usize,
            Order::Random(0x7a11 ^ footprint),
        );
        let data = gpubench::suites::tma::launch::tma_chain(&mut gpu, &next, 32, sms).unwrap();
        let back = launch::read(&gpu, &data, "the chain").unwrap();
        assert!(back == words, "{footprint} B: the device's chain differs");
    }
}

/// `--device all` runs the command once per GPU, each in a directory named by index and UUID,
/// and each run's metadata names its GPU through NVML (UUID, PCI bus id, serial) and says
/// whether it was throttled.
#[test]
#[ignore = "needs a CUDA GPU"]
fn every_gpu_runs_in_its_own_directory_and_names_itself() {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().join("gpus");
    let output = gpubench()
        .args(["clock", "--device", "all", "--output"])
        .arg(&top)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let manifest = json(&top.join("devices.json"));
    let gpus = manifest["gpus"].as_array().unwrap();
    assert!(!gpus.is_empty());
    for gpu in gpus {
        assert_eq!(gpu["status"], "complete", "{gpu}");
        let uuid = gpu["device"]["uuid"].as_str().unwrap();
        assert!(uuid.starts_with("GPU-"), "{uuid}");
        let run = top.join(gpu["dir"].as_str().unwrap());
        let metadata = json(&run.join("metadata.json"));
        let nvml = &metadata["nvml"];
        assert_eq!(nvml["identity"]["uuid"], uuid, "{nvml}");
        assert!(nvml["identity"]["pci_bus_id"].is_string(), "{nvml}");
        assert!(nvml["before"]["temperature_c"].is_u64(), "{nvml}");
        assert!(nvml["after"]["clocks"]["sm_mhz"].is_u64(), "{nvml}");
        assert!(nvml.get("throttled").is_some(), "{nvml}");
        assert!(top.join(gpu["log"].as_str().unwrap()).is_file());
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_live_run_draws_column_pdfs_for_a_paper_with_plots_tex() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("all");
    let output = gpubench()
        .args(["all", "--only", "clock,pipeline", "--format", "pdf"])
        .args(["--plot-width", "column", "--paper", "--output"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for figure in ["clock/clock.pdf", "pipeline/pipeline.pdf"] {
        let pdf = std::fs::read(run.join(figure)).unwrap();
        assert!(pdf.starts_with(b"%PDF-"), "{figure}");
        assert!(String::from_utf8_lossy(&pdf).contains("/MediaBox [0 0 244.8"));
    }
    assert!(!run.join("pipeline/pipeline.png").exists());
    let tex = std::fs::read_to_string(run.join("plots.tex")).unwrap();
    assert!(tex.contains("{pipeline/pipeline.pdf}"), "{tex}");
    assert_eq!(tex.matches("\\begin{figure}").count(), 2, "{tex}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn tensor_measures_mma_sync_and_wgmma_on_every_input_type() {
    let (_dir, run, _) = run_suite(&["tensor", "--iterations", "128", "--wgmma-n", "64,256"]);
    let tensor = json(&run.join("tensor.json"));
    let kernels = tensor["kernels"].as_array().unwrap();
    // mma.sync of five types, wgmma of six at each of two widths.
    assert_eq!(kernels.len(), 5 + 6 + 6);
    assert!(kernels.iter().any(|k| k["shape"] == "m64n64k16"));
    let rate = |family: &str, input: &str| {
        kernels
            .iter()
            .find(|k| k["family"] == family && k["input"] == input && k["shape"] != "m64n64k16")
            .unwrap()["flop_per_clock_per_sm"]
            .as_f64()
            .unwrap()
    };
    for kernel in kernels {
        assert!(kernel["latency_cycles"].as_f64().unwrap() > 1.0, "{kernel}");
        assert!(kernel["flop_per_clock_per_sm"].as_f64().unwrap() > 0.0);
    }
    // The warpgroup instruction is Hopper's fast path; the warp-level one is not.
    assert!(rate("wgmma", "f16") > rate("mma.sync", "f16"));
    let sass = &tensor["sass"]["kernels"];
    if let Some(sass) = sass.as_array().filter(|s| !s.is_empty()) {
        let thr = sass
            .iter()
            .find(|k| k["kernel"] == "wgmma_f16_thr")
            .unwrap();
        assert!(
            thr["instruction"]
                .as_str()
                .unwrap()
                .starts_with("HGMMA.64x256x16")
        );
    }
    assert!(run.join("tensor.png").is_file());
}

/// `tensor --sustain`: both fills held for their seconds, one row per launch with its rate and
/// the SM clock it ran at, the short figures written beside them; every launch counted.
#[test]
#[ignore = "needs a CUDA GPU"]
fn tensor_holds_wgmma_for_seconds_on_both_fills() {
    let (_dir, run, _) = run_suite(&["tensor", "--iterations", "128", "--sustain", "2"]);
    assert!(run.join("tensor.csv").is_file() && run.join("tensor.json").is_file());
    let rows = csv_rows(&run.join("sustained.csv"));
    for fill in ["pseudo-random", "zero"] {
        let of: Vec<_> = rows.iter().filter(|r| r["fill"] == fill).collect();
        // About 86 ms a launch on an H200: a couple of seconds hold a dozen or more.
        assert!(of.len() >= 5, "{fill}: {} launches", of.len());
        let mut last = -1.0;
        for r in of {
            let seconds: f64 = r["seconds"].parse().unwrap();
            assert!(seconds > last && seconds < 2.0, "{r:?}");
            last = seconds;
            assert!(r["tflops"].parse::<f64>().unwrap() > 1.0, "{r:?}");
            assert!(r["sm_mhz"].parse::<f64>().unwrap() > 100.0, "{r:?}");
        }
    }
    assert!(run.join("tensor-sustained.png").is_file());
    // NVML judges the sustained part apart from the short figures measured before it.
    let metadata = json(&run.join("metadata.json"));
    let parts = metadata["nvml"]["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 1, "{parts:?}");
    assert_eq!(parts[0]["files"], serde_json::json!(["sustained.csv"]));
    assert!(parts[0]["before"]["limited"].is_object(), "{parts:?}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn tensor_measures_narrow_register_and_sparse_forms() {
    let (_dir, run, _) = run_suite(&[
        "tensor",
        "--iterations",
        "128",
        "--wgmma-n",
        "8,256",
        "--a-from-registers",
        "--sparse",
    ]);
    let tensor = json(&run.join("tensor.json"));
    let kernels = tensor["kernels"].as_array().unwrap();
    // mma.sync of five types, wgmma n256 of six, n8 FP16; A from registers at both widths;
    // mma.sp, wgmma.sp from shared memory and from registers.
    assert_eq!(kernels.len(), 5 + 6 + 1 + 2 + 3, "{kernels:?}");
    let find = |family: &str, shape: &str| {
        kernels
            .iter()
            .find(|k| k["family"] == family && k["shape"] == shape && k["input"] == "f16")
            .unwrap_or_else(|| panic!("no {family} {shape}"))
    };
    let rate = |k: &serde_json::Value| k["flop_per_clock_per_sm"].as_f64().unwrap();
    for kernel in kernels {
        assert!(kernel["latency_cycles"].as_f64().unwrap() > 1.0, "{kernel}");
        assert!(rate(kernel) > 0.0, "{kernel}");
        // FP8 mma.sync is emulated on sm_90 (its own test); every form added here is native.
        if kernel["family"] != "mma.sync" {
            assert!(kernel["sass_problem"].is_null(), "{kernel}");
        }
    }
    // A wgmma of width 8 does 1/32 of the work of width 256: it cannot issue 32 times as fast.
    assert!(rate(find("wgmma", "m64n8k16")) < rate(find("wgmma", "m64n256k16")));
    // Sparse rows are against the sparse peak, twice the dense one.
    let dense = find("wgmma", "m64n256k16");
    let sparse = find("wgmma.sp", "m64n256k32");
    assert_eq!(
        sparse["peak_flop_per_clock_per_sm"].as_f64().unwrap(),
        2.0 * dense["peak_flop_per_clock_per_sm"].as_f64().unwrap()
    );
    assert!(
        find("wgmma (A in registers)", "m64n8k16")["latency_cycles"]
            .as_f64()
            .unwrap()
            > 1.0
    );
    assert!(
        find("mma.sp", "m16n8k32")["latency_cycles"]
            .as_f64()
            .unwrap()
            > 1.0
    );
    let sass = &tensor["sass"]["kernels"];
    if let Some(sass) = sass.as_array().filter(|s| !s.is_empty()) {
        let instruction = |kernel: &str| {
            sass.iter().find(|k| k["kernel"] == kernel).unwrap()["instruction"]
                .as_str()
                .unwrap()
                .to_string()
        };
        assert!(instruction("wgmma_sp_f16_n256_thr").starts_with("HGMMA.SP.64x256x32"));
        assert!(instruction("wgmma_f16_rs_n8_thr").starts_with("HGMMA.64x8x16"));
        assert!(instruction("mma_sp_f16_thr").starts_with("HMMA.SP.16832"));
    }
    let summary = std::fs::read_to_string(run.join("summary.md")).unwrap_or_default();
    let figures = gpubench::suites::tensor::report::figures(&run).unwrap();
    assert!(
        figures.iter().any(|f| f
            .quantity
            .contains("wgmma.sp m64n256k32 FP16→FP32: share of the sparse peak")),
        "{summary}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn flops_rates_per_clock_and_per_second_agree() {
    let (_dir, run, _) = run_suite(&["flops", "--iterations", "256"]);
    let flops = json(&run.join("flops.json"));
    let kernels = flops["kernels"].as_array().unwrap();
    assert!(kernels.len() >= 3, "{kernels:?}");
    let info = json(&run.join("metadata.json"));
    let sms = info["device"]["multiprocessors"].as_f64().unwrap();
    for k in kernels {
        let per_sm = k["flop_per_clock_per_sm"].as_f64().unwrap();
        let mhz = k["sm_mhz_during"].as_f64().unwrap();
        let tflops = k["tflops"].as_f64().unwrap();
        assert!(per_sm > 0.0 && mhz > 100.0, "{k}");
        // Two clocks, one answer: the wall-time rate is the per-clock rate at the clock held
        // (less the blocks' staggered starts).
        let from_clock = per_sm * sms * mhz * 1e6 / 1e12;
        assert!(
            tflops <= from_clock * 1.02 && tflops >= from_clock * 0.8,
            "{k}: {tflops} TFLOPS against {from_clock} from the clock"
        );
        assert!(k["one_sm_flop_per_clock"].as_f64().unwrap() > 0.0, "{k}");
        if let Some(count) = k["sass_count"].as_u64() {
            assert!(count >= 256, "{k}");
            assert!(k["sass_problem"].is_null(), "{k}");
        }
    }
    assert!(run.join("flops.png").is_file());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn launch_times_the_host_and_the_gpu_and_fits_small_kernels() {
    use gpubench::suites::launch::{analysis, report};
    let (_dir, run, _) = run_suite(&[
        "launch",
        "--repeats",
        "5",
        "--round-trips",
        "50",
        "--max-bytes",
        "268435456",
    ]);
    let reading = report::read(&run).unwrap();
    let s = &reading.samples;
    let median = |v: &[f64]| gpubench::analysis::stats::median(v).unwrap();
    let (call, trip) = (median(&s.launch_call_us), median(&s.round_trip_us));
    let (back_to_back, graph) = (median(&s.back_to_back_us), median(&s.graph_per_kernel_us));
    assert!(call > 0.0 && back_to_back > 0.0 && graph > 0.0, "{s:?}");
    // A round trip waits for the kernel it launched: no shorter than a launch call, nor than
    // the GPU's time per kernel back to back.
    assert!(trip >= call && trip >= back_to_back, "{s:?}");
    assert!(median(&s.graph_round_trip_us) > 0.0);
    // The sweep: 4 KiB to 256 MiB, each volume with every launch timed.
    let points = report::read_points(&run).unwrap();
    assert_eq!(points.len(), 17, "{points:?}");
    assert!(
        points
            .iter()
            .all(|p| p.time_us.n == 5 && p.time_us.min > 0.0)
    );
    let fit = analysis::fit(&points).unwrap();
    assert!(fit.bandwidth_gb_per_s.unwrap().estimate > 0.0, "{fit:?}");
    let figures = report::figures(&run).unwrap();
    assert!(
        figures
            .iter()
            .any(|f| f.unit == "GB/s" && f.value.unwrap() > 0.0)
    );
    assert!(run.join("small-kernels.csv").is_file() && run.join("launch.png").is_file());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dpx_times_every_function_and_reads_its_sass() {
    use gpubench::suites::dpx::{measure, report};
    let (_dir, run, _) = run_suite(&["dpx", "--repeats", "3"]);
    let reading = report::read(&run).unwrap();
    assert_eq!(reading.samples.latency.len(), measure::FUNCTIONS.len());
    let functions = report::read_functions(&run).unwrap();
    assert_eq!(functions.len(), measure::FUNCTIONS.len());
    let figures = report::figures(&run).unwrap();
    for f in &measure::FUNCTIONS {
        let latency = figures
            .iter()
            .find(|x| x.key == format!("dpx/{}/latency", f.name))
            .unwrap_or_else(|| panic!("no latency figure of {}", f.name));
        assert!(latency.value.unwrap() > 0.0, "{latency:?}");
        assert!(latency.unresolved.is_none(), "{latency:?}");
        let rate = figures
            .iter()
            .find(|x| x.key == format!("dpx/{}/throughput", f.name))
            .unwrap();
        assert!(rate.value.unwrap() > 0.0, "{rate:?}");
        // An SM issues at most one warp instruction a clock from each of its four schedulers:
        // 128 lanes a clock, 256 calls where two calls fuse into one instruction (a little
        // more for the clock's rounding).
        assert!(rate.value.unwrap() < 260.0, "{rate:?}");
    }
    // The machine's SASS: one DPX instruction per call of viaddmax_s32, where the toolkit is.
    if run.join("dpx.sass").is_file() {
        let viaddmax = functions.iter().find(|r| r.name == "viaddmax_s32").unwrap();
        assert_eq!(viaddmax.sass_per_call, "VIADDMNMX ×1", "{viaddmax:?}");
    }
    assert_eq!(
        report::read_mixes(&run).unwrap().len(),
        measure::MIXES.len()
    );
    assert!(run.join("functions.csv").is_file() && run.join("mixes.csv").is_file());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn atomics_chase_with_the_atomic_and_storm_in_every_pattern() {
    let (_dir, run, _) = run_suite(&["atomics", "--repeats", "1"]);
    let atomics = json(&run.join("atomics.json"));
    let latency = atomics["latency_rows"].as_array().unwrap();
    // Two widths: four global chases at two footprints and one shared, each of five operations.
    assert_eq!(latency.len(), 2 * 5 * 3);
    let cycles = |space: &str, width: &str, op: &str| {
        latency
            .iter()
            .find(|r| r["space"] == space && r["width"] == width && r["op"] == op)
            .unwrap()["cycles_per_step"]
            .as_f64()
            .unwrap()
    };
    // A shared-memory atomic returns long before a global one, which the L2 performs.
    assert!(cycles("shared", "u32", "add") < cycles("global", "u32", "add"));
    assert!(cycles("global", "u32", "add") > cycles("global", "u32", "load"));
    let storms = atomics["throughput_rows"].as_array().unwrap();
    assert_eq!(storms.len(), 2 * 7 * (4 + 3));
    for storm in storms {
        assert!(storm["ops_per_clock"].as_f64().unwrap() > 0.0, "{storm}");
    }
    assert!(run.join("atomics.png").is_file());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn dsm_chases_into_every_cluster_size_that_fits() {
    let (_dir, run, _) = run_suite(&["dsm", "--iterations", "16", "--bandwidth-sizes", "2,4"]);
    let dsm = json(&run.join("dsm.json"));
    let latency = dsm["latency_rows"].as_array().unwrap();
    assert!(latency.len() >= 7, "at least the portable sizes 2..8");
    for row in latency {
        // Another SM's shared memory is further than the block's own.
        assert!(row["remote_cycles"].as_f64().unwrap() > row["local_cycles"].as_f64().unwrap());
        assert_eq!(row["distinct_sms"], true, "{row}");
    }
    assert_eq!(dsm["occupancy_rows"].as_array().unwrap().len(), 16);
    assert_eq!(dsm["bandwidth_rows"].as_array().unwrap().len(), 2 * 5);
    assert!(run.join("dsm.png").is_file());
}

/// `sm-map`: every SM walks its L2 region and has its row; on Hopper every cluster that fits
/// is launched (through `ClusterArgs`) and every block chases every block of its cluster, its
/// own shared memory nearer than another SM's.
#[test]
#[ignore = "needs a CUDA GPU"]
fn sm_map_reads_every_sm_and_chases_every_cluster_that_fits() {
    let (_dir, run, _) = run_suite(&[
        "sm-map",
        "--lines",
        "256",
        "--cluster",
        "4",
        "--steps",
        "256",
    ]);
    let reading = json(&run.join("sm-map.json"));
    let sms = reading["sms"].as_u64().unwrap();
    assert!(sms > 0);
    assert_eq!(reading["probed"].as_u64(), Some(sms), "{reading}");
    let rows = csv_rows(&run.join("sms.csv"));
    let numbers: std::collections::BTreeSet<u64> =
        rows.iter().map(|r| r["sm"].parse().unwrap()).collect();
    assert_eq!(numbers, (0..sms).collect(), "one row per SM");
    for row in &rows {
        let own: f64 = row["own_cycles"].parse().unwrap();
        assert!(own > 0.0, "{row:?}");
    }
    let hopper = json(&run.join("metadata.json"))["device"]["compute_capability"] == "9.0";
    if !hopper {
        assert!(reading["dsm_skipped"].is_string(), "{reading}");
        return;
    }
    let clusters = reading["dsm_clusters"].as_u64().unwrap();
    assert!(clusters > 0, "{reading}");
    let chases = csv_rows(&run.join("dsm.csv"));
    assert_eq!(
        chases.len() as u64,
        clusters * 4 * 4,
        "every block into every block"
    );
    let mean = |own: bool| {
        let cycles: Vec<f64> = chases
            .iter()
            .filter(|c| (c["rank"] == c["target_rank"]) == own)
            .map(|c| c["cycles_per_load"].parse::<f64>().unwrap())
            .collect();
        assert!(cycles.iter().all(|&c| c > 0.0));
        cycles.iter().sum::<f64>() / cycles.len() as f64
    };
    assert!(
        mean(true) < mean(false),
        "a block's own shared memory is nearer"
    );
    assert!(run.join("sm-map.png").is_file());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn tma_chases_and_streams_with_bulk_tensor_copies() {
    let (_dir, run, _) = run_suite(&[
        "tma",
        "--footprints-mib",
        "1,4,16,64,128,256",
        "--stream-mib",
        "64",
    ]);
    let tma = json(&run.join("tma.json"));
    let latency = tma["latency_rows"].as_array().unwrap();
    assert_eq!(latency.len(), 6);
    let first = &latency[0];
    let last = &latency[5];
    // Memory is further than the L2 for both chases.
    assert!(last["tma_cycles"].as_f64().unwrap() > first["tma_cycles"].as_f64().unwrap());
    assert!(last["load_cycles"].as_f64().unwrap() > first["load_cycles"].as_f64().unwrap());
    let streamed = tma["bandwidth_rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["gpu_gb_per_s"].as_f64().is_some_and(|g| g > 0.0))
        .count();
    assert!(streamed >= 6, "{streamed} configurations streamed");
    // Where the toolkit was there to disassemble, the copies are the TMA's own instruction.
    if let Some(kernels) = tma["sass"]["memory_instructions"].as_object() {
        for kernel in ["tma_latency", "tma_bandwidth"] {
            let ops = kernels[kernel].as_object().unwrap();
            assert!(
                ops.keys().any(|op| op.starts_with("UTMALDG")),
                "{kernel}: {ops:?}"
            );
        }
        for kernel in ["tma_l2_read", "tma_dram_copy"] {
            let ops = kernels[kernel].as_object().unwrap();
            assert!(ops.keys().any(|op| op.starts_with("UBLKCP")), "{ops:?}");
        }
    }
    assert!(run.join("tma.png").is_file());
    // The L2 read by bulk copies: every pattern that fits ran (each launch checked its data),
    // and the figure of each kind of line is a re-timed pattern of the search.
    let rows = csv_rows(&run.join("tma-l2-read.csv"));
    let rate = |r: &std::collections::HashMap<String, String>| r["gb_per_s"].parse::<f64>().ok();
    let ran = rows
        .iter()
        .filter(|r| r["role"] == "search" && rate(r).is_some())
        .count();
    assert!(ran >= 20, "{ran} patterns ran");
    let figure = |lines: &str| {
        rows.iter()
            .find(|r| r["role"] == "figure" && r["lines"] == lines)
            .and_then(rate)
            .unwrap()
    };
    // Lines every SM reads come faster than lines one block reads.
    assert!(figure("shared") > figure("private"));
    assert!(run.join("tma-l2-read.png").is_file());
    // The DRAM copy by bulk copies: a figure, its target checked, below the theoretical peak.
    let rows = csv_rows(&run.join("tma-dram-copy.csv"));
    let figure = rows.iter().find(|r| r["role"] == "figure").unwrap();
    assert_eq!(figure["mismatched_words"], "0", "{figure:?}");
    let fraction: f64 = figure["fraction_of_peak"].parse().unwrap();
    assert!(fraction > 0.3 && fraction < 1.0, "{figure:?}");
    // Box shapes and copies into shared memory: every configuration ran from both sources.
    let rows = csv_rows(&run.join("tma-shapes.csv"));
    assert_eq!(rows.len(), 2 * (11 + 3 * 4));
    let per_sm = |r: &std::collections::HashMap<String, String>| {
        r["bytes_per_clock_per_sm"].parse::<f64>().unwrap()
    };
    assert!(rows.iter().all(|r| per_sm(r) > 0.0), "{rows:?}");
    // From DRAM more copies in flight never carry less: depth 8 above depth 1 for each method.
    for method in ["ld.global.cg + st.shared", "cp.async.cg", "TMA 2-D box"] {
        let at = |depth: &str| {
            rows.iter()
                .find(|r| {
                    r["source"] == "dram"
                        && r["method"] == method
                        && r["depth"] == depth
                        && r["experiment"] == "copies"
                })
                .map(per_sm)
                .unwrap()
        };
        assert!(
            at("8") > at("1"),
            "{method}: {} against {}",
            at("8"),
            at("1")
        );
    }
    if let Some(kernels) = tma["sass"]["memory_instructions"].as_object() {
        let ops = kernels["tma_tiles"].as_object().unwrap();
        assert!(ops.keys().any(|op| op.starts_with("UTMALDG.3D")), "{ops:?}");
        let ops = kernels["async_copy"].as_object().unwrap();
        assert!(ops.keys().any(|op| op.starts_with("LDGSTS")), "{ops:?}");
    }
    assert!(run.join("tma-shapes.png").is_file());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_context_gets_one_work_queue_unless_the_environment_names_a_count() {
    for (environment, recorded) in [(None, "1"), (Some("4"), "4")] {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        let mut command = gpubench();
        command.args(["clock", "--output"]).arg(&run);
        match environment {
            Some(count) => command.env("CUDA_DEVICE_MAX_CONNECTIONS", count),
            None => command.env_remove("CUDA_DEVICE_MAX_CONNECTIONS"),
        };
        let output = command.output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let metadata = json(&run.join("metadata.json"));
        assert_eq!(metadata["device_max_connections"], recorded);
    }
}

/// The L1 gives way to shared memory: the global chase with no shared memory asked and with all
/// of it, each first level with a capacity interval around its first miss, the second far
/// smaller than the first (by at least half the shared memory asked), and both in the summary.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_l1_gives_way_to_the_shared_carveout_and_states_its_capacity() {
    let (_dir, run, _) = run_suite(&[
        "cache",
        "--space",
        "global",
        "--max-bytes",
        "1048576",
        "--no-conflict",
        "--carveout",
        "0,100",
    ]);
    let cache = json(&run.join("cache.json"));
    let capacity = &cache["report"]["levels"][0]["capacity"];
    let read = |key: &str| {
        capacity[key]
            .as_u64()
            .unwrap_or_else(|| panic!("{capacity}"))
    };
    let (hits, low, high) = (
        read("hits_up_to_bytes"),
        read("low_bytes"),
        read("high_bytes"),
    );
    assert!(low <= hits && hits < high, "{capacity}");
    let rows = cache["carveout"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    let l1 = |i: usize| rows[i]["level_1_bytes"].as_u64().unwrap();
    let asked = rows[1]["requested_shared_bytes"].as_u64().unwrap();
    assert!(l1(0) > l1(1) + asked / 2, "{rows:?}");
    let figures = json(&run.join("figures.json"));
    let quantities: Vec<&str> = figures["figures"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["quantity"].as_str())
        .collect();
    assert!(
        quantities.contains(&"global: level 1 capacity"),
        "{quantities:?}"
    );
    assert_eq!(
        quantities
            .iter()
            .filter(|q| q.contains("shared carveout"))
            .count(),
        2,
        "{quantities:?}"
    );
}

/// Another program on the GPU: a `gpubench clock` of the test's own (told `--allow-shared`,
/// its blocks spinning a second), not a process of the `gpubench all` beside it. When `all`
/// starts beside it, it refuses with exit 7 naming its PID; with `--allow-shared` no figure
/// of the run is a figure; started while `all` runs, it marks the suites it overlapped and
/// `all` completes.
#[test]
#[ignore = "needs a CUDA GPU"]
fn another_program_on_the_gpu_is_refused_or_marks_what_it_overlapped() {
    let dir = tempfile::tempdir().unwrap();
    let other = |name: &str| {
        let out = dir.path().join(name);
        let child = gpubench()
            .args([
                "clock",
                "--allow-shared",
                "--spin-us",
                "1000000",
                "--output",
            ])
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        (child, out)
    };
    // Until it holds a context: its metadata.json is written after it made one.
    let wait_for = |path: &std::path::Path| {
        let started = std::time::Instant::now();
        while !path.is_file() {
            assert!(
                started.elapsed().as_secs() < 60,
                "{} never came",
                path.display()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    };

    let (mut first, out) = other("other-1");
    wait_for(&out.join("metadata.json"));
    let refused = gpubench()
        .args(["all", "--only", "clock", "--output"])
        .arg(dir.path().join("refused"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert_eq!(refused.status.code(), Some(7), "{said}");
    assert!(
        said.contains(&format!("in use by PID {}", first.id())),
        "{said}"
    );
    assert!(!dir.path().join("refused").exists());
    let shared = dir.path().join("shared");
    let allowed = gpubench()
        .args([
            "all",
            "--only",
            "clock,branch",
            "--allow-shared",
            "--output",
        ])
        .arg(&shared)
        .output()
        .unwrap();
    assert!(
        allowed.status.success(),
        "{}",
        String::from_utf8_lossy(&allowed.stderr)
    );
    first.wait().unwrap();
    let summary = json(&shared.join("summary.json"));
    let figures = summary["figures"].as_array().unwrap();
    assert!(!figures.is_empty());
    for figure in figures {
        assert_eq!(figure["status"], "unresolved", "{figure}");
    }

    let during = dir.path().join("during");
    let mut all = gpubench()
        .args(["all", "--only", "branch,sync,divergence,regs", "--output"])
        .arg(&during)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&during.join("all.json"));
    let (mut second, _) = other("other-2");
    let pid = second.id();
    second.wait().unwrap();
    assert!(all.wait().unwrap().success());
    let overlapped: Vec<String> = ["branch", "sync", "divergence", "regs"]
        .iter()
        .filter(|suite| {
            let metadata = during.join(suite).join("metadata.json");
            json(&metadata)["conditions"]["others_during"]
                .as_array()
                .is_some_and(|o| o.iter().any(|p| p["pid"].as_u64() == Some(u64::from(pid))))
        })
        .map(|s| s.to_string())
        .collect();
    assert!(!overlapped.is_empty(), "no suite saw PID {pid}");
    let summary = json(&during.join("summary.json"));
    for figure in summary["figures"].as_array().unwrap() {
        let source = figure["source"].as_str().unwrap();
        if overlapped
            .iter()
            .any(|s| source.starts_with(&format!("{s}/")))
        {
            assert_eq!(figure["unresolved"]["reason"], "shared-gpu", "{figure}");
        }
    }
}

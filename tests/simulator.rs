//! gpubench on the simulated device (GPGPU-Sim behind sim/libcuda, docs/simulator.md): the
//! cache suite's global space on sim/configs/SM7_QV100-tiny (one SM, a 32 KiB L1D), its L1D
//! capacity checked against the configuration as scripts/sim/answer_key.py reads it.
//!
//! Runs where GPUBENCH_SIM names the output of scripts/sim/build.sh (e.g. target/sim);
//! elsewhere (CI has no simulator) it prints "skipped: no simulator" and passes. Needs bash,
//! python3 and timeout; the run is stopped after 15 minutes.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The configuration the test runs on and the arguments of its sweep: the L1D's 32 KiB rise
/// and the L2 plateau behind it, one load per 128-byte line.
const CONFIG: &str = "SM7_QV100-tiny";
const SWEEP: &[&str] = &[
    "--stride",
    "128",
    "--min-bytes",
    "4096",
    "--max-bytes",
    "65536",
    "--fine-points",
    "8",
    "--no-conflict",
];

/// The simulator's build, where GPUBENCH_SIM names one; None (saying so) where it does not.
fn simulator() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("GPUBENCH_SIM").map(PathBuf::from) else {
        println!("skipped: no simulator (set GPUBENCH_SIM to scripts/sim/build.sh's output)");
        return None;
    };
    // Named but not built is a mistake to report, not a reason to skip.
    assert!(
        dir.join("env.sh").is_file(),
        "GPUBENCH_SIM={} holds no env.sh: run scripts/sim/build.sh GPGPU_SIM_DIR {}",
        dir.display(),
        dir.display()
    );
    Some(dir)
}

fn run(script: &str, cwd: &Path) {
    let status = Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(cwd)
        .status()
        .unwrap();
    assert!(status.success(), "{script}: {status}");
}

/// Runs `gpubench ARGS` on the simulated device of [`CONFIG`] (assembled in `scratch/config`,
/// the working directory, where `then` runs next), stopped after `seconds`.
fn on_the_simulator(sim: &Path, scratch: &Path, seconds: u32, args: &str, then: &str) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    run(
        &format!(
            "source {sim}/env.sh; {repo}/scripts/sim/config.sh {CONFIG} {config}; cd {config}; \
             GPUBENCH_SIM_CONFIG_NAME={CONFIG} timeout {seconds} {gpubench} {args}; {then}",
            sim = sim.display(),
            repo = repo.display(),
            config = scratch.join("config").display(),
            gpubench = env!("CARGO_BIN_EXE_gpubench"),
        ),
        scratch,
    );
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn the_simulated_l1d_capacity_is_the_configurations() {
    let Some(sim) = simulator() else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let results = scratch.path().join("results");
    std::fs::create_dir(&results).unwrap();
    on_the_simulator(
        &sim,
        scratch.path(),
        900,
        &format!(
            "cache --space global {} --output {} > gpubench.log",
            SWEEP.join(" "),
            results.join("global").display()
        ),
        &format!(
            "python3 {}/scripts/sim/answer_key.py gpgpusim.config {} > /dev/null",
            env!("CARGO_MANIFEST_DIR"),
            results.display()
        ),
    );
    let metadata = json(&results.join("global/metadata.json"));
    let name = metadata["device"]["name"].as_str().unwrap();
    assert!(
        name.starts_with("GPGPU-Sim") && name.ends_with(CONFIG),
        "{name}"
    );
    let key = json(&results.join("answer-key.json"));
    // 4 sets x 64 ways x 128 B from the shipped -gpgpu_cache:dl1, as the script read it.
    let configured = key["l1d"]["size_bytes"].as_u64().unwrap();
    assert_eq!(configured, 32 << 10);
    let cache = json(&results.join("global/cache.json"));
    let level = cache["report"]["levels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|level| level.get("capacity").is_some_and(|c| !c.is_null()))
        .unwrap_or_else(|| panic!("no level with a capacity: {}", cache["report"]));
    let capacity = &level["capacity"];
    let (low, high) = (
        capacity["low_bytes"].as_u64().unwrap(),
        capacity["high_bytes"].as_u64().unwrap(),
    );
    assert!(
        low <= configured && configured <= high,
        "the L1D's capacity interval {low}..{high} B misses the configured {configured} B"
    );
    // An L1 hit is the configuration's -gpgpu_l1_latency plus GPGPU-Sim's pipeline, never
    // less; the first level is the L1D, not the L2 behind it.
    let l1_latency: f64 = key["config_options"]["-gpgpu_l1_latency"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let hit = level["latency_cycles"].as_f64().unwrap();
    assert!(
        hit >= l1_latency && hit < l1_latency + 20.0,
        "L1 hit {hit} cycles"
    );
}

/// What the simulated device cannot run is skipped with its reason, not failed: pipeline's
/// kernels use lop3, which GPGPU-Sim's parser refuses (sim/libcuda parses each module in a
/// child process first), and tma needs Hopper's units. `all` exits 0 with both skipped.
#[test]
fn what_the_simulator_cannot_run_is_skipped_with_its_reason() {
    let Some(sim) = simulator() else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("all");
    on_the_simulator(
        &sim,
        scratch.path(),
        300,
        &format!(
            "all --only pipeline,tma --output {} > gpubench.log 2>&1",
            out.display()
        ),
        "true",
    );
    let all = json(&out.join("all.json"));
    let suites = all["suites"].as_array().unwrap();
    let reason = |name: &str| {
        let suite = suites
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {all}"));
        assert_eq!(suite["status"], "skipped", "{suite}");
        suite["error"].as_str().unwrap().to_string()
    };
    let pipeline = reason("pipeline");
    assert!(
        pipeline.contains("cuda/pipeline.cu") && pipeline.contains("PTX parser"),
        "{pipeline}"
    );
    let tma = reason("tma");
    assert!(tma.contains("compute capability 9.0"), "{tma}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("| pipeline | skipped (the simulated device cannot run"));
}

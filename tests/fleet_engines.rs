//! The cluster-side entry points, run for real without a GPU: the ReFrame regression test
//! (`reframe/gpubench_check.py`) re-reporting the committed H100 run through ReFrame's local
//! scheduler (it passes; the same run with a throttled SM clock fails on that variable), its
//! Slurm job script written by ReFrame's dry run, and `scripts/slurm-fleet.sh --gather` over
//! node directories as a Slurm array leaves them.
//!
//! ReFrame comes from PyPI (`reframe-hpc`, pinned) into a virtual environment under target/.
//! Where it cannot be installed (no python3, no network) the ReFrame tests say so and stop,
//! except under CI (`CI` set), where that is a failure.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use common::copy_tree;

const REFRAME: &str = "reframe-hpc==4.10.4";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn gpubench() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_gpubench"))
}

/// The `reframe` program of a virtual environment under target/, installed once.
fn reframe() -> Option<&'static Path> {
    static INSTALLED: OnceLock<Option<PathBuf>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let venv = root().join("target/reframe-venv");
            let program = venv.join("bin/reframe");
            let marker = venv.join(REFRAME);
            if marker.is_file() && program.is_file() {
                return Some(program);
            }
            let ok = |c: &mut Command| c.status().is_ok_and(|s| s.success());
            let installed = ok(Command::new("python3").args(["-m", "venv"]).arg(&venv))
                && ok(Command::new(venv.join("bin/pip")).args([
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    REFRAME,
                ]));
            if installed && program.is_file() {
                std::fs::write(&marker, b"").ok()?;
                Some(program)
            } else {
                None
            }
        })
        .as_deref()
}

fn reframe_or_skip() -> Option<&'static Path> {
    let found = reframe();
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "ReFrame ({REFRAME}) could not be installed from PyPI, and CI must run the ReFrame test"
        );
        eprintln!("ReFrame could not be installed here (python3 or PyPI missing): not run");
    }
    found
}

fn run_reframe(program: &Path, prefix: &Path, extra: &[&str]) -> Output {
    let output = Command::new(program)
        .current_dir(prefix)
        .arg("-C")
        .arg(root().join("reframe/settings.py"))
        .arg("-c")
        .arg(root().join("reframe/gpubench_check.py"))
        .arg("--prefix")
        .arg(prefix.join("rfm"))
        .arg("--nocolor")
        .arg("-S")
        .arg(format!("gpubench={}", gpubench().display()))
        .args(extra)
        .output()
        .unwrap();
    eprintln!("{}", String::from_utf8_lossy(&output.stdout));
    output
}

/// A copy of the committed H100 `all` run under `to`.
fn copy_run(to: &Path) {
    copy_tree(&root().join("results/h100/all"), to);
}

#[test]
fn reframe_writes_a_slurm_job_per_node_in_a_dry_run() {
    let Some(program) = reframe_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let dry = run_reframe(
        program,
        dir.path(),
        &["--system", "cluster:gpu", "--dry-run"],
    );
    assert!(dry.status.success(), "{dry:?}");
    let script = dir
        .path()
        .join("rfm/stage/cluster/gpu/builtin/GpubenchNode/rfm_job.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    for line in [
        "#SBATCH --nodes=1",
        "#SBATCH --exclusive",
        "#SBATCH --gres=gpu:",
        "all --quick --device all --output gpus",
    ] {
        assert!(text.contains(line), "{line} not in {text}");
    }
}

#[test]
fn the_slurm_gather_step_compares_every_gpu_of_every_node() {
    let dir = tempfile::tempdir().unwrap();
    // Three nodes as the array leaves them: two H200s under a devices.json, one H100 alone.
    copy_tree(
        &root().join("results/h200x2"),
        &dir.path().join("nodeA-1-0"),
    );
    copy_run(&dir.path().join("nodeB-1-1"));
    let output = Command::new("bash")
        .arg(root().join("scripts/slurm-fleet.sh"))
        .arg("--gather")
        .arg(dir.path())
        .env("GPUBENCH", gpubench())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let fleet = std::fs::read_to_string(dir.path().join("fleet.md")).unwrap();
    let header = fleet.lines().next().unwrap();
    for column in [
        "nodeA-1-0/gpu0-f64c03ac",
        "nodeA-1-0/gpu1-954a65b1",
        "nodeB-1-1",
    ] {
        assert!(header.contains(column), "{column} not in {header}");
    }
    assert!(fleet.contains("## Odd ones out"), "{fleet}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("fleet.json")).unwrap())
            .unwrap();
    assert_eq!(json["runs"].as_array().unwrap().len(), 3);
    assert!(dir.path().join("fleet.csv").is_file());
}

/// The tests that take many seconds unoptimised: the README's `cargo test` skips them,
/// `.ci/run` runs them as a step of their own.
mod slow {
    use super::*;

    #[test]
    #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
    fn reframe_passes_the_committed_run_and_fails_a_throttled_one() {
        let Some(program) = reframe_or_skip() else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let healthy = run_reframe(
            program,
            dir.path(),
            &[
                "-r",
                "-S",
                &format!("replay={}", root().join("results/h100/all").display()),
            ],
        );
        let text = String::from_utf8_lossy(&healthy.stdout);
        assert!(healthy.status.success(), "{text}");
        // ReFrame reports the clock the committed run measured.
        let clock: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root().join("results/h100/all/clock/clock.json")).unwrap(),
        )
        .unwrap();
        let reported: f64 = text
            .lines()
            .find_map(|l| l.strip_prefix("P: gpu0_sm_clock: "))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no gpu0_sm_clock in {text}"));
        let measured = clock["sm_clock"]["mhz"].as_f64().unwrap();
        assert!(
            (reported - measured).abs() < 1e-3,
            "{reported} vs {measured}"
        );
        assert!(text.contains("P: gpu0_dram_latency: "), "{text}");

        // The same card with its SM clock measured at 1600 MHz (a throttled or capped GPU).
        let throttled = dir.path().join("throttled");
        copy_run(&throttled);
        let clock = throttled.join("clock/clock.json");
        let mut json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&clock).unwrap()).unwrap();
        json["sm_clock"]["mhz"] = 1600.0.into();
        std::fs::write(&clock, json.to_string()).unwrap();
        let failed = run_reframe(
            program,
            dir.path(),
            &["-r", "-S", &format!("replay={}", throttled.display())],
        );
        let text = String::from_utf8_lossy(&failed.stdout);
        assert!(!failed.status.success(), "{text}");
        assert!(text.contains("gpu0_sm_clock"), "{text}");
        assert!(text.contains("FAILED"), "{text}");
    }
}

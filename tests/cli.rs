//! The command line on a machine without a GPU: bad input and a missing GPU each end with one
//! clear sentence, a distinct non-zero exit code, and no run directory.

use assert_cmd::Command;
use predicates::prelude::*;

const USAGE: i32 = 2;
const NO_USABLE_GPU: i32 = 3;

fn gpubench(dir: &std::path::Path) -> Command {
    let mut command = Command::cargo_bin("gpubench").unwrap();
    command.current_dir(dir);
    command
}

fn assert_no_run_written(dir: &std::path::Path) {
    let entries: Vec<_> = std::fs::read_dir(dir).unwrap().collect();
    assert!(entries.is_empty(), "left behind: {entries:?}");
}

/// Exactly one line of error, starting "Error:".
fn one_sentence() -> impl Predicate<str> {
    predicate::function(|text: &str| {
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines.len() == 1 && lines[0].starts_with("Error: ")
    })
}

/// clap's refusal of a command line: "Error:" and clap's whole message in one block, ending
/// with the help of the (sub)command it was refused in.
fn usage_block(help: &'static str) -> impl Predicate<str> {
    predicate::function(move |text: &str| {
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines.first().is_some_and(|l| l.starts_with("Error: "))
            && lines.last() == Some(&help)
            && !text.contains("For more information")
    })
}

#[test]
fn a_usage_error_keeps_clap_s_detail_and_names_its_own_help() {
    let dir = tempfile::tempdir().unwrap();
    for (args, says, help) in [
        (&["report"][..], "<DIR>", "see gpubench report --help"),
        (&["reprot"][..], "'report'", "see gpubench --help"),
        (
            &["report", "--fromat", "md", "x"][..],
            "'--format'",
            "see gpubench report --help",
        ),
        (
            &["cache", "--space", "l3"][..],
            "possible values: global, l2",
            "see gpubench cache --help",
        ),
        (
            &["analyze", "cache", "--nope", "x.csv"][..],
            "Usage: gpubench analyze cache",
            "see gpubench analyze cache --help",
        ),
    ] {
        gpubench(dir.path())
            .args(args)
            .assert()
            .code(USAGE)
            .stderr(usage_block(help).and(predicate::str::contains(says)));
    }
    assert_no_run_written(dir.path());
}

/// The benchmark's switch of `all`'s speed mechanisms (scripts/bench-mechanisms.sh) refuses a
/// name it does not know, naming the ones it does, before it looks for a GPU.
#[test]
fn an_unknown_mechanism_to_turn_off_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    gpubench(dir.path())
        .env("GPUBENCH_WITHOUT", "kept,turbo")
        .args(["all", "--quick"])
        .assert()
        .code(USAGE)
        .stderr(
            one_sentence()
                .and(predicate::str::contains("\"turbo\""))
                .and(predicate::str::contains(
                    "workers, kept, prebuilt, parked, early",
                )),
        );
    assert_no_run_written(dir.path());
}

#[test]
fn zero_samples_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    gpubench(dir.path())
        .args(["divergence", "--samples", "0"])
        .assert()
        .code(USAGE)
        .stderr(one_sentence().and(predicate::str::contains("--samples")));
    assert_no_run_written(dir.path());
}

#[test]
fn a_short_pattern_list_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    gpubench(dir.path())
        .args(["divergence", "--pattern", "list:1,2"])
        .assert()
        .code(USAGE)
        .stderr(one_sentence().and(predicate::str::contains("exactly 32")));
    assert_no_run_written(dir.path());
}

#[test]
fn an_existing_output_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("old")).unwrap();
    gpubench(dir.path())
        .args(["divergence", "--output", "old"])
        .assert()
        .code(USAGE)
        .stderr(one_sentence().and(predicate::str::contains("never overwrites")));
}

#[test]
fn unknown_flags_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    gpubench(dir.path())
        .args(["divergence", "--kernel", "triple"])
        .assert()
        .code(USAGE);
    assert_no_run_written(dir.path());
}

/// These hold on a machine without a GPU (CI, a laptop); on a GPU machine see tests/gpu.rs.
fn has_cuda_driver() -> bool {
    // SAFETY: only tries to dlopen libcuda.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

#[test]
fn without_a_gpu_divergence_says_so() {
    if has_cuda_driver() {
        eprintln!("skipped: this machine has a CUDA driver");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["divergence"],
        vec!["divergence", "--device", "7"],
        vec!["info"],
    ] {
        gpubench(dir.path())
            .args(&args)
            .assert()
            .code(NO_USABLE_GPU)
            .stderr(one_sentence().and(predicate::str::contains("install the NVIDIA driver")));
    }
    assert_no_run_written(dir.path());
}

#[test]
fn help_lists_the_subcommands() {
    let dir = tempfile::tempdir().unwrap();
    gpubench(dir.path())
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("divergence").and(predicate::str::contains("info")));
}

/// Every subcommand's line in the help says what that subcommand does: no two share a
/// description (each suite's once read the figure options' doc comment).
#[test]
fn every_subcommand_has_its_own_description() {
    let dir = tempfile::tempdir().unwrap();
    let output = gpubench(dir.path()).arg("--help").output().unwrap();
    let help = String::from_utf8(output.stdout).unwrap();
    let commands = help.split("Commands:").nth(1).unwrap();
    let commands = commands.split("Options:").next().unwrap();
    let descriptions: Vec<&str> = commands
        .lines()
        .filter_map(|line| line.trim().split_once("  ").map(|(_, about)| about.trim()))
        .collect();
    assert!(descriptions.len() >= 20, "{commands}");
    let distinct: std::collections::BTreeSet<&&str> = descriptions.iter().collect();
    assert_eq!(distinct.len(), descriptions.len(), "{commands}");
}

#[test]
fn probe_settings_are_checked_before_the_gpu() {
    let dir = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (vec!["shared", "--iterations", "33"], "multiple of 32"),
        (vec!["sync", "--timeout-seconds", "0"], "--timeout-seconds"),
        (vec!["clock", "--pairs", "0"], "--pairs"),
        (vec!["branch", "--work", "0"], "--work"),
        (vec!["regs", "--min-registers", "8"], "--min-registers"),
        (vec!["pipeline", "--sweep-op", "f128_fma"], "--sweep-op"),
        (vec!["cache", "--stride", "6"], "--stride"),
        (
            vec!["cache", "--min-bytes", "4096", "--max-bytes", "8192"],
            "4 times",
        ),
        (
            vec!["cache", "--space", "shared", "--max-bytes", "1000000"],
            "48 KiB",
        ),
        // 4 × min-bytes would wrap to 0 without checked arithmetic.
        (
            vec![
                "cache",
                "--min-bytes",
                "4611686018427387904",
                "--max-bytes",
                "8589934592",
            ],
            "4 times",
        ),
        (
            vec!["cache", "--space", "global", "--stride", "4"],
            "multiple of 8",
        ),
        (
            vec!["cache", "--space", "shared", "--carveout", "10"],
            "--carveout",
        ),
        (
            vec!["cache", "--space", "global", "--tlb-strides", "8"],
            "--tlb-strides",
        ),
        (vec!["tensor", "--wgmma-n", "48"], "--wgmma-n"),
        (
            vec!["atomics", "--footprints-mib", "0,128"],
            "--footprints-mib",
        ),
        (vec!["atomics", "--repeats", "0"], "--repeats"),
        (
            vec!["dsm", "--bandwidth-sizes", "2,17"],
            "--bandwidth-sizes",
        ),
        (vec!["dsm", "--iterations", "0"], "--iterations"),
        (vec!["tma", "--footprints-mib", "1,2,4"], "five sizes"),
        (vec!["tma", "--stream-mib", "4096"], "--stream-mib"),
        (vec!["dpx", "--repeats", "0"], "--repeats"),
        (
            vec!["dpx", "--latency-iterations", "0"],
            "--latency-iterations",
        ),
        (
            vec!["dpx", "--throughput-iterations", "100001"],
            "--throughput-iterations",
        ),
    ] {
        gpubench(dir.path())
            .args(&args)
            .assert()
            .code(USAGE)
            .stderr(one_sentence().and(predicate::str::contains(needle)));
    }
    assert_no_run_written(dir.path());
}

#[test]
fn without_a_gpu_every_probe_says_so() {
    if has_cuda_driver() {
        eprintln!("skipped: this machine has a CUDA driver");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for suite in [
        "clock", "shared", "sync", "branch", "regs", "pipeline", "cache",
    ] {
        gpubench(dir.path())
            .arg(suite)
            .assert()
            .code(NO_USABLE_GPU)
            .stderr(one_sentence());
    }
    assert_no_run_written(dir.path());
}

#[test]
fn an_unknown_slots_workload_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    gpubench(dir.path())
        .args(["slots", "--only", "dot,quicksort"])
        .assert()
        .code(USAGE)
        .stderr(one_sentence().and(predicate::str::contains("quicksort")));
    assert_no_run_written(dir.path());
}

#[test]
fn threads_on_a_space_without_them_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    gpubench(dir.path())
        .args(["cache", "--space", "texture", "--threads", "4"])
        .assert()
        .code(USAGE)
        .stderr(one_sentence().and(predicate::str::contains("--threads")));
    assert_no_run_written(dir.path());
}

#[test]
fn several_devices_are_checked_before_the_gpu() {
    let dir = tempfile::tempdir().unwrap();
    gpubench(dir.path())
        .args(["divergence", "--device", "1", "--serial"])
        .assert()
        .code(USAGE)
        .stderr(one_sentence().and(predicate::str::contains("--serial runs several GPUs")));
    // clap's own refusals: its whole message.
    for (args, says, help) in [
        (
            &["all", "--device", "0,x"][..],
            "--device takes",
            "see gpubench all --help",
        ),
        (
            &["all", "--device", "all", "--bogus"][..],
            "unexpected argument",
            "see gpubench all --help",
        ),
        (
            &["cache", "--device", "0,1", "--space", "nowhere"][..],
            "invalid value",
            "see gpubench cache --help",
        ),
    ] {
        gpubench(dir.path())
            .args(args)
            .assert()
            .code(USAGE)
            .stderr(usage_block(help).and(predicate::str::contains(says)));
    }
    assert_no_run_written(dir.path());
}

#[test]
fn without_a_gpu_several_devices_say_so() {
    if has_cuda_driver() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    gpubench(dir.path())
        .args(["all", "--quick", "--device", "all"])
        .assert()
        .code(NO_USABLE_GPU)
        .stderr(one_sentence().and(predicate::str::contains("no CUDA driver")));
    assert_no_run_written(dir.path());
}

/// #71: `calibrate` killed by SIGTERM while it studies leaves nothing behind (it left an empty
/// directory that refused the retry), and the retry under the same --output succeeds.
#[test]
fn a_calibration_killed_while_it_studies_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("gpubench"))
        .current_dir(dir.path())
        .args(["calibrate", "--cases", "400", "--output", "made/study"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Long enough to be inside the study (its directory staged), far short of its end.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: kill sends a signal to the child's pid, which has not been waited for.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert!(!child.wait().unwrap().success());
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    gpubench(dir.path())
        .args([
            "calibrate",
            "--cases",
            "1",
            "--seed",
            "5",
            "--output",
            "made/study",
        ])
        .assert()
        .success();
    assert!(dir.path().join("made/study/calibration.json").is_file());
}

/// A study run as shards and merged is the study run at once, file for file; shards that are
/// not consecutive cases of one seed are refused in a sentence and nothing is written.
#[test]
fn calibration_shards_merge_into_the_study_run_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let study = |args: &[&str], output: &str| {
        gpubench(dir.path())
            .args([
                "calibrate",
                // Seed 5's first three caches are among the quickest to sweep and read.
                "--seed",
                "5",
                "--threads",
                "2",
                "--output",
                output,
            ])
            .args(args)
            .assert()
            .success();
    };
    study(&["--cases", "2"], "whole");
    study(&["--cases", "1"], "first");
    study(&["--cases", "1", "--first-case", "1"], "rest");
    study(&["--cases", "1", "--first-case", "2"], "gap");
    gpubench(dir.path())
        .args([
            "calibrate",
            "--merge",
            "rest",
            "first",
            "--output",
            "merged",
        ])
        .assert()
        .success();
    for file in ["outcomes.csv", "reliability.csv", "reliability.png"] {
        assert_eq!(
            std::fs::read(dir.path().join("whole").join(file)).unwrap(),
            std::fs::read(dir.path().join("merged").join(file)).unwrap(),
            "{file}"
        );
    }
    gpubench(dir.path())
        .args([
            "calibrate",
            "--merge",
            "first",
            "gap",
            "--output",
            "refused",
        ])
        .assert()
        .code(USAGE)
        .stderr(one_sentence().and(predicate::str::contains("starts at case 2")));
    assert!(!dir.path().join("refused").exists());
}

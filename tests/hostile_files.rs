//! Hostile files and writers around `report` and `compare` that a generated damage cannot
//! make (see hostile_runs.rs for those): a gzip bomb, a FIFO, symlink loops and a directory
//! that links back to its parent in a run, and several gpubench processes writing one
//! `--output` at once. Each is refused in one sentence or reported, in bounded time, and
//! nothing is mixed, half-written or left behind.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command as Process, Output, Stdio};
use std::time::{Duration, Instant};

use common::copy_tree;

fn gpubench() -> PathBuf {
    assert_cmd::cargo::cargo_bin("gpubench")
}

/// A copy of the committed H100 clock suite at `to`: a run whose report takes a moment.
fn clock_run(to: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100/all/clock");
    copy_tree(&from, to);
    to.to_path_buf()
}

/// `gpubench COMMAND RUN --output OUT`, started.
fn started(command: &str, run: &Path, out: &Path) -> std::process::Child {
    Process::new(gpubench())
        .arg(command)
        .arg(run)
        .arg("--output")
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `gpubench report RUN --output OUT`, killed if it takes over a minute.
fn report(run: &Path, out: &Path) -> Output {
    finish_within(started("report", run, out), Duration::from_secs(60))
}

/// `gpubench export RUN --output OUT`, killed if it takes over a minute.
fn export(run: &Path, out: &Path) -> Output {
    finish_within(started("export", run, out), Duration::from_secs(60))
}

/// `times` of `gpubench COMMAND RUN --output OUT` at once, each to its end.
fn at_once(times: usize, command: &str, run: &Path, out: &Path, limit: Duration) -> Vec<Output> {
    let children: Vec<_> = (0..times).map(|_| started(command, run, out)).collect();
    children
        .into_iter()
        .map(|c| finish_within(c, limit))
        .collect()
}

fn finish_within(mut child: std::process::Child, limit: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("gpubench took longer than {limit:?}: it hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Refused with exit code 2 in one sentence that contains `says`, with nothing written.
fn refused_saying(output: &Output, out: &Path, says: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains(says), "{stderr}");
    assert!(!out.exists(), "a refused report left {}", out.display());
    let leftovers: Vec<_> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// One member of gzip holding 1 MiB of zeros, repeated: 1025 MiB once unpacked from about a
/// megabyte (gpubench reads every member, as `cat a.gz b.gz` makes them).
fn gzip_bomb() -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(&vec![0u8; 1 << 20]).unwrap();
    encoder.finish().unwrap().repeat(1025)
}

#[test]
fn a_gzip_bomb_in_a_run_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = clock_run(&dir.path().join("run"));
    std::fs::remove_file(run.join("clock_scope.csv")).unwrap();
    std::fs::write(run.join("clock_scope.csv.gz"), gzip_bomb()).unwrap();
    let out = dir.path().join("out");
    let output = report(&run, &out);
    refused_saying(
        &output,
        &out,
        "clock_scope.csv.gz: larger than the 536870912 bytes",
    );
    // export reads the suite's JSON: the same bomb there is refused the same way.
    let run = clock_run(&dir.path().join("run-json"));
    std::fs::remove_file(run.join("clock.json")).unwrap();
    std::fs::write(run.join("clock.json.gz"), gzip_bomb()).unwrap();
    let out = dir.path().join("model.json");
    refused_saying(
        &export(&run, &out),
        &out,
        "clock.json.gz: larger than the 67108864 bytes",
    );
}

#[test]
fn a_fifo_or_a_symlink_loop_in_place_of_a_file_is_refused_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    for (what, says) in [
        ("fifo", "not a regular file"),
        ("loop", "Too many levels of symbolic links"),
    ] {
        let run = clock_run(&dir.path().join(format!("run-{what}")));
        let file = run.join("clock.json");
        std::fs::remove_file(&file).unwrap();
        if what == "fifo" {
            let name = std::ffi::CString::new(file.to_str().unwrap()).unwrap();
            // SAFETY: mkfifo reads the NUL-terminated path and nothing else.
            assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        } else {
            std::os::unix::fs::symlink(&file, &file).unwrap();
        }
        let out = dir.path().join(format!("out-{what}"));
        refused_saying(&report(&run, &out), &out, says);
        let out = dir.path().join(format!("model-{what}.json"));
        refused_saying(&export(&run, &out), &out, says);
    }
}

/// An `all` run whose directory holds a link back to itself and a link to a directory
/// outside it: the links are not runs of it, and the report ends.
#[test]
fn a_directory_link_back_to_the_run_does_not_send_report_round_in_circles() {
    let dir = tempfile::tempdir().unwrap();
    let all = dir.path().join("all");
    clock_run(&all.join("clock"));
    std::os::unix::fs::symlink(&all, all.join("again")).unwrap();
    std::os::unix::fs::symlink("/", all.join("root")).unwrap();
    let out = dir.path().join("out");
    let output = report(&all, &out);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("| clock/"), "{summary}");
    assert!(!summary.contains("again/"), "{summary}");
}

/// Six reports of one run to one `--output` at once: one writes it, whole and as a report
/// alone would; each other is refused as a report to an existing directory is, and leaves
/// nothing of its own behind.
#[test]
fn concurrent_writers_to_one_output_leave_one_whole_report() {
    let dir = tempfile::tempdir().unwrap();
    let run = clock_run(&dir.path().join("run"));
    let alone = dir.path().join("alone");
    assert!(report(&run, &alone).status.success());

    let shared = dir.path().join("shared");
    let outputs = at_once(6, "report", &run, &shared, Duration::from_secs(120));
    let won = outputs.iter().filter(|o| o.status.success()).count();
    assert_eq!(won, 1, "{outputs:?}");
    for lost in outputs.iter().filter(|o| !o.status.success()) {
        let stderr = String::from_utf8_lossy(&lost.stderr);
        assert_eq!(lost.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains("never overwrites"), "{stderr}");
    }
    let names = |d: &Path| {
        let mut names: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(names(&shared), names(&alone));
    for name in names(&alone) {
        if name.ends_with(".md") || name.ends_with(".json") || name.ends_with(".tex") {
            assert_eq!(
                std::fs::read(shared.join(&name)).unwrap(),
                std::fs::read(alone.join(&name)).unwrap(),
                "{name}"
            );
        }
    }
    let leftovers: Vec<String> = names(dir.path())
        .into_iter()
        .filter(|n| n.contains("partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Six exports of one run to one `--output` at once: one writes the file, whole; each other is
/// refused as never overwriting, and the file is not touched by them.
#[test]
fn concurrent_exports_to_one_output_leave_one_whole_model() {
    let dir = tempfile::tempdir().unwrap();
    let run = clock_run(&dir.path().join("run"));
    let out = dir.path().join("model.json");
    let outputs = at_once(6, "export", &run, &out, Duration::from_secs(60));
    let won = outputs.iter().filter(|o| o.status.success()).count();
    assert_eq!(won, 1, "{outputs:?}");
    for lost in outputs.iter().filter(|o| !o.status.success()) {
        assert_eq!(lost.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&lost.stderr).contains("never overwrites"));
    }
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(model["schema"], "gpubench-machine-model/2");
}

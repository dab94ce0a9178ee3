//! `gpubench report` and `gpubench compare` on the committed H100 runs, with no GPU: the
//! tables come back byte for byte, every figure is re-drawn, and bad input is refused.

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn committed(run: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("results/h100")
        .join(run)
}

/// A copy of the committed H100 run `run` at `to`, to damage in a test.
fn copy_committed(run: &str, to: &Path) -> PathBuf {
    std::fs::create_dir(to).unwrap();
    for file in std::fs::read_dir(committed(run)).unwrap() {
        let file = file.unwrap().path();
        std::fs::copy(&file, to.join(file.file_name().unwrap())).unwrap();
    }
    to.to_path_buf()
}

/// `gpubench report RUN --output OUT`, refused as damaged input (exit 2) in a message that
/// says each of `says`.
fn refused_by_report(run: &Path, out: &Path, says: &[&str]) {
    let assert = gpubench()
        .arg("report")
        .arg(run)
        .arg("--output")
        .arg(out)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    for said in says {
        assert!(stderr.contains(said), "{said:?} not in {stderr}");
    }
}

fn gpubench() -> Command {
    Command::cargo_bin("gpubench").unwrap()
}

/// The numbers after "confidence " in `text`, as written.
fn confidences(text: &str) -> Vec<String> {
    let mut found: Vec<String> = text
        .split("confidence ")
        .skip(1)
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect::<String>()
        })
        .filter(|n| !n.is_empty())
        .collect();
    found.sort();
    found
}

/// #75: a remade cache run never disagrees with itself. Every cache suite of the committed
/// H100 and H200 runs, re-made: each level its chase plot marks states the confidence its
/// size row in the table states (both read the run's own inference; the plot used to be
/// inferred again, and read the H100's L1 at 0.95 beside a table of 0.18).
#[test]
fn a_remade_cache_plot_states_the_confidences_its_table_states() {
    let dir = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for run in [committed("all"), committed("../h200/all")] {
        for entry in std::fs::read_dir(&run).unwrap() {
            let suite = entry.unwrap().path();
            let name = suite.file_name().unwrap().to_string_lossy().into_owned();
            if !name.starts_with("cache-") || !suite.join("chase.csv").is_file() {
                continue;
            }
            let out = dir.path().join(format!("{compared}-{name}"));
            gpubench()
                .arg("report")
                .arg(&suite)
                .args(["--format", "svg", "--output"])
                .arg(&out)
                .assert()
                .success();
            let plotted = confidences(&std::fs::read_to_string(out.join("cache.svg")).unwrap());
            let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
            let sizes: String = summary
                .lines()
                .filter(|l| l.contains(": level ") && l.contains(" size |"))
                .collect::<Vec<_>>()
                .join("\n");
            assert_eq!(plotted, confidences(&sizes), "{}", suite.display());
            compared += 1;
        }
    }
    assert!(compared >= 10, "{compared} cache suites");
}

/// #72: a figure's status and key are typed where a suite makes them, never read from its
/// words, and the one migration table that reads old files (whose words carry the standing,
/// and which hold no keys) agrees with the suites on every committed suite that can be
/// derived again: each figure derived from its files is unresolved exactly when the same
/// figure written and read back is, for the same reason, and its key is the one its words
/// migrate to; no suite gives two figures one key.
#[test]
fn every_committed_suites_typed_statuses_survive_the_files_words() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    let (mut suites, mut unresolved, mut known) = (0, 0, 0);
    for dir in common::dirs_holding(&root, "metadata.json") {
        if dir.to_string_lossy().contains("report-html")
            || gpubench::report::figures::figures_only(&dir)
        {
            continue;
        }
        let Ok(metadata) = gpubench::report::metadata::SavedMetadata::read(&dir) else {
            continue;
        };
        if !metadata.complete() {
            continue;
        }
        let Ok(derived) = gpubench::app::registry::derive_figures(&metadata.suite, &dir) else {
            continue;
        };
        for figure in &derived {
            let again: gpubench::report::figures::Figure =
                serde_json::from_str(&serde_json::to_string(figure).unwrap()).unwrap();
            assert_eq!(
                figure.unresolved,
                again.unresolved,
                "{}: {}",
                dir.display(),
                figure.quantity
            );
            unresolved += usize::from(figure.is_unresolved());
            // The key a file without keys is given is the key the suite gives (a suite born
            // with keys wrote no such file).
            if !gpubench::report::keys::born_keyed(&metadata.suite, &figure.key) {
                assert_eq!(
                    gpubench::report::keys::from_words(&figure.section, &figure.quantity),
                    figure.key,
                    "{}: {}",
                    dir.display(),
                    figure.quantity
                );
            }
            known += usize::from(gpubench::report::keys::parse(&figure.key).is_some());
        }
        let mut keys: Vec<&str> = derived.iter().map(|f| f.key.as_str()).collect();
        keys.sort_unstable();
        let before = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), before, "{}: a key twice", dir.display());
        suites += 1;
    }
    assert!(
        suites > 150 && unresolved > 100 && known > 1000,
        "{suites} suites, {unresolved} unresolved, {known} keys the core reads"
    );
}

/// #71: a chase.csv cut short (or grown) since its levels were read is refused, naming both
/// files, instead of being drawn under levels it no longer shows.
#[test]
fn a_chase_that_no_longer_matches_its_sweep_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = copy_committed("all/cache-global", &dir.path().join("run"));
    let chase = run.join("chase.csv");
    let text = std::fs::read_to_string(&chase).unwrap();
    let kept: Vec<&str> = text.lines().collect();
    std::fs::write(&chase, kept[..kept.len() - 1].join("\n") + "\n").unwrap();
    refused_by_report(
        &run,
        &dir.path().join("out"),
        &[
            "chase.csv: 223 points",
            "cache.json says the sweep measured 224",
        ],
    );
}

#[test]
fn report_draws_svg_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("svg");
    gpubench()
        .arg("report")
        .arg(committed("slots"))
        .args(["--format", "svg", "--output"])
        .arg(&out)
        .assert()
        .success();
    let svg = std::fs::read_to_string(out.join("slots.svg")).unwrap();
    assert!(svg.starts_with("<svg"));
    gpubench()
        .arg("report")
        .arg(committed("slots"))
        .arg("--output")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("never overwrites"));
}

#[test]
fn report_refuses_a_directory_without_runs() {
    let dir = tempfile::tempdir().unwrap();
    gpubench()
        .arg("report")
        .arg(dir.path())
        .arg("--output")
        .arg(dir.path().join("out"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("holds no gpubench run"));
}

/// `--repeat-of` confirms one run: on a fan-out of several GPUs it is refused in one sentence,
/// with nothing written.
#[test]
fn a_repeat_of_a_fan_out_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    gpubench()
        .arg("report")
        .arg(committed("../h200x2"))
        .arg("--repeat-of")
        .arg(committed("all-repeat"))
        .arg("--output")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "holds several GPUs' runs and --repeat-of confirms one run",
        ));
    assert!(!out.exists());
}

#[test]
fn compare_puts_runs_side_by_side_and_flags_differences() {
    let output = gpubench()
        .arg("compare")
        .arg(committed("all"))
        .arg(committed("divergence"))
        .output()
        .unwrap();
    assert!(output.status.success());
    let table = String::from_utf8(output.stdout).unwrap();
    let header = table.lines().next().unwrap();
    assert!(
        header.starts_with("| Quantity |") && header.ends_with("| Flag |"),
        "{header}"
    );
    let row = table
        .lines()
        .find(|l| l.starts_with("| Divergence: single loop: cost per divergent lane |"))
        .expect("the divergence cost is in both runs");
    assert!(
        row.contains("13 cycles (95% CI: 13 to 13) | 13 cycles (95% CI: 13 to 13) |  |"),
        "{row}"
    );
    // The clock suite ran only in the all run: "-" in the other column.
    let clock = table
        .lines()
        .find(|l| l.starts_with("| Clocks and timers: SM clock (measured) |"))
        .expect("the SM clock is in the all run");
    assert!(clock.ends_with("MHz | - |  |"), "{clock}");
}

#[test]
fn a_suite_name_that_is_a_path_is_refused_and_nothing_is_written_outside_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    copy_committed("shared", &dir.path().join("esc"));
    std::fs::write(
        run.join("all.json"),
        r#"{"suites": [{"name": "../esc", "status": "complete", "seconds": 1.0, "error": null}]}"#,
    )
    .unwrap();
    let out = dir.path().join("a/b/out");
    gpubench()
        .arg("report")
        .arg(&run)
        .arg("--output")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a plain directory name"));
    assert!(!dir.path().join("a/b/esc").exists());
    assert!(!out.exists());
}

#[test]
fn a_reader_that_goes_away_ends_gpubench_quietly() {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("gpubench"))
        .arg("analyze")
        .arg("divergence")
        .arg(committed("divergence").join("summary.csv"))
        .arg("--output")
        .arg(tempfile::tempdir().unwrap().path().join("out"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("internal bug"), "{stderr}");
    // It got as far as printing (and was stopped by the pipe), or finished.
    use std::os::unix::process::ExitStatusExt;
    assert!(
        output.status.signal() == Some(libc::SIGPIPE) || output.status.success(),
        "{:?}: {stderr}",
        output.status
    );
}

#[test]
fn a_full_stdout_is_one_sentence_not_an_internal_bug() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return; // not Linux: nothing to test
    };
    let output = std::process::Command::new(assert_cmd::cargo::cargo_bin("gpubench"))
        .arg("analyze")
        .arg("divergence")
        .arg(committed("divergence").join("summary.csv"))
        .arg("--output")
        .arg(tempfile::tempdir().unwrap().path().join("out"))
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("cannot write to standard output"),
        "{stderr}"
    );
    assert!(!stderr.contains("internal bug"), "{stderr}");
}

#[test]
fn an_infinite_value_in_a_saved_csv_is_refused_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let run = copy_committed("shared", &dir.path().join("shared"));
    let csv = std::fs::read_to_string(run.join("shared.csv")).unwrap();
    let mut lines: Vec<String> = csv.lines().map(str::to_string).collect();
    let last = lines[1].rfind(',').unwrap();
    lines[1] = format!("{},inf", &lines[1][..last]);
    std::fs::write(run.join("shared.csv"), lines.join("\n") + "\n").unwrap();
    gpubench()
        .arg("report")
        .arg(&run)
        .arg("--output")
        .arg(dir.path().join("out"))
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("line 2 holds \"inf\""));
}

#[test]
fn a_failed_report_leaves_nothing_behind_and_can_be_retried() {
    let dir = tempfile::tempdir().unwrap();
    let run = copy_committed("divergence", &dir.path().join("divergence"));
    let fit = std::fs::read(run.join("fit.json")).unwrap();
    std::fs::write(run.join("fit.json"), b"{ not json").unwrap();
    let out = dir.path().join("out");
    gpubench()
        .arg("report")
        .arg(&run)
        .arg("--output")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nothing was written"));
    assert!(!out.exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains("partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    std::fs::write(run.join("fit.json"), fit).unwrap();
    gpubench()
        .arg("report")
        .arg(&run)
        .arg("--output")
        .arg(&out)
        .assert()
        .success();
    assert!(out.join("summary.md").is_file());
}

#[test]
fn compare_refuses_a_run_with_nothing_in_it_and_a_path_that_is_no_run() {
    let dir = tempfile::tempdir().unwrap();
    let failed = dir.path().join("failed");
    std::fs::create_dir(&failed).unwrap();
    let mut metadata: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(committed("shared").join("metadata.json")).unwrap(),
    )
    .unwrap();
    metadata["status"] = "failed".into();
    std::fs::write(failed.join("metadata.json"), metadata.to_string()).unwrap();
    gpubench()
        .arg("compare")
        .arg(committed("shared"))
        .arg(&failed)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nothing to compare"));
    gpubench()
        .arg("compare")
        .arg(committed("shared"))
        .arg(dir.path().join("nope"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a directory"));
}

#[test]
fn a_header_only_csv_is_refused_not_drawn_blank() {
    let dir = tempfile::tempdir().unwrap();
    let run = copy_committed("shared", &dir.path().join("shared"));
    let csv = std::fs::read_to_string(run.join("shared.csv")).unwrap();
    // The header alone, its line ended: a whole file with no rows.
    std::fs::write(
        run.join("shared.csv"),
        format!("{}\n", csv.lines().next().unwrap()),
    )
    .unwrap();
    refused_by_report(&run, &dir.path().join("out"), &["has no rows"]);
}

#[test]
fn a_corrupt_model_or_manifest_fails_loudly_instead_of_dropping_rows() {
    let dir = tempfile::tempdir().unwrap();
    let run = copy_committed("divergence", &dir.path().join("divergence"));
    std::fs::write(run.join("model.json"), b"{\"verdict\": 12").unwrap();
    gpubench()
        .arg("compare")
        .arg(&run)
        .arg(committed("divergence"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("model.json"));
    // A manifest that cannot be read is not silently replaced by a directory listing.
    let all = dir.path().join("all");
    std::fs::create_dir(&all).unwrap();
    std::fs::rename(&run, all.join("divergence")).unwrap();
    std::fs::write(all.join("all.json"), b"{ not json").unwrap();
    gpubench()
        .arg("report")
        .arg(&all)
        .arg("--output")
        .arg(dir.path().join("out"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("all.json"));
}

#[test]
fn a_manifest_that_disagrees_with_the_directory_is_refused() {
    // A run of two suites, as `all` leaves it.
    let make = |dir: &Path| -> PathBuf {
        let all = dir.join("all");
        std::fs::create_dir_all(&all).unwrap();
        copy_committed("clock", &all.join("clock"));
        copy_committed("divergence", &all.join("divergence"));
        let suite = |name: &str| serde_json::json!({"name": name, "status": "complete", "seconds": 1.0, "error": null});
        let manifest = serde_json::json!({"suites": [suite("clock"), suite("divergence")]});
        std::fs::write(all.join("all.json"), manifest.to_string()).unwrap();
        all
    };
    let dir = tempfile::tempdir().unwrap();
    let whole = make(&dir.path().join("whole"));
    gpubench()
        .arg("report")
        .arg(&whole)
        .arg("--output")
        .arg(dir.path().join("out-whole"))
        .assert()
        .success();
    // The manifest lists nothing.
    let empty = make(&dir.path().join("empty"));
    std::fs::write(empty.join("all.json"), b"{}").unwrap();
    refused_by_report(&empty, &dir.path().join("out-empty"), &["lists no suite"]);
    // A suite recorded complete is gone, emptied, or a link.
    let gone = make(&dir.path().join("gone"));
    std::fs::remove_dir_all(gone.join("divergence")).unwrap();
    let says = ["divergence as complete", "is missing"];
    refused_by_report(&gone, &dir.path().join("out-gone"), &says);
    let emptied = make(&dir.path().join("emptied"));
    std::fs::remove_file(emptied.join("divergence/metadata.json")).unwrap();
    let says = ["has no metadata.json"];
    refused_by_report(&emptied, &dir.path().join("out-emptied"), &says);
    let linked = make(&dir.path().join("linked"));
    std::fs::remove_dir_all(linked.join("divergence")).unwrap();
    std::os::unix::fs::symlink("/", linked.join("divergence")).unwrap();
    let says = ["is not a directory"];
    refused_by_report(&linked, &dir.path().join("out-linked"), &says);
}

#[test]
fn a_csv_cut_off_mid_row_is_refused_not_read_as_a_shorter_curve() {
    for (suite, file) in [("cache/global", "chase.csv"), ("shared", "shared.csv")] {
        let dir = tempfile::tempdir().unwrap();
        let run = copy_committed(suite, &dir.path().join("run"));
        let path = run.join(file);
        let text = if path.exists() {
            std::fs::read_to_string(&path).unwrap()
        } else {
            let gz = run.join(format!("{file}.gz"));
            let mut text = String::new();
            std::io::Read::read_to_string(
                &mut flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap()),
                &mut text,
            )
            .unwrap();
            std::fs::remove_file(gz).unwrap();
            text
        };
        // Cut in the middle of the last row.
        let cut = text.trim_end().len() - 3;
        std::fs::write(&path, &text[..cut]).unwrap();
        refused_by_report(&run, &dir.path().join("out"), &[file, "cut off mid-row"]);
    }
}

#[test]
fn an_r_squared_above_one_is_refused_not_let_through_the_linearity_gate() {
    let dir = tempfile::tempdir().unwrap();
    let run = copy_committed("divergence", &dir.path().join("divergence"));
    let path = run.join("fit.json");
    let mut fits: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for fit in fits["fits"].as_array_mut().unwrap() {
        fit["r_squared"] = serde_json::json!(1.734);
    }
    std::fs::write(&path, fits.to_string()).unwrap();
    refused_by_report(&run, &dir.path().join("out"), &["fit.json", "1.734"]);
}

#[test]
fn a_device_or_clock_no_gpu_has_is_refused_by_report_and_export() {
    for (field, value, says) in [
        ("multiprocessors", "-4", "/device/multiprocessors holds -4"),
        ("mhz", "0.0", "sm_clock_before.mhz is 0"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let run = copy_committed("clock", &dir.path().join("clock"));
        let path = run.join("metadata.json");
        let mut meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let number: serde_json::Value = serde_json::from_str(value).unwrap();
        if field == "mhz" {
            meta["sm_clock_before"]["mhz"] = number;
        } else {
            meta["device"][field] = number;
        }
        std::fs::write(&path, meta.to_string()).unwrap();
        for command in ["report", "export"] {
            let out = dir.path().join(format!("out-{command}"));
            gpubench()
                .arg(command)
                .arg(&run)
                .arg("--output")
                .arg(&out)
                .assert()
                .code(2)
                .stderr(
                    predicate::str::contains("metadata.json").and(predicate::str::contains(says)),
                );
        }
    }
}

/// A copy of the committed H100 `all` summary as a run of its own, with `change` applied to
/// its figures.
fn summary_copy(to: &Path, change: impl Fn(&mut serde_json::Value)) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    let text = std::fs::read_to_string(committed("all").join("summary.json")).unwrap();
    let mut summary: serde_json::Value = serde_json::from_str(&text).unwrap();
    for figure in summary["figures"].as_array_mut().unwrap() {
        change(figure);
    }
    std::fs::write(to.join("summary.json"), summary.to_string()).unwrap();
    to.to_path_buf()
}

#[test]
fn compare_of_a_run_with_its_copy_flags_nothing_and_a_fleet_names_the_perturbed_gpu() {
    let dir = tempfile::tempdir().unwrap();
    // The run itself twice is refused (#71: a run would agree with itself); its copy is not.
    let itself = gpubench()
        .arg("compare")
        .arg(committed("all"))
        .arg(committed("all"))
        .output()
        .unwrap();
    assert_eq!(itself.status.code(), Some(2), "{itself:?}");
    assert!(String::from_utf8_lossy(&itself.stderr).contains("are the same directory"));
    let copy = summary_copy(&dir.path().join("copy"), |_| {});
    let same = gpubench()
        .arg("compare")
        .arg(committed("all"))
        .arg(&copy)
        .output()
        .unwrap();
    assert!(same.status.success(), "{same:?}");
    let table = String::from_utf8(same.stdout).unwrap();
    assert!(table.contains("\nFlagged: 0 of "), "{table}");
    assert!(!table.contains("Flagged figures:"), "{table}");
    // A run whose DRAM latencies are 20 % higher: the closing line names what was flagged.
    let slower = summary_copy(&dir.path().join("slower"), |f| {
        let slow = f["quantity"]
            .as_str()
            .is_some_and(|q| q == "global: slowest level latency");
        if let (true, Some(v)) = (slow, f["value"].as_f64()) {
            f["value"] = (v * 1.2).into();
        }
    });
    let pair = gpubench()
        .arg("compare")
        .arg(committed("all"))
        .arg(&slower)
        .output()
        .unwrap();
    assert!(pair.status.success(), "{pair:?}");
    let text = String::from_utf8(pair.stdout).unwrap();
    let closing = text.lines().find(|l| l.starts_with("Flagged: ")).unwrap();
    assert!(
        closing.starts_with("Flagged: 1 of ")
            && closing.contains(
                "Flagged figures: Memory hierarchy: global: slowest level latency (moved "
            ),
        "{closing}"
    );
    // Five GPUs: four within 1 % of each other, the fifth with a DRAM latency 20 % high.
    let mut runs = Vec::new();
    for (i, scale) in [1.0, 1.004, 0.997, 1.2, 0.999].into_iter().enumerate() {
        runs.push(summary_copy(&dir.path().join(format!("gpu{i}")), |f| {
            let slow = f["quantity"]
                .as_str()
                .is_some_and(|q| q.contains("slowest level latency"));
            if let (true, Some(v)) = (slow, f["value"].as_f64()) {
                f["value"] = (v * scale).into();
            }
        }));
    }
    // Listed through a devices.json, as `--device all` leaves them.
    let manifest = serde_json::json!({
        "command": ["all"], "parallel": true, "started_utc": "t", "finished_utc": "t",
        "gpus": (0..5).map(|i| serde_json::json!({
            "device": {"index": i, "name": "H100", "uuid": format!("GPU-{i}")},
            "dir": format!("gpu{i}"), "log": format!("gpu{i}.log"), "status": "complete",
            "seconds": 1.0,
        })).collect::<Vec<_>>(),
    });
    std::fs::write(dir.path().join("devices.json"), manifest.to_string()).unwrap();
    let fleet = gpubench()
        .args(["compare", "--fleet"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(fleet.status.success(), "{fleet:?}");
    let text = String::from_utf8(fleet.stdout).unwrap();
    let odd = text
        .split("## Odd ones out")
        .nth(1)
        .expect("an odd-ones table");
    let node = dir
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(odd.contains(&format!("| {node}/gpu3 | ")), "{odd}");
    for calm in ["gpu0", "gpu1", "gpu2", "gpu4"] {
        assert!(
            !odd.contains(&format!("| {node}/{calm} |")),
            "{calm} in {odd}"
        );
    }
    // Every format carries the runs; CSV has one line per figure and run.
    let csv = gpubench()
        .args(["compare", "--fleet", "--format", "csv"])
        .arg(dir.path())
        .output()
        .unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    let odd_lines: Vec<&str> = csv.lines().filter(|l| l.contains(",true,")).collect();
    assert!(!odd_lines.is_empty(), "{csv}");
    assert!(
        odd_lines
            .iter()
            .all(|l| l.contains("slowest level latency") && l.contains("/gpu3,")),
        "{odd_lines:?}"
    );
    gpubench()
        .args(["compare", "--fleet"])
        .arg(&runs[0])
        .arg(&runs[1])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--fleet three at least"));
}

/// `gpubench report --format FORMAT` of the committed H100 `all` run, into a new directory.
fn report_of_committed_all(format: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(format);
    gpubench()
        .args(["report", "--format", format, "--output"])
        .arg(&out)
        .arg(committed("all"))
        .assert()
        .success();
    (dir, out)
}

/// The text of every `<text>` element of an SVG.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = t.split_once('>')?.1;
            Some(body.split_once("</text>")?.0.trim().to_string())
        })
        .collect()
}

#[test]
fn every_byte_size_axis_is_ticked_at_powers_of_two_in_binary_units() {
    let (_dir, out) = report_of_committed_all("svg");
    let mut axes = 0;
    for suite in std::fs::read_dir(&out).unwrap() {
        let suite = suite.unwrap().path();
        if !suite.is_dir() {
            continue;
        }
        for figure in std::fs::read_dir(&suite).unwrap() {
            let figure = figure.unwrap().path();
            let svg = std::fs::read_to_string(&figure).unwrap();
            let texts = svg_texts(&svg);
            // A byte-size axis says so in its description.
            if !texts.iter().any(|t| t.contains("(bytes")) {
                continue;
            }
            axes += 1;
            // Tick labels are a bare size; level and fall-off labels carry more words.
            let ticks: Vec<&String> = texts
                .iter()
                .filter(|t| {
                    let mut words = t.split(' ');
                    let number = words.next().unwrap_or("");
                    number.parse::<f64>().is_ok()
                        && words.next().is_some_and(|u| u.ends_with('B'))
                        && words.next().is_none()
                })
                .collect();
            assert!(ticks.len() >= 3, "{}: {ticks:?}", figure.display());
            for tick in ticks {
                let (number, unit) = tick.split_once(' ').unwrap();
                let n: u64 = number
                    .parse()
                    .unwrap_or_else(|_| panic!("{}: tick {tick:?} is not whole", figure.display()));
                assert!(
                    ["B", "KiB", "MiB", "GiB"].contains(&unit) && n.is_power_of_two(),
                    "{}: tick {tick:?}",
                    figure.display()
                );
            }
        }
    }
    // cache (6 spaces with byte axes), conflict and stride figures, bandwidth.
    assert!(axes >= 8, "only {axes} byte-size axes found");
}

/// What a LaTeX user does with a report: `\input` the curated tables (booktabs), the summary
/// table and `plots.tex`. Runs where pdflatex is installed (Debian: texlive-latex-base,
/// texlive-latex-recommended).
#[test]
fn the_curated_tables_summary_table_and_plots_tex_compile_with_pdflatex() {
    let found = std::process::Command::new("pdflatex")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("no pdflatex on this machine: the LaTeX compile test did not run");
        return;
    }
    let (_dir, out) = report_of_committed_all("pdf");
    std::fs::write(
        out.join("paper.tex"),
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage[utf8]{inputenc}\n\\usepackage{graphicx}\n\\usepackage{longtable}\n\\usepackage{booktabs}\n\\begin{document}\n\\input{tables.tex}\n\\clearpage\n\\input{summary.tex}\n\\clearpage\n\\input{plots.tex}\n\\end{document}\n",
    )
    .unwrap();
    let latex = std::process::Command::new("pdflatex")
        .args(["-interaction=nonstopmode", "-halt-on-error", "paper.tex"])
        .current_dir(&out)
        .output()
        .unwrap();
    assert!(
        latex.status.success(),
        "{}",
        String::from_utf8_lossy(&latex.stdout)
    );
    let pdf = std::fs::read(out.join("paper.pdf")).unwrap();
    assert!(pdf.starts_with(b"%PDF-") && pdf.len() > 100_000);
}

/// `gpubench report` of the committed H100 `all` run with extra figure options.
fn report_of_committed_all_with(args: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    gpubench()
        .arg("report")
        .args(args)
        .arg("--output")
        .arg(&out)
        .arg(committed("all"))
        .assert()
        .success();
    (dir, out)
}

/// Every figure file under `dir` (one level of suite directories).
fn figure_files(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for suite in std::fs::read_dir(dir).unwrap() {
        let suite = suite.unwrap().path();
        if suite.is_dir() {
            for figure in std::fs::read_dir(&suite).unwrap() {
                let figure = figure.unwrap().path();
                if figure.extension().is_some_and(|e| e == extension) {
                    files.push(figure);
                }
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_figure_draws_in_the_colour_blind_safe_palette() {
    // Okabe & Ito's eight colours, plus white and the grey of reference lines.
    let allowed = [
        "#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7",
        "#FFFFFF", "#999999",
    ];
    let (_dir, out) = report_of_committed_all("svg");
    let figures = figure_files(&out, "svg");
    assert!(figures.len() >= 20, "{} figures", figures.len());
    for figure in figures {
        let svg = std::fs::read_to_string(&figure).unwrap();
        for attribute in ["stroke=\"", "fill=\""] {
            for colour in svg.split(attribute).skip(1) {
                let colour = colour.split('"').next().unwrap();
                assert!(
                    colour == "none" || allowed.contains(&colour),
                    "{}: colour {colour} is not in the palette",
                    figure.display()
                );
            }
        }
    }
}

/// The tests that take many seconds unoptimised: the README's `cargo test` skips them,
/// `.ci/run` runs them as a step of their own.
mod slow {
    use super::*;

    /// How many figures the committed repeat of the H100 run did not confirm, as its
    /// `compare.md` says.
    fn flagged_by_the_committed_repeat() -> usize {
        std::fs::read_to_string(committed("all-repeat").join("compare.md"))
            .unwrap()
            .split("Flagged: ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .expect("compare.md says how many figures it flagged")
    }

    #[test]
    #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
    fn report_regenerates_the_h100_tables_byte_for_byte_and_every_figure() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("report");
        let source = committed("all");
        gpubench()
            .arg("report")
            .arg(&source)
            .arg("--output")
            .arg(&out)
            .assert()
            .success();
        for table in ["summary.md", "summary.tex", "summary.json"] {
            assert_eq!(
                std::fs::read(out.join(table)).unwrap(),
                std::fs::read(source.join(table)).unwrap(),
                "{table} differs from the live run's"
            );
        }
        // Every figure the live run drew is drawn again, under the same name.
        let mut live = 0;
        for suite in std::fs::read_dir(&source).unwrap() {
            let suite = suite.unwrap().path();
            if !suite.join("metadata.json").is_file() {
                continue;
            }
            for file in std::fs::read_dir(&suite).unwrap() {
                let name = file.unwrap().file_name();
                if Path::new(&name).extension().is_some_and(|e| e == "png") {
                    live += 1;
                    let again = out.join(suite.file_name().unwrap()).join(&name);
                    assert!(
                        std::fs::metadata(&again).is_ok_and(|m| m.len() > 1000),
                        "{} was not re-drawn",
                        again.display()
                    );
                }
            }
        }
        assert!(live >= 15, "only {live} figures in the committed run");
        let index = std::fs::read_to_string(out.join("index.md")).unwrap();
        assert!(index.contains("cache-texture/cache.png"), "{index}");
    }

    #[test]
    #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
    fn report_writes_a_vector_pdf_per_plot_and_a_plots_tex() {
        let (_dir, out) = report_of_committed_all("pdf");
        let tex = std::fs::read_to_string(out.join("plots.tex")).unwrap();
        let mut pdfs = 0;
        for line in tex.lines() {
            let Some(path) = line
                .trim()
                .strip_prefix("\\includegraphics[width=\\linewidth]{")
                .and_then(|l| l.strip_suffix('}'))
            else {
                continue;
            };
            let bytes = std::fs::read(out.join(path)).unwrap();
            assert!(bytes.starts_with(b"%PDF-"), "{path}");
            // Vector: the text is set in the embedded font, not painted as an image.
            let text = String::from_utf8_lossy(&bytes);
            assert!(text.contains("DejaVuSans"), "{path} embeds no font");
            pdfs += 1;
        }
        assert!(pdfs >= 20, "{pdfs} figures in plots.tex");
        assert_eq!(tex.matches("\\begin{figure}").count(), pdfs);
        assert_eq!(tex.matches("\\caption{").count(), pdfs);
    }

    #[test]
    #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
    fn column_figures_for_a_paper_are_three_and_a_half_inches_wide_with_no_titles() {
        let (_dir, out) = report_of_committed_all_with(&["--format", "svg"]);
        let titled = figure_files(&out, "svg")
            .iter()
            .filter(|f| std::fs::read_to_string(f).unwrap().contains("NVIDIA H100"))
            .count();
        assert!(
            titled >= 20,
            "only {titled} screen figures carry their title"
        );

        let (_dir, out) =
            report_of_committed_all_with(&["--format", "svg", "--plot-width", "column", "--paper"]);
        let figures = figure_files(&out, "svg");
        assert!(figures.len() >= 20);
        for figure in &figures {
            let svg = std::fs::read_to_string(figure).unwrap();
            assert!(
                svg.starts_with("<svg width=\"3.40in\""),
                "{}: {}",
                figure.display(),
                &svg[..60]
            );
            // Titles name the device; a paper's figure leaves that to its caption.
            assert!(
                !svg.contains("NVIDIA H100"),
                "{} has a title",
                figure.display()
            );
        }

        let (_dir, out) =
            report_of_committed_all_with(&["--format", "pdf", "--plot-width", "page"]);
        let tex = std::fs::read_to_string(out.join("plots.tex")).unwrap();
        assert!(tex.contains("\\begin{figure*}"), "{tex}");
        let pdf = std::fs::read(out.join("cache-l2/cache.pdf")).unwrap();
        let text = String::from_utf8_lossy(&pdf);
        let width: f64 = text
            .split_once("/MediaBox [0 0 ")
            .and_then(|(_, rest)| rest.split(' ').next())
            .and_then(|w| w.parse().ok())
            .expect("a MediaBox");
        // 7 in at 72 points to the inch.
        assert!((width - 504.0).abs() < 0.5, "page width {width} pt");
    }

    /// `report` on a calibration study draws its reliability diagram and its per-family
    /// diagrams again, byte for byte, and
    /// `--repeat-of` moves what a second run does not confirm to the unresolved part.
    #[test]
    #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
    fn report_redraws_the_calibration_diagram_and_confirms_by_a_repeat() {
        let dir = tempfile::tempdir().unwrap();
        let study =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("results/calibration/families-seed1");
        let out = dir.path().join("study");
        gpubench()
            .arg("report")
            .arg(&study)
            .arg("--output")
            .arg(&out)
            .assert()
            .success();
        for figure in ["reliability.png", "families.png"] {
            assert_eq!(
                std::fs::read(out.join(figure)).unwrap(),
                std::fs::read(study.join(figure)).unwrap(),
                "{figure}"
            );
        }
        let confirmed = dir.path().join("confirmed");
        gpubench()
            .arg("report")
            .arg(committed("all"))
            .arg("--repeat-of")
            .arg(committed("all-repeat"))
            .arg("--output")
            .arg(&confirmed)
            .assert()
            .success();
        let md = std::fs::read_to_string(confirmed.join("summary.md")).unwrap();
        // The committed repeat confirms every figure but those its compare.md flags.
        let unresolved = md.split("## Unresolved").nth(1).unwrap();
        assert_eq!(
            unresolved.matches("did not repeat").count(),
            flagged_by_the_committed_repeat(),
            "{unresolved}"
        );
        assert_eq!(
            md,
            std::fs::read_to_string(committed("all-repeat").join("summary-confirmed.md")).unwrap()
        );
    }

    /// A run that `gpubench all --repeat` left with its repeat inside (`DIR/repeat`) is confirmed
    /// by it when reported again: the committed H100 run with its committed repeat put there,
    /// one figure of the repeat moved by half, which alone goes to the unresolved.
    #[test]
    #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
    fn report_confirms_a_run_by_its_own_repeat() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        for (from, to) in [
            (committed("all"), run.clone()),
            (committed("all-repeat"), run.join("repeat")),
        ] {
            common::copy_tree(&from, &to);
        }
        let texture = run.join("repeat/cache-texture/figures.json");
        let mut figures: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&texture).unwrap()).unwrap();
        let slowest = figures["figures"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|f| f["quantity"] == "texture: slowest level latency")
            .expect("the texture space's slowest level");
        slowest["value"] = serde_json::json!(slowest["value"].as_f64().unwrap() * 1.5);
        std::fs::write(&texture, serde_json::to_string(&figures).unwrap()).unwrap();
        let out = dir.path().join("out");
        gpubench()
            .arg("report")
            .arg(&run)
            .arg("--output")
            .arg(&out)
            .assert()
            .success();
        let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
        let unresolved = md.split("## Unresolved").nth(1).unwrap();
        assert_eq!(
            unresolved.matches("did not repeat").count(),
            flagged_by_the_committed_repeat() + 1,
            "{unresolved}"
        );
        let moved = unresolved
            .lines()
            .find(|l| l.contains("did not repeat") && l.contains("texture"))
            .unwrap();
        assert!(
            moved.contains("texture: slowest level latency") && moved.contains("in repeat ("),
            "{moved}"
        );
    }

    /// Every run committed under results/ (a single suite, `all`, or a repeat kept as its
    /// figures only) gives its summary tables back byte for byte; its own repeat, where it
    /// has one, confirms as it did live.
    #[test]
    #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
    fn report_of_every_committed_run_gives_its_tables_byte_for_byte() {
        let found = common::dirs_holding(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("results"),
            "summary.md",
        );
        assert!(
            found.len() >= 9,
            "only {} committed runs: {found:?}",
            found.len()
        );
        let scratch = tempfile::tempdir().unwrap();
        for (i, run) in found.iter().enumerate() {
            let out = scratch.path().join(i.to_string());
            gpubench()
                .arg("report")
                .arg(run)
                .arg("--output")
                .arg(&out)
                .assert()
                .success();
            for table in ["summary.md", "summary.tex", "summary.json"] {
                assert!(
                    std::fs::read(out.join(table)).unwrap()
                        == std::fs::read(run.join(table)).unwrap(),
                    "{} of {} differs from the committed one",
                    table,
                    run.display()
                );
            }
        }
    }
}

/// Every file under `dir` with a hash of its bytes, for a check that nothing changed.
fn hashes(dir: &Path) -> Vec<(PathBuf, u64)> {
    use std::hash::{Hash, Hasher};
    let mut all = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                std::fs::read(&path).unwrap().hash(&mut h);
                all.push((path, h.finish()));
            }
        }
    }
    all.sort();
    all
}

#[test]
fn report_without_output_writes_under_the_working_directory_and_leaves_the_run_as_it_was() {
    let run = committed("slots");
    let before = hashes(&run);
    let cwd = tempfile::tempdir().unwrap();
    let assert = gpubench()
        .current_dir(cwd.path())
        .arg("report")
        .arg(&run)
        .args(["--format", "svg"])
        .assert()
        .success();
    let said = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert_eq!(hashes(&run), before, "report changed the run it read");
    let made: Vec<PathBuf> = std::fs::read_dir(cwd.path().join("gpubench-runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    let name = made[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.ends_with("-report-svg"), "{name}");
    assert!(made[0].join("summary.md").is_file());
    // It says where it wrote.
    assert!(said.contains(&format!("gpubench-runs/{name}")), "{said}");
    // A second report the same second gets its own directory.
    gpubench()
        .current_dir(cwd.path())
        .arg("report")
        .arg(&run)
        .args(["--format", "svg"])
        .assert()
        .success();
    assert_eq!(
        std::fs::read_dir(cwd.path().join("gpubench-runs"))
            .unwrap()
            .count(),
        2
    );
}

#[test]
fn a_folder_of_several_runs_is_refused_naming_them_and_a_wrapper_names_the_run_inside() {
    let out = tempfile::tempdir().unwrap();
    // results/h100 holds suite runs of several builds side by side: not one run.
    let mixed = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100");
    refused_by_report(
        &mixed,
        &out.path().join("mixed"),
        &["gpubench builds or GPUs", "clock", "pass one run directory"],
    );
    // A folder that wraps a run and its notes: the refusal names the run inside.
    let wrapper = committed("capacity-620ca57");
    refused_by_report(
        &wrapper,
        &out.path().join("wrapper"),
        &[
            "is not a run directory but holds one",
            "capacity-620ca57/run; pass that",
        ],
    );
    assert!(!out.path().join("mixed").exists() && !out.path().join("wrapper").exists());
}

#[test]
fn a_repeat_of_another_gpu_model_is_refused_naming_both() {
    let out = tempfile::tempdir().unwrap();
    let assert = gpubench()
        .arg("report")
        .arg(committed("all"))
        .arg("--repeat-of")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h200/all"))
        .arg("--output")
        .arg(out.path().join("r"))
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(stderr.contains("is a run of NVIDIA H200"), "{stderr}");
    assert!(stderr.contains("is of NVIDIA H100 80GB HBM3"), "{stderr}");
    assert!(stderr.contains("same GPU model"), "{stderr}");
    assert!(!out.path().join("r").exists());
}

#[test]
fn a_renamed_field_of_clock_json_is_refused_not_a_row_that_vanishes() {
    let dir = tempfile::tempdir().unwrap();
    for (field, renamed) in [("counter_scope", "counter_scop"), ("explanation", "explan")] {
        let run = copy_committed("clock", &dir.path().join(field));
        let path = run.join("clock.json");
        let text = std::fs::read_to_string(&path).unwrap();
        let quoted = format!("\"{field}\"");
        assert!(text.contains(&quoted));
        std::fs::write(&path, text.replace(&quoted, &format!("\"{renamed}\""))).unwrap();
        refused_by_report(
            &run,
            &dir.path().join(format!("{field}-out")),
            &["clock.json", &format!("missing field `{field}`")],
        );
    }
}

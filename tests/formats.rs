//! Every run-directory format gpubench has written on main is read by `report`, `compare` and
//! `export` (the trimmed fixtures under tests/fixtures/formats/, one per era of format 1: the
//! first `all` run, the last before the slots suite's tag overheads left the summary, and the
//! last before formats were recorded), and a format newer than this gpubench is refused in one
//! sentence naming both formats.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

mod common;
use common::copy_tree as copy;

fn gpubench() -> Command {
    Command::cargo_bin("gpubench").unwrap()
}

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats");
    let mut found: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("all.json").is_file())
        .collect();
    found.sort();
    found
}

/// Sets `format` in the JSON object of `file`.
fn set_format(file: &Path, format: u64) {
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    value["format"] = format.into();
    std::fs::write(file, serde_json::to_string_pretty(&value).unwrap()).unwrap();
}

#[test]
fn report_compare_and_export_read_every_format_written_on_main() {
    let found = fixtures();
    assert!(found.len() >= 3, "{found:?}");
    let scratch = tempfile::tempdir().unwrap();
    let newest = found.last().unwrap();
    for (i, run) in found.iter().enumerate() {
        let out = scratch.path().join(format!("report-{i}"));
        gpubench()
            .arg("report")
            .arg(run)
            .arg("--output")
            .arg(&out)
            .assert()
            .success();
        let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
        assert!(
            summary.contains("| Section | Quantity"),
            "{}",
            run.display()
        );
        let model = scratch.path().join(format!("model-{i}.json"));
        gpubench()
            .arg("export")
            .arg(run)
            .arg("--output")
            .arg(&model)
            .assert()
            .success();
        let model: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
        assert!(model["figures"].as_array().is_some_and(|f| !f.is_empty()));
        if run != newest {
            let compared = gpubench()
                .arg("compare")
                .arg(newest)
                .arg(run)
                .assert()
                .success();
            let said = String::from_utf8_lossy(&compared.get_output().stdout).into_owned();
            assert!(said.contains("Flagged: "), "{said}");
        }
    }
}

/// The slots suite of 2026-11-22 wrote each workload's tag overhead as a percentage that may
/// lie above 100 or below 0: read as what that version wrote, not as a damaged share.
#[test]
fn a_format_1_tag_overhead_above_100_percent_is_read_not_called_damaged() {
    let run = fixtures()
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with("7062712"))
        .unwrap();
    let figures = std::fs::read_to_string(run.join("slots/figures.json")).unwrap();
    assert!(figures.contains("\"dot: tag overhead\""));
    let out = tempfile::tempdir().unwrap();
    gpubench()
        .arg("report")
        .arg(&run)
        .arg("--output")
        .arg(out.path().join("r"))
        .assert()
        .success();
    let md = std::fs::read_to_string(out.path().join("r/summary.md")).unwrap();
    assert!(
        md.contains("| Lane slots | dot: tag overhead | 229.5 %"),
        "{md}"
    );
}

/// A run directory of today's format is read; one of a format newer than this gpubench is
/// refused (exit 2) in one sentence naming both formats and what to do, by each reader, and
/// so is an `all.json` of a newer format.
#[test]
fn a_newer_format_is_refused_naming_both_and_the_current_one_is_read() {
    let source = fixtures().pop().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let current = scratch.path().join("current");
    copy(&source, &current);
    let suites: Vec<PathBuf> = std::fs::read_dir(&current)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("metadata.json").is_file())
        .collect();
    for suite in &suites {
        set_format(&suite.join("metadata.json"), 2);
    }
    set_format(&current.join("all.json"), 2);
    gpubench()
        .arg("report")
        .arg(&current)
        .arg("--output")
        .arg(scratch.path().join("r2"))
        .assert()
        .success();
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(scratch.path().join("r2/summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["format"], 2);

    let newer = scratch.path().join("newer");
    copy(&current, &newer);
    let first = newer.join(suites[0].file_name().unwrap());
    set_format(&first.join("metadata.json"), 99);
    for command in ["report", "export", "compare"] {
        let mut run = gpubench();
        run.arg(command).arg(&newer);
        match command {
            "report" => run.arg("--output").arg(scratch.path().join("r99")),
            "export" => run.arg("--output").arg(scratch.path().join("m99.json")),
            _ => run.arg(&current),
        };
        let refused = run.assert().code(2);
        let said = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
        assert_eq!(said.trim().lines().count(), 1, "{command}: {said}");
        assert!(
            said.contains("run-directory format 99"),
            "{command}: {said}"
        );
        let formats = format!("formats 1 to {}", gpubench::report::formats::CURRENT);
        assert!(said.contains(&formats), "{command}: {said}");
        assert!(said.contains("or newer"), "{command}: {said}");
    }
    let manifest = scratch.path().join("manifest");
    copy(&current, &manifest);
    set_format(&manifest.join("all.json"), 99);
    let refused = gpubench()
        .arg("report")
        .arg(&manifest)
        .arg("--output")
        .arg(scratch.path().join("rm"))
        .assert()
        .code(2);
    let said = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        said.contains("all.json is of run-directory format 99"),
        "{said}"
    );
}

/// #72: a run written before figures had keys is read through the one migration table
/// (`report::keys::from_words`): every figure of every older format gets a key, and the machine
/// model finds what it reads by key (the SM clock, each cache level's latency, the SASS
/// instructions) in those runs as it does in a new one.
#[test]
fn older_formats_get_their_keys_from_the_migration_table() {
    let scratch = tempfile::tempdir().unwrap();
    for (i, run) in fixtures().iter().enumerate() {
        let out = scratch.path().join(format!("model-{i}.json"));
        gpubench()
            .arg("export")
            .arg(run)
            .arg("--output")
            .arg(&out)
            .assert()
            .success();
        let model: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let figures = model["figures"].as_array().unwrap();
        for f in figures {
            let key = f["key"].as_str().unwrap_or("");
            assert!(key.contains('/'), "{}: {f}", run.display());
        }
        // Two figures share a key only where the file gave them the same words (the
        // bandwidth suite of 2026-11-22 named both of a sweep's fall-offs alike).
        let distinct = |of: &dyn Fn(&serde_json::Value) -> String| {
            let mut seen: Vec<String> = figures.iter().map(of).collect();
            seen.sort_unstable();
            seen.dedup();
            seen.len()
        };
        assert_eq!(
            distinct(&|f| f["key"].to_string()),
            distinct(&|f| format!("{}|{}", f["section"], f["quantity"])),
            "{}: the migration gave two figures of different words one key",
            run.display()
        );
        if run.join("clock").is_dir() {
            assert_eq!(
                model["gpu"]["sm_clock"]["key"],
                "clock/sm",
                "{}",
                run.display()
            );
        }
        if run.join("cache-global").is_dir() {
            let l1 = model["memory"]
                .as_array()
                .unwrap()
                .iter()
                .find(|l| l["space"] == "global" && l["level"] == "1")
                .unwrap_or_else(|| panic!("{}: no global level 1", run.display()));
            // Found by key; whether it is a figure is that era's words' to say (the first
            // runs gave a latency its level's geometry confidence).
            assert_eq!(
                l1["latency"]["key"],
                "cache/global/1/latency",
                "{}",
                run.display()
            );
        }
        // Every timed operation of the pipeline suite, in each era's words ("IADD3 latency",
        // "fp32 div (PTX, chain and loop) latency", the first runs' "fp32 div latency"), is a
        // SASS instruction's or a PTX operation's timing by key.
        let timings = figures
            .iter()
            .filter(|f| f["section"] == "Pipeline")
            .filter(|f| {
                let quantity = f["quantity"].as_str().unwrap_or("");
                quantity.ends_with(" latency") && !quantity.starts_with("warps")
            });
        for f in timings {
            let key = f["key"].as_str().unwrap_or("");
            assert!(
                key.starts_with("pipeline/sass/") || key.starts_with("pipeline/ptx/"),
                "{}: {f}",
                run.display()
            );
        }
    }
}

/// #72: from format 3 every figure's status is typed in the file; a figures.json of an older
/// format said an inference's standing in words only, and is read through the migration table.
/// The same figures, words unchanged, read as format 3 keep the status the file gives them.
#[test]
fn a_status_said_in_words_counts_only_in_files_older_than_format_3() {
    let scratch = tempfile::tempdir().unwrap();
    let run = scratch.path().join("cache-instruction");
    copy(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h200/all/cache-instruction"),
        &run,
    );
    // Figures only (as a committed repeat keeps them): `report` reads them from figures.json.
    std::fs::remove_file(run.join("cache.json")).unwrap();
    std::fs::remove_file(run.join("chase.csv")).unwrap();
    let statuses = |out: &str| -> Vec<(String, String, serde_json::Value)> {
        let out = scratch.path().join(out);
        gpubench()
            .arg("report")
            .arg(&run)
            .arg("--output")
            .arg(&out)
            .assert()
            .success();
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        summary["figures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["quantity"].as_str().unwrap().to_string(),
                    f["status"].as_str().unwrap().to_string(),
                    f["unresolved"]["reason"].clone(),
                )
            })
            .collect()
    };
    let older = statuses("older");
    // The file (written before format 3) states "confidence 0.40" for the level's geometry:
    // below 0.5, so unresolved for low confidence, by the words.
    let low: Vec<_> = older
        .iter()
        .filter(|(_, _, reason)| reason == "low-confidence")
        .collect();
    assert!(!low.is_empty(), "{older:?}");
    assert!(low.iter().all(|(_, status, _)| status == "unresolved"));
    set_format(&run.join("figures.json"), 3);
    let typed = statuses("typed");
    assert_eq!(typed.len(), older.len());
    for ((quantity, _, reason), (_, status, now)) in older.iter().zip(&typed) {
        if reason == "low-confidence" {
            // Format 3 writes the status it means; this file's figures carry none.
            assert_eq!(status, "figure", "{quantity}");
            assert!(now.is_null(), "{quantity}: {now}");
        }
    }
}

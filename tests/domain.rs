//! Values outside their domain in a run's files are refused, never summarised (issue: a bad
//! GPU and a bad file). Each suite of the committed H100 run has each number its figures are
//! read from pushed out of its domain, one at a time; the summary must refuse it in one
//! sentence naming the file.

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use common::copy_tree;
use gpubench::app::registry::derive_figures;
use gpubench::input::columns;
use gpubench::report::domain;
use gpubench::report::figures::Figure;
use gpubench::report::summary::summarise_from_files;
use serde_json::Value;

fn committed(run: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("results/h100")
        .join(run)
}

/// Every numeric leaf of `value`, as a JSON pointer and its number.
fn leaves(value: &Value, at: String, out: &mut Vec<(String, f64)>) {
    match value {
        Value::Number(n) => out.extend(n.as_f64().map(|x| (at, x))),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                leaves(item, format!("{at}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                leaves(
                    item,
                    format!("{at}/{}", key.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        _ => {}
    }
}

/// Whether `figure` is one a negative value takes out of its domain (a measured quantity:
/// not a fitted slope, which may be negative).
fn measured(figure: &Figure) -> bool {
    figure.value.is_some_and(|v| v > 0.0) && !domain::fitted(figure)
}

/// The issue's own example: a hand-edited copy of the pipeline run whose first latency is
/// −5 cycles is refused by `report` (exit 2, nothing written), in one sentence naming the
/// file, the quantity and the value.
#[test]
fn a_negative_latency_in_a_copied_run_is_refused_by_report() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("pipeline");
    copy_tree(&committed("pipeline"), &run);
    let file = run.join("pipeline.json");
    let mut json: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let mut numbers = Vec::new();
    leaves(&json, String::new(), &mut numbers);
    let (pointer, _) = numbers
        .iter()
        .find(|(p, _)| p.ends_with("/latency_cycles"))
        .expect("the pipeline run states latencies")
        .clone();
    *json.pointer_mut(&pointer).unwrap() = serde_json::json!(-5.0);
    std::fs::write(&file, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    let out = dir.path().join("report");
    let assert = Command::cargo_bin("gpubench")
        .unwrap()
        .arg("report")
        .arg(&run)
        .arg("--output")
        .arg(&out)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("pipeline.json"), "{stderr}");
    assert!(stderr.contains("-5 cycles"), "{stderr}");
    assert!(!out.exists(), "nothing may be written");
}

/// Every suite of the committed H100 run: each number of its JSON files that a measured figure
/// takes as its value, made negative, is refused naming that file; and each figure of its
/// `figures.json` (what `all`'s summary and `compare` read) made negative, or its confidence
/// past one, is refused naming `figures.json`.
#[test]
fn every_suites_read_back_values_are_checked_for_their_domain() {
    let dir = tempfile::tempdir().unwrap();
    let mut refused = 0;
    for entry in std::fs::read_dir(committed("all")).unwrap() {
        let suite = entry.unwrap().path();
        if !suite.join("metadata.json").is_file() {
            continue;
        }
        let name = suite.file_name().unwrap().to_string_lossy().into_owned();
        let copy_dir = dir.path().join(&name);
        copy_tree(&suite, &copy_dir);
        let figures = summarise_from_files(&copy_dir, derive_figures)
            .unwrap_or_else(|e| panic!("{name}: the committed run is refused: {e:#}"))
            .figures;
        let mut files: Vec<PathBuf> = std::fs::read_dir(&copy_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.extension().is_some_and(|e| e == "json")
                    && !p.ends_with("metadata.json")
                    && !p.ends_with("figures.json")
            })
            .collect();
        files.sort();
        let mut pushed = 0;
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let json: Value = serde_json::from_str(&text).unwrap();
            let mut numbers = Vec::new();
            leaves(&json, String::new(), &mut numbers);
            // The leaves a measured figure states as its value, at most twelve a file.
            let feeding: Vec<&(String, f64)> = numbers
                .iter()
                .filter(|(_, x)| figures.iter().any(|f| measured(f) && f.value == Some(*x)))
                .take(12)
                .collect();
            for (pointer, x) in feeding {
                let mut bad = json.clone();
                *bad.pointer_mut(pointer).unwrap() = serde_json::json!(-(x.abs() + 1.0));
                std::fs::write(&file, serde_json::to_string(&bad).unwrap()).unwrap();
                match summarise_from_files(&copy_dir, derive_figures) {
                    Err(e) => {
                        let message = format!("{e:#}");
                        let file_name = file.file_name().unwrap().to_string_lossy();
                        assert!(message.contains(&*file_name), "{name}{pointer}: {message}");
                        pushed += 1;
                    }
                    // The same number stood for another figure and this leaf feeds none:
                    // then nothing negative may have been summarised.
                    Ok(summary) => assert!(
                        summary
                            .figures
                            .iter()
                            .all(|f| domain::violation(f).is_none()),
                        "{name}{pointer}"
                    ),
                }
            }
            std::fs::write(&file, &text).unwrap();
        }
        // What `all` and `compare` read back: the suite's figures.json.
        let saved = copy_dir.join("figures.json");
        let text = std::fs::read_to_string(&saved).unwrap();
        let original: Value = serde_json::from_str(&text).unwrap();
        let count = original["figures"].as_array().unwrap().len();
        for i in 0..count {
            let figure: Figure = serde_json::from_value(original["figures"][i].clone()).unwrap();
            let mut bad = original.clone();
            if measured(&figure) {
                bad["figures"][i]["value"] = serde_json::json!(-1.0);
            } else if figure.stated_confidence().is_some() {
                bad["figures"][i]["uncertainty"] = serde_json::json!("confidence 1.5");
            } else {
                continue;
            }
            std::fs::write(&saved, serde_json::to_string(&bad).unwrap()).unwrap();
            let message = format!(
                "{:#}",
                gpubench::report::summary::summarise(&copy_dir, derive_figures).unwrap_err()
            );
            assert!(message.contains("figures.json"), "{name} #{i}: {message}");
            pushed += 1;
        }
        std::fs::write(&saved, &text).unwrap();
        // Suites whose figures are all verdicts in words (sync) have no number to push.
        let numeric = figures
            .iter()
            .any(|f| measured(f) || f.stated_confidence().is_some());
        assert_eq!(
            pushed > 0,
            numeric,
            "{name}: {pushed} values of its files pushed out of their domain"
        );
        refused += pushed;
    }
    assert!(refused > 100, "{refused}");
}

/// Every CSV a suite of the committed H100 run keeps: one number of a column that cannot be
/// negative (a latency, a size, a count, a fraction), made negative, is refused by `report`
/// naming the file and the column (exit 2, nothing written) — whether the figures or only the
/// drawing read it; a file `report` does not read must be one of those written for people or
/// for `analyze` ([`not_read_by_report`]), and `analyze cache` refuses the descending chase.
#[test]
fn every_suites_csv_files_are_checked_for_their_domain() {
    let dir = tempfile::tempdir().unwrap();
    let mut refused = Vec::new();
    let mut suites: Vec<PathBuf> = std::fs::read_dir(committed("all"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("metadata.json").is_file())
        .collect();
    suites.sort();
    for suite in suites {
        let name = suite.file_name().unwrap().to_string_lossy().into_owned();
        let mut files: Vec<String> = std::fs::read_dir(&suite)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(".csv") || f.ends_with(".csv.gz"))
            .collect();
        files.sort();
        for file in files {
            let copy_dir = dir.path().join(format!("{name}-{file}"));
            copy_tree(&suite, &copy_dir);
            let path = copy_dir.join(&file);
            let text = gpubench::input::read_text(&path).unwrap();
            let Some((column, damaged)) = negate_first_measured(&text) else {
                continue;
            };
            let plain = copy_dir.join(file.trim_end_matches(".gz"));
            std::fs::remove_file(&path).unwrap();
            std::fs::write(&plain, damaged).unwrap();
            let out = dir.path().join(format!("report-{name}-{file}"));
            let output = Command::cargo_bin("gpubench")
                .unwrap()
                .arg("report")
                .arg(&copy_dir)
                .arg("--output")
                .arg(&out)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            let plain_name = plain.file_name().unwrap().to_string_lossy();
            if output.status.success() {
                let why = not_read_by_report(&file);
                assert!(why.is_some(), "{name}/{file} was reported: {stderr}");
                if file == "chase-descending.csv" {
                    let analysed = Command::cargo_bin("gpubench")
                        .unwrap()
                        .args(["analyze", "cache"])
                        .arg(copy_dir.join("chase.csv"))
                        .output()
                        .unwrap();
                    let stderr = String::from_utf8_lossy(&analysed.stderr);
                    assert_eq!(analysed.status.code(), Some(2), "{name}/{file}: {stderr}");
                    assert!(stderr.contains(&format!("column {column}")), "{stderr}");
                }
                continue;
            }
            assert!(
                stderr.contains(&*plain_name) && stderr.contains(&format!("column {column}")),
                "{name}/{file}: {stderr}"
            );
            assert!(!out.exists(), "{name}/{file}");
            refused.push(format!("{name}/{file}"));
        }
    }
    assert!(refused.len() > 20, "{refused:?}");
}

/// Why `report` may not read the CSV named `file` (in some suites): the suite wrote it for
/// people (a copy of what its JSON holds, raw samples), read it while it measured, or left it
/// for `analyze`.
fn not_read_by_report(file: &str) -> Option<&'static str> {
    match file {
        "chase-descending.csv" => Some("analyze cache reads it beside chase.csv"),
        "strides.csv" | "pages.csv" => Some("the cache suite read it while it measured"),
        "samples.csv.gz" => Some("raw samples; summary.csv is what is read"),
        "split.csv" | "instructions.csv" | "pipeline.csv" | "branches.csv" => {
            Some("a copy for people of what the suite's JSON holds")
        }
        _ => None,
    }
}

/// `text` (a CSV) with the first number of its first row that lies in a column whose domain
/// excludes negatives made negative, and that column's name.
fn negate_first_measured(text: &str) -> Option<(String, String)> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().ok()?.clone();
    let mut rows: Vec<csv::StringRecord> = reader.records().collect::<Result<_, _>>().ok()?;
    let first = rows.first()?.clone();
    let column = (0..header.len().min(first.len())).find(|&i| {
        first[i].parse::<f64>().is_ok_and(|x| x > 0.0)
            && columns::domain(&header[i]) != columns::Domain::Signed
    })?;
    rows[0] = first
        .iter()
        .enumerate()
        .map(|(i, field)| {
            if i == column {
                format!("-{field}")
            } else {
                field.to_string()
            }
        })
        .collect();
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(&header).unwrap();
    for row in &rows {
        writer.write_record(row).unwrap();
    }
    Some((
        header[column].to_string(),
        String::from_utf8(writer.into_inner().unwrap()).unwrap(),
    ))
}

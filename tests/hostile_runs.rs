//! Generated hostile run directories for `report` and `compare`: a small `all` run built from
//! the committed H100 one, with one of its files damaged at random (random bytes, a cut,
//! a hostile number, a duplicated or dropped line, a path-like suite name, the file gone or
//! replaced by a directory). Each run must be reported or refused with one sentence and exit
//! code 2 (damaged input) — never a panic — in bounded time, and
//! nothing may appear outside `--output`; a refused report leaves no output behind.

mod common;

use std::path::{Path, PathBuf};

use common::copy_tree;
use std::process::Output;
use std::time::Duration;

use assert_cmd::Command;
use proptest::prelude::*;

/// Suites of the committed `all` run whose report takes well under a second each.
const SUITES: [&str; 4] = ["clock", "shared", "branch", "sync"];

fn committed_all() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100/all")
}

/// An `all` run of four suites: their directories, `info.json`, and an `all.json` naming them.
fn small_run(to: &Path) {
    let all = committed_all();
    for suite in SUITES {
        copy_tree(&all.join(suite), &to.join(suite));
    }
    std::fs::copy(all.join("info.json"), to.join("info.json")).unwrap();
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(all.join("all.json")).unwrap()).unwrap();
    let mut manifest = manifest.as_object().unwrap().clone();
    let kept: Vec<serde_json::Value> = manifest["suites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| SUITES.contains(&s["name"].as_str().unwrap()))
        .cloned()
        .collect();
    manifest.insert("suites".into(), kept.into());
    std::fs::write(
        to.join("all.json"),
        serde_json::to_string_pretty(&manifest).unwrap(),
    )
    .unwrap();
}

/// Every file of the run, in a fixed order, PNGs left out (nothing reads them).
fn files(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_none_or(|e| e != "png") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[derive(Debug, Clone)]
enum Damage {
    RandomBytes(Vec<u8>),
    CutAt(f64),
    /// The `which`-th number of the file becomes `with`.
    Number {
        which: usize,
        with: &'static str,
    },
    DuplicateLine(usize),
    DropLine(usize),
    Remove,
    Directory,
    /// A suite of `all.json` renamed.
    SuiteName(&'static str),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..512).prop_map(Damage::RandomBytes),
        (0.0f64..1.0).prop_map(Damage::CutAt),
        (
            0usize..400,
            prop_oneof![
                Just("inf"),
                Just("-1e308"),
                Just("1e999"),
                Just("NaN"),
                Just("-7"),
                Just("0"),
                Just("18446744073709551617"),
                Just("\"x\""),
                Just("null"),
                Just(""),
            ]
        )
            .prop_map(|(which, with)| Damage::Number { which, with }),
        (0usize..200).prop_map(Damage::DuplicateLine),
        (0usize..200).prop_map(Damage::DropLine),
        Just(Damage::Remove),
        Just(Damage::Directory),
        prop_oneof![
            Just("../escape"),
            Just("/tmp"),
            Just(""),
            Just("shared"),
            Just("no-such-suite"),
            Just("a/b"),
        ]
        .prop_map(Damage::SuiteName),
    ]
}

/// Replaces the `which`-th (wrapping) run of digits, with its sign, exponent and point.
fn replace_number(text: &str, which: usize, with: &str) -> String {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let start = if i > 0 && bytes[i - 1] == b'-' {
                i - 1
            } else {
                i
            };
            while i < bytes.len()
                && (bytes[i].is_ascii_digit() || matches!(bytes[i], b'.' | b'e' | b'E' | b'+'))
            {
                i += 1;
            }
            spans.push((start, i));
        } else {
            i += 1;
        }
    }
    let Some(&(start, end)) = spans.get(which % spans.len().max(1)) else {
        return text.to_string();
    };
    format!("{}{with}{}", &text[..start], &text[end..])
}

fn apply(damage: &Damage, file: &Path, run: &Path) {
    let text = std::fs::read(file).unwrap();
    let lines = |text: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(text)
            .lines()
            .map(str::to_string)
            .collect()
    };
    match damage {
        Damage::RandomBytes(bytes) => std::fs::write(file, bytes).unwrap(),
        Damage::CutAt(fraction) => {
            std::fs::write(file, &text[..(text.len() as f64 * fraction) as usize]).unwrap()
        }
        Damage::Number { which, with } => {
            let changed = replace_number(&String::from_utf8_lossy(&text), *which, with);
            std::fs::write(file, changed).unwrap();
        }
        Damage::DuplicateLine(which) | Damage::DropLine(which) => {
            let mut lines = lines(&text);
            if !lines.is_empty() {
                let at = which % lines.len();
                if matches!(damage, Damage::DuplicateLine(_)) {
                    lines.insert(at, lines[at].clone());
                } else {
                    lines.remove(at);
                }
            }
            std::fs::write(file, lines.join("\n") + "\n").unwrap();
        }
        Damage::Remove => std::fs::remove_file(file).unwrap(),
        Damage::Directory => {
            std::fs::remove_file(file).unwrap();
            std::fs::create_dir(file).unwrap();
        }
        Damage::SuiteName(name) => {
            let manifest = run.join("all.json");
            let text = std::fs::read_to_string(&manifest).unwrap();
            let renamed =
                text.replacen("\"name\": \"shared\"", &format!("\"name\": \"{name}\""), 1);
            std::fs::write(manifest, renamed).unwrap();
        }
    }
}

fn gpubench(arguments: &[&Path]) -> Output {
    let mut command = Command::cargo_bin("gpubench").unwrap();
    command.args(arguments).timeout(Duration::from_secs(60));
    command.output().unwrap()
}

/// Reported, or refused in one sentence with a documented code; never a panic or a hang.
fn check_outcome(what: &str, output: &Output) -> Result<(), TestCaseError> {
    let stderr = String::from_utf8_lossy(&output.stderr);
    prop_assert!(
        !stderr.contains("internal bug") && !stderr.contains("panicked"),
        "{what}: {stderr}"
    );
    let code = output.status.code();
    prop_assert!(code.is_some(), "{what} was killed (a hang?): {stderr}");
    if code != Some(0) {
        // The damage is all in the input (the output is a fresh directory), so the refusal
        // is the documented one for damaged input, whatever the damage.
        prop_assert_eq!(code, Some(2), "{} exit {:?}: {}", what, code, stderr);
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("Error: "))
            .collect();
        prop_assert_eq!(errors.len(), 1, "{}: {}", what, stderr);
        prop_assert!(
            stderr
                .trim_end()
                .lines()
                .last()
                .unwrap_or("")
                .starts_with("Error: "),
            "{what}: the error is not the last word: {stderr}"
        );
    }
    Ok(())
}

#[test]
fn the_undamaged_small_run_reports_and_compares() {
    let place = tempfile::tempdir().unwrap();
    let run = place.path().join("run");
    small_run(&run);
    let out = place.path().join("out");
    let reported = gpubench(&[Path::new("report"), &run, Path::new("--output"), &out]);
    assert!(reported.status.success(), "{reported:?}");
    for suite in ["clock", "shared", "branch"] {
        assert!(out.join(suite).join(format!("{suite}.png")).exists());
    }
    let compared = gpubench(&[Path::new("compare"), &committed_all(), &run]);
    assert!(compared.status.success(), "{compared:?}");
    assert!(String::from_utf8_lossy(&compared.stdout).contains("Shared"));
}

/// A metadata.json without its `suite` line (CI's proptest drew this damage once): `report`
/// refuses it as damaged input (exit 2), not as an unforeseen error (exit 1). (`compare`
/// takes the suite from all.json and may read it.)
#[test]
fn a_run_whose_metadata_names_no_suite_is_refused_as_damaged_input() {
    let place = tempfile::tempdir().unwrap();
    let run = place.path().join("run");
    small_run(&run);
    let metadata = run.join("branch/metadata.json");
    let text = std::fs::read_to_string(&metadata).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("\"suite\":"))
        .collect();
    assert_eq!(kept.len() + 1, text.lines().count(), "one suite line");
    std::fs::write(&metadata, kept.join("\n")).unwrap();
    let out = place.path().join("out");
    let reported = gpubench(&[Path::new("report"), &run, Path::new("--output"), &out]);
    assert_eq!(reported.status.code(), Some(2), "{reported:?}");
    let stderr = String::from_utf8_lossy(&reported.stderr);
    assert!(stderr.contains("names no suite"), "{stderr}");
    assert!(!out.exists(), "a refused report left its output behind");
}

/// The tests that take many seconds unoptimised: the README's `cargo test` skips them,
/// `.ci/run` runs them as a step of their own.
mod slow {
    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20, ..ProptestConfig::default() })]

        #[test]
        #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
        fn a_damaged_run_is_reported_or_refused_and_nothing_escapes_the_output(
            pick in any::<prop::sample::Index>(),
            damage in damage(),
        ) {
            let place = tempfile::tempdir().unwrap();
            let run = place.path().join("run");
            small_run(&run);
            let all = files(&run);
            let file = pick.get(&all).clone();
            apply(&damage, &file, &run);

            let out = place.path().join("out");
            let what = format!("report after {damage:?} of {}", file.display());
            let reported = gpubench(&[Path::new("report"), &run, Path::new("--output"), &out]);
            check_outcome(&what, &reported)?;
            if !reported.status.success() {
                prop_assert!(!out.exists(), "{what}: a refused report left {}", out.display());
            }
            let mut beside: Vec<String> = std::fs::read_dir(place.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            beside.sort();
            beside.retain(|name| name != "out" && name != "run");
            prop_assert!(beside.is_empty(), "{what} wrote beside its output: {beside:?}");

            let compared = gpubench(&[Path::new("compare"), &committed_all(), &run]);
            check_outcome(&format!("compare after {damage:?} of {}", file.display()), &compared)?;

            // The machine model and the simulator options: made whole, or refused.
            for format in ["json", "accel-sim"] {
                let exported = gpubench(&[
                    Path::new("export"),
                    &run,
                    Path::new("--format"),
                    Path::new(format),
                ]);
                check_outcome(&format!("export {format} after {damage:?} of {}", file.display()), &exported)?;
                if exported.status.success() && format == "json" {
                    prop_assert!(
                        serde_json::from_slice::<serde_json::Value>(&exported.stdout).is_ok(),
                        "export after {damage:?} wrote broken JSON"
                    );
                }
            }
        }
    }
}

//! `gpubench export --format prometheus` of the committed runs, read by a parser of the text
//! exposition format (0.0.4) as strict as Prometheus' own: every line a comment, a blank or a
//! sample; metric and label names of the allowed characters; label values quoted with only the
//! three escapes; values Go floats; one `# TYPE` per family, before its samples; no series
//! twice. And what the exposition says agrees with the run's summary: one sample (a value or
//! an unresolved status) per figure with a value.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// One sample: its metric, its labels, its value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

fn metric_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn label_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The labels of `text` (after the `{`), up to and past the closing `}`: the labels and the rest.
fn labels(mut text: &str, line: &str) -> (BTreeMap<String, String>, String) {
    let mut out = BTreeMap::new();
    loop {
        if let Some(rest) = text.strip_prefix('}') {
            return (out, rest.to_string());
        }
        let eq = text.find('=').unwrap_or_else(|| panic!("no '=' in {line}"));
        let name = &text[..eq];
        assert!(label_name(name), "label name {name:?} in {line}");
        text = text[eq + 1..]
            .strip_prefix('"')
            .unwrap_or_else(|| panic!("unquoted value in {line}"));
        let mut value = String::new();
        let mut chars = text.char_indices();
        let end = loop {
            let (i, c) = chars
                .next()
                .unwrap_or_else(|| panic!("open quote in {line}"));
            match c {
                '"' => break i,
                '\\' => match chars.next().map(|(_, c)| c) {
                    Some('\\') => value.push('\\'),
                    Some('"') => value.push('"'),
                    Some('n') => value.push('\n'),
                    other => panic!("escape {other:?} in {line}"),
                },
                '\n' => panic!("raw line feed in {line}"),
                c => value.push(c),
            }
        };
        assert!(
            out.insert(name.to_string(), value).is_none(),
            "label {name} twice in {line}"
        );
        text = &text[end + 1..];
        text = text.strip_prefix(',').unwrap_or(text);
    }
}

/// Parses `text` as the format says, panicking on the first line that breaks it.
fn parse(text: &str) -> Vec<Sample> {
    let mut typed: BTreeMap<String, String> = BTreeMap::new();
    let mut helped = BTreeSet::new();
    let mut sampled = BTreeSet::new();
    let mut series = BTreeSet::new();
    let mut samples = Vec::new();
    for line in text.lines() {
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# ") {
            let mut parts = rest.splitn(3, ' ');
            let (kind, name) = (parts.next().unwrap(), parts.next().unwrap_or(""));
            assert!(metric_name(name), "{line}");
            match kind {
                "TYPE" => {
                    let t = parts.next().unwrap_or("");
                    assert!(
                        ["counter", "gauge", "histogram", "summary", "untyped"].contains(&t),
                        "{line}"
                    );
                    assert!(!sampled.contains(name), "TYPE after samples: {line}");
                    assert!(
                        typed.insert(name.to_string(), t.to_string()).is_none(),
                        "TYPE twice: {line}"
                    );
                }
                "HELP" => {
                    assert!(helped.insert(name.to_string()), "HELP twice: {line}");
                    let help = parts.next().unwrap_or("");
                    let mut escaped = help.split('\\').skip(1);
                    assert!(
                        escaped.all(|after| after.is_empty() || after.starts_with(['n', '\\'])),
                        "{line}"
                    );
                }
                _ => {}
            }
            continue;
        }
        assert!(!line.starts_with('#'), "{line}");
        let name_end = line.find(['{', ' ']).unwrap_or(line.len());
        let name = &line[..name_end];
        assert!(metric_name(name), "{line}");
        let (labels, rest) = match line[name_end..].strip_prefix('{') {
            Some(after) => labels(after, line),
            None => (BTreeMap::new(), line[name_end..].to_string()),
        };
        let mut fields = rest.split_whitespace();
        let value = fields.next().unwrap_or_else(|| panic!("no value: {line}"));
        let value: f64 = match value {
            "NaN" => f64::NAN,
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("value {v:?}: {line}")),
        };
        if let Some(timestamp) = fields.next() {
            timestamp
                .parse::<i64>()
                .unwrap_or_else(|_| panic!("{line}"));
        }
        assert!(fields.next().is_none(), "{line}");
        assert!(typed.contains_key(name), "a sample before its TYPE: {line}");
        assert!(
            series.insert(format!("{name}{labels:?}")),
            "a series twice: {line}"
        );
        sampled.insert(name.to_string());
        samples.push(Sample {
            name: name.to_string(),
            labels,
            value,
        });
    }
    samples
}

fn export(dir: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_gpubench"))
        .args(["export", "--format", "prometheus"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The keys of the figures with a value in a run's committed `summary.json`, and which of
/// them it says are unresolved.
fn summary_keys(run: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let text = std::fs::read_to_string(run.join("summary.json")).unwrap();
    let summary: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut valued = BTreeSet::new();
    let mut unresolved = BTreeSet::new();
    for f in summary["figures"].as_array().unwrap() {
        if f["value"].is_number() {
            let key = f["key"].as_str().unwrap().to_string();
            if f["status"] == "unresolved" {
                unresolved.insert(key.clone());
            }
            valued.insert(key);
        }
    }
    (valued, unresolved)
}

#[test]
fn the_parser_refuses_what_the_format_does_not_allow() {
    let good =
        "# HELP m_x a help \\n line\n# TYPE m_x gauge\nm_x{a=\"q\\\"x\\\\\",b=\"\"} 1.5e-7\n";
    assert_eq!(parse(good).len(), 1);
    assert_eq!(parse(good)[0].labels["a"], "q\"x\\");
    for bad in [
        "m_x 1\n",                                            // no TYPE
        "# TYPE m_x gauge\n# TYPE m_x gauge\nm_x 1\n",        // TYPE twice
        "# TYPE m_x gauge\nm_x{a=\"1\"} 1\nm_x{a=\"1\"} 2\n", // a series twice
        "# TYPE m-x gauge\nm-x 1\n",                          // a name's character
        "# TYPE m_x gauge\nm_x{1a=\"1\"} 1\n",                // a label name
        "# TYPE m_x gauge\nm_x{a=\"\\t\"} 1\n",               // an escape
        "# TYPE m_x gauge\nm_x{a=1} 1\n",                     // unquoted
        "# TYPE m_x gauge\nm_x 1,5\n",                        // not a float
    ] {
        let refused = std::panic::catch_unwind(|| parse(bad)).is_err();
        assert!(refused, "{bad:?} was accepted");
    }
}

/// Every committed reference run exports an exposition that parses, with one sample per
/// figure with a value: a value with `status="figure"` for a figure, a
/// `gpubench_figure_unresolved` status (and no value) for each the summary calls unresolved.
#[test]
fn every_reference_run_exports_one_sample_per_figure() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    for run in ["h100/all", "h200/all"] {
        let dir = root.join(run);
        let samples = parse(&export(&dir));
        let (valued, unresolved) = summary_keys(&dir);
        let said_unresolved: BTreeSet<String> = samples
            .iter()
            .filter(|s| s.name == "gpubench_figure_unresolved")
            .map(|s| {
                assert!(!s.labels["reason"].is_empty(), "{s:?}");
                assert_eq!(s.value, 1.0);
                s.labels["key"].clone()
            })
            .collect();
        let figures: Vec<&Sample> = samples
            .iter()
            .filter(|s| s.labels.get("status").is_some_and(|v| v == "figure"))
            .collect();
        let said_figures: BTreeSet<String> =
            figures.iter().map(|s| s.labels["key"].clone()).collect();
        assert_eq!(figures.len(), said_figures.len(), "{run}: a key twice");
        assert_eq!(said_unresolved, unresolved, "{run}");
        assert!(said_figures.is_disjoint(&said_unresolved), "{run}");
        let said: BTreeSet<String> = said_figures.union(&said_unresolved).cloned().collect();
        assert_eq!(said, valued, "{run}");
        let uuid = &figures[0].labels["gpu_uuid"];
        assert!(uuid.starts_with("GPU-"), "{run}: {uuid}");
        assert!(
            samples
                .iter()
                .any(|s| s.name == "gpubench_run_info" && !s.labels["gpubench_version"].is_empty()),
            "{run}"
        );
    }
}

/// A `--device all` directory is one exposition: each family once, each GPU's samples told
/// apart by its UUID, as many per GPU as its own run exports.
#[test]
fn a_node_of_several_gpus_is_one_exposition() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h200x2");
    let node = parse(&export(&root));
    for gpu in ["gpu0-f64c03ac", "gpu1-954a65b1"] {
        let own = parse(&export(&root.join(gpu)));
        let uuid = &own[0].labels["gpu_uuid"];
        let of_it = node
            .iter()
            .filter(|s| &s.labels["gpu_uuid"] == uuid)
            .count();
        assert_eq!(of_it, own.len(), "{gpu}");
    }
}

//! The README's numbers come from the committed run: its suites table's headline column is
//! written from `results/h100/all/summary.json` by this test (`GPUBENCH_BLESS_README=1 cargo
//! test --test readme` rewrites it), and fails, naming the suite, wherever the README and the
//! committed run disagree. A headline quotes only rows the run states as figures.

use std::path::PathBuf;

use gpubench::report::figures::Figure;
use gpubench::report::headline::HEADLINES;
use serde_json::Value;

/// The committed run the README quotes.
const RUN: &str = "results/h100/all/summary.json";
/// The most lines the README may have: a newcomer reads it in five minutes.
const MAX_LINES: usize = 220;

/// The committed `all --repeat` runs the README's capacity line quotes, by the name its fields
/// give them (`results/h100/all` predates the capacity reading).
const CAPACITY_RUNS: &[(&str, &str)] = &[
    ("h100", "results/h100/capacity-620ca57/run/summary.json"),
    ("h200", "results/h200/reference/run/summary.json"),
];

/// The README's line on what the caches are (found by its first words, up to the colon), with
/// fields `{run|quantity|interval}`: a capacity and its interval.
const CAPACITY_LINE: &str = "Caches by capacity, the largest footprint with no miss [an interval \
     that held on every simulated family], H100 / H200: L1 {h100|global: level 1 capacity|interval} \
     / {h200|global: level 1 capacity|interval}; L2, near partition \
     {h100|l2: level 1 capacity|interval} / {h200|l2: level 1 capacity|interval}, whole \
     {h100|l2: level 2 capacity|interval} / {h200|l2: level 2 capacity|interval}. The peers \
     read the same H100 L1 ramp at other points: MT4G's 249 KiB (global) and 233 KiB (read-only) \
     are its 90 % and near-half points, HPMLL's hits to about 215 KiB are the same first miss, \
     and gpu-benches' step at 256 kB is not explained; why each differs: \
     [docs/caches.md](docs/caches.md).";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The summary row named `quantity`; it must be a figure.
fn row<'a>(rows: &'a [Value], quantity: &str) -> &'a Value {
    let found = rows
        .iter()
        .find(|r| r["quantity"] == quantity)
        .unwrap_or_else(|| panic!("the committed run has no row '{quantity}'"));
    assert_eq!(
        found["status"], "figure",
        "'{quantity}' is not a figure in the committed run: the README quotes figures only"
    );
    found
}

/// `template` with each `{…}` field replaced by `value` of the text between the braces.
fn fill(template: &str, mut value: impl FnMut(&str) -> String) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = open + rest[open..].find('}').expect("an unclosed field");
        out.push_str(&value(&rest[open + 1..close]));
        rest = &rest[close + 1..];
    }
    out + rest
}

/// The headline of `template` from the run's rows, as the page writes it
/// (`gpubench::report::headline`); a row it cannot quote fails the test, naming the row.
fn headline(rows: &[Value], suite: &str, template: &str) -> String {
    let figures: Vec<Figure> = rows
        .iter()
        .map(|r| serde_json::from_value(r.clone()).expect("a summary row"))
        .collect();
    gpubench::report::headline::headline(&figures, suite, template)
        .unwrap_or_else(|why| panic!("the README's headline: {why}"))
}

/// The README with every suites-table row's last cell as the committed run gives it, and the
/// names of the rows whose cell differed.
fn regenerated(readme: &str, rows: &[Value]) -> (String, Vec<String>) {
    let mut differ = Vec::new();
    let mut seen = Vec::new();
    let mut lines = Vec::new();
    for line in readme.lines() {
        let suite = line
            .strip_prefix("| `")
            .and_then(|l| l.split_once('`'))
            .map(|(name, _)| name);
        match suite.and_then(|s| HEADLINES.iter().find(|(name, _)| *name == s)) {
            Some((name, template)) => {
                let cut = line.trim_end_matches('|').trim_end().rfind('|').unwrap();
                let want = headline(rows, name, template);
                if line[cut + 1..].trim().trim_end_matches('|').trim() != want {
                    differ.push(name.to_string());
                }
                seen.push(name.to_string());
                lines.push(format!("{}| {want} |", &line[..cut]));
            }
            None => lines.push(line.to_string()),
        }
    }
    for (name, _) in HEADLINES {
        assert!(
            seen.iter().any(|s| s == name),
            "the README's suites table has no row for `{name}`"
        );
    }
    (lines.join("\n") + "\n", differ)
}

fn summary_rows() -> Vec<Value> {
    rows_of(RUN)
}

/// The figures of the committed summary.json at `path` (from the repository's root).
fn rows_of(path: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let summary: Value = serde_json::from_str(&text).unwrap();
    summary["figures"].as_array().unwrap().clone()
}

/// Bytes as the capacity line prints them: KiB whole below a MiB, else MiB to a tenth.
fn rounded_size(bytes: f64) -> String {
    if bytes >= f64::from(1 << 20) {
        format!("{:.1} MiB", bytes / f64::from(1 << 20))
    } else {
        format!("{:.0} KiB", bytes / 1024.0)
    }
}

/// [`CAPACITY_LINE`] from the committed runs: each field the row's value and its interval.
fn capacity_line() -> String {
    let runs: Vec<(&str, Vec<Value>)> = CAPACITY_RUNS
        .iter()
        .map(|(name, path)| (*name, rows_of(path)))
        .collect();
    fill(CAPACITY_LINE, |f| {
        let fields: Vec<&str> = f.split('|').collect();
        let [run, quantity, "interval"] = fields[..] else {
            panic!("field {fields:?} is not run|quantity|interval");
        };
        let rows = &runs.iter().find(|(name, _)| *name == run).unwrap().1;
        let r = row(rows, quantity);
        let number = |key: &str| {
            r[key]
                .as_f64()
                .unwrap_or_else(|| panic!("'{quantity}' of {run} has no {key}"))
        };
        format!(
            "{} [{}–{}]",
            rounded_size(number("value")),
            rounded_size(number("low")),
            rounded_size(number("high"))
        )
    })
}

#[test]
fn the_readmes_capacity_line_is_the_committed_runs() {
    let path = root().join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let opening = CAPACITY_LINE.split(':').next().unwrap();
    let want = capacity_line();
    let found = readme
        .lines()
        .find(|l| l.starts_with(opening))
        .unwrap_or_else(|| panic!("the README has no line starting '{opening}'"));
    if std::env::var_os("GPUBENCH_BLESS_README").is_some() {
        std::fs::write(&path, readme.replace(found, &want)).unwrap();
        return;
    }
    assert_eq!(
        found, want,
        "the README's capacity line is not what the committed runs say; \
         `GPUBENCH_BLESS_README=1 cargo test --test readme` writes it"
    );
}

/// The suites table's header, naming the run its headlines come from: the committed run's own
/// caption (GPU, driver, SM clock, kernels, gpubench version and commit, date).
fn headline_header() -> String {
    let text = std::fs::read_to_string(root().join(RUN)).unwrap();
    let summary: Value = serde_json::from_str(&text).unwrap();
    let caption = summary["caption"].as_str().expect("the summary's caption");
    format!("| Suite | What it measures | After | Headline from `results/h100/all`: {caption} |")
}

#[test]
fn the_readmes_headlines_name_the_run_binary_and_date_they_come_from() {
    let path = root().join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let want = headline_header();
    let found = readme
        .lines()
        .find(|l| l.starts_with("| Suite | What it measures |"))
        .expect("the README's suites table");
    if std::env::var_os("GPUBENCH_BLESS_README").is_some() {
        std::fs::write(&path, readme.replace(found, &want)).unwrap();
        return;
    }
    assert!(
        want.contains("gpubench ") && want.contains("2026-"),
        "{want}"
    );
    assert_eq!(
        found, want,
        "the README's suites table does not name the run its headlines come from; \
         `GPUBENCH_BLESS_README=1 cargo test --test readme` writes it"
    );
}

#[test]
fn the_readmes_headlines_are_the_committed_runs() {
    let path = root().join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (written, differ) = regenerated(&readme, &summary_rows());
    if std::env::var_os("GPUBENCH_BLESS_README").is_some() {
        std::fs::write(&path, written).unwrap();
        return;
    }
    assert!(
        differ.is_empty(),
        "the README's headline for {differ:?} is not what {RUN} says; \
         `GPUBENCH_BLESS_README=1 cargo test --test readme` writes it"
    );
}

#[test]
fn the_readme_is_short() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= MAX_LINES, "README.md has {lines} lines");
}

#[test]
fn a_stale_or_changed_headline_is_named_and_an_unresolved_row_is_refused() {
    let mut rows = summary_rows();
    // A README whose every row carries a stale headline: each is named, and once written
    // none is.
    let stale: String = HEADLINES
        .iter()
        .map(|(name, _)| format!("| `{name}` | what | after | stale |\n"))
        .collect();
    let (written, differ) = regenerated(&stale, &rows);
    assert_eq!(differ.len(), HEADLINES.len());
    assert!(regenerated(&written, &rows).1.is_empty());
    // A figure of the run changes: only its suite's headline differs.
    fn clock(rows: &mut [Value]) -> &mut Value {
        rows.iter_mut()
            .find(|r| r["quantity"] == "clock64 back-to-back")
            .unwrap()
    }
    clock(&mut rows)["value"] = Value::from(4.0);
    assert_eq!(regenerated(&written, &rows).1, ["clock"]);
    // A README without a suite's row is refused.
    let without_clock: String = written
        .lines()
        .filter(|l| !l.starts_with("| `clock`"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(std::panic::catch_unwind(|| regenerated(&without_clock, &rows)).is_err());
    // An unresolved row makes no headline.
    clock(&mut rows)["unresolved"] =
        serde_json::json!({"reason": "shared-gpu", "detail": "PID 1 used the GPU"});
    let refused = std::panic::catch_unwind(|| headline(&rows, "clock", "{clock64 back-to-back|0}"));
    assert!(refused.is_err(), "an unresolved row made a headline");
}

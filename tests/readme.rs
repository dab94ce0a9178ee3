//! The README's numbers come from the committed run: its suites table's headline column is
//! written from `results/h100/all/summary.json` by this test (`GPUBENCH_BLESS_README=1 cargo
//! test --test readme` rewrites it), and fails, naming the suite, wherever the README and the
//! committed run disagree. A headline quotes only rows the run states as figures.

use std::path::PathBuf;

use serde_json::Value;

/// The committed run the README quotes.
const RUN: &str = "results/h100/all/summary.json";
/// The most lines the README may have: a newcomer reads it in five minutes.
const MAX_LINES: usize = 220;

/// Each suite's headline: text with `{quantity|format}` fields, where `quantity` names a row
/// of the run's summary and `format` is a number of decimals, `TB` (a GB/s rate in TB/s, two
/// decimals), `size` (bytes in KiB or MiB), `%` (a fraction in per cent) or `lead` (a verdict's
/// words up to its first semicolon or parenthesis).
const HEADLINES: &[(&str, &str)] = &[
    (
        "clock",
        "`clock64` back-to-back {clock64 back-to-back|0} cycles; {cycle counter scope|lead}",
    ),
    (
        "divergence",
        "{single loop: cost per divergent lane|0} cycles per divergent lane; double loop \
         predicted within {double loop predicted from the single: max error|0} %",
    ),
    (
        "branch",
        "{path order (ascending clauses)|lead}; two warps overlap {warp overlap (two warps)|%}",
    ),
    (
        "sync",
        "Listing 6: {Listing 6|lead}; Listing 7: {Listing 7|lead}",
    ),
    (
        "regs",
        "{allocation unit|0} registers per warp, {register-file partitions|0} partitions, \
         {register file per block|0} per block",
    ),
    (
        "shared",
        "{indexed load latency (4 B, no conflict; the word index is scaled on the chain)|1} \
         cycles (indexed load); {cost per extra bank-conflict way|2} cycles per extra \
         conflict way",
    ),
    (
        "pipeline",
        "FFMA {FFMA latency|0} cycles, {FFMA throughput|0}/clock/SM; DFMA {DFMA latency|0}; \
         POPC {POPC latency|0}; MUFU.EX2 {MUFU.EX2 latency|0}; SHFL {SHFL latency|0}",
    ),
    (
        "cache",
        "L1 {global: level 1 latency|1} cycles; constant L1 {constant: level 1 size|size}, \
         {constant: level 1 line|0} B lines, {constant: level 1 ways|0} ways; L2 \
         {l2: level 1 latency|0} / {l2: level 2 latency|0} cycles",
    ),
    (
        "bandwidth",
        "L2 read {l2 strong read (at the l2 strong read search's winner)|TB} TB/s (lines many \
         SMs share: {l2 shared-line read (at the l2 shared-line read search's winner)|TB}); \
         DRAM read {dram read (at the dram read search's winner)|TB} TB/s \
         ({dram read: fraction of theoretical peak|1} % of peak), write \
         {dram write (at the dram write search's winner)|TB}, copy \
         {dram copy (at the dram copy search's winner)|TB}",
    ),
    (
        "slots",
        "`bfs` {bfs: active slots|0} % active, {bfs: idle through intrinsic branches|0} % idle \
         through intrinsic branches",
    ),
    (
        "tensor",
        "wgmma m64n256k16 FP16 {wgmma m64n256k16 FP16→FP32 at the measured clock|0} TFLOPS \
         ({wgmma m64n256k16 FP16→FP32: share of the dense peak|2} % of the dense peak)",
    ),
    (
        "flops",
        "FFMA {FP32 FFMA over all SMs, per second of wall time|1} TFLOPS \
         ({FP32 FFMA: share of the whitepaper peak|1} % of peak), DFMA \
         {FP64 DFMA rate, all SMs at once|0} FLOP/clock/SM \
         ({FP64 DFMA: share of the whitepaper peak|0} %), HFMA2 \
         {FP16x2 HFMA2 over all SMs, per second of wall time|1} \
         ({FP16x2 HFMA2: share of the whitepaper peak|0} %)",
    ),
    (
        "dsm",
        "another block's shared memory {another block's shared memory latency, cluster of 2|0} \
         cycles (cluster of 2)",
    ),
    (
        "tma",
        "{TMA copy latency, cached|0} cycles cached, {TMA copy latency, from memory|0} from \
         memory",
    ),
    (
        "atomics",
        "global add {global add u32 latency, 1 MiB chain|0} cycles at an L2-resident chain \
         (load: {global load u32 latency, 1 MiB chain|0})",
    ),
];

/// The committed `all --repeat` runs the README's capacity line quotes, by the name its fields
/// give them (`results/h100/all` predates the capacity reading).
const CAPACITY_RUNS: &[(&str, &str)] = &[
    ("h100", "results/h100/capacity-620ca57/run/summary.json"),
    ("h200", "results/h200/capacity-620ca57/run/summary.json"),
];

/// The README's line on what the caches are (found by its first words, up to the colon), with
/// fields `{run|quantity|interval}`: a capacity and its interval.
const CAPACITY_LINE: &str = "Caches by capacity, the largest footprint with no miss [an interval \
     that held on every simulated family], H100 / H200: L1 {h100|global: level 1 capacity|interval} \
     / {h200|global: level 1 capacity|interval}; L2, near partition \
     {h100|l2: level 1 capacity|interval} / {h200|l2: level 1 capacity|interval}, whole \
     {h100|l2: level 2 capacity|interval} / {h200|l2: level 2 capacity|interval}. The peers \
     read the same H100 L1 ramp at other points: MT4G's 249 KiB (global) and 233 KiB (read-only) \
     are its 90 % and near-half points, gpu-benches' step at 256 kB is the unified L1 + shared \
     array its coarse grid sees, and HPMLL's hits to about 215 kB are the same first miss; why \
     each differs: [docs/caches.md](docs/caches.md).";

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

fn field(rows: &[Value], quantity: &str, format: &str) -> String {
    let r = row(rows, quantity);
    let value = || {
        r["value"]
            .as_f64()
            .unwrap_or_else(|| panic!("'{quantity}' has no value"))
    };
    let unit = r["unit"].as_str().unwrap_or("");
    match format {
        "TB" => {
            assert_eq!(unit, "GB/s", "'{quantity}'");
            format!("{:.2}", value() / 1e3)
        }
        "size" => {
            assert_eq!(unit, "bytes", "'{quantity}'");
            let bytes = value();
            if bytes >= f64::from(1 << 20) {
                format!("{} MiB", bytes / f64::from(1 << 20))
            } else {
                format!("{} KiB", bytes / 1024.0)
            }
        }
        "%" => {
            assert_eq!(unit, "fraction", "'{quantity}'");
            format!("{:.0} %", 100.0 * value())
        }
        "lead" => {
            let text = r["text"]
                .as_str()
                .unwrap_or_else(|| panic!("'{quantity}' has no verdict"));
            let end = text.find([';', '(']).unwrap_or(text.len());
            text[..end].trim().to_string()
        }
        decimals => {
            let decimals: usize = decimals
                .parse()
                .unwrap_or_else(|_| panic!("format '{decimals}' of '{quantity}'"));
            format!("{:.*}", decimals, value())
        }
    }
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

/// The headline of `template` from the run's rows.
fn headline(rows: &[Value], template: &str) -> String {
    fill(template, |f| {
        let (quantity, format) = f.rsplit_once('|').expect("a field names its format");
        field(rows, quantity, format)
    })
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
                let want = headline(rows, template);
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
    clock(&mut rows)["status"] = Value::from("unresolved");
    let refused = std::panic::catch_unwind(|| headline(&rows, "{clock64 back-to-back|0}"));
    assert!(refused.is_err(), "an unresolved row made a headline");
}

//! docs/peers.md's tables beside the papers are generated: their values from the data file
//! `docs/peers/published.csv` (one row per published quantity, with where it is published),
//! ours from the committed runs the rows name. This test writes the section between the marker
//! comments (`GPUBENCH_BLESS_PEERS=1 cargo test --test peers_tables` rewrites it) and fails where
//! the page differs, where a row's key is missing from its run, where the run does not state it
//! as a figure, or where a row says "agrees" of figures more than 5 % apart.

use std::path::PathBuf;

use gpubench::report::figures::FiguresFile;
use serde::Deserialize;
use serde_json::Value;

const DATA: &str = "docs/peers/published.csv";
const PAGE: &str = "docs/peers.md";
const BEGIN: &str = "<!-- peers-tables:begin -->";
const END: &str = "<!-- peers-tables:end -->";
/// The most a row called "agrees" may stray from 1 in its ratio.
const AGREES_WITHIN: f64 = 0.05;
const VERDICTS: &[&str] = &[
    "agrees",
    "differs, explained",
    "differs, unexplained",
    "not measured",
];

/// Each paper's short id in the data file and its table's heading, in the page's order.
const PAPERS: &[(&str, &str)] = &[
    (
        "luo-ipdps",
        "Luo et al., IPDPS 2024, \"Benchmarking and Dissecting the Nvidia Hopper GPU Architecture\" (arXiv 2402.13499)",
    ),
    (
        "luo-ext",
        "Luo et al., extended, \"Dissecting the NVIDIA Hopper Architecture through Microbenchmarking and Multiple Level Analysis\" (arXiv 2501.12084)",
    ),
    (
        "mt4g",
        "MT4G on an H100 (its output in our sessions, `results/h100/peers-mt4g/run-1-788b97c5/mt4g.md`)",
    ),
    (
        "gpu-benches",
        "gpu-benches on an H200 (its kernels in our session, `results/h200/peers-d023e4d/peers.json`)",
    ),
    (
        "jin",
        "Jin et al., MICRO 2024 (per-SM L2 and DSM placement)",
    ),
];

#[derive(Debug, Deserialize)]
struct Published {
    paper: String,
    #[serde(rename = "where")]
    place: String,
    quantity: String,
    theirs: Option<f64>,
    theirs_high: Option<f64>,
    unit: String,
    sku: String,
    sms: Option<f64>,
    clock_mhz: Option<f64>,
    compare: String,
    key: String,
    run: String,
    verdict: String,
    why: String,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn published() -> Vec<Published> {
    let mut reader = csv::Reader::from_path(root().join(DATA)).unwrap();
    reader.deserialize().map(|r| r.unwrap()).collect()
}

/// One figure of a run as this page reads it: its value, unit, and whether the run states it as
/// a figure (a summary's `status`, a figures file's `unresolved`).
struct Ours {
    value: Option<f64>,
    unit: String,
    figure: bool,
}

/// The figures of the committed run file `path`, by key: a `summary.json` or a `figures.json`.
fn run(path: &str) -> Vec<(String, Ours)> {
    let text = std::fs::read_to_string(root().join(path))
        .unwrap_or_else(|e| panic!("the committed run {path}: {e}"));
    if path.ends_with("summary.json") {
        let summary: Value = serde_json::from_str(&text).unwrap();
        let rows = summary["figures"].as_array().unwrap();
        rows.iter()
            .map(|r| {
                let ours = Ours {
                    value: r["value"].as_f64(),
                    unit: r["unit"].as_str().unwrap().to_string(),
                    figure: r["status"] == "figure",
                };
                (r["key"].as_str().unwrap().to_string(), ours)
            })
            .collect()
    } else {
        let file: FiguresFile = serde_json::from_str(&text).unwrap();
        file.figures
            .into_iter()
            .map(|f| {
                let ours = Ours {
                    value: f.value,
                    unit: f.unit.clone(),
                    figure: !f.is_unresolved(),
                };
                (f.key.clone(), ours)
            })
            .collect()
    }
}

/// The figure `key` of `run`; a missing key or one the run does not state as a figure fails.
fn figure<'a>(rows: &'a [(String, Ours)], key: &str, path: &str) -> &'a Ours {
    let (_, ours) = rows.iter().find(|(k, _)| k == key).unwrap_or_else(|| {
        let near: Vec<&str> = rows
            .iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| k.split('/').next() == key.split('/').next())
            .collect();
        panic!("{path} has no figure '{key}'; its keys of that suite: {near:#?}")
    });
    assert!(
        ours.figure,
        "'{key}' is not a figure in {path}: the peers tables quote figures only"
    );
    assert!(ours.value.is_some(), "'{key}' in {path} has no value");
    ours
}

/// A number as the tables print it: four significant figures at most, no trailing zeros.
fn num(v: f64) -> String {
    let digits = if v.abs() >= 1000.0 {
        0
    } else {
        (3 - v.abs().log10().floor() as i32).max(0) as usize
    };
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `value` in `from` as `to`, for the units the data file and the runs use.
fn convert(value: f64, from: &str, to: &str) -> f64 {
    match (from, to) {
        (a, b) if a == b => value,
        ("TB/s", "GB/s") => value * 1000.0,
        ("KiB", "bytes") => value * 1024.0,
        ("B", "bytes") | ("B/clock/SM", "bytes/clock/SM") => value,
        ("%", "%") => value,
        _ => panic!("no conversion from {from} to {to}"),
    }
}

/// One generated row and the ratio ours / theirs it compared, where it compared one.
fn table_row(
    p: &Published,
    runs: &mut Vec<(String, Vec<(String, Ours)>)>,
) -> (String, Option<f64>) {
    let mut theirs = match (p.theirs, p.theirs_high) {
        (Some(lo), Some(hi)) => format!("{}–{} {}", num(lo), num(hi), p.unit),
        (Some(v), None) => format!("{} {}", num(v), p.unit),
        _ => "–".to_string(),
    };
    if !p.sku.is_empty() {
        let mut sku = p.sku.clone();
        if let Some(sms) = p.sms {
            sku += &format!(", {} SMs", num(sms));
        }
        if let Some(mhz) = p.clock_mhz {
            sku += &format!(", {} MHz", num(mhz));
        }
        theirs += &format!(" ({sku}; {})", p.place);
    } else {
        theirs += &format!(" ({})", p.place);
    }
    if p.compare == "none" {
        assert_eq!(
            p.verdict, "not measured",
            "{}: a row with no figure",
            p.quantity
        );
        assert!(
            p.key.is_empty() && p.run.is_empty(),
            "{}: no key without a figure",
            p.quantity
        );
        return (
            format!(
                "| {} | {theirs} | – | – | {} | {} |",
                p.quantity, p.verdict, p.why
            ),
            None,
        );
    }
    assert_ne!(
        p.verdict, "not measured",
        "{}: a compared row has a verdict",
        p.quantity
    );
    if !runs.iter().any(|(path, _)| *path == p.run) {
        runs.push((p.run.clone(), run(&p.run)));
    }
    let rows = &runs.iter().find(|(path, _)| *path == p.run).unwrap().1;
    let dir = p.run.rsplit_once('/').unwrap().0;
    let mid = match (p.theirs, p.theirs_high) {
        (Some(lo), Some(hi)) => (lo + hi) / 2.0,
        (Some(v), None) => v,
        _ => panic!("{}: a compared row needs their value", p.quantity),
    };
    let (ours, comparison, ratio) = match p.compare.as_str() {
        "ratio" => {
            let (a, b) = p.key.split_once(" ÷ ").expect("a ratio's key is 'A ÷ B'");
            let va = figure(rows, a, &p.run).value.unwrap();
            let vb = figure(rows, b, &p.run).value.unwrap();
            let ratio = va / vb;
            (
                format!("{} ({} over {})", num(ratio), num(va), num(vb)),
                format!("{} / {} = {}", num(ratio), num(mid), num(ratio / mid)),
                ratio / mid,
            )
        }
        mode => {
            let f = figure(rows, &p.key, &p.run);
            let v = f.value.unwrap();
            let ours = format!("{} {}", num(v), f.unit);
            let (theirs_same, ours_same, unit) = match mode {
                "same" => (convert(mid, &p.unit, &f.unit), v, f.unit.clone()),
                "per-clock" => {
                    assert_eq!(p.unit, "TFLOPS", "{}: per clock from TFLOPS", p.quantity);
                    assert_eq!(f.unit, "FLOP/clock/SM", "{}", p.quantity);
                    let per = mid * 1e12 / (p.sms.unwrap() * p.clock_mhz.unwrap() * 1e6);
                    (per, v, f.unit.clone())
                }
                "per-sm" => (mid / p.sms.unwrap(), v, f.unit.clone()),
                "ns" => {
                    assert_eq!(f.unit, "cycles", "{}: ns from cycles", p.quantity);
                    let clock = figure(rows, "clock/sm", &p.run).value.unwrap();
                    let theirs_ns = match p.unit.as_str() {
                        "ns" => mid,
                        "cycles" => mid / p.clock_mhz.unwrap() * 1000.0,
                        u => panic!("{}: ns from {u}", p.quantity),
                    };
                    (theirs_ns, v / clock * 1000.0, "ns".to_string())
                }
                m => panic!("{}: no comparison '{m}'", p.quantity),
            };
            let ratio = ours_same / theirs_same;
            let comparison = if mode == "same" {
                format!("ratio {}", num(ratio))
            } else {
                format!(
                    "{} / {} {unit}, ratio {}",
                    num(ours_same),
                    num(theirs_same),
                    num(ratio)
                )
            };
            (ours, comparison, ratio)
        }
    };
    (
        format!(
            "| {} | {theirs} | {ours} (`{dir}`) | {comparison} | {} | {} |",
            p.quantity, p.verdict, p.why
        ),
        Some(ratio),
    )
}

/// The generated section, between (and with) its markers.
fn section() -> String {
    let rows = published();
    let mut runs = Vec::new();
    let mut out = vec![BEGIN.to_string()];
    for p in &rows {
        assert!(
            PAPERS.iter().any(|(id, _)| *id == p.paper),
            "{}: paper '{}' has no table",
            p.quantity,
            p.paper
        );
        assert!(
            VERDICTS.contains(&p.verdict.as_str()),
            "{}: verdict '{}' is none of {VERDICTS:?}",
            p.quantity,
            p.verdict
        );
    }
    for (id, heading) in PAPERS {
        let of: Vec<&Published> = rows.iter().filter(|p| p.paper == *id).collect();
        assert!(!of.is_empty(), "paper '{id}' has no row in {DATA}");
        out.push(String::new());
        out.push(format!("**{heading}**"));
        out.push(String::new());
        out.push(
            "| quantity | theirs (SKU, clock; where) | ours (run) | ours / theirs | verdict | why |"
                .to_string(),
        );
        out.push("|---|---|---|---|---|---|".to_string());
        for p in of {
            let (line, ratio) = table_row(p, &mut runs);
            if p.verdict == "agrees" {
                let r = ratio.unwrap();
                assert!(
                    (r - 1.0).abs() <= AGREES_WITHIN,
                    "{} ({id}) says it agrees at a ratio of {r}",
                    p.quantity
                );
            }
            out.push(line);
        }
    }
    out.push(String::new());
    out.push(END.to_string());
    out.join("\n")
}

/// The page with its section replaced by `section`.
fn with_section(page: &str, section: &str) -> String {
    let begin = page.find(BEGIN).expect("docs/peers.md has no begin marker");
    let end = page.find(END).expect("docs/peers.md has no end marker") + END.len();
    assert!(begin < end, "the markers are out of order");
    format!("{}{section}{}", &page[..begin], &page[end..])
}

#[test]
fn the_peers_tables_are_the_data_file_and_the_committed_runs() {
    let path = root().join(PAGE);
    let page = std::fs::read_to_string(&path).unwrap();
    let want = with_section(&page, &section());
    if std::env::var_os("GPUBENCH_BLESS_PEERS").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    assert!(
        page == want,
        "docs/peers.md's tables differ from the data file and the committed runs; \
         `GPUBENCH_BLESS_PEERS=1 cargo test --test peers_tables` writes them"
    );
}

#[test]
fn a_missing_key_and_an_unresolved_figure_are_refused() {
    let rows = run("results/h200/reference/run/summary.json");
    let missing = std::panic::catch_unwind(|| {
        figure(&rows, "cache/global/1/no-such", "reference");
    });
    assert!(missing.is_err());
    // cache/l2/2/size is unresolved in the reference run.
    assert!(
        !rows
            .iter()
            .find(|(k, _)| k == "cache/l2/2/size")
            .unwrap()
            .1
            .figure
    );
    let unresolved = std::panic::catch_unwind(|| {
        figure(&rows, "cache/l2/2/size", "reference");
    });
    assert!(unresolved.is_err());
    assert_eq!(
        figure(&rows, "cache/global/1/latency", "reference").unit,
        "cycles"
    );
}

#[test]
fn numbers_print_to_four_significant_figures() {
    assert_eq!(num(4093.876), "4094");
    assert_eq!(num(32.109375), "32.11");
    assert_eq!(num(1.0), "1");
    assert_eq!(num(0.9183), "0.9183");
    assert_eq!(num(181.0), "181");
}

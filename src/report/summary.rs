//! The architecture summary of a run directory, laid out like Wong et al.'s Table V: one row per
//! inferred figure with its uncertainty (a 95 % CI, a min–max range or an inference
//! confidence) and the file it came from, the device in the caption, and the wall time of
//! every suite. Built only from the JSON files the suites wrote, so `gpubench all` (live) and
//! `gpubench report` (later, no GPU) produce the same bytes. Rendered as `summary.md`,
//! `summary.tex` and `summary.json`; `index.md` links every figure.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::saved::read_json;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub section: String,
    pub quantity: String,
    pub value: Option<f64>,
    pub unit: String,
    /// The interval the value is uncertain within, where one is stated.
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// What `low`–`high` is ("95% CI", "min-max") or the inference confidence.
    pub uncertainty: String,
    /// A verdict, for figures that are words.
    pub text: Option<String>,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteTiming {
    pub name: String,
    pub status: String,
    pub seconds: Option<f64>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub caption: String,
    pub figures: Vec<Figure>,
    pub suites: Vec<SuiteTiming>,
    pub total_seconds: Option<f64>,
}

/// The suite directories of `dir`: itself when it is one run, else its sub-directories with a
/// metadata.json, in the manifest's order where `all.json` gives one.
pub fn suite_dirs(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    if dir.join("metadata.json").is_file() {
        let name = dir
            .file_name()
            .map_or("run".into(), |n| n.to_string_lossy().into_owned());
        return Ok(vec![(name, dir.to_path_buf())]);
    }
    if let Ok(manifest) = read_json(&dir.join("all.json")) {
        let names = manifest["suites"].as_array().cloned().unwrap_or_default();
        return Ok(names
            .iter()
            .filter_map(|s| s["name"].as_str())
            .map(|name| (name.to_string(), dir.join(name)))
            .filter(|(_, path)| path.join("metadata.json").is_file())
            .collect());
    }
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("metadata.json").is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    found.sort();
    if found.is_empty() {
        bail!(
            "{} holds no gpubench run (no metadata.json in it or its sub-directories)",
            dir.display()
        );
    }
    Ok(found)
}

struct Rows<'a> {
    figures: &'a mut Vec<Figure>,
    section: &'a str,
    source: String,
}

impl Rows<'_> {
    /// One figure, unless it has neither a value nor a verdict.
    fn add(
        &mut self,
        quantity: &str,
        value: Option<f64>,
        text: Option<&str>,
        unit: &str,
        interval: Option<(f64, f64)>,
        uncertainty: String,
    ) {
        if value.is_none() && text.is_none() {
            return;
        }
        self.figures.push(Figure {
            section: self.section.into(),
            quantity: quantity.into(),
            value,
            unit: unit.into(),
            low: interval.map(|i| i.0),
            high: interval.map(|i| i.1),
            uncertainty,
            text: text.map(str::to_string),
            source: self.source.clone(),
        });
    }

    /// A value with `low`–`high` of kind `label` ("95% CI", "min-max"), where given.
    fn push(
        &mut self,
        quantity: &str,
        value: Option<f64>,
        unit: &str,
        interval: Option<(f64, f64, &str)>,
    ) {
        let label = interval.map_or(String::new(), |i| i.2.to_string());
        let bounds = interval.map(|i| (i.0, i.1));
        self.add(quantity, value, None, unit, bounds, label);
    }

    /// A value whose uncertainty is said in words.
    fn labelled(&mut self, quantity: &str, value: Option<f64>, unit: &str, label: String) {
        self.add(quantity, value, None, unit, None, label);
    }

    /// `{estimate, ci95_low, ci95_high}`.
    fn estimate(&mut self, quantity: &str, v: &Value, unit: &str) {
        let interval = match (v["ci95_low"].as_f64(), v["ci95_high"].as_f64()) {
            (Some(l), Some(h)) => Some((l, h, "95% CI")),
            _ => None,
        };
        self.push(quantity, v["estimate"].as_f64(), unit, interval);
    }

    /// `{min, median, max}`: the median with the range.
    fn median(&mut self, quantity: &str, v: &Value, unit: &str) {
        let interval = match (v["min"].as_f64(), v["max"].as_f64()) {
            (Some(l), Some(h)) => Some((l, h, "min-max")),
            _ => None,
        };
        self.push(quantity, v["median"].as_f64(), unit, interval);
    }

    fn confident(
        &mut self,
        quantity: &str,
        value: Option<f64>,
        unit: &str,
        confidence: Option<f64>,
    ) {
        let label = confidence.map_or(String::new(), |c| format!("confidence {c:.2}"));
        self.labelled(quantity, value, unit, label);
    }

    fn text(&mut self, quantity: &str, text: Option<&str>) {
        self.add(quantity, None, text, "", None, String::new());
    }
}

fn figures_of(suite: &str, name: &str, dir: &Path, figures: &mut Vec<Figure>) -> Result<()> {
    let file = |f: &str| read_json(&dir.join(f));
    fn rows<'a>(section: &'a str, source: String, figures: &'a mut Vec<Figure>) -> Rows<'a> {
        Rows {
            figures,
            section,
            source,
        }
    }
    match suite {
        "divergence" => {
            let fit = file("fit.json")?;
            let mut r = rows("Divergence", format!("{name}/fit.json"), figures);
            for f in fit["fits"].as_array().into_iter().flatten() {
                let kernel = f["kernel"].as_str().unwrap_or("?");
                r.estimate(
                    &format!("{kernel} loop: cost per divergent lane"),
                    &f["cycles_per_divergent_lane"],
                    "cycles",
                );
            }
            if let Ok(model) = file("model.json") {
                let mut r = rows("Divergence", format!("{name}/model.json"), figures);
                r.text("reconvergence-stack model", model["verdict"].as_str());
                r.push(
                    "double loop predicted from the single: max error",
                    model["double_loop_prediction"]["max_abs_error_percent"].as_f64(),
                    "%",
                    None,
                );
            }
            if let Ok(split) = file("split.json") {
                let mut r = rows("Divergence", format!("{name}/split.json"), figures);
                r.estimate(
                    "branch (push) per divergent lane",
                    &split["branch_cycles_per_divergent_lane"],
                    "cycles",
                );
                r.estimate(
                    "reconvergence (pop) per divergent lane",
                    &split["reconvergence_cycles_per_divergent_lane"],
                    "cycles",
                );
            }
        }
        "clock" => {
            let clock = file("clock.json")?;
            let mut r = rows("Clocks and timers", format!("{name}/clock.json"), figures);
            r.push(
                "SM clock (measured)",
                clock["sm_clock"]["mhz"].as_f64(),
                "MHz",
                None,
            );
            r.median(
                "clock64 back-to-back",
                &clock["timer_overheads"]["clock64_cycles"],
                "cycles",
            );
            r.median(
                "clock (32-bit) back-to-back",
                &clock["timer_overheads"]["clock32_cycles"],
                "cycles",
            );
            r.median(
                "%globaltimer back-to-back",
                &clock["timer_overheads"]["globaltimer_ns"],
                "ns",
            );
            r.text(
                "cycle counter scope",
                clock["counter_scope"]["explanation"].as_str(),
            );
        }
        "shared" => {
            let shared = file("shared.json")?;
            let mut r = rows("Shared memory", format!("{name}/shared.json"), figures);
            r.push(
                "load latency (4 B, no conflict)",
                shared["load_latency_cycles"].as_f64(),
                "cycles",
                None,
            );
            r.estimate(
                "cost per extra bank-conflict way",
                &shared["fit"]["cycles_per_extra_way"],
                "cycles",
            );
        }
        "sync" => {
            let sync = file("sync.json")?;
            let mut r = rows("Synchronization", format!("{name}/sync.json"), figures);
            for probe in sync.as_array().into_iter().flatten() {
                let listing = probe["listing"].as_str().unwrap_or("?");
                let outcome = probe["outcome"].as_str().unwrap_or("?");
                let observed = probe["observed"].as_str().unwrap_or("");
                r.text(listing, Some(&format!("{outcome}: {observed}")));
            }
        }
        "branch" => {
            let branch = file("branch.json")?;
            let mut r = rows("Branches", format!("{name}/branch.json"), figures);
            if let Some(orders) = branch.as_object() {
                for (order, run) in orders {
                    r.text(
                        &format!("path order ({order} clauses)"),
                        run["report"]["verdict"].as_str(),
                    );
                    r.push(
                        &format!("warp overlap ({order})"),
                        run["warp_overlap"].as_f64(),
                        "fraction",
                        None,
                    );
                }
            }
        }
        "regs" => {
            let regs = file("regs.json")?;
            let a = &regs["allocation"];
            let mut r = rows("Registers", format!("{name}/regs.json"), figures);
            let fitting = a["consistent"].as_array().map_or(0, Vec::len);
            r.labelled(
                "allocation unit",
                a["allocator"]["unit_registers_per_warp"].as_f64(),
                "registers/warp",
                if fitting > 1 {
                    format!("ambiguous: {fitting} units fit the caps measured")
                } else {
                    String::new()
                },
            );
            r.push(
                "register-file partitions",
                a["allocator"]["partitions"].as_f64(),
                "",
                None,
            );
            r.push(
                "register file per block",
                regs["register_file_per_block"].as_f64(),
                "registers",
                None,
            );
        }
        "pipeline" => {
            let pipeline = file("pipeline.json")?;
            let mut r = rows("Pipeline", format!("{name}/pipeline.json"), figures);
            for op in pipeline["operations"].as_array().into_iter().flatten() {
                let label = format!(
                    "{} {}",
                    op["kind"].as_str().unwrap_or("?"),
                    op["operation"].as_str().unwrap_or("?")
                );
                r.push(
                    &format!("{label} latency"),
                    op["latency_cycles"].as_f64(),
                    "cycles",
                    None,
                );
                r.push(
                    &format!("{label} throughput"),
                    op["ops_per_clock_per_sm"].as_f64(),
                    "ops/clock/SM",
                    None,
                );
            }
            r.push(
                "warps to reach 95% of fp32 fma throughput",
                pipeline["warp_sweep"]["saturation_warps_95_percent"].as_f64(),
                "warps",
                None,
            );
        }
        "cache" => {
            let cache = file("cache.json")?;
            let space = cache["space"].as_str().unwrap_or("?").to_string();
            let levels = cache["report"]["levels"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let mut r = rows("Memory hierarchy", format!("{name}/cache.json"), figures);
            let count = levels.len();
            for (i, level) in levels.iter().enumerate() {
                let label = if i + 1 == count && level["size_bytes"].is_null() {
                    format!("{space}: slowest level")
                } else {
                    format!("{space}: level {}", i + 1)
                };
                let confidence = level["confidence"].as_f64();
                r.confident(
                    &format!("{label} latency"),
                    level["latency_cycles"].as_f64(),
                    "cycles",
                    confidence,
                );
                r.confident(
                    &format!("{label} size"),
                    level["size_bytes"].as_f64(),
                    "bytes",
                    confidence,
                );
                r.confident(
                    &format!("{label} line"),
                    level["line_bytes"].as_f64(),
                    "bytes",
                    confidence,
                );
                r.confident(
                    &format!("{label} ways"),
                    level["ways"].as_f64(),
                    "",
                    confidence,
                );
                r.confident(
                    &format!("{label} sets"),
                    level["sets"].as_f64(),
                    "",
                    confidence,
                );
            }
            let loads: Vec<String> = cache["timed_loop"]["loads"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            if !loads.is_empty() {
                let verdict = cache["timed_loop"]["verdict"].as_str().unwrap_or("");
                let flag = if verdict.starts_with("UNEXPECTED") {
                    " (UNEXPECTED)"
                } else {
                    ""
                };
                r.text(
                    &format!("{space}: timed-loop load instruction (SASS)"),
                    Some(&format!("{}{flag}", loads.join(", "))),
                );
            }
            for gap in cache["unresolved"].as_array().into_iter().flatten() {
                r.text(
                    &format!(
                        "{space}: unresolved from {} B to {} B",
                        gap["from_bytes"], gap["to_bytes"]
                    ),
                    gap["why"].as_str(),
                );
            }
            for stride in cache["tlb_strides"].as_array().into_iter().flatten() {
                r.text(
                    &format!("TLB at a {} B stride", stride["stride_bytes"]),
                    stride["verdict"].as_str(),
                );
            }
            let conflict = &cache["conflict"];
            if conflict["ways"].is_null() {
                r.text(
                    &format!("{space}: level 1 conflict experiment"),
                    conflict["verdict"].as_str(),
                );
            }
            r.push(
                &format!("{space}: level 1 ways (conflict experiment)"),
                conflict["ways"].as_f64(),
                "",
                None,
            );
            r.push(
                &format!("{space}: level 1 way size (conflict experiment)"),
                conflict["way_bytes"].as_f64(),
                "bytes",
                None,
            );
            r.push(
                &format!("{space}: index-chain overhead per load"),
                cache["index_chain"]["overhead_cycles"].as_f64(),
                "cycles",
                None,
            );
            let granularity = &cache["fetch_granularity"]["estimate"];
            r.confident(
                &format!("{space}: level 1 fetch granularity (stride sweep)"),
                granularity["bytes"].as_f64(),
                "bytes",
                granularity["confidence"].as_f64(),
            );
            let tlb = &cache["tlb"];
            for (i, level) in tlb["levels"].as_array().into_iter().flatten().enumerate() {
                r.confident(
                    &format!("TLB level {} reach", i + 1),
                    level["reach_bytes"].as_f64(),
                    "bytes",
                    level["confidence"].as_f64(),
                );
            }
            r.confident(
                "page size",
                tlb["page"]["bytes"].as_f64(),
                "bytes",
                tlb["page"]["confidence"].as_f64(),
            );
        }
        "slots" => {
            let slots = file("slots.json")?;
            let mut r = rows("Lane slots", format!("{name}/slots.json"), figures);
            for row in slots["rows"].as_array().into_iter().flatten() {
                let w = row["workload"].as_str().unwrap_or("?");
                let pct = |k: &str| row[k].as_f64().map(|v| 100.0 * v);
                r.push(&format!("{w}: active slots"), pct("f_active"), "%", None);
                r.push(
                    &format!("{w}: idle through extrinsic branches"),
                    pct("f_extrinsic"),
                    "%",
                    None,
                );
                r.push(
                    &format!("{w}: idle through intrinsic branches"),
                    pct("f_intrinsic"),
                    "%",
                    None,
                );
                r.push(
                    &format!("{w}: ncu warp execution efficiency"),
                    pct("ncu_warp_efficiency"),
                    "%",
                    None,
                );
                r.push(&format!("{w}: tag overhead"), pct("overhead"), "%", None);
            }
        }
        _ => {}
    }
    Ok(())
}

fn caption(metadata: &Value) -> String {
    let d = &metadata["device"];
    let b = &metadata["build"];
    format!(
        "{} (CC {}, {} SMs), driver {} (CUDA {}), SM clock {:.0} MHz measured; kernels from {} as {}; gpubench {} ({}); {}",
        d["name"].as_str().unwrap_or("?"),
        d["compute_capability"].as_str().unwrap_or("?"),
        d["multiprocessors"].as_i64().unwrap_or(0),
        d["driver_version"].as_str().unwrap_or("?"),
        d["driver_cuda_version"].as_str().unwrap_or("?"),
        metadata["sm_clock_before"]["mhz"]
            .as_f64()
            .unwrap_or(f64::NAN),
        b["nvcc_version"]
            .as_str()
            .unwrap_or("?")
            .rsplit(", ")
            .next()
            .unwrap_or("?"),
        b["ptx_target"].as_str().unwrap_or("?"),
        b["gpubench_version"].as_str().unwrap_or("?"),
        b["git_commit"]
            .as_str()
            .unwrap_or("?")
            .chars()
            .take(12)
            .collect::<String>(),
        metadata["started_utc"]
            .as_str()
            .unwrap_or("?")
            .get(..10)
            .unwrap_or("?"),
    )
}

/// Reads every suite of `dir` into one summary.
pub fn summarise(dir: &Path) -> Result<Summary> {
    let mut figures = Vec::new();
    let mut suites = Vec::new();
    let mut first_metadata = None;
    let manifest = read_json(&dir.join("all.json")).ok();
    for (name, path) in suite_dirs(dir)? {
        let metadata = read_json(&path.join("metadata.json"))?;
        let suite = metadata["suite"].as_str().unwrap_or("?").to_string();
        let status = metadata["status"].as_str().unwrap_or("?").to_string();
        if status == "complete" {
            figures_of(&suite, &name, &path, &mut figures)
                .with_context(|| format!("summarising {}", path.display()))?;
            first_metadata.get_or_insert(metadata.clone());
        }
        let from_manifest = manifest.as_ref().and_then(|m| {
            m["suites"]
                .as_array()?
                .iter()
                .find(|s| s["name"] == name.as_str())
                .cloned()
        });
        // The manifest knows how a suite ended even when the suite could not say (killed at
        // its deadline, its metadata still "running").
        let listed = |key: &str| {
            from_manifest
                .as_ref()
                .and_then(|s| s[key].as_str().map(str::to_string))
        };
        suites.push(SuiteTiming {
            name,
            status: listed("status").unwrap_or(status),
            seconds: from_manifest
                .as_ref()
                .and_then(|s| s["seconds"].as_f64())
                .or_else(|| metadata["gpu_busy_seconds"].as_f64()),
            error: listed("error").or_else(|| metadata["error"].as_str().map(str::to_string)),
        });
    }
    // Suites the manifest lists that never wrote a run directory (refused, or killed early).
    if let Some(listed) = manifest
        .as_ref()
        .and_then(|m| m["suites"].as_array().cloned())
    {
        for s in listed {
            let name = s["name"].as_str().unwrap_or("?");
            if !suites.iter().any(|t| t.name == name) {
                suites.push(SuiteTiming {
                    name: name.into(),
                    status: s["status"].as_str().unwrap_or("?").into(),
                    seconds: s["seconds"].as_f64(),
                    error: s["error"].as_str().map(str::to_string),
                });
            }
        }
    }
    Ok(Summary {
        caption: first_metadata
            .as_ref()
            .map_or("no complete suite".into(), caption),
        figures,
        suites,
        total_seconds: manifest.as_ref().and_then(|m| m["total_seconds"].as_f64()),
    })
}

/// A number as a paper would print it: sizes in KiB / MiB / GiB, others to a sensible precision.
pub fn format_value(value: f64, unit: &str) -> String {
    if unit == "bytes" {
        let v = value as u64;
        return match v {
            v if v >= 1 << 30 && v % (1 << 30) == 0 => format!("{} GiB", v >> 30),
            v if v >= 1 << 20 && v % (1 << 20) == 0 => format!("{} MiB", v >> 20),
            v if v >= 1 << 10 && v % (1 << 10) == 0 => format!("{} KiB", v >> 10),
            v if v >= 1 << 20 => format!("{:.1} MiB", value / 1048576.0),
            v if v >= 1 << 10 => format!("{:.1} KiB", value / 1024.0),
            v => format!("{v} B"),
        };
    }
    let number = if value.fract() == 0.0 && value.abs() < 1e9 {
        format!("{value:.0}")
    } else if value.abs() >= 100.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    };
    if unit.is_empty() {
        number
    } else {
        format!("{number} {unit}")
    }
}

impl Figure {
    pub fn value_text(&self) -> String {
        match (&self.text, self.value) {
            (Some(text), _) => text.clone(),
            (None, Some(v)) => format_value(v, &self.unit),
            (None, None) => "-".into(),
        }
    }

    pub fn uncertainty_text(&self) -> String {
        match (self.low, self.high) {
            (Some(l), Some(h)) => format!(
                "{}: {} to {}",
                self.uncertainty,
                format_value(l, ""),
                format_value(h, "")
            ),
            _ => self.uncertainty.clone(),
        }
    }
}

fn markdown_cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

pub fn render_markdown(summary: &Summary) -> String {
    let mut md = String::from("# Architecture summary\n\n");
    let _ = writeln!(md, "{}\n", summary.caption);
    md += "| Section | Quantity | Value | Uncertainty | Source |\n|---|---|---|---|---|\n";
    for f in &summary.figures {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} |",
            markdown_cell(&f.section),
            markdown_cell(&f.quantity),
            markdown_cell(&f.value_text()),
            markdown_cell(&f.uncertainty_text()),
            markdown_cell(&f.source)
        );
    }
    md += "\n## Wall time of each suite\n\n| Suite | Status | Seconds |\n|---|---|---|\n";
    for s in &summary.suites {
        let status = match &s.error {
            Some(e) => format!("{} ({})", s.status, e),
            None => s.status.clone(),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} |",
            s.name,
            markdown_cell(&status),
            s.seconds.map_or("-".into(), |v| format!("{v:.1}"))
        );
    }
    if let Some(total) = summary.total_seconds {
        let _ = writeln!(md, "| **whole run** | | **{total:.1}** |");
    }
    md
}

pub fn latex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out += "\\textasciitilde{}",
            '^' => out += "\\textasciicircum{}",
            '\\' => out += "\\textbackslash{}",
            '<' => out += "\\textless{}",
            '>' => out += "\\textgreater{}",
            _ => out.push(c),
        }
    }
    out
}

pub fn render_latex(summary: &Summary) -> String {
    let mut tex = String::from(
        "% Generated by gpubench from the run's JSON files; needs \\usepackage{longtable}.\n\
         \\begin{longtable}{llp{0.35\\linewidth}l}\n",
    );
    let _ = writeln!(
        tex,
        "\\caption{{Architecture summary: {}}}\\\\",
        latex_escape(&summary.caption)
    );
    tex += "\\hline\nQuantity & Value & Uncertainty & Source \\\\\n\\hline\n\\endhead\n";
    let mut section = "";
    for f in &summary.figures {
        if f.section != section {
            section = &f.section;
            let _ = writeln!(
                tex,
                "\\multicolumn{{4}}{{l}}{{\\textbf{{{}}}}} \\\\",
                latex_escape(section)
            );
        }
        let _ = writeln!(
            tex,
            "{} & {} & {} & {} \\\\",
            latex_escape(&f.quantity),
            latex_escape(&f.value_text()),
            latex_escape(&f.uncertainty_text()),
            latex_escape(&f.source)
        );
    }
    tex += "\\hline\n\\multicolumn{4}{l}{\\textbf{Wall time}} \\\\\n";
    for s in &summary.suites {
        let _ = writeln!(
            tex,
            "{} & {} & {} & \\\\",
            latex_escape(&s.name),
            s.seconds.map_or("-".into(), |v| format!("{v:.1} s")),
            latex_escape(&s.status)
        );
    }
    if let Some(total) = summary.total_seconds {
        let _ = writeln!(tex, "whole run & {total:.1} s & & \\\\");
    }
    tex += "\\hline\n\\end{longtable}\n";
    tex
}

/// `index.md`: every figure under `dir`, by sub-directory.
pub fn render_index(dir: &Path, figure_extension: &str) -> Result<String> {
    let mut md = String::from("# Figures\n\n");
    let mut entries: Vec<PathBuf> = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in
            std::fs::read_dir(&d).with_context(|| format!("cannot read {}", d.display()))?
        {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == figure_extension)
                && !path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            {
                entries.push(path.strip_prefix(dir).unwrap_or(&path).to_path_buf());
            }
        }
    }
    entries.sort();
    for path in entries {
        let shown = path.to_string_lossy().replace('\\', "/");
        let _ = writeln!(md, "- [{shown}]({shown})\n\n  ![{shown}]({shown})\n");
    }
    Ok(md)
}

/// Whether `other` differs from `reference` beyond what they state: verdicts by their words,
/// numbers with intervals by disjoint intervals, numbers without by any difference.
pub fn differs(reference: &Figure, other: &Figure) -> Option<&'static str> {
    match (&reference.text, &other.text, reference.value, other.value) {
        (Some(a), Some(b), _, _) => (a != b).then_some("different verdict"),
        (None, None, Some(a), Some(b)) => {
            match (reference.low, reference.high, other.low, other.high) {
                (Some(al), Some(ah), Some(bl), Some(bh)) => {
                    (ah < bl || bh < al).then_some("beyond the stated uncertainty")
                }
                _ => (a != b).then_some("differs (no interval stated)"),
            }
        }
        _ => Some("present in one form only"),
    }
}

/// One table with a column per run and a last column flagging rows that differ from the first
/// run; rows missing from a run show "-".
pub fn render_comparison(names: &[String], summaries: &[Summary], latex: bool) -> String {
    let mut keys: Vec<(String, String)> = Vec::new();
    for s in summaries {
        for f in &s.figures {
            let key = (f.section.clone(), f.quantity.clone());
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    let find = |s: &Summary, key: &(String, String)| {
        s.figures
            .iter()
            .find(|f| f.section == key.0 && f.quantity == key.1)
            .cloned()
    };
    let cell = |f: &Option<Figure>| {
        f.as_ref().map_or("-".to_string(), |f| {
            let u = f.uncertainty_text();
            if u.is_empty() {
                f.value_text()
            } else {
                format!("{} ({u})", f.value_text())
            }
        })
    };
    let mut out = String::new();
    if latex {
        let _ = writeln!(out, "\\begin{{longtable}}{{l{}l}}", "l".repeat(names.len()));
        let header: Vec<String> = names.iter().map(|n| latex_escape(n)).collect();
        let _ = writeln!(
            out,
            "Quantity & {} & Flag \\\\\n\\hline",
            header.join(" & ")
        );
    } else {
        let _ = writeln!(out, "| Quantity | {} | Flag |", names.join(" | "));
        let _ = writeln!(out, "|---|{}---|", "---|".repeat(names.len()));
    }
    for key in &keys {
        let figures: Vec<Option<Figure>> = summaries.iter().map(|s| find(s, key)).collect();
        let flag = match &figures[0] {
            Some(reference) => figures[1..]
                .iter()
                .flatten()
                .find_map(|f| differs(reference, f))
                .unwrap_or(""),
            None => "",
        };
        let quantity = format!("{}: {}", key.0, key.1);
        let cells: Vec<String> = figures.iter().map(cell).collect();
        if latex {
            let cells: Vec<String> = cells.iter().map(|c| latex_escape(c)).collect();
            let _ = writeln!(
                out,
                "{} & {} & {} \\\\",
                latex_escape(&quantity),
                cells.join(" & "),
                latex_escape(flag)
            );
        } else {
            let cells: Vec<String> = cells.iter().map(|c| markdown_cell(c)).collect();
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                markdown_cell(&quantity),
                cells.join(" | "),
                flag
            );
        }
    }
    if latex {
        out += "\\end{longtable}\n";
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_print_as_a_paper_would() {
        assert_eq!(format_value(224704.0, "bytes"), "219.4 KiB");
        assert_eq!(format_value(50.0 * 1048576.0, "bytes"), "50 MiB");
        assert_eq!(format_value(13.0, "cycles"), "13 cycles");
        assert_eq!(format_value(4.3887, "cycles"), "4.39 cycles");
        assert_eq!(format_value(123.61, "ops/clock/SM"), "123.6 ops/clock/SM");
    }

    fn figure(quantity: &str, value: f64, interval: Option<(f64, f64)>) -> Figure {
        Figure {
            section: "S".into(),
            quantity: quantity.into(),
            value: Some(value),
            unit: "cycles".into(),
            low: interval.map(|i| i.0),
            high: interval.map(|i| i.1),
            uncertainty: if interval.is_some() {
                "95% CI".into()
            } else {
                String::new()
            },
            text: None,
            source: "x".into(),
        }
    }

    #[test]
    fn comparisons_flag_only_what_exceeds_the_stated_uncertainty() {
        let a = figure("cost", 13.0, Some((12.9, 13.1)));
        assert_eq!(
            differs(&a, &figure("cost", 13.05, Some((13.0, 13.1)))),
            None
        );
        assert_eq!(
            differs(&a, &figure("cost", 14.0, Some((13.9, 14.1)))),
            Some("beyond the stated uncertainty")
        );
        assert_eq!(
            differs(&figure("l", 4.0, None), &figure("l", 4.0, None)),
            None
        );
        assert!(differs(&figure("l", 4.0, None), &figure("l", 4.1, None)).is_some());
        let run = |v: f64| Summary {
            caption: "c".into(),
            figures: vec![
                figure("cost", v, Some((v - 0.1, v + 0.1))),
                figure("latency", 4.0, None),
            ],
            suites: vec![],
            total_seconds: None,
        };
        let names = vec!["h100".to_string(), "a100".to_string()];
        let table = render_comparison(&names, &[run(13.0), run(20.0)], false);
        assert!(table.contains("| S: cost | 13 cycles (95% CI: 12.90 to 13.10) | 20 cycles (95% CI: 19.90 to 20.10) | beyond the stated uncertainty |"), "{table}");
        assert!(
            table.contains("| S: latency | 4 cycles | 4 cycles |  |"),
            "{table}"
        );
        let tex = render_comparison(&names, &[run(13.0), run(20.0)], true);
        assert!(
            tex.starts_with("\\begin{longtable}{llll}") && tex.ends_with("\\end{longtable}\n"),
            "{tex}"
        );
    }

    #[test]
    fn latex_special_characters_are_escaped() {
        assert_eq!(latex_escape("50% of a_b & c"), "50\\% of a\\_b \\& c");
        assert_eq!(latex_escape("x < y"), "x \\textless{} y");
    }

    #[test]
    fn the_committed_h100_runs_summarise() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100");
        let summary = summarise(&root.join("shared")).unwrap();
        let latency = summary
            .figures
            .iter()
            .find(|f| f.quantity.starts_with("load latency"))
            .unwrap();
        assert!(latency.value.unwrap() > 1.0);
        let conflict = summary
            .figures
            .iter()
            .find(|f| f.quantity.contains("bank-conflict"))
            .unwrap();
        assert_eq!(conflict.uncertainty, "95% CI");
        assert!(
            render_markdown(&summary)
                .contains("| Shared memory | cost per extra bank-conflict way |")
        );
        assert!(render_latex(&summary).contains("\\begin{longtable}"));
    }
}

//! The tables a paper prints (issue #33, part 3), made from a summary's figures: the memory
//! hierarchy (one row per space and level: size, line, ways, sets, latency in cycles and ns,
//! read bandwidth where measured, the SASS load), instruction latency and throughput per SASS
//! opcode, the SIMT findings (divergence, branches, barriers, registers, shared-memory banks)
//! and the compute units (the CUDA cores' FMA rates, the tensor cores' instructions). A value
//! the run could not settle is printed as "n.i." (not identified; the long table in
//! `summary.md` says why), never as a number. Rendered as `tables.md`, `tables.tex` (booktabs)
//! and in `index.html`; the long table stays in `summary.*`.

use std::fmt::Write as _;

use super::figures::Figure;
use super::keys::{self, Known};
use super::summary::{Summary, format_value, latex_escape};

pub const MARKDOWN: &str = "tables.md";
pub const LATEX: &str = "tables.tex";

/// What a cell says where the run did not settle a value.
const NOT_IDENTIFIED: &str = "n.i.";

pub struct Table {
    pub title: &'static str,
    /// `\label{…}` of the LaTeX table.
    pub label: &'static str,
    pub header: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
    pub note: &'static str,
}

/// The curated tables of `summary`, each only where the run has rows for it.
pub fn tables(summary: &Summary) -> Vec<Table> {
    [
        memory(&summary.figures),
        instructions(&summary.figures),
        simt(&summary.figures),
        compute(&summary.figures),
    ]
    .into_iter()
    .filter(|t| !t.rows.is_empty())
    .collect()
}

fn settled(f: &Figure) -> bool {
    f.value.is_some() && !f.is_unresolved()
}

fn number(f: Option<&Figure>, show: impl Fn(f64) -> String) -> String {
    match f {
        Some(f) if settled(f) => f.value.map_or(NOT_IDENTIFIED.into(), show),
        Some(_) => NOT_IDENTIFIED.into(),
        None => String::new(),
    }
}

/// The SM clock the run measured, for latencies in nanoseconds.
fn sm_mhz(figures: &[Figure]) -> Option<f64> {
    figures
        .iter()
        .find(|f| f.key == keys::SM_CLOCK && f.unit == "MHz")
        .and_then(|f| f.value)
}

/// One memory level's figures, as the summary names them ("global: level 1 size").
pub struct LevelFigures<'a> {
    pub space: String,
    /// "1", "2", … or "memory" (past the last cache level).
    pub level: String,
    pub size: Option<&'a Figure>,
    /// The capacity read from the curve alone, with its interval (`cache::CAPACITY`).
    pub capacity: Option<&'a Figure>,
    pub line: Option<&'a Figure>,
    pub ways: Option<&'a Figure>,
    pub sets: Option<&'a Figure>,
    pub latency: Option<&'a Figure>,
    pub read_bandwidth: Option<&'a Figure>,
    /// The SASS load of the space's timed loop.
    pub load: Option<String>,
}

/// Every memory level of `figures`, in the order the summary names them.
pub fn memory_levels(figures: &[Figure]) -> Vec<LevelFigures<'_>> {
    let mut levels: Vec<(&str, &str)> = Vec::new();
    for f in figures {
        if let Some(Known::Memory { space, level, .. }) = keys::parse(&f.key)
            && !levels.contains(&(space, level))
        {
            levels.push((space, level));
        }
    }
    let by_key = |key: String| figures.iter().find(|f| f.key == key);
    let find =
        |space: &str, level: &str, what: &str| by_key(Known::Memory { space, level, what }.key());
    // Where the bandwidth suite measured the same level (whichever search it came from).
    let bandwidth = |space: &str, level: &str| {
        let (bw_level, bw_operation) = match (space, level) {
            ("global", "1") => ("l1", "read"),
            ("l2", "1") => ("l2", "read"),
            ("global", keys::BEYOND) => ("dram", "read"),
            ("shared", keys::BEYOND) => ("shared", "read"),
            _ => return None,
        };
        figures
            .iter()
            .find(|f| f.unit == "GB/s" && keys::is_bandwidth(&f.key, bw_level, bw_operation))
    };
    use keys::level as what;
    levels
        .into_iter()
        .map(|(space, level)| LevelFigures {
            size: find(space, level, what::SIZE),
            capacity: find(space, level, what::CAPACITY),
            line: find(space, level, what::LINE),
            ways: find(space, level, what::WAYS),
            sets: find(space, level, what::SETS),
            latency: find(space, level, what::LATENCY),
            read_bandwidth: bandwidth(space, level),
            load: by_key(Known::Load { space }.key()).and_then(|f| f.text.clone()),
            space: space.to_string(),
            level: level.to_string(),
        })
        .collect()
}

/// A capacity as the table shows it: where the first miss happens, and the interval.
fn capacity_cell(capacity: &Figure) -> String {
    let bytes = |v: Option<f64>| v.map_or("?".into(), |v| format_value(v, "bytes"));
    format!(
        "{} [{}–{}]",
        bytes(capacity.value),
        bytes(capacity.low),
        bytes(capacity.high)
    )
}

fn memory(figures: &[Figure]) -> Table {
    let mhz = sm_mhz(figures);
    let levels = memory_levels(figures);
    let penalties = miss_penalties(&levels);
    let rows = levels
        .into_iter()
        .zip(penalties)
        .map(|(l, penalty)| {
            vec![
                l.space.clone(),
                // Instructions past the last instruction cache come from the L2 or memory;
                // which one, the instruction sweep does not say.
                if l.space == "instruction" && l.level == "memory" {
                    "beyond the caches".into()
                } else {
                    l.level.clone()
                },
                match l.capacity.filter(|c| !c.is_unresolved()) {
                    Some(capacity) => capacity_cell(capacity),
                    None => number(l.size, |v| format_value(v, "bytes")),
                },
                number(l.line, |v| format!("{v:.0}")),
                number(l.ways, |v| format!("{v:.0}")),
                number(l.sets, |v| format!("{v:.0}")),
                number(l.latency, |v| format!("{v:.1}")),
                match (l.latency, mhz) {
                    (Some(latency), Some(mhz)) => {
                        number(Some(latency), |v| format!("{:.1}", v / mhz * 1e3))
                    }
                    _ => String::new(),
                },
                penalty.map_or(String::new(), |p| format!("{p:.1}")),
                number(l.read_bandwidth, |v| format!("{v:.0}")),
                l.load.clone().unwrap_or_default(),
                one_array_with(figures, &l.space, &l.level),
            ]
        })
        .collect();
    Table {
        title: "Memory hierarchy: per space and level",
        label: "tab:memory",
        header: vec![
            "space",
            "level",
            "size",
            "line (B)",
            "ways",
            "sets",
            "latency (cycles)",
            "latency (ns)",
            "miss penalty (cycles)",
            "read (GB/s)",
            "SASS load",
            "one array with",
        ],
        rows,
        note: "Pointer-chase latency (plateau median); size: the capacity read from the curve with no model (the largest footprint with no miss, and in brackets the interval the calibration study found to hold the true size on every family of caches), else the model fit's; geometry from the model fit where its calibrated confidence is at least 0.5; n.i.: not identified from the sweep (summary.md says why); memory: past the last cache level; miss penalty: the next level's latency in the same space less this level's (what a miss here adds, as MT4G states it), none for the last level. The instruction rows' latency is the time per instruction of a straight-line run that outgrows the level (a fetch cost, not a load latency). One array with: the spaces whose loads evict this first level's lines as its own loads do (the cache suite's shared-storage probe); none where every pair it could tell is separate.",
    }
}

/// The spaces whose loads evict the first level of `space` as its own loads do, from the
/// cache suite's shared-storage verdicts, read by key and number (the share of its own
/// slowdown, at least 0.5 where they share): "readonly, texture"; "none" where every verdict
/// it has says separate; empty for other levels and runs without the probe.
fn one_array_with(figures: &[Figure], space: &str, level: &str) -> String {
    let path_of = |space: &str| {
        keys::STORAGE_PATHS
            .iter()
            .find(|&&(s, _)| s == space)
            .map(|&(_, p)| p)
    };
    let space_of = |path: &str| -> String {
        keys::STORAGE_PATHS
            .iter()
            .find(|&&(_, p)| p == path)
            .map_or(path, |&(s, _)| s)
            .to_string()
    };
    let Some(path) = path_of(space).filter(|_| level == "1") else {
        return String::new();
    };
    let verdicts: Vec<(&str, f64)> = figures
        .iter()
        .filter(|f| !f.is_unresolved())
        .filter_map(|f| {
            let (fill, evict) = keys::storage_pair(&f.key)?;
            (fill == path).then_some((evict, f.value?))
        })
        .collect();
    if verdicts.is_empty() {
        return String::new();
    }
    let sharing: Vec<String> = verdicts
        .iter()
        .filter(|&&(_, share)| share >= 0.5)
        .map(|&(evict, _)| space_of(evict))
        .collect();
    if sharing.is_empty() {
        "none".into()
    } else {
        sharing.join(", ")
    }
}

/// Each level's miss penalty: the next level's latency in the same space less its own, where
/// both were measured and the next level is no faster (a curve whose plateaus do not rise
/// states none).
fn miss_penalties(levels: &[LevelFigures<'_>]) -> Vec<Option<f64>> {
    let latency = |l: &LevelFigures<'_>| l.latency.filter(|f| !f.is_unresolved())?.value;
    levels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let next = levels.get(i + 1).filter(|n| n.space == l.space)?;
            let penalty = latency(next)? - latency(l)?;
            (penalty >= 0.0).then_some(penalty)
        })
        .collect()
}

/// The SASS instructions the pipeline suite timed: opcode, latency, throughput.
pub fn sass_instructions(figures: &[Figure]) -> Vec<(&str, &Figure, Option<&Figure>)> {
    figures
        .iter()
        .filter_map(|f| match keys::parse(&f.key)? {
            Known::Sass { opcode, what } if what == keys::LATENCY => {
                let throughput = Known::Sass {
                    opcode,
                    what: keys::THROUGHPUT,
                }
                .key();
                Some((opcode, f, figures.iter().find(|t| t.key == throughput)))
            }
            _ => None,
        })
        .collect()
}

fn instructions(figures: &[Figure]) -> Table {
    let rows = sass_instructions(figures)
        .into_iter()
        .map(|(opcode, latency, throughput)| {
            vec![
                opcode.to_string(),
                number(Some(latency), |v| format!("{v:.2}")),
                number(throughput, |v| format!("{v:.1}")),
            ]
        })
        .collect();
    Table {
        title: "Instruction latency and throughput per SASS opcode",
        label: "tab:instructions",
        header: vec!["SASS", "latency (cycles)", "throughput (per clock per SM)"],
        rows,
        note: "Latency: the difference between chains of 128 and 32 dependent steps over the instructions the SASS shows; throughput: one block of 1024 threads on one SM.",
    }
}

fn simt(figures: &[Figure]) -> Table {
    const SUITES: [&str; 5] = ["divergence", "branch", "sync", "regs", "shared"];
    let rows = figures
        .iter()
        .filter(|f| {
            let suite = f.key.split(keys::SEP).next().unwrap_or("");
            SUITES.contains(&suite) && !f.is_unresolved()
        })
        .map(|f| vec![f.section.clone(), f.quantity.clone(), f.value_text()])
        .collect();
    Table {
        title: "SIMT findings",
        label: "tab:simt",
        header: vec!["topic", "finding", "value"],
        rows,
        note: "Divergence after Bialas and Strzelecki; branches, barriers and registers after Wong et al.; bank conflicts after Erez.",
    }
}

/// One compute unit's figures: a CUDA-core FMA instruction or a tensor-core instruction.
pub struct UnitFigures<'a> {
    pub name: String,
    pub latency: Option<&'a Figure>,
    pub per_sm: Option<&'a Figure>,
    pub chip: Option<&'a Figure>,
    pub share_of_peak: Option<&'a Figure>,
}

/// The flops suite's FMA instructions, then the tensor suite's instructions.
pub fn compute_units(figures: &[Figure]) -> Vec<UnitFigures<'_>> {
    let find = |key: Known| {
        let key = key.key();
        figures.iter().find(|f| f.key == key)
    };
    let mut units = Vec::new();
    for f in figures {
        if let Some(Known::Flops { name, what }) = keys::parse(&f.key)
            && what == keys::PER_SM
        {
            let flops = |what| Known::Flops { name, what };
            units.push(UnitFigures {
                name: name.to_string(),
                latency: None,
                per_sm: Some(f),
                chip: find(flops(keys::CHIP)),
                share_of_peak: find(flops(keys::SHARE)),
            });
        }
    }
    for f in figures {
        if let Some(Known::Tensor {
            family,
            shape,
            types,
            what,
        }) = keys::parse(&f.key)
            && what == keys::THROUGHPUT
        {
            let tensor = |what| Known::Tensor {
                family,
                shape,
                types,
                what,
            };
            units.push(UnitFigures {
                name: format!("{family} {shape} {types}"),
                latency: find(tensor(keys::LATENCY)),
                per_sm: Some(f),
                chip: find(tensor(keys::CHIP)),
                share_of_peak: find(tensor(keys::SHARE)),
            });
        }
    }
    units
}

fn compute(figures: &[Figure]) -> Table {
    let rows = compute_units(figures)
        .into_iter()
        .map(|u| {
            vec![
                u.name,
                number(u.latency, |v| format!("{v:.1}")),
                number(u.per_sm, |v| format!("{v:.0}")),
                number(u.chip, |v| format!("{v:.1}")),
                number(u.share_of_peak, |v| format!("{v:.1} %")),
            ]
        })
        .collect();
    Table {
        title: "Compute units: CUDA-core FMA and tensor-core instructions",
        label: "tab:compute",
        header: vec![
            "instruction",
            "latency (cycles)",
            "FLOP/clock/SM",
            "TFLOPS",
            "share of peak",
        ],
        rows,
        note: "CUDA cores: all SMs at once, TFLOPS over the launch's wall time, against the whitepaper's FMA rate; tensor cores: one block per SM, TFLOPS at the measured clock, against the dense peak. INT8 counts operations.",
    }
}

pub fn render_markdown(tables: &[Table]) -> String {
    let mut md = String::from("# Tables\n");
    for t in tables {
        let _ = writeln!(md, "\n## {}\n", t.title);
        let _ = writeln!(md, "| {} |", t.header.join(" | "));
        let _ = writeln!(md, "|{}", "---|".repeat(t.header.len()));
        for row in &t.rows {
            let cells: Vec<String> = row
                .iter()
                .map(|c| super::summary::markdown_cell(c))
                .collect();
            let _ = writeln!(md, "| {} |", cells.join(" | "));
        }
        let _ = writeln!(md, "\n{}", t.note);
    }
    md
}

/// Every table as a booktabs `table` float; `\usepackage{booktabs}` in the preamble.
pub fn render_latex(tables: &[Table]) -> String {
    let mut tex = String::from("% gpubench's curated tables; needs \\usepackage{booktabs}.\n");
    for t in tables {
        // Words wrap in the widest text column; numbers align right.
        let columns: String = t
            .header
            .iter()
            .enumerate()
            .map(|(i, _)| {
                let wide = t
                    .rows
                    .iter()
                    .any(|r| r.get(i).is_some_and(|c| c.len() > 40));
                if wide {
                    "p{0.45\\linewidth}"
                } else if i == 0 {
                    "l"
                } else {
                    "r"
                }
            })
            .collect();
        let _ = writeln!(
            tex,
            "\\begin{{table}}[htbp]\n\\centering\\small\n\\caption{{{}}}\n\\label{{{}}}\n\\begin{{tabular}}{{{columns}}}\n\\toprule",
            latex_escape(t.title),
            t.label
        );
        let header: Vec<String> = t.header.iter().map(|h| latex_escape(h)).collect();
        let _ = writeln!(tex, "{} \\\\\n\\midrule", header.join(" & "));
        for row in &t.rows {
            let cells: Vec<String> = row.iter().map(|c| latex_escape(c)).collect();
            let _ = writeln!(tex, "{} \\\\", cells.join(" & "));
        }
        let _ = writeln!(
            tex,
            "\\bottomrule\n\\end{{tabular}}\n\\par\\footnotesize {}\n\\end{{table}}\n",
            latex_escape(t.note)
        );
    }
    tex
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(figures: Vec<Figure>) -> Summary {
        Summary::of(figures)
    }

    #[test]
    fn the_spaces_sharing_a_first_level_come_from_the_verdicts_keys_and_numbers() {
        let m = "Memory hierarchy";
        let verdict = |fill: &str, evict: &str, share: f64, unresolved: bool| {
            let mut f = Figure::sample(m, &format!("{fill} after {evict}"), Some(share), "", "");
            f.key = keys::storage(fill, evict);
            // The words say the opposite: the column must not read them.
            f.text = Some("words the table does not read".into());
            if unresolved {
                f.mark_unresolved(crate::report::figures::Reason::NotIdentifiable, "test");
            }
            f
        };
        let figures = vec![
            verdict("l1", "readonly", 1.0, false),
            verdict("l1", "texture", 0.98, false),
            verdict("l1", "constant", 0.9, true),
            verdict("constant", "l1", 0.19, false),
            verdict("constant", "texture", 0.22, false),
        ];
        assert_eq!(one_array_with(&figures, "global", "1"), "readonly, texture");
        assert_eq!(one_array_with(&figures, "constant", "1"), "none");
        assert_eq!(one_array_with(&figures, "global", "2"), "");
        assert_eq!(one_array_with(&figures, "texture", "1"), "");
        assert_eq!(one_array_with(&figures, "shared", "1"), "");
    }

    #[test]
    fn a_level_is_one_row_and_what_is_not_settled_is_not_a_number() {
        let m = "Memory hierarchy";
        let made = tables(&summary(vec![
            Figure::sample(
                "Clocks and timers",
                "SM clock (measured)",
                Some(2000.0),
                "MHz",
                "",
            ),
            Figure::sample(
                m,
                "constant: level 1 latency",
                Some(28.0),
                "cycles",
                "plateau median",
            ),
            Figure::sample(
                m,
                "constant: level 1 size",
                Some(2048.0),
                "bytes",
                "confidence 0.99",
            ),
            Figure::sample(
                m,
                "constant: level 1 ways",
                Some(4.0),
                "",
                "confidence 0.99",
            ),
            Figure::sample(
                m,
                "constant: level 1 line",
                Some(64.0),
                "bytes",
                "confidence 0.30",
            ),
            Figure::sample(
                m,
                "constant: slowest level latency",
                Some(98.0),
                "cycles",
                "plateau median",
            ),
        ]));
        assert_eq!(made.len(), 1);
        let rows = &made[0].rows;
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0][..8],
            [
                "constant",
                "1",
                "2 KiB",
                NOT_IDENTIFIED,
                "4",
                "",
                "28.0",
                "14.0"
            ]
        );
        assert_eq!(rows[1][1], "memory");
        // A miss in level 1 costs the slowest level's latency less level 1's; the last level
        // has no penalty.
        assert_eq!(rows[0][8], "70.0");
        assert_eq!(rows[1][8], "");
        let tex = render_latex(&made);
        assert!(tex.contains("\\toprule") && tex.contains("\\label{tab:memory}"));
        assert!(render_markdown(&made).contains("| constant | 1 | 2 KiB | n.i. | 4 |"));
    }

    #[test]
    fn instructions_are_the_sass_rows_with_their_throughput() {
        let p = "Pipeline";
        let made = tables(&summary(vec![
            Figure::sample(p, "FFMA latency", Some(4.0), "cycles", ""),
            Figure::sample(
                p,
                "FFMA throughput",
                Some(128.0),
                "instructions/clock/SM",
                "",
            ),
            Figure::sample(
                p,
                "fp32 fma (PTX, chain and loop) latency",
                Some(4.4),
                "cycles",
                "",
            ),
            Figure::sample(p, "MUFU.EX2 latency", Some(17.0), "cycles", ""),
        ]));
        let rows = &made[0].rows;
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0], ["FFMA", "4.00", "128.0"]);
        assert_eq!(rows[1], ["MUFU.EX2", "17.00", ""]);
    }
}

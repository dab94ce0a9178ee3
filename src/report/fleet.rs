//! The fleet page (issue #33): one self-contained `index.html` for several GPUs' runs — those
//! of `gpubench all --device all`, or any runs handed to `compare --format html`. A column per
//! GPU; on top the figures the comparison flags (pairwise against the first run, or the odd
//! ones out of three or more, `report::compare`), each linked to its suite's curves from every
//! run drawn over each other (`report::overlay`); then every figure side by side, and apart
//! the rows some run could not settle. Like the run's page it fetches nothing.

use std::fmt::Write as _;

use super::compare::{self, Comparison, Row};
use super::html::{STYLE, escape};

/// One GPU's run as the page's header shows it.
#[derive(Debug, Clone, Default)]
pub struct Member {
    pub name: String,
    /// The GPU's model ("NVIDIA H200").
    pub gpu: String,
    /// The run's own caption (GPU, driver, clock).
    pub caption: String,
    /// A link to the run's own page, where it has one.
    pub page: Option<String>,
    /// How the run ended, where it did not complete.
    pub failed: Option<String>,
    /// What its summary's Conditions block says to check (another process on the GPU, clocks
    /// held down, a clock above NVML's maximum).
    pub conditions: Vec<String>,
}

/// One suite's curves from every run over each other, for the flagged rows it gave.
#[derive(Debug, Clone, Default)]
pub struct Overlays {
    /// The suite's directory name in a run ("cache-tlb"), which the rows' sources begin with.
    pub suite: String,
    /// Each chart's SVG text.
    pub charts: Vec<String>,
    /// Why some run's curves are missing, in words.
    pub missing: Vec<String>,
}

/// Whether the comparison points at `row`: flagged against the first run, or odd in a fleet.
pub fn is_odd(row: &Row) -> bool {
    row.flag.is_some() || row.fleet.as_ref().is_some_and(|f| !f.odd.is_empty())
}

/// The suite directory a row's figures came from (`cache-tlb` of `cache-tlb/cache.json`), or
/// `None` for one derived from several suites (the roofline).
pub fn suite_of(row: &Row) -> Option<&str> {
    let source = &row.cells.iter().flatten().next()?.source;
    source.split_once('/').map(|(suite, _)| suite)
}

pub fn page(
    members: &[Member],
    comparison: &Comparison,
    overlays: &[Overlays],
    notes: &[String],
) -> String {
    let mut models: Vec<&str> = members
        .iter()
        .map(|m| m.gpu.as_str())
        .filter(|g| !g.is_empty())
        .collect();
    models.sort_unstable();
    models.dedup();
    let title = format!(
        "gpubench fleet: {} GPUs ({})",
        members.len(),
        models.join(", ")
    );
    let mut html =
        String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(html, "<title>{}</title>", escape(&title));
    let _ = writeln!(html, "<style>{STYLE}</style>\n</head>\n<body>");
    let _ = writeln!(html, "<h1>{}</h1>", escape(&title));
    for note in notes {
        let _ = writeln!(html, "<p class=\"throttled\">{}</p>", escape(note));
    }
    html += &identity(members);
    html += "<nav><a href=\"#odd\">odd ones out</a><a href=\"#curves\">curves</a><a href=\"#figures\">every figure</a><a href=\"#unresolved\">unresolved</a></nav>\n";
    html += &odd_section(comparison, overlays);
    html += &curves_section(overlays);
    let (unsettled, settled): (Vec<&Row>, Vec<&Row>) = comparison
        .rows
        .iter()
        .partition(|r| r.cells.iter().flatten().any(|f| f.is_unresolved()));
    html += "<h2 id=\"figures\">Every figure</h2>\n";
    html += &rows_table(comparison, &settled, None);
    html += "<h2 id=\"unresolved\">Unresolved in some run</h2>\n<p>Stated with a confidence below 0.5, not identifiable from the sweep, not calibrated, or not confirmed by a repeat in at least one run: what the runs saw, not figures, and never flagged.</p>\n";
    html += &rows_table(comparison, &unsettled, None);
    html += "</body>\n</html>\n";
    html
}

fn identity(members: &[Member]) -> String {
    let mut html = String::from("<table class=\"identity\">\n<tr><th></th>");
    for m in members {
        let _ = write!(html, "<th>{}</th>", escape(&m.name));
    }
    html += "</tr>\n<tr><td>Run</td>";
    for m in members {
        let _ = write!(html, "<td>{}</td>", escape(&m.caption));
    }
    html += "</tr>\n<tr><td>Its page</td>";
    for m in members {
        match &m.page {
            Some(href) => {
                let _ = write!(
                    html,
                    "<td><a href=\"{}\">{}</a></td>",
                    escape(href),
                    escape(href)
                );
            }
            None => html += "<td>none written</td>",
        }
    }
    html += "</tr>\n";
    if members.iter().any(|m| !m.conditions.is_empty()) {
        html += "<tr><td>Conditions to check</td>";
        for m in members {
            let _ = write!(
                html,
                "<td class=\"throttled\">{}</td>",
                escape(&m.conditions.join("; "))
            );
        }
        html += "</tr>\n";
    }
    if members.iter().any(|m| m.failed.is_some()) {
        html += "<tr><td>Did not complete</td>";
        for m in members {
            let _ = write!(
                html,
                "<td class=\"throttled\">{}</td>",
                escape(m.failed.as_deref().unwrap_or(""))
            );
        }
        html += "</tr>\n";
    }
    html + "</table>\n"
}

fn odd_section(c: &Comparison, overlays: &[Overlays]) -> String {
    let mut html = String::from("<h2 id=\"odd\">Odd ones out</h2>\n");
    let _ = writeln!(html, "<p>{}</p>", escape(&compare::footnote(c)));
    let odd: Vec<&Row> = c.rows.iter().filter(|r| is_odd(r)).collect();
    if odd.is_empty() {
        html += "<p><strong>No figure differs between the runs.</strong></p>\n";
        return html;
    }
    html += &rows_table(c, &odd, Some(overlays));
    if !c.odd_ones_out.is_empty() {
        html += "<table>\n<tr><th>Run</th><th>Odd figures</th><th>Figure</th><th>Value</th><th>Median</th><th>Deviation</th></tr>\n";
        for cells in compare::odd_ones_out_rows(c, escape) {
            let _ = writeln!(
                html,
                "<tr><td>{}</td><td class=\"v\">{}</td><td>{}</td><td class=\"v\">{}</td><td class=\"v\">{}</td><td class=\"v\">{}</td></tr>",
                cells[0], cells[1], cells[2], cells[3], cells[4], cells[5]
            );
        }
        html += "</table>\n";
    }
    html
}

/// A table of `rows` with a column per run and the comparison's verdict columns; with
/// `overlays`, a last column linking each row to its suite's curves.
fn rows_table(c: &Comparison, rows: &[&Row], overlays: Option<&[Overlays]>) -> String {
    let mut html = String::from("<table>\n<tr><th>Quantity</th>");
    for run in &c.runs {
        let _ = write!(html, "<th>{}</th>", escape(run));
    }
    for header in compare::verdict_headers(c) {
        let _ = write!(html, "<th>{header}</th>");
    }
    if overlays.is_some() {
        html += "<th>Curves</th>";
    }
    html += "</tr>\n";
    for row in rows {
        let _ = write!(
            html,
            "<tr><td>{}: {}</td>",
            escape(&row.section),
            escape(&row.quantity)
        );
        for (i, cell) in row.cells.iter().enumerate() {
            let mut text = escape(&compare::cell_text(cell));
            if let Some(what) = row.throttled_in(i) {
                let _ = write!(
                    text,
                    " <span class=\"throttled\" title=\"{}\">{}</span>",
                    escape(what),
                    crate::report::throttling::MARK
                );
            }
            let _ = write!(html, "<td>{text}</td>");
        }
        for verdict in compare::verdict_cells(c, row) {
            let _ = write!(html, "<td>{}</td>", escape(&verdict));
        }
        if let Some(overlays) = overlays {
            let drawn = suite_of(row)
                .and_then(|suite| overlays.iter().find(|o| o.suite == suite))
                .filter(|o| !o.charts.is_empty());
            match drawn {
                Some(o) => {
                    let _ = write!(
                        html,
                        "<td><a href=\"#curves-{0}\">{0}</a></td>",
                        escape(&o.suite)
                    );
                }
                None => html += "<td>one value per run: no curve</td>",
            }
        }
        html += "</tr>\n";
    }
    html + "</table>\n"
}

fn curves_section(overlays: &[Overlays]) -> String {
    let mut html = String::from("<h2 id=\"curves\">Curves of the odd figures</h2>\n");
    if overlays.is_empty() {
        html += "<p>No odd figure comes from a suite with curves.</p>\n";
    }
    for o in overlays {
        let _ = writeln!(
            html,
            "<h3 id=\"curves-{0}\">{0}: every run over each other</h3>",
            escape(&o.suite)
        );
        for missing in &o.missing {
            let _ = writeln!(html, "<p class=\"throttled\">{}</p>", escape(missing));
        }
        for svg in &o.charts {
            let _ = writeln!(html, "<div class=\"figure\">{svg}</div>");
        }
    }
    html
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::figures::Figure;
    use crate::report::summary::Summary;

    fn summary(latency: f64, ways: &str) -> Summary {
        let mut figures = vec![
            Figure::sample(
                "Memory hierarchy",
                "tlb: slowest level latency",
                Some(latency),
                "cycles",
                "plateau median",
            ),
            Figure::sample("Memory hierarchy", "l2: level 2 ways", Some(6.0), "", ways),
            Figure::sample("Pipeline", "FFMA latency", Some(4.0), "cycles", ""),
        ];
        figures[0].source = "cache-tlb/cache.json".into();
        figures[1].source = "cache-l2/cache.json".into();
        figures[2].source = "pipeline/pipeline.json".into();
        Summary {
            caption: "NVIDIA H200 (CC 9.0), driver 580, SM clock 1980 MHz".into(),
            ..Summary::of(figures)
        }
    }

    fn two_gpus() -> (Vec<Member>, Comparison) {
        let runs = vec!["gpu0".to_string(), "gpu1".to_string()];
        let summaries = [
            summary(298.4, "confidence 0.9"),
            summary(282.8 * 0.9, "confidence 0.3"),
        ];
        let c = compare::compare(&runs, &summaries, &compare::Tolerances::default(), None);
        let members = runs
            .iter()
            .map(|name| Member {
                conditions: Vec::new(),
                name: name.clone(),
                gpu: summaries[0].gpu().into(),
                caption: summaries[0].caption.clone(),
                page: Some(format!("{name}/index.html")),
                failed: None,
            })
            .collect();
        (members, c)
    }

    #[test]
    fn the_flagged_figure_is_on_top_and_linked_to_its_suites_curves() {
        let (members, c) = two_gpus();
        let odd: Vec<&Row> = c.rows.iter().filter(|r| is_odd(r)).collect();
        assert_eq!(odd.len(), 1);
        assert_eq!(suite_of(odd[0]), Some("cache-tlb"));
        let overlays = [Overlays {
            suite: "cache-tlb".into(),
            charts: vec!["<svg id=\"drawn\"></svg>".into()],
            missing: vec![],
        }];
        let html = page(&members, &c, &overlays, &[]);
        let odd_at = html.find("id=\"odd\"").unwrap();
        let every_at = html.find("id=\"figures\"").unwrap();
        let flagged_at = html.find("tlb: slowest level latency").unwrap();
        assert!(
            odd_at < flagged_at && flagged_at < every_at,
            "flagged row not on top"
        );
        assert!(html.contains("<a href=\"#curves-cache-tlb\">"));
        assert!(html.contains("id=\"curves-cache-tlb\""));
        assert!(html.contains("<svg id=\"drawn\">"));
        assert!(html.contains("<th>gpu0</th><th>gpu1</th>"));
        assert!(html.contains("<a href=\"gpu1/index.html\">"));
        assert!(html.contains("2 GPUs (NVIDIA H200)"));
        // The low-confidence way count sits with the unresolved rows, not the figures.
        let unresolved_at = html.find("id=\"unresolved\"").unwrap();
        assert!(html.find("level 2 ways").unwrap() > unresolved_at);
    }

    #[test]
    fn a_fleet_that_agrees_says_so_and_draws_nothing() {
        let (members, _) = two_gpus();
        let runs = vec!["gpu0".to_string(), "gpu1".to_string()];
        let same = [
            summary(298.4, "confidence 0.9"),
            summary(298.4, "confidence 0.9"),
        ];
        let c = compare::compare(&runs, &same, &compare::Tolerances::default(), None);
        let html = page(&members, &c, &[], &[]);
        assert!(html.contains("No figure differs between the runs."));
        assert!(!html.contains("<svg"));
    }

    #[test]
    fn a_row_of_a_suite_without_curves_says_so() {
        let (members, mut c) = two_gpus();
        for row in &mut c.rows {
            for cell in row.cells.iter_mut().flatten() {
                cell.source = "atomics/atomics-throughput.csv".into();
            }
        }
        let html = page(&members, &c, &[], &["gpu2 did not complete: exit 5".into()]);
        assert!(html.contains("one value per run: no curve"));
        assert!(html.contains("gpu2 did not complete: exit 5"));
    }
}

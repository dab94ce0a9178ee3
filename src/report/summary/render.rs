//! The summary as tables: `summary.md` (figures, then the unresolved rows, then the suites'
//! times), `summary.tex` (a longtable), and `index.md` of the plots drawn; numbers printed
//! as a paper would.

use super::*;

impl Figure {
    pub fn value_text(&self) -> String {
        match (&self.text, self.value) {
            (Some(text), _) => text.clone(),
            (None, Some(v)) => format_value(v, &self.unit),
            (None, None) => "-".into(),
        }
    }

    pub fn uncertainty_text(&self) -> String {
        // Sizes keep their binary units; other bounds are bare numbers in the value's unit.
        let unit = if self.unit == "bytes" { "bytes" } else { "" };
        match (self.low, self.high) {
            (Some(l), Some(h)) => format!(
                "{}: {} to {}",
                self.uncertainty,
                format_value(l, unit),
                format_value(h, unit)
            ),
            _ => self.uncertainty.clone(),
        }
    }
}

/// One row of the rendered tables: a figure, or a latency and a throughput of one operation
/// side by side.
pub(super) struct Row {
    pub(super) section: String,
    pub(super) quantity: String,
    pub(super) value: String,
    pub(super) uncertainty: String,
    pub(super) source: String,
}

/// The summary's figures as table rows, in order; an operation's "X latency" and
/// "X throughput" of one section share the row where the latency stood.
pub(super) fn table_rows(figures: &[Figure]) -> Vec<Row> {
    let single = |f: &Figure| Row {
        section: f.section.clone(),
        quantity: f.quantity.clone(),
        value: f.value_text(),
        uncertainty: f.uncertainty_text(),
        source: f.source.clone(),
    };
    // By key: `…/latency` and `…/throughput` of one operation ([`crate::report::keys`]).
    let throughput_of = |latency: &Figure| {
        let operation = latency
            .key
            .strip_suffix(crate::report::keys::LATENCY)?
            .strip_suffix(crate::report::keys::SEP)?;
        let throughput = format!(
            "{operation}{}{}",
            crate::report::keys::SEP,
            crate::report::keys::THROUGHPUT
        );
        figures.iter().find(|f| f.key == throughput)
    };
    let paired: Vec<&Figure> = figures.iter().filter_map(throughput_of).collect();
    let mut rows = Vec::with_capacity(figures.len());
    for f in figures {
        if paired.iter().any(|p| std::ptr::eq(*p, f)) {
            continue;
        }
        let Some(throughput) = throughput_of(f) else {
            rows.push(single(f));
            continue;
        };
        let dash = |x: String| if x.is_empty() { "-".to_string() } else { x };
        let both = |a: String, b: String| match (a.is_empty(), b.is_empty()) {
            (true, true) => String::new(),
            _ => format!("{} / {}", dash(a), dash(b)),
        };
        let operation = f.quantity.strip_suffix(" latency").unwrap_or(&f.quantity);
        rows.push(Row {
            section: f.section.clone(),
            quantity: format!("{operation}: latency / throughput"),
            value: both(f.value_text(), throughput.value_text()),
            uncertainty: both(f.uncertainty_text(), throughput.uncertainty_text()),
            source: if f.source == throughput.source {
                f.source.clone()
            } else {
                both(f.source.clone(), throughput.source.clone())
            },
        });
    }
    rows
}

/// A row's value, marked where its suite ran with the clocks held down.
fn marked_value(summary: &Summary, row: &Row) -> String {
    if crate::report::throttling::of_source(summary, &row.source).is_some() {
        format!("{} {}", row.value, crate::report::throttling::MARK)
    } else {
        row.value.clone()
    }
}

pub fn render_markdown(summary: &Summary) -> String {
    let mut md = String::from("# Architecture summary\n\n");
    let _ = writeln!(md, "{}\n", markdown_text(&summary.caption));
    md += &crate::report::conditions::markdown(&summary.conditions);
    let (figures, unresolved): (Vec<Figure>, Vec<Figure>) = summary
        .figures
        .iter()
        .cloned()
        .partition(|f| !f.is_unresolved());
    let table = |md: &mut String, figures: &[Figure]| {
        *md += "| Section | Quantity | Value | Uncertainty | Source |\n|---|---|---|---|---|\n";
        for row in table_rows(figures) {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                markdown_cell(&row.section),
                markdown_cell(&row.quantity),
                markdown_cell(&marked_value(summary, &row)),
                markdown_cell(&row.uncertainty),
                markdown_cell(&row.source)
            );
        }
    };
    table(&mut md, &figures);
    if !unresolved.is_empty() {
        md += "\n## Unresolved\n\nStated with a confidence below 0.5, or not identifiable from the sweep: what the run saw, not figures.\n\n";
        table(&mut md, &unresolved);
    }
    md += &crate::report::throttling::markdown_section(summary);
    // Runs that recorded where their time went get the split; older ones keep three columns.
    let split = summary.suites.iter().any(|s| s.time_split.is_some());
    md += "\n## Wall time of each suite\n\n| Suite | Status | Seconds |";
    md += if split {
        " JIT | GPU | host | driver start |\n|---|---|---|---|---|---|---|\n"
    } else {
        "\n|---|---|---|\n"
    };
    for s in &summary.suites {
        let status = match &s.error {
            Some(e) => format!("{} ({})", s.status, e),
            None => s.status.clone(),
        };
        let _ = write!(
            md,
            "| {} | {} | {} |",
            markdown_cell(&s.name),
            markdown_cell(&status),
            s.seconds.map_or("-".into(), |v| format!("{v:.1}"))
        );
        if split {
            let _ = write!(
                md,
                "{}",
                s.time_split.map_or(" - | - | - | - |".into(), |t| format!(
                    " {:.1} | {:.1} | {:.1} | {:.1} |",
                    t.jit_seconds, t.gpu_wait_seconds, t.host_seconds, t.driver_start_seconds
                ))
            );
        }
        md.push('\n');
    }
    if let Some(total) = summary.total_seconds {
        let _ = writeln!(
            md,
            "| **whole run** | | **{total:.1}** |{}",
            if split { " | | | |" } else { "" }
        );
    }
    md
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
    let mut section = String::new();
    for row in table_rows(&summary.figures) {
        if row.section != section {
            section = row.section.clone();
            let _ = writeln!(
                tex,
                "\\multicolumn{{4}}{{l}}{{\\textbf{{{}}}}} \\\\",
                latex_escape(&section)
            );
        }
        let _ = writeln!(
            tex,
            "{} & {} & {} & {} \\\\",
            latex_escape(&row.quantity),
            latex_escape(&marked_value(summary, &row)),
            latex_escape(&row.uncertainty),
            latex_escape(&row.source)
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

/// `index.md`: every plot under `dir`, by sub-directory.
pub fn render_index(dir: &Path, plot_extension: &str) -> Result<String> {
    let mut md = String::from("# Plots\n\n");
    let mut entries: Vec<PathBuf> = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in
            std::fs::read_dir(&d).with_context(|| format!("cannot read {}", d.display()))?
        {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == plot_extension)
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

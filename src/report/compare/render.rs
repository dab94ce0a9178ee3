//! The printers of a comparison: Markdown, LaTeX, CSV and JSON.

use super::*;

/// How a comparison is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Latex,
    Csv,
    Json,
}

pub fn render(comparison: &Comparison, format: Format) -> anyhow::Result<String> {
    Ok(match format {
        Format::Markdown => render_markdown(comparison),
        Format::Latex => render_latex(comparison),
        Format::Csv => render_csv(comparison)?,
        Format::Json => serde_json::to_string_pretty(comparison)? + "\n",
    })
}

pub fn cell_text(f: &Option<Figure>) -> String {
    f.as_ref().map_or("-".to_string(), |f| {
        let u = f.uncertainty_text();
        if u.is_empty() {
            f.value_text()
        } else {
            format!("{} ({u})", f.value_text())
        }
    })
}

/// The last columns of a row: the flag (pairwise), or median, MAD and the odd runs (fleet).
pub fn verdict_cells(c: &Comparison, row: &Row) -> Vec<String> {
    match &row.fleet {
        None => vec![row.flag.clone().unwrap_or_default()],
        Some(fleet) => {
            let median = fleet.centre(&row.unit).unwrap_or_else(|| "-".into());
            let mad = fleet.mad.map_or("-".into(), |m| format_value(m, &row.unit));
            let odd: Vec<String> = fleet
                .odd
                .iter()
                .map(|&(i, d)| match d {
                    Some(d) => format!("{} ({d:+.1} σ)", c.runs[i]),
                    None => c.runs[i].clone(),
                })
                .collect();
            vec![median, mad, odd.join(", ")]
        }
    }
}

/// Every row's cells, escaped for the table's format: the quantity, one per run, then the
/// flag or the fleet's columns.
pub(super) fn table_rows(c: &Comparison, escape: fn(&str) -> String) -> Vec<Vec<String>> {
    c.rows
        .iter()
        .map(|row| {
            std::iter::once(format!("{}: {}", row.section, row.quantity))
                .chain(row.cells.iter().enumerate().map(|(i, cell)| {
                    let text = cell_text(cell);
                    if row.throttled_in(i).is_some() {
                        format!("{text} {}", crate::report::throttling::MARK)
                    } else {
                        text
                    }
                }))
                .chain(verdict_cells(c, row))
                .map(|text| escape(&text))
                .collect()
        })
        .collect()
}

pub fn verdict_headers(c: &Comparison) -> Vec<&'static str> {
    match c.k {
        None => vec!["Flag"],
        Some(_) => vec!["Median", "MAD", "Odd ones"],
    }
}

/// The odd-ones-out table's rows (run, odd figures, figure, value, median, deviation), text
/// escaped for the table's format; the run and its count only on its first row.
pub fn odd_ones_out_rows(c: &Comparison, escape: fn(&str) -> String) -> Vec<[String; 6]> {
    let mut rows = Vec::new();
    for run in &c.odd_ones_out {
        for (j, f) in run.figures.iter().enumerate() {
            let (name, count) = if j == 0 {
                (escape(&run.run), run.figures.len().to_string())
            } else {
                (String::new(), String::new())
            };
            rows.push([
                name,
                count,
                escape(&f.figure),
                escape(&f.value),
                escape(&f.median),
                f.deviation
                    .map_or("verdict".into(), |d| format!("{d:+.1} σ")),
            ]);
        }
    }
    rows
}

pub fn footnote(c: &Comparison) -> String {
    let mut text = match c.k {
        None => {
            // The flagged rows named where the count is, so that a long table need not be
            // searched for them.
            let named: Vec<String> = c
                .rows
                .iter()
                .filter_map(|r| {
                    Some(format!(
                        "{}: {} ({})",
                        r.section,
                        r.quantity,
                        r.flag.as_ref()?
                    ))
                })
                .collect();
            let named = if named.is_empty() {
                String::new()
            } else {
                format!(" Flagged figures: {}.", named.join("; "))
            };
            format!(
                "Flagged: {} of {} figures differ from the first run (numbers: moved more than {} and, where both state an interval, disjoint; neither figures inferred with confidence below 0.5 nor what a run calls unresolved; verdicts: different words, numbers masked).{named}",
                c.flagged(),
                c.rows.len(),
                c.tolerances.describe()
            )
        }
        Some(k) => format!(
            "Odd: more than {k} robust standard deviations (1.4826 × MAD) and more than {} from the median over {} runs, or a verdict other than the most common (neither figures inferred with confidence below 0.5 nor what a run calls unresolved).",
            c.tolerances.describe(),
            c.runs.len()
        ),
    };
    let throttled = c.rows.iter().filter(|r| !r.throttled.is_empty()).count();
    if throttled > 0 {
        let runs: Vec<&str> = c
            .runs
            .iter()
            .enumerate()
            .filter(|(i, _)| c.rows.iter().any(|r| r.throttled_in(*i).is_some()))
            .map(|(_, run)| run.as_str())
            .collect();
        text += &format!(
            " {throttled} figures were measured while NVML saw the clocks held down (in {}), marked {}: they may read low.",
            runs.join(", "),
            crate::report::throttling::MARK
        );
    }
    for (run, conditions) in c.runs.iter().zip(&c.conditions) {
        if !conditions.is_empty() {
            text += &format!(" Conditions to check in {run}: {}.", conditions.join("; "));
        }
    }
    text
}

pub(super) fn render_markdown(c: &Comparison) -> String {
    let mut out = String::new();
    let headers: Vec<String> = c.runs.iter().map(|r| markdown_cell(r)).collect();
    let extra = verdict_headers(c);
    let _ = writeln!(
        out,
        "| Quantity | {} | {} |",
        headers.join(" | "),
        extra.join(" | ")
    );
    let _ = writeln!(
        out,
        "|---|{}{}",
        "---|".repeat(c.runs.len()),
        "---|".repeat(extra.len())
    );
    for cells in table_rows(c, markdown_cell) {
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    let _ = writeln!(out, "\n{}", markdown_text(&footnote(c)));
    if c.k.is_some() {
        out += "\n## Odd ones out\n\n";
        if c.odd_ones_out.is_empty() {
            out += "No run is odd in any figure.\n";
        } else {
            out += "| Run | Odd figures | Figure | Value | Median | Deviation |\n|---|---|---|---|---|---|\n";
            for cells in odd_ones_out_rows(c, markdown_cell) {
                let _ = writeln!(out, "| {} |", cells.join(" | "));
            }
        }
    }
    out
}

pub(super) fn render_latex(c: &Comparison) -> String {
    let extra = verdict_headers(c);
    let mut out = format!(
        "\\begin{{longtable}}{{l{}{}}}\n",
        "l".repeat(c.runs.len()),
        "l".repeat(extra.len())
    );
    let headers: Vec<String> = c.runs.iter().map(|r| latex_escape(r)).collect();
    let _ = writeln!(
        out,
        "Quantity & {} & {} \\\\\n\\hline",
        headers.join(" & "),
        extra.join(" & ")
    );
    for cells in table_rows(c, latex_escape) {
        let _ = writeln!(out, "{} \\\\", cells.join(" & "));
    }
    let _ = writeln!(
        out,
        "\\hline\n\\multicolumn{{{}}}{{p{{0.9\\linewidth}}}}{{{}}} \\\\",
        1 + c.runs.len() + extra.len(),
        latex_escape(&footnote(c))
    );
    out += "\\end{longtable}\n";
    out
}

/// Long form: one line per figure and run.
pub(super) fn render_csv(c: &Comparison) -> anyhow::Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record([
        "section",
        "quantity",
        "unit",
        "run",
        "value",
        "low",
        "high",
        "text",
        "flag",
        "median",
        "mad",
        "odd",
        "deviation",
        "throttled",
    ])?;
    let number = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    for row in &c.rows {
        for (i, cell) in row.cells.iter().enumerate() {
            let Some(f) = cell else { continue };
            let odd = row
                .fleet
                .as_ref()
                .and_then(|fl| fl.odd.iter().find(|(j, _)| *j == i));
            writer.write_record([
                csv_text(&row.section),
                csv_text(&row.quantity),
                csv_text(&row.unit),
                csv_text(&c.runs[i]),
                number(f.value),
                number(f.low),
                number(f.high),
                csv_text(f.text.as_deref().unwrap_or_default()),
                if i > 0 {
                    csv_text(row.flag.as_deref().unwrap_or_default())
                } else {
                    String::new()
                },
                number(row.fleet.as_ref().and_then(|fl| fl.median)),
                number(row.fleet.as_ref().and_then(|fl| fl.mad)),
                if row.fleet.is_some() {
                    odd.is_some().to_string()
                } else {
                    String::new()
                },
                number(odd.and_then(|(_, d)| *d)),
                row.throttled_in(i).unwrap_or_default().to_string(),
            ])?;
        }
    }
    Ok(String::from_utf8(writer.into_inner()?)?)
}

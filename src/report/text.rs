//! Numbers and text as the tables print them: a value in its unit as a paper would, and text
//! made safe for a Markdown cell or for LaTeX. Below the summary, the comparison and the
//! figures, which all print this way.

/// A number as a paper would print it: sizes in KiB / MiB / GiB, others to a sensible precision.
pub fn format_value(value: f64, unit: &str) -> String {
    if unit == "bytes" {
        // The largest binary unit that leaves a number of at least 1, to three significant
        // digits (whole numbers as they are).
        let (scaled, name) = [("GiB", 30), ("MiB", 20), ("KiB", 10)]
            .into_iter()
            .find(|&(_, shift)| value.abs() >= 2f64.powi(shift))
            .map_or((value, "B"), |(name, shift)| {
                (value / 2f64.powi(shift), name)
            });
        let digits = if scaled.fract() == 0.0 || scaled.abs() >= 100.0 {
            0
        } else if scaled.abs() >= 10.0 {
            1
        } else {
            2
        };
        return format!("{scaled:.digits$} {name}");
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

/// `text` as one cell of a Markdown table.
pub fn markdown_cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
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
            // Characters pdflatex's utf8 input does not set up by default.
            '−' => out += "\\textminus{}",
            '×' => out += "\\texttimes{}",
            '·' => out += "\\textperiodcentered{}",
            '±' => out += "\\textpm{}",
            'µ' | 'μ' => out += "\\textmu{}",
            '°' => out += "\\textdegree{}",
            '²' => out += "\\textsuperscript{2}",
            '–' => out += "--",
            '—' => out += "---",
            '…' => out += "\\dots{}",
            'σ' => out += "$\\sigma$",
            'Δ' => out += "$\\Delta$",
            '≤' => out += "$\\le$",
            '≥' => out += "$\\ge$",
            '≈' => out += "$\\approx$",
            '→' => out += "$\\to$",
            _ => out.push(c),
        }
    }
    out
}

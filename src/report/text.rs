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

/// `text` as one cell of a Markdown table: on one line (a line break or another control
/// character is a space), its bars escaped, and no raw HTML ([`markdown_text`]).
pub fn markdown_cell(text: &str) -> String {
    markdown_text(text).replace('|', "\\|")
}

/// `text` as Markdown prose: on one line (a control character but a tab is a space), and no
/// tag, comment or autolink a Markdown reader would pass through as HTML (a `<` before a
/// letter, `/`, `!` or `?` is written `&lt;`; a `<` before a space or a digit, as in
/// "|x| < 1", is text already and stays).
pub fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '<' if chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?')) =>
            {
                out += "&lt;"
            }
            // A tab is blank in a cell as in prose (and stays, as committed summaries hold it).
            c if c.is_control() && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `text` as a CSV field a spreadsheet shows as text: one that starts with `=`, `+`, `-`, `@`
/// or a tab or carriage return (which a spreadsheet runs as a formula) and is not a number gets
/// a `'` in front. Numbers, negative ones included, stay as they are.
pub fn csv_text(text: &str) -> String {
    let formula = text
        .chars()
        .next()
        .is_some_and(|c| matches!(c, '=' | '+' | '-' | '@' | '\t' | '\r'));
    if formula && text.trim().parse::<f64>().is_err() {
        format!("'{text}")
    } else {
        text.to_string()
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_keeps_names_on_their_line_and_passes_no_html() {
        assert_eq!(
            markdown_cell("H100 <script>alert(1)</script>\n| x"),
            "H100 &lt;script>alert(1)&lt;/script> \\| x"
        );
        assert_eq!(
            markdown_text("a <!-- b\r\n<https://x>"),
            "a &lt;!-- b  &lt;https://x>"
        );
        assert_eq!(markdown_cell("|x| < 1, 2<3"), "\\|x\\| < 1, 2<3");
        assert_eq!(markdown_cell("a\tb\u{7}c"), "a\tb c");
    }

    #[test]
    fn a_csv_field_that_would_run_as_a_formula_is_text() {
        for (field, written) in [
            ("=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"),
            ("+1+cmd", "'+1+cmd"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("-2.5", "-2.5"),
            ("+7", "+7"),
            ("H100", "H100"),
            ("", ""),
        ] {
            assert_eq!(csv_text(field), written, "{field}");
        }
    }
}

//! `index.html`: one self-contained page of a run (issue #33) that opens from disk with no
//! server and no network. Each suite's headline first (the numbers a reader came for, linked
//! to their sections), then the run's identity (GPU, driver, clocks, throttling seen,
//! command, version), then the roofline, then a section per suite with its figures inline as
//! SVG beside its rows, links to the CSV and JSON files the rows came from and to the SASS of
//! its timed loops (copied into the page's `data/` where the run lies outside the page's
//! directory: no link leaves it, so the page moves with its data), then the unresolved rows
//! apart and each suite's time. Nothing is fetched: no script, no font, no image from
//! elsewhere; the style sheet is in the page.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::figures::Figure;
use super::metadata::SavedMetadata;
use super::summary::Summary;

pub const FILE: &str = "index.html";

/// Where the page finds things: the run it describes and the directory its SVG figures were
/// drawn into (the page's own: every file the page links lies in it, so the page survives
/// being moved).
pub struct Sources<'a> {
    pub run: &'a Path,
    pub figures: &'a Path,
    pub suites: &'a [(String, PathBuf)],
}

pub(super) const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:80em;padding:0 1em;color:#222}\
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;margin:1em 0;font-size:.9em}td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}\
th{background:#f4f4f4}td{overflow-wrap:break-word}.figure{overflow-x:auto}td.v{white-space:nowrap;text-align:right}.figure svg{max-width:100%;height:auto;box-sizing:border-box;border:1px solid #eee;margin:.5em 0}\
.identity td:first-child{font-weight:bold}.files{font-size:.9em}.throttled{color:#a40}.check{color:#a40;font-weight:bold}nav a{margin-right:.8em}.unstated{color:#777}";

/// The page for `summary`, made of the files `sources` names.
pub fn page(summary: &Summary, sources: &Sources) -> Result<String> {
    let mut html =
        String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let gpu = summary.gpu();
    let _ = writeln!(html, "<title>gpubench: {}</title>", escape(gpu));
    let _ = writeln!(html, "<style>{STYLE}</style>\n</head>\n<body>");
    let _ = writeln!(html, "<h1>gpubench: {}</h1>", escape(gpu));
    html += &headline_block(summary, sources);
    html += &identity(summary, sources);
    html += &conditions(&summary.conditions);
    html += "<nav>";
    for (name, _) in sources.suites {
        let _ = write!(html, "<a href=\"#{0}\">{0}</a>", escape(name));
    }
    html += "<a href=\"#tables\">tables</a><a href=\"#unresolved\">unresolved</a><a href=\"#time\">time</a></nav>\n";
    if let Some(svg) = inline_svg(&sources.figures.join("roofline.svg"))? {
        html += "<h2 id=\"roofline\">Roofline</h2>\n";
        html += &figure_rows(
            summary
                .figures
                .iter()
                .filter(|f| f.source == super::roofline::FILE),
        );
        let _ = writeln!(html, "<div class=\"figure\">{svg}</div>");
    }
    let curated = super::curated::tables(summary);
    if !curated.is_empty() {
        html += "<h2 id=\"tables\">Tables</h2>\n";
        html += &curated_tables(&curated);
    }
    for (name, dir) in sources.suites {
        html += &suite_section(summary, sources, name, dir)?;
    }
    html += "<h2 id=\"unresolved\">Unresolved</h2>\n<p>Stated with a confidence below 0.5, not identifiable from the sweep, not calibrated, or not confirmed by a repeat: what the run saw, not figures.</p>\n";
    html += &figure_rows(summary.figures.iter().filter(|f| f.is_unresolved()));
    html += &times(summary);
    html += "</body>\n</html>\n";
    Ok(html)
}

/// The numbers a reader came for, first: each suite's headline (`headline::HEADLINES`, as the
/// README writes them), linked to its section, or why the run states none.
fn headline_block(summary: &Summary, sources: &Sources) -> String {
    let section = |suite: &str| {
        sources
            .suites
            .iter()
            .map(|(name, _)| name.as_str())
            .find(|name| {
                *name == suite || name.strip_prefix(suite).is_some_and(|r| r.starts_with('-'))
            })
    };
    let lines = super::headline::of_suites(&summary.figures, |suite| section(suite).is_some());
    if lines.is_empty() {
        return String::new();
    }
    let mut html = String::from("<h2 id=\"headline\">Headline</h2>\n<table class=\"headline\">\n");
    for (suite, line) in lines {
        let anchor = section(suite).unwrap_or(suite);
        let cell = match line {
            Ok(text) => escape(&text).replace('`', ""),
            Err(why) => format!(
                "<span class=\"unstated\">not stated: {}</span>",
                escape(&why)
            ),
        };
        let _ = writeln!(
            html,
            "<tr><th><a href=\"#{}\">{}</a></th><td>{cell}</td></tr>",
            escape(anchor),
            escape(suite)
        );
    }
    html + "</table>\n"
}

/// The block as an HTML list (empty for no lines).
fn conditions(lines: &[super::summary::model::ConditionLine]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut html = String::from("<section id=\"conditions\"><h2>Conditions</h2><ul>\n");
    for l in lines {
        html += &format!(
            "<li{}>{}: {}</li>\n",
            if l.ok { "" } else { " class=\"check\"" },
            escape(&l.what),
            escape(&l.found)
        );
    }
    html += "</ul></section>\n";
    html
}

fn identity(summary: &Summary, sources: &Sources) -> String {
    let first = sources.suites.iter().find_map(|(_, dir)| {
        let metadata = SavedMetadata::read(dir).ok().filter(|m| m.complete())?;
        Some((dir, metadata))
    });
    let mut rows: Vec<(&str, String)> = vec![("Run", summary.caption.clone())];
    if let Some((dir, m)) = &first {
        // What the typed view leaves out (the UUID, the nominal clock, the command line).
        let raw: serde_json::Value =
            super::saved::read_json(dir, "metadata.json").unwrap_or_default();
        let text = |v: &serde_json::Value| v.as_str().map(str::to_string);
        if let Some(uuid) = text(&raw["nvml"]["identity"]["uuid"]) {
            rows.push(("GPU UUID", uuid));
        }
        rows.push((
            "SM clock",
            format!(
                "{:.0} MHz measured before the first suite; nominal {}",
                m.sm_clock_before.mhz.unwrap_or(f64::NAN),
                raw["device"]["nominal_sm_clock_mhz"]
                    .as_f64()
                    .map_or("unknown".into(), |v| format!("{v:.0} MHz"))
            ),
        ));
        if let Some(command) = raw["command_line"].as_array() {
            let mut words: Vec<String> = command.iter().filter_map(text).collect();
            // The binary as a reader would type it, not where it lay on the measuring machine
            // (a private path).
            if let Some(first) = words.first_mut() {
                *first = Path::new(first.as_str())
                    .file_name()
                    .map_or("gpubench".into(), |n| n.to_string_lossy().into_owned());
            }
            rows.push(("First suite's command", words.join(" ")));
        }
    }
    let throttled: Vec<String> = summary
        .suites
        .iter()
        .flat_map(|s| s.throttled_named())
        .map(|(name, what)| format!("{name}: {what}"))
        .collect();
    rows.push((
        "Throttling seen",
        if throttled.is_empty() {
            "none".into()
        } else {
            throttled.join("; ")
        },
    ));
    let mut html = String::from("<table class=\"identity\">\n");
    for (key, value) in rows {
        let _ = writeln!(html, "<tr><td>{key}</td><td>{}</td></tr>", escape(&value));
    }
    html += "</table>\n";
    html
}

fn suite_section(summary: &Summary, sources: &Sources, name: &str, dir: &Path) -> Result<String> {
    let mut html = format!("<h2 id=\"{0}\">{0}</h2>\n", escape(name));
    let prefix = format!("{name}/");
    let rows: Vec<&Figure> = summary
        .figures
        .iter()
        .filter(|f| f.source.starts_with(&prefix) && !f.is_unresolved())
        .collect();
    if let Some(timing) = summary.suites.iter().find(|s| s.name == name) {
        let mut said = format!("status: {}", escape(&timing.status));
        if let Some(error) = &timing.error {
            let _ = write!(said, " ({})", escape(error));
        }
        for (files, throttled) in timing.throttled_stretches() {
            let part = files.map_or(String::new(), |f| format!(" ({f})"));
            let _ = write!(
                said,
                "; <span class=\"throttled\">measured under throttling{}: {}</span>",
                escape(&part),
                escape(throttled)
            );
        }
        let _ = writeln!(html, "<p>{said}</p>");
    }
    html += &figure_rows(rows.into_iter());
    let figures_dir = if sources.suites.len() == 1 {
        sources.figures.to_path_buf()
    } else {
        sources.figures.join(name)
    };
    for svg_path in files_with(&figures_dir, &["svg"]) {
        if let Some(svg) = inline_svg(&svg_path)? {
            let _ = writeln!(html, "<div class=\"figure\">{svg}</div>");
        }
    }
    let link = |file: &PathBuf| -> Result<String> {
        let shown = file
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        let href = page_copy(sources.figures, name, file)?;
        Ok(format!(
            "<a href=\"{}\">{}</a>",
            escape(&href),
            escape(&shown)
        ))
    };
    let files = files_with(dir, &["csv", "json", "gz", "sass"]);
    let (sass, data): (Vec<&PathBuf>, Vec<&PathBuf>) = files.iter().partition(|f| {
        let name = f.to_string_lossy();
        name.ends_with(".sass") || name.ends_with(".sass.gz")
    });
    if !data.is_empty() {
        let links: Vec<String> = data.into_iter().map(link).collect::<Result<_>>()?;
        let _ = writeln!(html, "<p class=\"files\">Data: {}</p>", links.join(" · "));
    }
    if !sass.is_empty() {
        let links: Vec<String> = sass.into_iter().map(link).collect::<Result<_>>()?;
        let _ = writeln!(
            html,
            "<p class=\"files\">The SASS of its timed loops, from the PTX the run loaded: {}</p>",
            links.join(" · ")
        );
    }
    Ok(html)
}

fn figure_rows<'a>(figures: impl Iterator<Item = &'a Figure>) -> String {
    let mut html = String::from(
        "<table>\n<tr><th>Section</th><th>Quantity</th><th>Value</th><th>Uncertainty</th><th>Source</th></tr>\n",
    );
    for f in figures {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td{}>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&f.section),
            escape(&f.quantity),
            // A number stays on one line, right-aligned; a verdict in words wraps.
            if f.value.is_some() {
                " class=\"v\""
            } else {
                ""
            },
            escape(&f.value_text()),
            escape(&f.uncertainty_text()),
            escape(&f.source)
        );
    }
    html + "</table>\n"
}

fn times(summary: &Summary) -> String {
    let mut html = String::from(
        "<h2 id=\"time\">Time</h2>\n<table>\n<tr><th>Suite</th><th>Status</th><th>Seconds</th></tr>\n",
    );
    for s in &summary.suites {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td class=\"v\">{}</td></tr>",
            escape(&s.name),
            escape(&s.status),
            s.seconds.map_or("-".into(), |v| format!("{v:.1}"))
        );
    }
    if let Some(total) = summary.total_seconds {
        let _ = writeln!(
            html,
            "<tr><td>all</td><td></td><td class=\"v\">{total:.1}</td></tr>"
        );
    }
    html + "</table>\n"
}

/// The files of `dir` (not below it) whose name ends in one of `extensions`, sorted.
fn files_with(dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| extensions.contains(&e))
        })
        .collect();
    found.sort();
    found
}

/// An SVG file's text without its XML declaration, ready to stand inside the page.
fn inline_svg(path: &Path) -> Result<Option<String>> {
    if !path.is_file() {
        return Ok(None);
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let start = text.find("<svg").unwrap_or(0);
    Ok(Some(text[start..].to_string()))
}

/// The link from the page in `page_dir` to `file` of suite `suite`: the file's own path where
/// it lies in the page's directory (a live run's page, written into the run), else a copy at
/// `data/SUITE/NAME` in it (a report's page, written beside or away from the run): no link
/// leaves the page's directory, so the page and its data move together (#75: links such as
/// `../clock/clock.json` broke when the page was moved).
fn page_copy(page_dir: &Path, suite: &str, file: &Path) -> Result<String> {
    let slashed = |p: &Path| -> String {
        p.components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/")
    };
    if let Ok(inside) = file.strip_prefix(page_dir) {
        return Ok(slashed(inside));
    }
    let name = file.file_name().context("a data file with no name")?;
    let copy = Path::new("data").join(suite).join(name);
    let to = page_dir.join(&copy);
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::copy(file, &to)
        .with_context(|| format!("cannot copy {} into the page's data", file.display()))?;
    Ok(slashed(&copy))
}

/// `text` with the five characters HTML gives meaning to escaped.
/// The curated tables as HTML tables, each with its note.
fn curated_tables(tables: &[super::curated::Table]) -> String {
    let mut html = String::new();
    for t in tables {
        let _ = writeln!(html, "<h3>{}</h3>\n<table>", escape(t.title));
        let header: Vec<String> = t
            .header
            .iter()
            .map(|h| format!("<th>{}</th>", escape(h)))
            .collect();
        let _ = writeln!(html, "<tr>{}</tr>", header.concat());
        for row in &t.rows {
            let cells: Vec<String> = row
                .iter()
                .map(|c| format!("<td>{}</td>", escape(c)))
                .collect();
            let _ = writeln!(html, "<tr>{}</tr>", cells.concat());
        }
        let _ = writeln!(html, "</table>\n<p class=\"files\">{}</p>", escape(t.note));
    }
    html
}

pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_never_leaves_the_pages_directory() {
        let dir = tempfile::tempdir().unwrap();
        let (run, page) = (dir.path().join("run"), dir.path().join("run/report-html"));
        std::fs::create_dir_all(run.join("clock")).unwrap();
        std::fs::create_dir_all(&page).unwrap();
        std::fs::write(run.join("clock/clock.json"), "{}").unwrap();
        // A file of the page's own directory (a live run's page) is linked where it lies.
        assert_eq!(
            page_copy(&run, "clock", &run.join("clock/clock.json")).unwrap(),
            "clock/clock.json"
        );
        // One outside it is copied in.
        assert_eq!(
            page_copy(&page, "clock", &run.join("clock/clock.json")).unwrap(),
            "data/clock/clock.json"
        );
        assert_eq!(
            std::fs::read_to_string(page.join("data/clock/clock.json")).unwrap(),
            "{}"
        );
    }

    #[test]
    fn markup_in_names_is_text() {
        assert_eq!(escape("x < y & \"z\""), "x &lt; y &amp; &quot;z&quot;");
    }
}

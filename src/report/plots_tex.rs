//! `plots.tex`: one LaTeX `figure` per re-drawn plot of a run, so `\input{plots.tex}`
//! places them all, each captioned with what was measured, how, and on what (device, clock,
//! driver, gpubench build, date) from the run's own metadata.

use std::fmt::Write as _;

use super::metadata::SavedMetadata;
use super::summary::latex_escape;

/// One drawn plot: the suite directory it belongs to (empty for a single-suite run), its
/// file name inside the report, and the suite's metadata.
pub struct DrawnPlot<'a> {
    pub suite_dir: &'a str,
    pub file: &'a str,
    pub metadata: &'a SavedMetadata,
    /// What the suite measures, in one line (its help text), where the run states no method.
    pub about: &'a str,
}

/// The caption's account of the method: the suite's own `settings.method` where it wrote one.
fn method(figure: &DrawnPlot) -> String {
    figure
        .metadata
        .settings
        .get("method")
        .and_then(|m| m.as_str())
        .unwrap_or(figure.about)
        .trim_end_matches('.')
        .to_string()
}

/// `figures` as LaTeX; `page_wide` figures go in `figure*`, which spans both columns of a
/// two-column paper.
pub fn render(figures: &[DrawnPlot], page_wide: bool) -> String {
    let environment = if page_wide { "figure*" } else { "figure" };
    let mut tex = String::from(
        "% gpubench plots: \\input{plots.tex} with \\usepackage{graphicx}; paths are relative\n% to this file's directory (\\graphicspath or \\import otherwise).\n",
    );
    for figure in figures {
        let m = figure.metadata;
        let path = if figure.suite_dir.is_empty() {
            figure.file.to_string()
        } else {
            format!("{}/{}", figure.suite_dir, figure.file)
        };
        let stem = figure.file.rsplit_once('.').map_or(figure.file, |(s, _)| s);
        let label: String = format!("{}-{stem}", m.suite)
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let clock = m.sm_clock_before.mhz.map_or(String::new(), |mhz| {
            format!(", SM clock {mhz:.0} MHz measured")
        });
        let caption = format!(
            "{} ({}): {}. {} (CC {}{clock}), driver {} (CUDA {}); gpubench {} ({}), {}.",
            m.suite,
            stem.replace('_', " "),
            method(figure),
            m.device.name,
            m.device.compute_capability,
            m.device.driver_version.as_deref().unwrap_or("unknown"),
            m.device.driver_cuda_version,
            m.build.gpubench_version,
            m.build.git_commit.get(..12).unwrap_or(&m.build.git_commit),
            m.started_utc.get(..10).unwrap_or(&m.started_utc),
        );
        let _ = write!(
            tex,
            "\\begin{{{environment}}}[tbp]\n  \\centering\n  \\includegraphics[width=\\linewidth]{{{}}}\n  \\caption{{{}}}\n  \\label{{fig:gpubench-{label}}}\n\\end{{{environment}}}\n\n",
            path,
            latex_escape(&caption)
        );
    }
    tex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_figure_gets_a_captioned_environment_from_its_metadata() {
        let mut metadata = SavedMetadata {
            suite: "cache".into(),
            started_utc: "2026-11-22T22:14:28Z".into(),
            settings: serde_json::json!({"method": "64-bit pointer chase; 95% of it."}),
            ..SavedMetadata::default()
        };
        metadata.device.name = "NVIDIA H100 80GB HBM3".into();
        metadata.device.compute_capability = "9.0".into();
        metadata.sm_clock_before.mhz = Some(1980.0);
        let figures = [
            DrawnPlot {
                suite_dir: "cache-l2",
                file: "cache.pdf",
                metadata: &metadata,
                about: "unused",
            },
            DrawnPlot {
                suite_dir: "",
                file: "tlb_strides.pdf",
                metadata: &metadata,
                about: "unused",
            },
        ];
        let tex = render(&figures, false);
        assert_eq!(tex.matches("\\begin{figure}").count(), 2);
        let wide = render(&figures, true);
        assert_eq!(wide.matches("\\begin{figure*}").count(), 2);
        assert_eq!(wide.matches("\\end{figure*}").count(), 2);
        assert!(
            tex.contains("\\includegraphics[width=\\linewidth]{cache-l2/cache.pdf}"),
            "{tex}"
        );
        assert!(tex.contains("64-bit pointer chase; 95\\% of it. NVIDIA H100 80GB HBM3 (CC 9.0, SM clock 1980 MHz measured)"), "{tex}");
        assert!(tex.contains("2026-11-22."), "{tex}");
        assert!(
            tex.contains("\\label{fig:gpubench-cache-tlb-strides}"),
            "{tex}"
        );
    }
}

//! Figures measured while NVML saw the clocks held down (a power cap, a thermal slowdown):
//! each suite records what NVML said in its `metadata.json` (`nvml.throttled`); the summary
//! carries it per suite, and the summary's tables and `compare` mark every figure that suite
//! gave, since a figure in cycles or bytes per second taken at a lowered clock may read low.

use super::figures::Figure;
use super::summary::model::Summary;

/// What the Value cells of a throttled suite's figures carry.
pub const MARK: &str = "(throttled)";

/// What NVML said of the suite `figure` came from in `summary`, where it was throttled.
pub fn of<'a>(summary: &'a Summary, figure: &Figure) -> Option<&'a str> {
    of_source(summary, &figure.source)
}

/// What NVML said of the suite a summary source (`sync/sync.json`: the suite first) names,
/// where it was throttled.
pub fn of_source<'a>(summary: &'a Summary, source: &str) -> Option<&'a str> {
    let suite = source.split('/').next().unwrap_or_default();
    let file = source.rsplit('/').next().unwrap_or_default();
    summary
        .suites
        .iter()
        .find(|s| s.name == suite)
        .and_then(|s| s.throttled_for(file))
}

/// The summary's section naming each throttled suite and what NVML said, or nothing.
pub fn markdown_section(summary: &Summary) -> String {
    let throttled: Vec<(String, &str)> = summary
        .suites
        .iter()
        .flat_map(|s| s.throttled_named())
        .collect();
    if throttled.is_empty() {
        return String::new();
    }
    let mut md = format!(
        "\n## Measured under throttling\n\nNVML saw the clocks held down while these suites ran; every figure they gave is marked {MARK} above and may read low.\n\n| Suite | What NVML saw |\n|---|---|\n"
    );
    for (suite, what) in throttled {
        md += &format!(
            "| {} | {} |\n",
            super::text::markdown_cell(&suite),
            super::text::markdown_cell(what)
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::summary::model::SuiteTiming;

    fn summary(throttled: Option<&str>) -> Summary {
        Summary {
            suites: vec![SuiteTiming {
                shared: None,
                name: "sync".into(),
                status: "complete".into(),
                seconds: Some(1.0),
                error: None,
                time_split: None,
                throttled: throttled.map(str::to_string),
                parts: Vec::new(),
            }],
            ..Summary::of(Vec::new())
        }
    }

    fn figure(source: &str) -> Figure {
        Figure {
            key: "sync/barrier cost".into(),
            source: source.into(),
            domain: crate::report::figures::Domain::Measured,
            ..Figure::sample("Sync", "barrier cost", Some(20.0), "cycles", "")
        }
    }

    #[test]
    fn a_figure_is_throttled_exactly_when_its_suite_was() {
        let held = summary(Some("power 3.0 ms"));
        assert_eq!(of(&held, &figure("sync/sync.json")), Some("power 3.0 ms"));
        assert_eq!(of(&held, &figure("synchronous/sync.json")), None);
        assert!(of_source(&held, "sync/sync.json").is_some());
        assert!(of_source(&held, "clock/clock.json").is_none());
        let free = summary(None);
        assert_eq!(of(&free, &figure("sync/sync.json")), None);
        assert!(markdown_section(&free).is_empty());
        let section = markdown_section(&held);
        assert!(section.contains("| sync | power 3.0 ms |"), "{section}");
    }

    /// Where a part of the suite's run was judged apart, its files' figures take its
    /// judgement and every other figure the suite's.
    #[test]
    fn a_part_judged_apart_marks_its_own_figures_only() {
        use crate::report::summary::model::PartThrottling;
        let mut sustained = summary(None);
        sustained.suites[0].name = "tensor".into();
        sustained.suites[0].parts = vec![PartThrottling {
            files: vec!["sustained.csv".into()],
            throttled: Some("power 9.0 ms".into()),
        }];
        assert_eq!(
            of_source(&sustained, "tensor/sustained.csv"),
            Some("power 9.0 ms")
        );
        assert_eq!(of_source(&sustained, "tensor/tensor.csv"), None);
        let section = markdown_section(&sustained);
        assert!(
            section.contains("| tensor (sustained.csv) | power 9.0 ms |"),
            "{section}"
        );
        // A suite held down before its part, and not during it.
        sustained.suites[0].throttled = Some("power 1.0 ms".into());
        sustained.suites[0].parts[0].throttled = None;
        assert_eq!(
            of_source(&sustained, "tensor/tensor.csv"),
            Some("power 1.0 ms")
        );
        assert_eq!(of_source(&sustained, "tensor/sustained.csv"), None);
    }
}

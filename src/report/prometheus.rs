//! `gpubench export DIR --format prometheus`: a run's figures in Prometheus' text exposition
//! format (version 0.0.4), for node_exporter's textfile collector: an operator who runs
//! gpubench as a node's health check writes the file where the collector looks
//! (`--collector.textfile.directory`), and the dashboards that read node_exporter read the
//! GPU's figures beside the node's.
//!
//! Each figure with a value is one sample of a gauge named from its key
//! (`cache/global/1/latency` in cycles → `gpubench_cache_global_1_latency_cycles`), labelled
//! with the GPU's UUID and name, the suite, the key itself and `status="figure"`. A figure the
//! run could not settle has no value sample: it is one sample of
//! `gpubench_figure_unresolved` with its typed reason, so an alert can count them and no panel
//! draws a number the run refused. Values per SM are `…_per_sm` samples with an `sm` label.
//! Verdicts in words (a branch order, a deadlock probe's outcome) are not exported: a metric
//! holds numbers. `gpubench_run_info` carries the run's gpubench version, commit, driver and
//! format, and `gpubench_run_start_time_seconds` when it started, so a stale file is seen.
//! Several GPUs' runs (a `--device all` directory) are one exposition, their samples told apart
//! by `gpu_uuid`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::figures::Figure;
use super::summary::Summary;

/// What tells one GPU's run apart from another's in the exposition, and what it was made with.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLabels {
    pub gpu_uuid: String,
    pub gpu: String,
    pub driver: String,
    pub gpubench_version: String,
    pub commit: String,
    /// The run-directory format, where the run recorded one.
    pub format: Option<u32>,
    /// When the run's first suite started (seconds since 1970), where it can be read.
    pub started_unix_seconds: Option<f64>,
}

/// The prefix of every metric gpubench writes.
const PREFIX: &str = "gpubench";

/// One metric family: its help line and its samples (label set, value), in the order added.
#[derive(Default)]
struct Family {
    help: String,
    samples: Vec<(Vec<(&'static str, String)>, f64)>,
}

/// The exposition of `runs` (one per GPU), families in name order.
pub fn exposition(runs: &[(RunLabels, Summary)]) -> String {
    let mut families: BTreeMap<String, Family> = BTreeMap::new();
    let mut add = |name: String, help: &str, labels: Vec<(&'static str, String)>, value: f64| {
        let family = families.entry(name).or_default();
        if family.help.is_empty() {
            family.help = help.to_string();
        }
        family.samples.push((labels, value));
    };
    for (run, summary) in runs {
        let gpu = || vec![("gpu_uuid", run.gpu_uuid.clone()), ("gpu", run.gpu.clone())];
        let mut info = gpu();
        info.extend([
            ("driver", run.driver.clone()),
            ("gpubench_version", run.gpubench_version.clone()),
            ("commit", run.commit.clone()),
            (
                "format",
                run.format.map_or(String::new(), |f| f.to_string()),
            ),
        ]);
        add(
            format!("{PREFIX}_run_info"),
            "The gpubench run a GPU's figures come from (value 1; its facts in the labels).",
            info,
            1.0,
        );
        if let Some(started) = run.started_unix_seconds {
            add(
                format!("{PREFIX}_run_start_time_seconds"),
                "When the run's first suite started, in seconds since 1970.",
                gpu(),
                started,
            );
        }
        for figure in &summary.figures {
            let Some(value) = figure.value.filter(|v| v.is_finite()) else {
                continue;
            };
            let mut labels = gpu();
            labels.push(("suite", suite_of(figure).to_string()));
            labels.push(("key", figure.key.clone()));
            if let Some(unresolved) = &figure.unresolved {
                labels.push(("reason", reason_name(unresolved.reason)));
                add(
                    format!("{PREFIX}_figure_unresolved"),
                    "A figure the run could not settle (value 1; why in `reason`): it has no value sample.",
                    labels,
                    1.0,
                );
                continue;
            }
            labels.push(("status", "figure".into()));
            let name = metric_name(figure);
            let help = format!("{}: {} ({})", figure.section, figure.quantity, unit(figure));
            if let Some(per_sm) = &figure.per_sm {
                for (sm, v) in per_sm.iter().enumerate() {
                    let Some(v) = v.filter(|v| v.is_finite()) else {
                        continue;
                    };
                    let mut labels = labels.clone();
                    labels.push(("sm", sm.to_string()));
                    add(
                        format!("{name}_per_sm"),
                        &format!("{help}, per SM"),
                        labels,
                        v,
                    );
                }
            }
            add(name, &help, labels, value);
        }
    }
    let mut text = String::new();
    for (name, family) in &families {
        let _ = writeln!(text, "# HELP {name} {}", escape_help(&family.help));
        let _ = writeln!(text, "# TYPE {name} gauge");
        for (labels, value) in &family.samples {
            let labels: Vec<String> = labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
                .collect();
            let _ = writeln!(text, "{name}{{{}}} {}", labels.join(","), number(*value));
        }
    }
    text
}

/// The suite that measured `figure`: its key's first part ([`super::keys`]).
fn suite_of(figure: &Figure) -> &str {
    figure
        .key
        .split(super::keys::SEP)
        .next()
        .unwrap_or_default()
}

/// A reason as files write it (`low-confidence`).
fn reason_name(reason: super::figures::Reason) -> String {
    serde_json::to_value(reason)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The unit as the help line says it.
fn unit(figure: &Figure) -> &str {
    if figure.unit.is_empty() {
        "count"
    } else {
        &figure.unit
    }
}

/// `gpubench_` and the key, then the unit, each made of what a metric name may hold
/// (`[a-z0-9_]`, every other run of characters one `_`): `cache/global/1/latency` in cycles is
/// `gpubench_cache_global_1_latency_cycles`, `GB/s` is `gb_per_s`, `%` is `percent`, `µs` is
/// `microseconds`.
pub fn metric_name(figure: &Figure) -> String {
    let unit = match figure.unit.as_str() {
        "%" => "percent".to_string(),
        // Not `s`: the micro sign is no metric-name character, and seconds are not meant.
        "µs" => "microseconds".to_string(),
        u => u.replace('/', " per "),
    };
    let mut name = format!("{PREFIX}_{}", snake(&figure.key));
    let unit = snake(&unit);
    if !unit.is_empty() && !name.ends_with(&format!("_{unit}")) {
        name = format!("{name}_{unit}");
    }
    name
}

/// `text` lower-cased, each run of characters outside `[a-z0-9]` one `_`, none at either end.
fn snake(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

/// A value as the format writes it: Go's float syntax, which Rust's shortest round-trip
/// form is (`32.1`, `1e-7`, `262144`).
fn number(value: f64) -> String {
    format!("{value}")
}

/// A help line's text: backslash and line feed escaped.
fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A label's value: backslash, double quote and line feed escaped.
fn escape_label(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::figures::Reason;

    fn labels(uuid: &str) -> RunLabels {
        RunLabels {
            gpu_uuid: uuid.into(),
            gpu: "NVIDIA H100 80GB HBM3".into(),
            driver: "580.65.06".into(),
            gpubench_version: "0.3.0".into(),
            commit: "abc".into(),
            format: Some(3),
            started_unix_seconds: Some(1.7e9),
        }
    }

    fn summary(figures: Vec<Figure>) -> Summary {
        Summary {
            format: Some(3),
            ..Summary::of(figures)
        }
    }

    #[test]
    fn names_come_from_keys_and_units() {
        let mut f = Figure::sample("Memory", "level 1 latency", Some(32.1), "cycles", "");
        f.key = "cache/global/1/latency".into();
        assert_eq!(metric_name(&f), "gpubench_cache_global_1_latency_cycles");
        f.key = "bandwidth/l2/read".into();
        f.unit = "GB/s".into();
        assert_eq!(metric_name(&f), "gpubench_bandwidth_l2_read_gb_per_s");
        f.key = "sync/barrier cost: Listing 4".into();
        f.unit = "%".into();
        assert_eq!(
            metric_name(&f),
            "gpubench_sync_barrier_cost_listing_4_percent"
        );
        f.key = "regs/allocation unit: registers".into();
        f.unit = "registers".into();
        assert_eq!(metric_name(&f), "gpubench_regs_allocation_unit_registers");
        f.unit = String::new();
        assert_eq!(metric_name(&f), "gpubench_regs_allocation_unit_registers");
        f.key = "launch/launch call of an empty kernel".into();
        f.unit = "µs".into();
        assert_eq!(
            metric_name(&f),
            "gpubench_launch_launch_call_of_an_empty_kernel_microseconds"
        );
    }

    #[test]
    fn an_unresolved_figure_is_a_status_and_never_a_value() {
        let mut settled = Figure::sample("Sync", "barrier cost", Some(20.0), "cycles", "");
        settled.key = "sync/barrier cost".into();
        let mut unsettled = settled.clone();
        unsettled.key = "sync/other".into();
        unsettled.value = Some(99.0);
        unsettled.settle(Reason::Uncalibrated);
        let text = exposition(&[(labels("GPU-1"), summary(vec![settled, unsettled]))]);
        assert!(text.contains("gpubench_sync_barrier_cost_cycles{gpu_uuid=\"GPU-1\",gpu=\"NVIDIA H100 80GB HBM3\",suite=\"sync\",key=\"sync/barrier cost\",status=\"figure\"} 20\n"), "{text}");
        assert!(
            text.contains("gpubench_figure_unresolved{gpu_uuid=\"GPU-1\",gpu=\"NVIDIA H100 80GB HBM3\",suite=\"sync\",key=\"sync/other\",reason=\"uncalibrated\"} 1\n"),
            "{text}"
        );
        assert!(!text.contains(" 99"), "{text}");
        assert!(!text.contains("gpubench_sync_other"), "{text}");
    }

    #[test]
    fn label_values_and_help_are_escaped() {
        let mut f = Figure::sample("S", "a \"quoted\"\\ name\nnext", Some(1.0), "", "");
        f.key = "s/a \"quoted\"\\ name\nnext".into();
        let text = exposition(&[(labels("GPU-\"x\""), summary(vec![f]))]);
        assert!(text.contains("gpu_uuid=\"GPU-\\\"x\\\"\""), "{text}");
        assert!(
            text.contains("key=\"s/a \\\"quoted\\\"\\\\ name\\nnext\""),
            "{text}"
        );
        assert!(
            text.contains(
                "# HELP gpubench_s_a_quoted_name_next S: a \"quoted\"\\\\ name\\nnext (count)\n"
            ),
            "{text}"
        );
        // The run's info and start, and the one figure.
        assert_eq!(text.lines().filter(|l| l.starts_with("# TYPE")).count(), 3);
    }

    #[test]
    fn two_gpus_share_each_family_once_told_apart_by_uuid() {
        let mut f = Figure::sample("Sync", "barrier cost", Some(20.0), "cycles", "");
        f.key = "sync/barrier cost".into();
        f.per_sm = Some(vec![Some(19.0), None, Some(21.0)]);
        let text = exposition(&[
            (labels("GPU-1"), summary(vec![f.clone()])),
            (labels("GPU-2"), summary(vec![f])),
        ]);
        let types = |name: &str| {
            text.lines()
                .filter(|l| *l == format!("# TYPE {name} gauge"))
                .count()
        };
        assert_eq!(types("gpubench_sync_barrier_cost_cycles"), 1);
        assert_eq!(types("gpubench_sync_barrier_cost_cycles_per_sm"), 1);
        assert_eq!(types("gpubench_run_info"), 1);
        assert_eq!(text.matches("sm=\"").count(), 4, "{text}");
        assert!(!text.contains("sm=\"1\""), "{text}");
        assert!(text.contains("gpu_uuid=\"GPU-2\""));
    }
}

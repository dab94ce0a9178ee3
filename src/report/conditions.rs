//! The "Conditions" block at the top of summary.md and the page: what the run found of the
//! GPU's other users and state when it started (from its first suite's `metadata.json`), and
//! which suites another process or held-down clocks disturbed. Written only for runs that
//! recorded their conditions ([`crate::gpu::conditions`]); older runs' summaries stay as they
//! were written.

use super::metadata::SavedMetadata;
use super::summary::model::{ConditionLine, SuiteTiming};
use crate::gpu::conditions::Conditions;
use crate::gpu::health::GpuIdentity;

/// The block's lines for a run whose first complete suite wrote `first` and whose suites
/// ended as `suites` say; empty where the run recorded no conditions.
pub fn of_run(first: &SavedMetadata, suites: &[SuiteTiming]) -> Vec<ConditionLine> {
    let Some(conditions) = &first.conditions else {
        return Vec::new();
    };
    let mut lines = processes(conditions, suites);
    let throttled = suites
        .iter()
        .filter(|s| !s.throttled_stretches().is_empty())
        .count();
    lines.push(line(
        "Clocks held down (NVML)",
        if throttled == 0 {
            "in no suite".into()
        } else {
            format!(
                "in {throttled} of {} suites (marked \"(throttled)\")",
                suites.len()
            )
        },
        throttled == 0,
    ));
    lines.extend(clock_and_health(first));
    lines.extend(device_state(conditions, first.nvml.identity.as_ref()));
    lines
}

fn line(what: &str, found: String, ok: bool) -> ConditionLine {
    ConditionLine {
        what: what.into(),
        found,
        ok,
    }
}

/// Other processes at the start, and while the suites measured (each suite's own record).
fn processes(conditions: &Conditions, suites: &[SuiteTiming]) -> Vec<ConditionLine> {
    let mut lines = Vec::new();
    let at_start: Vec<String> = conditions
        .others_at_start
        .iter()
        .map(|p| p.describe())
        .collect();
    lines.push(match (&conditions.processes_unknown, at_start.is_empty()) {
        (_, false) => line(
            "Other processes at the start",
            format!("{} (measured anyway: --allow-shared)", at_start.join(", ")),
            false,
        ),
        (Some(why), true) => line(
            "Other processes at the start",
            format!(
                "not known: {why}{}",
                conditions
                    .utilization_at_start_percent
                    .map_or(String::new(), |u| format!("; utilization {u} %"))
            ),
            false,
        ),
        (None, true) => line("Other processes at the start", "none".into(), true),
    });
    // Suites that measured beside the processes above are said once, not suite by suite.
    let disturbed: Vec<String> = suites
        .iter()
        .filter_map(|s| {
            let said = s.shared.as_deref()?;
            let during = said
                .split("; ")
                .find(|part| part.contains("while the suite measured"));
            match (at_start.is_empty(), during) {
                (false, None) => None,
                (false, Some(during)) => Some(format!("{}: {during}", s.name)),
                (true, _) => Some(format!("{}: {said}", s.name)),
            }
        })
        .collect();
    lines.push(if disturbed.is_empty() && !at_start.is_empty() {
        line(
            "Other processes while suites measured",
            "every suite measured beside the processes above (every figure is unresolved)".into(),
            false,
        )
    } else if disturbed.is_empty() {
        line(
            "Other processes while suites measured",
            "none seen".into(),
            true,
        )
    } else {
        line(
            "Other processes while suites measured",
            format!(
                "{} (every figure of those suites is unresolved)",
                disturbed.join("; ")
            ),
            false,
        )
    });
    lines
}

/// The SM clock against NVML's maximum, the clock-limit reasons, temperature and ECC errors
/// at the first suite's start, where NVML said.
fn clock_and_health(first: &SavedMetadata) -> Vec<ConditionLine> {
    let mut lines = Vec::new();
    let nvml = &first.nvml;
    let identity = nvml.identity.as_ref();
    if let Some(before) = &nvml.before {
        let max = identity.and_then(|i| i.max_clocks).map(|c| c.sm_mhz);
        let measured = first.sm_clock_before.mhz;
        let above = match (measured, max) {
            (Some(m), Some(max)) => m > f64::from(max) * (1.0 + super::ceilings::TOLERANCE),
            _ => false,
        };
        let clock = match (before.clocks, max) {
            (Some(now), Some(max)) => format!(
                "NVML {} MHz of a maximum {max} MHz at the first suite's start; measured {}{}",
                now.sm_mhz,
                measured.map_or("-".into(), |m| format!("{m:.1} MHz")),
                if above {
                    ", above NVML's maximum (the clock suite's check says against which timers)"
                } else {
                    ""
                }
            ),
            _ => "NVML did not say".into(),
        };
        lines.push(line("SM clock", clock, !above));
        if let Some(reasons) = &before.clock_limit_reasons {
            let shown = if reasons.is_empty() {
                "none".to_string()
            } else {
                reasons.join(", ")
            };
            lines.push(line("Clock-limit reasons at the start", shown, true));
        }
        if let Some(t) = before.temperature_c {
            lines.push(line("Temperature at the start", format!("{t} °C"), true));
        }
        if let Some(uncorrected) = before.ecc_volatile_uncorrected {
            lines.push(line(
                "Uncorrected ECC errors (since the driver loaded)",
                uncorrected.to_string(),
                uncorrected == 0,
            ));
        }
    }
    lines
}

/// Pages pending retirement, MIG, persistence mode, ECC and the power limit.
fn device_state(conditions: &Conditions, identity: Option<&GpuIdentity>) -> Vec<ConditionLine> {
    let mut lines = Vec::new();
    if let Some(pending) = conditions.pages_pending_retirement {
        lines.push(line(
            "Pages pending retirement",
            if pending { "yes" } else { "no" }.into(),
            !pending,
        ));
    }
    if let Some(mig) = conditions.mig_enabled {
        lines.push(line(
            "MIG",
            if mig {
                "enabled: the run saw one instance"
            } else {
                "off"
            }
            .into(),
            !mig,
        ));
    }
    if let Some(identity) = identity {
        if let Some(persistence) = identity.persistence_mode {
            lines.push(line(
                "Persistence mode",
                if persistence { "on" } else { "off" }.into(),
                true,
            ));
        }
        if let Some(ecc) = identity.ecc_enabled {
            lines.push(line("ECC", if ecc { "on" } else { "off" }.into(), true));
        }
        if let Some(limit) = identity.enforced_power_limit_watts {
            lines.push(line(
                "Power limit (enforced)",
                format!("{limit:.0} W"),
                true,
            ));
        }
    }
    lines
}

/// The block as Markdown (empty for no lines).
pub fn markdown(lines: &[ConditionLine]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut md = String::from("## Conditions\n\n");
    for l in lines {
        md += &format!(
            "- {}{}: {}\n",
            if l.ok { "" } else { "**check:** " },
            super::text::markdown_cell(&l.what),
            super::text::markdown_cell(&l.found)
        );
    }
    md.push('\n');
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::conditions::{Conditions, GpuProcess};

    fn suite(name: &str, shared: Option<&str>) -> SuiteTiming {
        SuiteTiming {
            name: name.into(),
            status: "complete".into(),
            seconds: Some(1.0),
            error: None,
            time_split: None,
            throttled: None,
            parts: Vec::new(),
            shared: shared.map(str::to_string),
        }
    }

    #[test]
    fn a_run_before_conditions_were_recorded_has_no_block() {
        let lines = of_run(&SavedMetadata::default(), &[suite("clock", None)]);
        assert!(lines.is_empty());
        assert_eq!(markdown(&lines), "");
    }

    #[test]
    fn the_block_names_the_process_and_the_suites_it_disturbed() {
        let first = SavedMetadata {
            conditions: Some(Conditions {
                allow_shared: true,
                others_at_start: vec![GpuProcess {
                    pid: 4242,
                    name: "python3".into(),
                    used_memory_bytes: Some(714 << 20),
                    kind: "compute".into(),
                }],
                ..Conditions::default()
            }),
            ..SavedMetadata::default()
        };
        let md = markdown(&of_run(
            &first,
            &[
                suite(
                    "clock",
                    Some(
                        "measured with --allow-shared beside PID 4242 (python3, 714 MiB); PID 7 (stress) also used the GPU while the suite measured",
                    ),
                ),
                suite(
                    "sync",
                    Some("measured with --allow-shared beside PID 4242 (python3, 714 MiB)"),
                ),
            ],
        ));
        assert!(
            md.contains("- **check:** Other processes at the start: PID 4242 (python3, 714 MiB) (measured anyway: --allow-shared)"),
            "{md}"
        );
        assert!(
            md.contains("while suites measured: clock: PID 7 (stress) also used the GPU while the suite measured (every"),
            "{md}"
        );
        assert!(!md.contains("sync:"), "{md}");
        let alone = markdown(&of_run(
            &first,
            &[suite(
                "sync",
                Some("measured with --allow-shared beside PID 4242"),
            )],
        ));
        assert!(
            alone.contains("every suite measured beside the processes above"),
            "{alone}"
        );
        let quiet = SavedMetadata {
            conditions: Some(Conditions::default()),
            ..SavedMetadata::default()
        };
        let md = markdown(&of_run(&quiet, &[suite("clock", None)]));
        assert!(
            md.contains("- Other processes at the start: none\n"),
            "{md}"
        );
        assert!(!md.contains("check:"), "{md}");
    }
}

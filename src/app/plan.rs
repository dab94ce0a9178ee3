//! What `gpubench all` runs: every registered suite's entries with their arguments, in registry
//! order (the quick, basic ones, the clock first of all, before the long sweeps) except that
//! the entries that [start early](PlannedSuite::starts_early) come right after the clock, each
//! with a rough share of the run on an H100 for the progress estimate. `--quick` trims samples
//! and sweep density.

use crate::gpu::mechanisms::{Mechanism, on};
use crate::harness::PlannedSuite;

/// The command line of `planned` from its subcommand on (without `--output` and `--device`,
/// which `all` gives): the suite's name and the flags its settings come back from.
pub fn arguments(planned: &PlannedSuite) -> anyhow::Result<Vec<String>> {
    let suite = super::registry::require(planned.suite)?;
    let mut arguments = vec![planned.suite.to_string()];
    arguments.extend(suite.flags(&planned.settings)?);
    Ok(arguments)
}

/// Every suite `gpubench all` knows, by name.
pub fn suite_names() -> Vec<String> {
    plan(false).into_iter().map(|s| s.name).collect()
}

/// Every registered suite's entries, in registry order but for those that start early, which
/// follow the first (the clock).
pub fn plan(quick: bool) -> Vec<PlannedSuite> {
    let (early, mut rest): (Vec<_>, Vec<_>) = super::registry::SUITES
        .iter()
        .flat_map(|suite| suite.plan(quick))
        .partition(|s| s.starts_early && on(Mechanism::Early));
    let later = rest.split_off(rest.len().min(1));
    rest.into_iter().chain(early).chain(later).collect()
}

/// `plan` restricted by `--only` (if given) and `--skip`; unknown names are an error naming
/// the known ones.
pub fn choose(
    quick: bool,
    only: Option<&str>,
    skip: Option<&str>,
) -> Result<Vec<PlannedSuite>, String> {
    let all = plan(quick);
    let names = |list: &str| -> Result<Vec<String>, String> {
        let mut chosen = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            // "cache" stands for every cache space.
            let matched: Vec<String> = all
                .iter()
                .filter(|s| s.name == name || (name == "cache" && s.name.starts_with("cache-")))
                .map(|s| s.name.clone())
                .collect();
            if matched.is_empty() {
                return Err(format!(
                    "no suite '{name}'; choose from {}, or cache for every cache space",
                    all.iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            chosen.extend(matched);
        }
        Ok(chosen)
    };
    let only = only.map(names).transpose()?;
    let skip = skip.map(names).transpose()?.unwrap_or_default();
    let chosen: Vec<PlannedSuite> = all
        .into_iter()
        .filter(|s| only.as_ref().is_none_or(|o| o.contains(&s.name)))
        .filter(|s| !skip.contains(&s.name))
        .collect();
    if chosen.is_empty() {
        return Err("--only and --skip leave no suite to run".into());
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_runs_every_registered_suite() {
        let planned = plan(false);
        for suite in super::super::registry::SUITES {
            assert!(
                planned.iter().any(|p| p.suite == suite.name()),
                "{} is registered but `all` does not run it",
                suite.name()
            );
        }
    }

    #[test]
    fn every_suite_and_cache_space_is_planned_once() {
        let names = suite_names();
        for expected in [
            "clock",
            "divergence",
            "sync",
            "slots",
            "cache-texture",
            "cache-tlb",
        ] {
            assert_eq!(
                names.iter().filter(|n| *n == expected).count(),
                1,
                "{expected}"
            );
        }
        assert_eq!(plan(true).len(), plan(false).len());
        let full = plan(false);
        assert_eq!(full[0].name, "clock");
        assert_eq!(full[1].name, "cache-instruction", "it starts early");
        assert!(full[2..].iter().all(|s| !s.starts_early));
        // A quick run starts nothing early (it was 0.54 s faster so on an H200).
        assert!(plan(true).iter().all(|s| !s.starts_early));
        assert!(plan(true).iter().map(|s| s.estimate_seconds).sum::<f64>() < 80.0);
        // Slots starts ncu from the start of a full run; the quick run has no ncu.
        let early = |quick| -> Vec<String> {
            plan(quick)
                .into_iter()
                .filter(|s| s.prepares_from_start)
                .map(|s| s.name)
                .collect()
        };
        assert_eq!(early(false), ["slots"]);
        assert!(early(true).is_empty());
    }

    #[test]
    fn only_and_skip_choose_suites() {
        let chosen = choose(false, Some("cache"), Some("cache-tlb")).unwrap();
        assert_eq!(chosen.len(), 8);
        assert!(chosen.iter().all(|s| s.name.starts_with("cache-")));
        let chosen = choose(true, Some("clock, sync"), None).unwrap();
        let names: Vec<&str> = chosen.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["clock", "sync"]);
        assert!(
            choose(false, Some("nonsense"), None)
                .unwrap_err()
                .contains("nonsense")
        );
        assert!(choose(false, Some("clock"), Some("clock")).is_err());
    }
}

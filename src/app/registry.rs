//! Every GPU suite behind one interface, and the one list of them. A suite is a subcommand with
//! its own arguments, a measurement that writes a run directory, its entries in `gpubench all`,
//! the figures it gives the summary and the figures `report` re-draws. `all`, `report`, the
//! summary, the CLI and the plan walk [`SUITES`]. A suite implements
//! [`SuiteDef`](crate::harness::SuiteDef) (its subcommand as constants and an argument type,
//! and the rest); [`Suite`], the object-safe interface they walk, follows from it. A suite
//! that leaves out any part does not compile (every item but `curves` is required), and
//! `tests` below fail when one is named twice or
//! plans no entry that parses (`plan`'s, when `all` does not run one).

use std::path::Path;

use anyhow::Result;

use crate::harness::Suite;
use crate::report::figures::Figure;

/// Every suite, in the order `gpubench all` runs them (`crate::suites::ALL`, where each
/// suite's one registration line is).
pub static SUITES: &[&dyn Suite] = crate::suites::ALL;

pub fn find(name: &str) -> Option<&'static dyn Suite> {
    SUITES.iter().copied().find(|s| s.name() == name)
}

/// Hands the suites' subcommands to the CLI (before any command line is parsed).
pub fn hand_to_cli() {
    crate::cli::hand_suites(crate::cli::SuiteTable {
        commands: || SUITES.iter().map(|suite| suite.command()).collect(),
        known: |name| find(name).is_some(),
    });
}

/// The figures suite `suite` derives from its run directory `dir` ([`crate::report::summary::Derive`]).
pub fn derive_figures(suite: &str, dir: &Path) -> Result<Vec<Figure>> {
    require(suite)?.figures(dir)
}

/// `gpubench analyze divergence`: the divergence suite's analysis of a saved run, with no GPU.
pub fn analyze_divergence(args: &crate::cli::AnalyzeDivergenceArgs) -> Result<()> {
    crate::suites::divergence::analyze_saved(args)
}

/// `gpubench analyze cache`: the cache suite's reading of a saved curve, with no GPU.
pub fn analyze_cache(args: &crate::cli::AnalyzeCacheArgs) -> Result<()> {
    crate::suites::cache::analyze_saved(args)
}

/// [`find`], or a refusal (exit 2: the run directory is damaged or from another gpubench)
/// naming the suites this binary knows.
pub fn require(name: &str) -> Result<&'static dyn Suite> {
    find(name).ok_or_else(|| {
        let known = SUITES
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ");
        let message = if name.is_empty() {
            format!("the run directory's metadata.json names no suite (this gpubench knows {known})")
        } else {
            format!(
                "the run directory is of suite '{name}', which this gpubench does not know (it knows {known})"
            )
        };
        crate::error::UsageError::new(message).into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::metadata::SavedMetadata;

    #[test]
    fn the_committed_h100_runs_summarise_through_the_registry() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100");
        let summary =
            crate::report::summary::summarise(&root.join("shared"), derive_figures).unwrap();
        let latency = summary
            .figures
            .iter()
            .find(|f| f.key == "shared/banks/indexed-load-latency")
            .unwrap();
        assert!(latency.value.unwrap() > 1.0);
        let conflict = summary
            .figures
            .iter()
            .find(|f| f.key == "shared/banks/conflict-cost")
            .unwrap();
        assert_eq!(conflict.uncertainty, "95% CI");
        assert!(
            crate::report::summary::render_markdown(&summary)
                .contains("| Shared memory | cost per extra bank-conflict way |")
        );
        assert!(crate::report::summary::render_latex(&summary).contains("\\begin{longtable}"));
    }

    /// The CLI parses a suite's subcommand once the registry has handed the suites down, and
    /// the defaults are the papers' settings.
    #[test]
    fn defaults_are_the_papers_settings() {
        use crate::cli::{Command, Opts};
        use crate::suites::divergence::DivergenceArgs;
        use clap::{CommandFactory, FromArgMatches, Parser};
        hand_to_cli();
        Opts::command().debug_assert();
        let opts = Opts::try_parse_from(["gpubench", "divergence"]).unwrap();
        let Command::Suite(suite) = opts.command else {
            panic!("parsed the wrong subcommand")
        };
        assert_eq!(suite.name, "divergence");
        let args = DivergenceArgs::from_arg_matches(&suite.matches).unwrap();
        assert_eq!(
            args.to_config().unwrap(),
            crate::suites::divergence::measure::DivergenceConfig::default()
        );
    }

    #[test]
    fn every_suite_is_named_once_and_planned_in_full_and_quick_runs() {
        for (i, suite) in SUITES.iter().enumerate() {
            assert!(
                SUITES[i + 1..].iter().all(|s| s.name() != suite.name()),
                "{} registered twice",
                suite.name()
            );
            assert_eq!(suite.command().get_name(), suite.name());
            for quick in [false, true] {
                let plan = suite.plan(quick);
                assert!(!plan.is_empty(), "{} has no entry in all", suite.name());
                for entry in &plan {
                    assert_eq!(entry.suite, suite.name(), "{}", entry.name);
                    // Every planned settings value comes back from the flags `all` hands the
                    // child: they parse as the suite's own subcommand, to the same value.
                    let arguments = super::super::plan::arguments(entry).unwrap();
                    assert_eq!(arguments[0], suite.name());
                    let parsed = suite.command().try_get_matches_from(&arguments);
                    assert!(parsed.is_ok(), "{}: {:?}", entry.name, parsed.err());
                    assert_eq!(
                        suite.settings_from_flags(&arguments[1..]).unwrap(),
                        entry.settings,
                        "{}: {arguments:?}",
                        entry.name
                    );
                }
            }
        }
    }

    #[test]
    fn every_suite_of_the_committed_h100_run_summarises_and_is_known() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100/all");
        let mut seen = Vec::new();
        for entry in std::fs::read_dir(&root).unwrap() {
            let dir = entry.unwrap().path();
            let Ok(metadata) = SavedMetadata::read(&dir) else {
                continue;
            };
            let suite = require(&metadata.suite).unwrap();
            let derived = suite.figures(&dir).unwrap();
            assert!(
                !derived.is_empty(),
                "{} gave the summary nothing",
                dir.display()
            );
            // What the run wrote as it finished is what its files give again.
            let saved: crate::report::figures::FiguresFile =
                crate::report::saved::read_json(&dir, crate::report::figures::FILE).unwrap();
            assert_eq!(saved.suite, suite.name());
            assert_eq!(saved.figures, derived, "{}", dir.display());
            seen.push(suite.name());
        }
        // A suite newer than the committed `all` run must have a committed run of its own,
        // where [`OWN_RUNS`] says.
        let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
        let committed = committed_suites(&results);
        for suite in SUITES {
            assert!(
                seen.contains(&suite.name()) || committed.contains(suite.name()),
                "{} is registered but has no complete committed run under results/",
                suite.name()
            );
        }
        for (suite, dir) in OWN_RUNS {
            assert!(find(suite).is_some(), "{suite} is not registered");
            assert!(
                committed_suites(&results.join(dir)).contains(suite),
                "{suite} has no complete committed run under results/{dir}"
            );
        }
    }

    /// The suites newer than the committed `all` run and the folder under `results/` that
    /// holds a complete run of each.
    const OWN_RUNS: [(&str, &str); 3] = [
        ("sm-map", "h100/sm-map"),
        ("launch", "h200/launch"),
        ("dpx", "h200/dpx"),
    ];

    /// The suites of every complete run directory under `dir`.
    fn committed_suites(dir: &Path) -> std::collections::BTreeSet<String> {
        let mut found = std::collections::BTreeSet::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(dir) = stack.pop() {
            if let Ok(metadata) = SavedMetadata::read(&dir)
                && metadata.complete()
            {
                found.insert(metadata.suite.clone());
                continue;
            }
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(entry.path());
                }
            }
        }
        found
    }
}

//! What `gpubench all` runs: every suite with its arguments, in an order that puts the quick,
//! basic ones (the clock first of all) before the long sweeps, each with a rough duration on an
//! H100 for the progress estimate. `--quick` trims samples and sweep density.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedSuite {
    /// The sub-directory name, also what `--only` and `--skip` match.
    pub name: String,
    /// gpubench's arguments for it (without `--output` and `--device`).
    pub args: Vec<String>,
    /// Seconds it took on an H100 (for the progress bar's estimate only).
    pub estimate_seconds: f64,
}

const CACHE_SPACES: [&str; 9] = [
    "global",
    "l2",
    "readonly",
    "shared",
    "constant",
    "constant-uniform",
    "texture",
    "tlb",
    "instruction",
];

/// Every suite `gpubench all` knows, by name.
pub fn suite_names() -> Vec<String> {
    plan(false).into_iter().map(|s| s.name).collect()
}

pub fn plan(quick: bool) -> Vec<PlannedSuite> {
    let suite = |name: &str, args: &[&str], estimate: f64| PlannedSuite {
        name: name.to_string(),
        args: args.iter().map(|a| a.to_string()).collect(),
        estimate_seconds: estimate,
    };
    let mut suites = vec![
        suite("clock", &["clock"], 2.0),
        if quick {
            suite("divergence", &["divergence", "--samples", "32"], 2.0)
        } else {
            suite("divergence", &["divergence"], 3.0)
        },
        if quick {
            suite("shared", &["shared", "--iterations", "256"], 1.0)
        } else {
            suite("shared", &["shared"], 1.5)
        },
        if quick {
            suite("pipeline", &["pipeline", "--iterations", "64"], 2.0)
        } else {
            suite("pipeline", &["pipeline"], 3.0)
        },
        suite("branch", &["branch"], 1.0),
        suite("sync", &["sync"], 6.6),
        // Every sixth cap still leaves one allocation unit consistent with the H100's data
        // (every eighth leaves four); the summary flags a run where more than one fits.
        suite("regs", &["regs", "--step", "6"], 14.0),
        if quick {
            suite("slots", &["slots", "--repeats", "3"], 5.0)
        } else {
            suite("slots", &["slots"], 6.0)
        },
    ];
    for space in CACHE_SPACES {
        let mut args = vec!["cache", "--space", space];
        // The L2 and instruction sweeps are the long ones (each L2 point chases tens of MiB,
        // each instruction point is a JIT compile): fewer fine points there. The L2 keeps its
        // one-line stride: a stride past the line would overstate the footprint it caches.
        let estimate = match (space, quick) {
            ("l2", true) => {
                args.extend(["--fine-points", "2"]);
                12.0
            }
            ("l2", false) => {
                args.extend(["--fine-points", "4"]);
                18.0
            }
            ("instruction", true) => {
                args.extend(["--stride", "256", "--fine-points", "4"]);
                10.0
            }
            ("instruction", false) => {
                args.extend(["--stride", "64", "--fine-points", "4"]);
                15.0
            }
            (_, true) => {
                args.extend(["--fine-points", "16"]);
                1.0
            }
            _ => 1.0,
        };
        suites.push(suite(&format!("cache-{space}"), &args, estimate));
    }
    suites
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
        assert!(plan(true).iter().map(|s| s.estimate_seconds).sum::<f64>() < 80.0);
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

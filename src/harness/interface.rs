//! What a suite is to the rest of gpubench: a subcommand with its own arguments, a measurement
//! that writes a run directory, its entries in `gpubench all`, the figures it gives the summary
//! and the figures `report` re-draws. A suite implements [`SuiteDef`] (its subcommand as
//! constants and an argument type, and the rest); [`Suite`], the object-safe interface `all`,
//! `report`, the summary and the CLI walk (through `app::registry::SUITES`), follows from it.
//! A suite that leaves out any part does not compile (every item but `EXAMPLES`, `full`,
//! `quick`, `in_all`, `plan`, `curves` and `kernels_to_prebuild` is required).

use std::path::Path;

use anyhow::Result;
use clap::{ArgMatches, Args, FromArgMatches};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::PlannedSuite;
use crate::error::UsageError;
use crate::gpu::prebuilt::Generated;
use crate::report::figures::Figure;
use crate::report::metadata::SavedMetadata;
use crate::report::overlay::Curve;
use crate::report::run_dir::RunDir;

/// A suite's measurement: its settings in, a new run directory out ([`SuiteDef::RUN`]).
pub type Measure<Args> = fn(&Args) -> Result<()>;

/// What reads a suite's figures from its run directory ([`SuiteDef::FIGURES`]).
pub type ReadFigures = fn(&Path) -> Result<Vec<Figure>>;

pub trait Suite: Sync {
    /// The subcommand, the `suite` of its metadata.json and the stem of its `all` entries.
    fn name(&self) -> &'static str;
    /// The subcommand's one line of help: what the suite measures.
    fn about(&self) -> &'static str;
    /// The subcommand with its arguments (see [`command`]).
    fn command(&self) -> clap::Command;
    /// Parses `matches` (from [`Suite::command`]) and measures into a new run directory.
    fn measure(&self, matches: &ArgMatches) -> Result<()>;
    /// What `gpubench all` runs of it, each entry with its settings as a value.
    fn plan(&self, quick: bool) -> Vec<PlannedSuite>;
    /// The subcommand's flags that give `settings` (an entry's, from [`Suite::plan`]) back:
    /// what `all` hands the suite's child process, after the subcommand's name.
    fn flags(&self, settings: &Value) -> Result<Vec<String>>;
    /// The settings the subcommand's `flags` (after its name) parse to, serialized.
    fn settings_from_flags(&self, flags: &[String]) -> Result<Value>;
    /// The settings `matches` (from [`Suite::command`]) hold, serialized.
    fn settings_of(&self, matches: &ArgMatches) -> Result<Value>;
    /// The summary's rows from a complete run directory of this suite, with no GPU.
    fn figures(&self, dir: &Path) -> Result<Vec<Figure>>;
    /// Re-draws the run's plots into `out`, with no GPU.
    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()>;
    /// The lines of its plots, read back from a complete run directory, that the fleet page
    /// draws over another run's (`report::overlay`).
    fn curves(&self, dir: &Path) -> Result<Vec<Curve>>;
    /// The generated kernels an `all` entry of it (its `settings`, as [`Suite::plan`] states
    /// them) asks for first, for `all` to compile ahead while other suites measure.
    fn kernels_to_prebuild(&self, settings: &Value) -> Vec<Generated>;
}

/// What a suite writes: its subcommand (name, one line of help, arguments) and the
/// measurement they drive, beside the [`Suite`] methods that need more than that. Every suite
/// implements this; [`Suite`] follows from it.
pub trait SuiteDef: Sync {
    /// The subcommand, the `suite` of its metadata.json and the stem of its `all` entries.
    const NAME: &'static str;
    /// The subcommand's one line of help.
    const ABOUT: &'static str;
    /// Flags worth showing in its help's examples (`--space texture`), beside the examples
    /// every suite has.
    const EXAMPLES: &'static [&'static str] = &[];
    /// Its settings: the subcommand's flags (clap), the values `plan` states (serde), and
    /// clap's defaults ([`super::plan::defaults`]).
    type Args: Args + FromArgMatches + Serialize + DeserializeOwned;
    /// Measures into a new run directory.
    const RUN: Measure<Self::Args>;
    /// As [`Suite::figures`]: the summary's rows from its files.
    const FIGURES: ReadFigures;
    /// The GPU seconds its `all` entry is planned at ([`PlannedSuite::new`]): in a quick run,
    /// and in a full one.
    const SECONDS_IN_ALL: (f64, f64);
    /// The settings a full `all` runs it with, from clap's defaults ([`super::plan::defaults`]):
    /// the defaults themselves unless the suite says otherwise.
    fn full(defaults: Self::Args) -> Self::Args {
        defaults
    }
    /// The settings `all --quick` runs it with, from clap's defaults: a full run's unless the
    /// suite says otherwise (fewer samples, sparser sweeps).
    fn quick(defaults: Self::Args) -> Self::Args {
        Self::full(defaults)
    }
    /// The settings `all` runs it with (a full run, or `quick`) and the GPU seconds its entry
    /// is planned at, from [`SuiteDef::full`], [`SuiteDef::quick`] and
    /// [`SuiteDef::SECONDS_IN_ALL`]; a suite of several entries states one of them here and
    /// the rest in its [`SuiteDef::plan`].
    fn in_all(quick: bool) -> (Self::Args, f64) {
        let defaults = super::plan::defaults();
        let settings = if quick {
            Self::quick(defaults)
        } else {
            Self::full(defaults)
        };
        let (quick_seconds, full_seconds) = Self::SECONDS_IN_ALL;
        (settings, if quick { quick_seconds } else { full_seconds })
    }
    /// As [`Suite::plan`]: one entry, named as the suite, of [`SuiteDef::in_all`].
    fn plan(&self, quick: bool) -> Vec<PlannedSuite> {
        let (settings, seconds) = Self::in_all(quick);
        vec![PlannedSuite::new::<Self>(Self::NAME, &settings, seconds)]
    }
    /// As [`Suite::redraw`].
    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()>;
    /// As [`Suite::curves`]; a suite whose figures are one value per quantity (bars, verdicts)
    /// has none to overlay, and the fleet page links both runs' files instead.
    fn curves(&self, _dir: &Path) -> Result<Vec<Curve>> {
        Ok(Vec::new())
    }
    /// As [`Suite::kernels_to_prebuild`], from an entry's settings; most suites load only
    /// their committed module, which `all` compiles ahead anyway.
    fn kernels_to_prebuild(&self, _settings: &Self::Args) -> Vec<Generated> {
        Vec::new()
    }
}

impl<T: SuiteDef> Suite for T {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn about(&self) -> &'static str {
        T::ABOUT
    }

    fn command(&self) -> clap::Command {
        let command = T::Args::augment_args(clap::Command::new(T::NAME)).mut_arg("output", |a| {
            a.help(format!(
                "New run directory (default: gpubench-runs/<UTC time>-{}); must not exist",
                T::NAME
            ))
        });
        // Augmenting sets the command's about from each Args struct's doc comment; the
        // suite's own sentence goes on last so the help lists it, not PlotArgs' doc.
        let command = crate::cli::PlotArgs::augment_args(command);
        let command = crate::cli::ConditionArgs::augment_args(command);
        crate::cli::SerialArgs::augment_args(command)
            .about(T::ABOUT)
            .long_about(None)
            .after_help(crate::cli::examples::suite(T::NAME, T::EXAMPLES))
    }

    fn measure(&self, matches: &ArgMatches) -> Result<()> {
        let args =
            T::Args::from_arg_matches(matches).map_err(|e| UsageError::new(e.to_string()))?;
        let plots = crate::cli::PlotArgs::from_arg_matches(matches)
            .map_err(|e| UsageError::new(e.to_string()))?;
        crate::report::plot::set_style(plots.style());
        let conditions = crate::cli::ConditionArgs::from_arg_matches(matches)
            .map_err(|e| UsageError::new(e.to_string()))?;
        crate::gpu::conditions::set_allow_shared(conditions.allow_shared);
        super::suite::request(serde_json::to_value(&args)?);
        T::RUN(&args)
    }

    fn plan(&self, quick: bool) -> Vec<PlannedSuite> {
        SuiteDef::plan(self, quick)
    }

    fn figures(&self, dir: &Path) -> Result<Vec<Figure>> {
        T::FIGURES(dir)
    }

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        SuiteDef::redraw(self, run, out)
    }

    fn curves(&self, dir: &Path) -> Result<Vec<Curve>> {
        SuiteDef::curves(self, dir)
    }

    fn flags(&self, settings: &Value) -> Result<Vec<String>> {
        let defaults = serde_json::to_value(super::plan::defaults::<T::Args>())?;
        super::plan::flags(
            &T::Args::augment_args(clap::Command::new(T::NAME)),
            settings,
            &defaults,
        )
    }

    fn settings_from_flags(&self, flags: &[String]) -> Result<Value> {
        let matches = T::Args::augment_args(clap::Command::new(T::NAME))
            .try_get_matches_from(std::iter::once(T::NAME).chain(flags.iter().map(String::as_str)))
            .map_err(|e| UsageError::new(e.to_string()))?;
        let args =
            T::Args::from_arg_matches(&matches).map_err(|e| UsageError::new(e.to_string()))?;
        Ok(serde_json::to_value(args)?)
    }

    fn settings_of(&self, matches: &ArgMatches) -> Result<Value> {
        let args =
            T::Args::from_arg_matches(matches).map_err(|e| UsageError::new(e.to_string()))?;
        Ok(serde_json::to_value(args)?)
    }

    fn kernels_to_prebuild(&self, settings: &Value) -> Vec<Generated> {
        // Settings that do not read as the suite's own have nothing to build ahead (the suite
        // will say what is wrong with them).
        serde_json::from_value::<T::Args>(settings.clone())
            .map(|settings| SuiteDef::kernels_to_prebuild(self, &settings))
            .unwrap_or_default()
    }
}

/// A finished run directory of one suite, as `report` hands it to [`Suite::redraw`].
pub struct SavedRun<'a> {
    pub dir: &'a Path,
    pub metadata: &'a SavedMetadata,
}

impl SavedRun<'_> {
    /// A plot title naming the device and the clock the run saw.
    pub fn title(&self, what: &str) -> String {
        self.metadata.plot_title(what)
    }

    /// What the run was asked: `settings.json` read as the suite's settings type (`A`, its
    /// [`SuiteDef::Args`]). None for a run made before settings.json was written (a874ebf);
    /// a redraw then reads the same request from the metadata's settings. What the run
    /// resolved from the request (a stride, a carveout) stays in the metadata.
    pub fn requested<A: DeserializeOwned>(&self) -> Result<Option<A>> {
        crate::report::saved::read_json_optional(self.dir, "settings.json")
    }
}

/// Where [`Suite::redraw`] puts plots, and the list of what it drew.
pub struct Redraw<'a> {
    out: &'a RunDir,
    extension: &'a str,
    pub drawn: Vec<String>,
}

impl<'a> Redraw<'a> {
    pub fn new(out: &'a RunDir, extension: &'a str) -> Redraw<'a> {
        Redraw {
            out,
            extension,
            drawn: Vec::new(),
        }
    }

    /// Draws `name.<extension>` with `draw`.
    pub fn plot(&mut self, name: &str, draw: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
        let file = format!("{name}.{}", self.extension);
        self.out.write_with(&file, draw)?;
        self.drawn.push(file);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Asked {
        seed: u64,
    }

    #[test]
    fn the_request_is_read_from_settings_json_and_absent_in_older_runs() {
        let dir = tempfile::tempdir().unwrap();
        let metadata = SavedMetadata::default();
        let run = SavedRun {
            dir: dir.path(),
            metadata: &metadata,
        };
        assert_eq!(run.requested::<Asked>().unwrap(), None);
        std::fs::write(dir.path().join("settings.json"), r#"{"seed": 7}"#).unwrap();
        assert_eq!(run.requested::<Asked>().unwrap(), Some(Asked { seed: 7 }));
        std::fs::write(dir.path().join("settings.json"), r#"{"seed": "seven"}"#).unwrap();
        let refused = run.requested::<Asked>().unwrap_err();
        assert!(
            format!("{refused:#}").contains("settings.json"),
            "{refused:#}"
        );
    }
}

//! Command-line types. clap stops here: every subcommand's arguments become a plain config.

mod calibrate;
mod devices;
pub mod examples;
mod export;
pub mod flags;
pub use calibrate::CalibrateArgs;
pub use devices::{DeviceSelection, SerialArgs, Target};
pub use export::{ExportArgs, ExportFormat};

use std::path::PathBuf;

use clap::{ArgMatches, Args, FromArgMatches, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "gpubench",
    version,
    about = "Measures the hidden microarchitecture of NVIDIA GPUs and writes CSV, JSON and PNG",
    propagate_version = true,
    after_help = format!("{}\n\n{}", examples::TOP, crate::error::exit_codes_help())
)]
pub struct Opts {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Device properties, the toolchain that built the kernels, and the measured SM clock.
    #[command(after_help = examples::INFO)]
    Info(InfoArgs),
    /// The GPU suites: one subcommand each, from `app::registry::SUITES`.
    #[command(flatten)]
    Suite(SuiteCommand),
    /// Every suite into one run directory, with summary.md / .tex / .json and index.md.
    #[command(after_help = examples::ALL)]
    All(AllArgs),
    /// Re-make the tables and plots of a run directory from its files, with no GPU.
    #[command(after_help = examples::REPORT)]
    Report(ReportArgs),
    /// Put the summaries of several runs side by side and flag what differs.
    #[command(after_help = examples::COMPARE)]
    Compare(CompareArgs),
    /// A machine model of the GPU from a run directory, as JSON with a versioned schema.
    #[command(
        after_help = examples::EXPORT,
        override_usage = "gpubench export [OPTIONS] <DIR>\n       gpubench export --schema"
    )]
    Export(ExportArgs),
    /// Re-run an analysis on saved data, with no GPU.
    #[command(after_help = examples::ANALYZE)]
    Analyze {
        #[command(subcommand)]
        target: AnalyzeTarget,
    },
    /// Run a loop kernel on the reconvergence-stack emulator (no GPU) and draw its stack and
    /// execution-mask history.
    #[command(after_help = examples::EMULATE)]
    Emulate(EmulateArgs),
    /// Check that cache-level confidences mean what they say, on simulated caches (no GPU):
    /// a reliability diagram of stated confidence against the share of answers right.
    #[command(after_help = examples::CALIBRATE)]
    Calibrate(CalibrateArgs),
}

/// The registered suites as the command line needs them, handed down by the registry
/// (`app::registry::hand_to_cli`) before anything is parsed: the CLI does not know the suites.
#[derive(Debug, Clone, Copy)]
pub struct SuiteTable {
    /// Every suite's subcommand, in the registry's order.
    pub commands: fn() -> Vec<clap::Command>,
    /// Whether a subcommand name is a suite.
    pub known: fn(&str) -> bool,
}

static SUITES: std::sync::OnceLock<SuiteTable> = std::sync::OnceLock::new();

/// Gives the CLI the suites' subcommands (the first table handed down stays).
pub fn hand_suites(table: SuiteTable) {
    let _ = SUITES.set(table);
}

fn known_suite(name: &str) -> bool {
    SUITES.get().is_some_and(|t| (t.known)(name))
}

/// One GPU suite's subcommand: its name and its matches, which the suite parses itself (so a
/// new suite adds its subcommand by being registered, not by a variant here).
#[derive(Debug, Clone)]
pub struct SuiteCommand {
    pub name: String,
    pub matches: ArgMatches,
}

impl FromArgMatches for SuiteCommand {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        match matches.subcommand() {
            Some((name, sub)) if known_suite(name) => Ok(SuiteCommand {
                name: name.to_string(),
                matches: sub.clone(),
            }),
            _ => Err(clap::Error::new(clap::error::ErrorKind::InvalidSubcommand)),
        }
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = SuiteCommand::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Subcommand for SuiteCommand {
    fn augment_subcommands(command: clap::Command) -> clap::Command {
        let commands = SUITES.get().map_or_else(Vec::new, |t| (t.commands)());
        commands
            .into_iter()
            .fold(command, |command, suite| command.subcommand(suite))
    }

    fn augment_subcommands_for_update(command: clap::Command) -> clap::Command {
        SuiteCommand::augment_subcommands(command)
    }

    fn has_subcommand(name: &str) -> bool {
        known_suite(name)
    }
}

#[derive(Debug, Args, serde::Serialize, serde::Deserialize)]
pub struct AllArgs {
    /// Fewer samples and sparser sweeps, for a first look.
    #[arg(long)]
    pub quick: bool,
    /// Comma-separated suites to run (e.g. clock,divergence,cache-l2; "cache" = every space).
    #[arg(long)]
    pub only: Option<String>,
    /// Comma-separated suites to leave out.
    #[arg(long)]
    pub skip: Option<String>,
    /// Seconds a suite may run before it is killed and recorded as timed out.
    #[arg(long, default_value_t = 600)]
    pub suite_timeout_seconds: u64,
    /// CUDA device index; `all`, or a list such as 0,2,3, runs once per GPU in child processes,
    /// side by side (`--serial`: one after another), under one directory with devices.json.
    #[arg(long, default_value = "0")]
    pub device: DeviceSelection,
    #[command(flatten)]
    #[serde(flatten)]
    pub plots: PlotArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub fan_out: SerialArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub conditions: ConditionArgs,
    /// New run directory (default: gpubench-runs/<UTC time>-all); must not exist.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Run every suite a second time (into DIR/repeat, after the first run) and put each
    /// figure the second run does not confirm with the summary's unresolved rows.
    #[arg(long)]
    pub repeat: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlotFormat {
    Png,
    Svg,
    /// Vector PDF (the SVG with the embedded font, converted by svg2pdf).
    Pdf,
    /// SVG plots and one self-contained `index.html` that shows them inline beside the
    /// tables (`report` and `all`). No PNGs: the page embeds the SVGs, which scale; for
    /// bitmaps as well, run `report --format png` of the same run into another `--output`.
    Html,
}

/// How the plots of a run or report are drawn; every suite, `all` and `report` take it.
/// (A "figure" in gpubench is a number of the summary; a picture is a plot.)
#[derive(Debug, Clone, Copy, Args, serde::Serialize, serde::Deserialize)]
pub struct PlotArgs {
    /// Format of the plots.
    #[arg(long, value_enum, default_value_t = PlotFormat::Png)]
    pub format: PlotFormat,
    /// The width the plots are made for: a screen, one column of a paper (3.4 in) or a
    /// page (7 in); the last two put tick labels at 8 pt once printed at that width.
    /// (`--figure-width`, its former name, is still read.)
    #[arg(long, value_enum, default_value_t = PlotWidth::Screen, alias = "figure-width")]
    pub plot_width: PlotWidth,
    /// No titles inside the plots (a paper's captions say what they show).
    #[arg(long)]
    pub paper: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlotWidth {
    Screen,
    Column,
    Page,
}

impl PlotArgs {
    /// The file extension of the plots.
    pub fn extension(&self) -> &'static str {
        self.style().format.extension()
    }

    pub fn style(&self) -> crate::report::plot::Style {
        use crate::report::plot;
        plot::Style {
            format: match self.format {
                PlotFormat::Png => plot::Format::Png,
                PlotFormat::Svg => plot::Format::Svg,
                PlotFormat::Pdf => plot::Format::Pdf,
                PlotFormat::Html => plot::Format::Svg,
            },
            width: match self.plot_width {
                PlotWidth::Screen => plot::PlotWidth::Screen,
                PlotWidth::Column => plot::PlotWidth::Column,
                PlotWidth::Page => plot::PlotWidth::Page,
            },
            paper: self.paper,
        }
    }

    /// Whether the run or report also writes `index.html`.
    pub fn html(&self) -> bool {
        self.format == PlotFormat::Html
    }

    /// The options as a command line passes them on to a child `gpubench` of `all`: the
    /// flags that give them back (a page, `html`, is drawn by `all` from the children's SVGs).
    pub fn to_args(&self) -> anyhow::Result<Vec<String>> {
        let mut child = *self;
        if child.format == PlotFormat::Html {
            child.format = PlotFormat::Svg;
        }
        child.to_flags()
    }

    /// The flags that give these options back, as clap describes them.
    pub fn to_flags(&self) -> anyhow::Result<Vec<String>> {
        flags::flags(
            &PlotArgs::augment_args(clap::Command::new("plots")),
            &serde_json::to_value(self)?,
            &serde_json::to_value(flags::defaults::<PlotArgs>())?,
        )
    }
}

/// What a run does where another process uses the GPU; every suite and `all` take it.
#[derive(Debug, Clone, Copy, Default, Args, serde::Serialize, serde::Deserialize)]
pub struct ConditionArgs {
    /// Measure even where another process uses the GPU (refused otherwise, exit 7): every
    /// figure of the run is then unresolved, with the reason "shared GPU" and the process named.
    #[arg(long)]
    pub allow_shared: bool,
}

impl ConditionArgs {
    /// The flags that give these options back, as clap describes them.
    pub fn to_flags(&self) -> anyhow::Result<Vec<String>> {
        flags::flags(
            &ConditionArgs::augment_args(clap::Command::new("conditions")),
            &serde_json::to_value(self)?,
            &serde_json::to_value(flags::defaults::<ConditionArgs>())?,
        )
    }
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run directory of `gpubench all`, or of one suite.
    pub dir: PathBuf,
    #[command(flatten)]
    pub plots: PlotArgs,
    /// Where to write (default: gpubench-runs/<UTC time>-report-<format>, beside no run);
    /// must not exist.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// A second run of the same GPU: every figure it does not confirm (as `compare` would
    /// flag it) moves to the summary's unresolved part, with both values.
    #[arg(long, value_name = "DIR2")]
    pub repeat_of: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Two or more run directories (each with a summary.json, or summarisable), or the
    /// directory of `gpubench all --device …`, which stands for its GPUs' runs.
    #[arg(required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CompareFormat::Markdown)]
    pub format: CompareFormat,
    /// Print LaTeX (the same as --format latex).
    #[arg(long)]
    pub latex: bool,
    /// How far a number may move before it is flagged, in percent: `5` for every unit, or
    /// `UNIT=PERCENT` for one (`cycles=2`); repeatable. Default: 5 %, bytes 10 %.
    #[arg(long, value_name = "[UNIT=]PERCENT")]
    pub tolerance: Vec<String>,
    /// Fleet mode (three runs or more): per figure the median and MAD over the runs, and the
    /// runs that stand out, ranked in an "odd ones out" table.
    #[arg(long)]
    pub fleet: bool,
    /// Fleet mode: how many robust standard deviations (1.4826 × MAD) from the median make a
    /// run odd (it must also lie past the tolerance).
    #[arg(long, default_value_t = DEFAULT_FLEET_K)]
    pub k: f64,
}

/// How many robust standard deviations from the fleet's median make a run odd, unless told.
pub const DEFAULT_FLEET_K: f64 = 3.5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Markdown,
    Latex,
    Csv,
    Json,
    /// A self-contained page: a column per run, the flagged figures on top with their suites'
    /// curves drawn over each other.
    Html,
}

#[derive(Debug, Subcommand)]
pub enum AnalyzeTarget {
    /// Fit the stack model to a CSV with columns kernel, m, cycles and predict the double loop.
    #[command(after_help = examples::ANALYZE_DIVERGENCE)]
    Divergence(AnalyzeDivergenceArgs),
    /// Read cache levels from a chase curve: a CSV with footprint_bytes, stride_bytes, cycles.
    #[command(after_help = examples::ANALYZE_CACHE)]
    Cache(AnalyzeCacheArgs),
}

#[derive(Debug, Args)]
pub struct AnalyzeCacheArgs {
    /// CSV with columns footprint_bytes, stride_bytes, cycles (cycles per load).
    pub file: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// The space the curve was measured in (its rise threshold); by default the space of the
    /// cache run whose directory holds FILE, else a threshold from the curve's own noise.
    #[arg(long)]
    pub space: Option<String>,
}

#[derive(Debug, Args)]
pub struct AnalyzeDivergenceArgs {
    /// CSV with columns kernel (single|double), m, cycles (or median_cycles); optional bounds.
    pub file: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Longest lane's bound, used for staircase bounds when the file has no bounds column.
    #[arg(long, default_value_t = 32)]
    pub max_bound: i32,
    /// Also write model.json and the model plots into this new directory.
    #[arg(long)]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LoopChoice {
    Single,
    Double,
}

#[derive(Debug, Args)]
pub struct EmulateArgs {
    /// Which loop program (the paper's Listings 3 and 4).
    #[arg(long, value_enum, default_value_t = LoopChoice::Single)]
    pub kernel: LoopChoice,
    /// Lane bounds, as for `gpubench divergence`.
    #[arg(long, default_value = "staircase")]
    pub pattern: String,
    /// Trip count of the longest lane.
    #[arg(long, default_value_t = 32)]
    pub max_bound: i32,
    /// Seed for the random pattern.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The level whose trace and pictures are drawn (default: the last of the pattern).
    #[arg(long)]
    pub m: Option<u32>,
    /// On-chip stack entries (default: unbounded, no spills).
    #[arg(long)]
    pub depth: Option<usize>,
    /// Entries spilled and refilled at a time.
    #[arg(long, default_value_t = 4)]
    pub chunk: usize,
    /// New directory for counts.csv, trace.csv, stack.png and mask.png (default:
    /// gpubench-runs/<UTC time>-emulate, as every other command); must not exist.
    #[arg(long)]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// CUDA device index.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Write to this file instead of standard output (a simulated device prints its own lines
    /// there).
    #[arg(long)]
    pub output: Option<std::path::PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Opts::command().debug_assert();
    }

    #[test]
    fn the_plot_width_is_read_under_its_former_name_too() {
        let width = |flag: &str| {
            let matches = PlotArgs::augment_args(clap::Command::new("plots"))
                .try_get_matches_from(["plots", flag, "column"])
                .unwrap();
            PlotArgs::from_arg_matches(&matches).unwrap().plot_width
        };
        assert_eq!(width("--plot-width"), PlotWidth::Column);
        assert_eq!(width("--figure-width"), PlotWidth::Column);
    }
}

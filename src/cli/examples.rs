//! The examples every `--help` ends with: a command a newcomer can type as it stands (the
//! committed runs under `results/` need no GPU).

pub const TOP: &str = "Examples:
  cargo test                                   (no GPU) the tests, as CI runs them
  gpubench divergence                          measure one suite into gpubench-runs/
  gpubench all --quick --format html           every suite, and a page of the figures
  gpubench report results/h100/all             the committed H100 run's tables and plots, no GPU
  gpubench <command> --help                    each command's options and examples";

pub const INFO: &str = "Example:
  gpubench info";

pub const ALL: &str = "Examples:
  gpubench all --quick                         every suite, sparser sweeps (seconds)
  gpubench all --format html --output h100     every suite, with a page (h100/index.html)
  gpubench all --only cache-l2,sm-map --repeat two suites, each run twice and compared
  gpubench all --device all                    every GPU of the host, side by side";

pub const REPORT: &str = "Examples:
  gpubench report results/h100/all                        tables and PNG plots, no GPU
  gpubench report results/h100/all --format html          a page with SVG plots
  gpubench report results/h100/all --repeat-of results/h100/all-repeat --output confirmed";

pub const COMPARE: &str = "Examples:
  gpubench compare results/h100/all results/h200/all      side by side, what differs flagged
  gpubench compare --tolerance cycles=2 RUN1 RUN2         a tighter tolerance for cycles
  gpubench compare --fleet GPU1 GPU2 GPU3                 the odd ones out of several GPUs";

pub const EXPORT: &str = "Examples:
  gpubench export results/h100/all                        the machine model (JSON)
  gpubench export results/h100/all --format accel-sim --output h100.config
  gpubench export results/h200x2 --format prometheus      every GPU's figures, for node_exporter
  gpubench export --schema                                the machine model's JSON schema";

pub const ANALYZE: &str = "Examples:
  gpubench analyze divergence results/h100/divergence-preheat0/summary.csv
  gpubench analyze cache results/h100/cache/global/chase.csv --json";

pub const ANALYZE_DIVERGENCE: &str = "Example:
  gpubench analyze divergence results/h100/divergence-preheat0/summary.csv";

pub const ANALYZE_CACHE: &str = "Example:
  gpubench analyze cache results/h100/cache/global/chase.csv --json";

pub const EMULATE: &str = "Examples:
  gpubench emulate                                 the single loop over a staircase of bounds
  gpubench emulate --kernel double --depth 8       the double loop on an 8-entry stack";

pub const CALIBRATE: &str = "Examples:
  gpubench calibrate --cases 40                    a small study (as CI runs it)
  gpubench calibrate --cases 400 --threads 8";

/// A suite's examples: the suite alone, on every GPU, with its own `extra` lines (`--space
/// texture` for cache) before them.
pub fn suite(name: &str, extra: &[&str]) -> String {
    let mut text = String::from("Examples:");
    let line =
        |args: &str, says: &str| format!("\n  {:<48} {says}", format!("gpubench {name}{args}"));
    text.push_str(&line(
        "",
        "into gpubench-runs/<UTC time>-NAME"
            .replace("NAME", name)
            .as_str(),
    ));
    for args in extra {
        text.push_str(&format!("\n  gpubench {name} {args}"));
    }
    text.push_str(&line(
        " --output run",
        "into ./run; then `gpubench report run`",
    ));
    text.push_str(&line(" --device all", "once per GPU, side by side"));
    text
}

//! `gpubench export`'s arguments.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A run directory of `gpubench all` (or of one suite); not needed with --schema.
    #[arg(required_unless_present = "schema")]
    pub dir: Option<PathBuf>,
    /// What to write.
    #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
    pub format: ExportFormat,
    /// A second run of the same GPU: figures it does not confirm are exported as unresolved
    /// (as `report --repeat-of`; a run's own `repeat/` is used without it).
    #[arg(long)]
    pub repeat_of: Option<PathBuf>,
    /// With `--format accel-sim`: the base gpgpusim.config the options are meant to follow. A
    /// cache string's fields that no run measures (policy, MSHRs, queues) are then this file's
    /// for the same option, instead of a reference configuration's.
    #[arg(long)]
    pub base: Option<PathBuf>,
    /// New file to write (must not exist); standard output when left out.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Print the JSON schema of the machine model instead (committed as
    /// schema/machine-model.schema.json).
    #[arg(long)]
    pub schema: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// The machine model (schema gpubench-machine-model/2).
    Json,
    /// The GPGPU-Sim / Accel-Sim options the run determines, to append to a base gpgpusim.config.
    AccelSim,
    /// Every figure as Prometheus text exposition, for node_exporter's textfile collector (a
    /// `--device all` directory: every GPU's, told apart by `gpu_uuid`).
    Prometheus,
}

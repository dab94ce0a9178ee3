//! What each subcommand does, in pipeline order: validate, open the GPU where one is needed,
//! run the experiment, analyse, report.

mod all;
mod branch;
mod cache;
mod clock;
mod divergence;
mod emulate;
mod info;
mod pipeline;
mod regs;
mod report;
mod shared;
mod slots;
mod suite;
mod sync;

pub use divergence::{DivergenceResult, analyze_and_write};

use anyhow::Result;

use crate::cli::{AnalyzeTarget, Command, Opts};

pub fn run(opts: Opts) -> Result<()> {
    match opts.command {
        Command::Info(args) => info::run(&args),
        Command::Divergence(args) => divergence::measure(&args),
        Command::Analyze {
            target: AnalyzeTarget::Divergence(args),
        } => divergence::analyze_saved(&args),
        Command::Analyze {
            target: AnalyzeTarget::Cache(args),
        } => cache::analyze_saved(&args),
        Command::Emulate(args) => emulate::run(&args),
        Command::Shared(args) => shared::run(&args),
        Command::Clock(args) => clock::run(&args),
        Command::Sync(args) => sync::run(&args),
        Command::Branch(args) => branch::run(&args),
        Command::Regs(args) => regs::run(&args),
        Command::Pipeline(args) => pipeline::run(&args),
        Command::Cache(args) => cache::run(&args),
        Command::Slots(args) => slots::run(&args),
        Command::All(args) => all::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Compare(args) => report::compare(&args),
    }
}

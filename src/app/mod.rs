//! What each subcommand does, in pipeline order: validate, open the GPU where one is needed,
//! run the experiment, analyse, report.

mod all;
mod calibrate;
pub mod devices;
mod emulate;
mod export;
mod fleet;
mod info;
pub mod plan;
pub mod registry;
mod report;

use anyhow::Result;

use crate::cli::{AnalyzeTarget, Command, Opts};

pub fn run(opts: Opts) -> Result<()> {
    match opts.command {
        Command::Info(args) => info::run(&args),
        Command::Suite(suite) => {
            let of = registry::require(&suite.name)?;
            match devices::of_suite(of, &suite.matches)? {
                Some(fan) => devices::run(fan),
                None => of.measure(&suite.matches),
            }
        }
        Command::Analyze {
            target: AnalyzeTarget::Divergence(args),
        } => registry::analyze_divergence(&args),
        Command::Analyze {
            target: AnalyzeTarget::Cache(args),
        } => registry::analyze_cache(&args),
        Command::Emulate(args) => emulate::run(&args),
        Command::Calibrate(args) => calibrate::run(&args),
        Command::All(args) => match devices::of_all(&args)? {
            Some(fan) => devices::run(fan),
            None => all::run(&args),
        },
        Command::Report(args) => report::run(&args),
        Command::Export(args) => export::run(&args),
        Command::Compare(args) => report::compare(&args),
    }
}

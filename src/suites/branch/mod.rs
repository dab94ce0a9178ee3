//! `gpubench branch`: which path of a divergent branch runs first, and whether warps overlap.

pub mod analysis;
pub mod launch;
pub mod measure;
pub mod report;
pub mod settings;

pub use settings::BranchArgs;

use anyhow::Result;

use self::analysis::{order_report, warp_overlap};
use self::measure as branch;
use self::report as branch_report;
use self::settings::Recorded;
use crate::harness::suite;
use crate::harness::{Redraw, SavedRun};

pub fn run(args: &BranchArgs) -> Result<()> {
    args.validate()?;
    let recorded = Recorded {
        method: "32-way if / else-if chain (Listing 3); lane c[k] takes clause k; each clause stamps clock64 around `work` dependent multiply-adds; one untimed launch before each timed one".into(),
        seed: args.seed,
        work: args.work,
    };
    suite::run(
        &Branch,
        &args.target,
        &[("branch", "branch_order")],
        &recorded,
        |gpu, suite| {
            let runs = branch::measure(gpu, args.seed, args.work)?;
            suite.release_gpu(gpu)?;
            let mut summary = branch_report::BranchFile::new();
            for run in &runs {
                let report = order_report(&run.paths);
                let overlap = warp_overlap(&run.paths);
                if let Some(report) = &report {
                    println!(
                        "{}: first lane {} (clause {}); {}{}",
                        run.name,
                        report.first_lane,
                        report.first_clause,
                        report.verdict,
                        if report.serialized {
                            "; paths of a warp never overlap"
                        } else {
                            "; some paths of a warp overlapped"
                        }
                    );
                }
                if let Some(overlap) = overlap {
                    println!(
                        "{}: the warps' busy spans overlap by {:.0}% of the shorter one: {}",
                        run.name,
                        overlap * 100.0,
                        if overlap > 0.5 {
                            "warps run concurrently while each serialises its own paths"
                        } else {
                            "warps ran one after the other"
                        }
                    );
                }
                summary.insert(
                    run.name.to_string(),
                    branch_report::OrderSummary {
                        order: run.order,
                        report,
                        warp_overlap: overlap,
                        warps: run.warps,
                    },
                );
            }
            branch_report::write(&suite.run, &runs, &summary)?;
            Ok(())
        },
    )
}

/// `gpubench branch` in the suite registry.
pub struct Branch;

impl crate::harness::SuiteDef for Branch {
    const NAME: &'static str = "branch";
    const ABOUT: &'static str = "Which path of a 32-way divergent branch runs first (Wong Listing 3), and warp overlap";
    type Args = BranchArgs;

    const RUN: crate::harness::Measure<BranchArgs> = run;

    const SECONDS_IN_ALL: (f64, f64) = (0.3, 0.3);

    const FIGURES: crate::harness::ReadFigures = self::report::figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        let seed = match run.requested::<BranchArgs>()? {
            Some(asked) => asked.seed,
            None => run.metadata.settings::<Recorded>()?.seed,
        };
        let runs = report::read_runs(run.dir, seed)?;
        let title = run.title(branch_report::TITLE);
        out.plot("branch", |p| branch_report::draw(p, &title, &runs))
    }
}

//! `gpubench shared`: shared-memory latency and the cost of bank conflicts.

pub mod analysis;
pub mod launch;
pub mod measure;
pub mod report;
pub mod settings;

pub use settings::SharedArgs;

use anyhow::Result;

use self::analysis as bank_conflicts;
use self::measure as shared;
use self::report as shared_report;
use crate::harness::suite;
use crate::harness::{Redraw, SavedRun};

pub fn run(args: &SharedArgs) -> Result<()> {
    args.validate()?;
    let entries = [
        ("shared", "shared_stride_4"),
        ("shared", "shared_stride_8"),
        ("shared", "shared_stride_16"),
    ];
    let recorded = settings::Recorded {
        element_bytes: shared::ELEMENT_BYTES,
        iterations: args.iterations,
        strides: format!("1..={}", args.max_stride),
        timing: "clock64 around `iterations` dependent loads per lane, loop unrolled 32 times; median over lanes".into(),
        warps: 1,
    };
    suite::run(
        &Shared,
        &args.target,
        &entries,
        &recorded,
        |gpu, suite| {
            let points = shared::measure(gpu, args)?;
            suite.release_gpu(gpu)?;
            let fit = bank_conflicts::fit(&points);
            shared_report::write(&suite.run, &points, fit.as_ref())?;
            if let Some(latency) = points
                .iter()
                .find(|p| p.element_bytes == 4 && p.stride == 1)
            {
                println!(
                    "shared-memory load latency: {:.1} cycles (4-byte dependent load, no conflict)",
                    latency.cycles_per_load
                );
            }
            match &fit {
                Some(fit) => {
                    let cost = fit.cycles_per_extra_way;
                    println!(
                        "each bank-conflict way beyond the minimum costs {:.2} cycles (95% CI {:.2} to {:.2}; OLS over {} points, residual RMS {:.2})",
                        cost.estimate,
                        cost.ci95_low,
                        cost.ci95_high,
                        fit.points,
                        fit.residual_rms_cycles
                    );
                    for (bytes, base) in &fit.conflict_free_cycles {
                        println!(
                            "  conflict-free {bytes}-byte load: {:.1} cycles",
                            base.estimate
                        );
                    }
                }
                None => println!("no fit: too few points"),
            }
            Ok(())
        },
    )
}

/// `gpubench shared` in the suite registry.
pub struct Shared;

impl crate::harness::SuiteDef for Shared {
    const NAME: &'static str = "shared";
    const ABOUT: &'static str = "Shared-memory load latency and the cost of bank conflicts (strides 1..33, 4/8/16 bytes)";
    type Args = SharedArgs;

    const RUN: crate::harness::Measure<SharedArgs> = run;

    const SECONDS_IN_ALL: (f64, f64) = (0.3, 0.3);

    fn quick(defaults: SharedArgs) -> SharedArgs {
        SharedArgs {
            iterations: 256,
            ..defaults
        }
    }

    const FIGURES: crate::harness::ReadFigures = self::report::figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        let points = report::read_points(run.dir)?;
        let fit = bank_conflicts::fit(&points);
        let title = run.title(shared_report::TITLE);
        out.plot("shared", |p| {
            shared_report::draw(p, &title, &points, fit.as_ref())
        })
    }
}

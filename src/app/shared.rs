//! `gpubench shared`: shared-memory latency and the cost of bank conflicts.

use anyhow::Result;
use serde_json::json;

use super::suite;
use crate::analysis::bank_conflicts;
use crate::cli::SharedArgs;
use crate::experiments::shared;
use crate::report::shared as shared_report;

pub fn run(args: &SharedArgs) -> Result<()> {
    let config = shared::SharedConfig {
        max_stride: args.max_stride,
        iterations: args.iterations,
    };
    config.validate()?;
    let entries = [
        ("shared", "shared_stride_4"),
        ("shared", "shared_stride_8"),
        ("shared", "shared_stride_16"),
    ];
    let mut gpu = suite::open(args.device, args.output.as_deref(), &entries)?;
    let settings = json!({
        "element_bytes": shared::ELEMENT_BYTES,
        "strides": format!("1..={}", config.max_stride),
        "iterations": config.iterations,
        "warps": 1,
        "timing": "clock64 around `iterations` dependent loads per lane, loop unrolled 32 times; median over lanes",
    });
    let suite = suite::start(
        &mut gpu,
        "shared",
        args.output.as_deref(),
        &["shared"],
        settings,
    )?;
    let outcome = (|| -> Result<()> {
        let points = shared::measure(&mut gpu, &config)?;
        let fit = bank_conflicts::fit(&points);
        shared_report::write(&suite.run, &points, fit.as_ref())?;
        let title = suite.title(shared_report::TITLE);
        suite.run.write_with("shared.png", |path| {
            shared_report::draw(path, &title, &points, fit.as_ref())
        })?;
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
    })();
    suite.finish(&mut gpu, outcome)
}

//! `gpubench emulate`: a loop program on the stack emulator, with no GPU.

use anyhow::Result;
use serde_json::json;

use crate::analysis::divergence_patterns::Pattern;
use crate::analysis::stack_emulator::{self, StackShape};
use crate::cli::{EmulateArgs, LoopChoice};
use crate::error::bail_usage;
use crate::report::emulation;
use crate::report::run_dir;

pub fn run(args: &EmulateArgs) -> Result<()> {
    let pattern: Pattern = args.pattern.parse()?;
    if args.max_bound < 1 || args.max_bound > 1024 {
        bail_usage!(
            "--max-bound must be between 1 and 1024, not {}",
            args.max_bound
        );
    }
    pattern.validate(args.max_bound)?;
    if args.depth == Some(0) || args.chunk == 0 {
        bail_usage!("--depth and --chunk must be at least 1");
    }
    let rows = pattern.rows(args.max_bound, args.seed);
    let m = args.m.unwrap_or_else(|| rows.last().map_or(0, |row| row.m));
    let Some(drawn) = rows.iter().find(|row| row.m == m) else {
        bail_usage!(
            "the {pattern} pattern has no level M = {m}; choose --m from {} to {}",
            rows.first().map_or(0, |r| r.m),
            rows.last().map_or(0, |r| r.m)
        );
    };
    if let Some(output) = &args.output {
        run_dir::check_new(output)?;
    }
    let shape = StackShape {
        depth: args.depth,
        chunk: args.chunk,
    };
    let (program, name) = match args.kernel {
        LoopChoice::Single => (stack_emulator::single_loop(), "single"),
        LoopChoice::Double => (stack_emulator::double_loop(), "double"),
    };
    let counts = rows
        .iter()
        .map(|row| {
            Ok((
                row.m,
                stack_emulator::run(&program, &row.bounds, shape, false)?.counts,
            ))
        })
        .collect::<Result<Vec<_>, stack_emulator::EmulatorError>>()?;
    let traced = stack_emulator::run(&program, &drawn.bounds, shape, true)?;

    // Staged and moved into place when complete, as report's and calibrate's are: a failure or
    // an interruption leaves nothing behind.
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| run_dir::default_path("emulate"));
    super::report::staged(&output, "emulate", args.output.is_some(), |run| {
        emulation::write_counts(run, &counts)?;
        emulation::write_trace(run, &traced.steps)?;
        let stack_text = match args.depth {
            Some(depth) => format!("{depth}-entry stack, spilled {} at a time", args.chunk),
            None => "unbounded stack".to_string(),
        };
        let title = format!("{name} loop, {pattern} M = {m}, {stack_text}");
        run.write_plot("stack", |path| {
            emulation::draw_stack(path, &title, &traced.steps)
        })?;
        run.write_plot("mask", |path| {
            emulation::draw_mask(path, &title, &traced.steps)
        })?;
        let c = traced.counts;
        run.write_json(
            "emulation.json",
            &json!({
                "kernel": name,
                "pattern": pattern.to_string(),
                "max_bound": args.max_bound,
                "stack": shape,
                "m": m,
                "bounds": drawn.bounds,
                "counts": c,
            }),
        )?;
        println!(
            "{title}: {} pushes ({} divergent), {} pops, {} spills, {} refills, max depth {}, {} instructions executed",
            c.pushes(),
            c.div_pushes,
            c.pops,
            c.spills,
            c.refills,
            c.max_depth,
            c.instructions
        );
        Ok(())
    })?;
    println!("written to {}", output.display());
    Ok(())
}

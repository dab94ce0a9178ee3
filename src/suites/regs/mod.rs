//! `gpubench regs`: the largest block per register count, and the allocation unit (Wong et
//! al., section IV-E, Fig. 9). The suite's whole folder: its flags (`settings`), the
//! measurement (`measure`), the pure inference (`analysis`), its files and figure (`report`)
//! and its place in the registry (here).

pub mod analysis;
pub mod measure;
pub mod report;
pub mod settings;

use anyhow::Result;

use crate::harness::suite;
use crate::harness::{Redraw, SavedRun};
pub use settings::RegsArgs;

use analysis as registers;
use measure as regs;
use report as regs_report;

pub fn run(args: &RegsArgs) -> Result<()> {
    args.validate()?;
    let caps = regs::caps(args.min_registers, 255, args.step);
    let recorded = settings::Recorded {
        caps: caps.clone(),
        method: "regs_pressure JIT-compiled with CU_JIT_MAX_REGISTERS = cap; largest launching block found by bisection over multiples of 32 threads".into(),
    };
    suite::run(
        &Regs,
        &args.target,
        &[("regs", "regs_pressure")],
        &recorded,
        |gpu, suite| {
            let device = &suite.metadata.device;
            let register_file = u32::try_from(device.registers_per_block).unwrap_or(65_536);
            let max_threads = 1024;
            let points = regs::measure(gpu, &caps, max_threads)?;
            suite.release_gpu(gpu)?;
            let allocation = registers::infer(&points, register_file, max_threads);
            regs_report::write(&suite.run, &points, &allocation, register_file)?;
            match allocation.allocator {
                Some(allocator) => println!(
                    "register allocation unit: {} registers per warp ({} per thread), the {register_file}-register file split over {} partitions: this predicts every measured block size",
                    allocator.unit_registers_per_warp,
                    allocator.unit_registers_per_warp / registers::WARP,
                    allocator.partitions
                ),
                None => println!(
                    "no allocator with a unit in {:?} and {:?} partitions predicts every measured block size; see regs.csv",
                    registers::UNITS,
                    registers::PARTITIONS
                ),
            }
            if allocation.consistent.len() > 1 {
                println!("  (also consistent: {:?})", allocation.consistent);
            }
            if let Some(quantum) = allocation.register_limited_thread_quantum {
                println!("register-limited block sizes are multiples of {quantum} threads");
            }
            println!(
                "largest block register use measured: {} registers; driver attribute disagrees at caps {:?}",
                allocation.largest_block_registers, allocation.attribute_mismatches
            );
            Ok(())
        },
    )
}

/// `gpubench regs` in the suite registry.
pub struct Regs;

impl crate::harness::SuiteDef for Regs {
    const NAME: &'static str = "regs";
    const ABOUT: &'static str = "Largest block per register count and the register allocation unit (Wong Fig. 9)";
    type Args = RegsArgs;

    const RUN: crate::harness::Measure<RegsArgs> = run;

    const SECONDS_IN_ALL: (f64, f64) = (0.3, 0.3);

    // Every sixth cap still leaves one allocation unit consistent with the H100's data (every
    // eighth leaves four); the summary flags a run where more than one fits.
    fn full(defaults: RegsArgs) -> RegsArgs {
        RegsArgs {
            step: 6,
            ..defaults
        }
    }

    const FIGURES: crate::harness::ReadFigures = regs_report::figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        let points = regs_report::read_points(run.dir)?;
        let register_file = run.metadata.device.registers_per_block.unwrap_or(65_536);
        let max_threads = 1024;
        let allocation = registers::infer(&points, register_file, max_threads);
        let title = run.title(regs_report::TITLE);
        out.plot("regs", |p| {
            regs_report::draw(p, &title, &points, &allocation, register_file, max_threads)
        })
    }
}

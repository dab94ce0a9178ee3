use anyhow::Result;

use crate::cli::InfoArgs;
use crate::experiments::clock::{measure_read_overhead, measure_sm_clock};
use crate::gpu::Gpu;
use crate::kernels;
use crate::report::info::{InfoReport, render_text};
use crate::report::metadata::BuildRecord;

pub fn run(args: &InfoArgs) -> Result<()> {
    let mut gpu = Gpu::open(args.device)?;
    let modules: Vec<&str> = kernels::MODULES.iter().map(|m| m.name).collect();
    let (nvml, _) = crate::gpu::health::start(gpu.uuid().map_err(|e| e.to_string()));
    let report = InfoReport {
        nvml,
        device: gpu.properties()?,
        build: BuildRecord::current(&modules),
        sm_clock: measure_sm_clock(&mut gpu)?,
        clock64_read_overhead_cycles: measure_read_overhead(&mut gpu)?,
    };
    let text = if args.json {
        serde_json::to_string_pretty(&report)? + "\n"
    } else {
        render_text(&report)
    };
    match &args.output {
        Some(path) => crate::report::run_dir::write_atomically(path, text.as_bytes()),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

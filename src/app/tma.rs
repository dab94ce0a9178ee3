//! `gpubench tma`: the Tensor Memory Accelerator's bulk tensor copies: latency against footprint
//! beside the L2 load, with the cache each sees, and streaming bandwidth against tile size and
//! blocks per SM.

use anyhow::Result;
use serde_json::json;

use super::suite;
use crate::app::plan::PlannedSuite;
use crate::cli::TmaArgs;
use crate::error::UsageError;
use crate::experiments::tma;
use crate::report::tma as tma_report;

/// The largest chain the suite builds on the host, in MiB.
const MAX_FOOTPRINT_MIB: f64 = 1024.0;

fn footprints(args: &TmaArgs) -> Result<Vec<u64>, UsageError> {
    let tile = u64::from(tma::TILE_WORDS) * 4;
    let mut bytes: Vec<u64> = args
        .footprints_mib
        .iter()
        .map(|&m| {
            if m.is_finite() && m > 0.0 && m <= MAX_FOOTPRINT_MIB {
                Ok(((m * 1048576.0) as u64 / tile).max(2) * tile)
            } else {
                Err(UsageError::new(format!(
                    "--footprints-mib takes sizes above 0 and up to {MAX_FOOTPRINT_MIB} MiB, such as 1,16,64,256"
                )))
            }
        })
        .collect::<Result<_, _>>()?;
    bytes.sort_unstable();
    bytes.dedup();
    if bytes.len() < 5 {
        return Err(UsageError::new(
            "--footprints-mib needs at least five sizes, spanning the L2, for the capacity fit",
        ));
    }
    Ok(bytes)
}

pub fn run(args: &TmaArgs) -> Result<()> {
    let footprints = footprints(args)?;
    if !(1..=1024).contains(&args.stream_mib) {
        return Err(UsageError::new(
            "--stream-mib must be between 1 and 1024 (the streamed tensor, read at most once)",
        )
        .into());
    }
    // Built while the process waits for its turn and the GPU measures.
    let chains = tma::start_chains(&footprints);
    let mut gpu = suite::open(args.device, args.output.as_deref(), &[])?;
    let properties = gpu.properties()?;
    suite::require_hopper(
        &properties,
        args.device,
        "tma",
        "the Tensor Memory Accelerator",
    )?;
    for entry in ["tma_touch", "tma_latency", "tma_bandwidth"] {
        gpu.function("tma", entry)?;
    }
    let settings = json!({
        "footprints_bytes": footprints,
        "tile_bytes": tma::TILE_WORDS * 4,
        "steps": tma::STEPS,
        "warm_steps": tma::WARM,
        "stream_bytes_per_configuration": args.stream_mib << 20,
        "stream_tensor_words": [tma::STREAM_COLUMNS, tma::STREAM_ROWS],
        "stream_stages": tma::STAGES,
        "method": "latency: one thread chases random 128-byte tiles with 1-D cp.async.bulk.tensor copies completing on an mbarrier (next index read from the copied tile), beside the same chain with ld.global.cg, after every SM read the footprint; bandwidth: thread 0 of each block streams 2-D tiles through 4 mbarrier-tracked shared buffers, clock64 per block",
    });
    suite::run_opened(
        gpu,
        "tma",
        args.output.as_deref(),
        &["tma"],
        settings,
        |gpu, suite| {
            let mhz = suite.metadata.sm_clock_before.mhz;
            let sms = u32::try_from(properties.multiprocessors).unwrap_or(1);
            let disassembly = crate::gpu::sass::beside(&["tma"], &properties.compute_capability);
            let points = tma::latency(gpu, &footprints, chains, sms)?;
            let streams = tma::bandwidth(
                gpu,
                sms,
                u32::try_from(properties.shared_memory_per_multiprocessor_bytes).unwrap_or(0),
                u32::try_from(properties.shared_memory_per_block_optin_bytes).unwrap_or(0),
                args.stream_mib << 20,
            )?;
            let results = tma::Results { points, streams };
            suite.release_gpu(gpu)?;
            let (text, record) = disassembly.join()?;
            let loads = text
                .as_deref()
                .map(crate::analysis::sass::memory_instructions)
                .unwrap_or_default();
            if let Some(text) = &text {
                suite.run.write("tma.sass", text.as_bytes())?;
            }
            let latency = tma_report::latency_rows(&results);
            let bandwidth = tma_report::bandwidth_rows(&results, mhz);
            tma_report::write(
                &suite.run,
                &latency,
                &bandwidth,
                &serde_json::json!({ "status": record.status, "memory_instructions": loads }),
            )?;
            let title = suite.title(tma_report::title());
            suite.run.write_figure("tma", |path| {
                tma_report::draw(path, &title, &latency, &bandwidth)
            })?;
            for row in &latency {
                println!(
                    "{:>10}: TMA {:>6.1} cycles per step, ld.global.cg {:>6.1}",
                    crate::report::plot::binary_bytes(row.footprint_bytes as f64),
                    row.tma_cycles,
                    row.load_cycles
                );
            }
            let (t, l) = tma_report::fits(&latency);
            for (fit, what) in [(t, "TMA"), (l, "load")] {
                if let Some(f) = fit {
                    println!(
                        "{what} fit: {:.1} cycles cached, {:.1} from memory, capacity {} ({}-{})",
                        f.hit_cycles,
                        f.miss_cycles,
                        crate::report::plot::binary_bytes(f.capacity_bytes),
                        crate::report::plot::binary_bytes(f.capacity_low_bytes),
                        crate::report::plot::binary_bytes(f.capacity_high_bytes)
                    );
                }
            }
            for row in &bandwidth {
                match (row.gpu_gb_per_s, &row.skipped) {
                    (Some(gbs), _) => println!(
                        "stream {:>9} tiles, {} block(s)/SM: {:>7.0} GB/s",
                        crate::report::plot::binary_bytes(f64::from(row.tile_bytes)),
                        row.blocks_per_sm,
                        gbs
                    ),
                    (None, Some(why)) => println!("skipped: {why}"),
                    _ => {}
                }
            }
            Ok(())
        },
    )
}

/// `gpubench tma` in the suite registry.
pub struct Tma;

impl super::registry::SuiteDef for Tma {
    const NAME: &'static str = "tma";
    const ABOUT: &'static str = "Tensor Memory Accelerator: bulk tensor copy latency against footprint and streaming bandwidth (Luo et al. 2024)";
    type Args = TmaArgs;

    fn run(args: &TmaArgs) -> Result<()> {
        run(args)
    }

    fn plan(&self, quick: bool) -> Vec<PlannedSuite> {
        vec![if quick {
            PlannedSuite::new(
                "tma",
                &[
                    "tma",
                    "--footprints-mib",
                    "1,16,32,64,128",
                    "--stream-mib",
                    "128",
                ],
                0.5,
            )
        } else {
            PlannedSuite::new("tma", &["tma"], 1.0)
        }]
    }

    fn figures(&self, dir: &std::path::Path) -> Result<Vec<crate::report::figures::Figure>> {
        tma_report::figures(dir)
    }

    fn redraw(
        &self,
        run: &super::registry::SavedRun,
        out: &mut super::registry::Redraw,
    ) -> Result<()> {
        let latency = tma_report::read_latency(run.dir)?;
        let bandwidth = tma_report::read_bandwidth(run.dir)?;
        let title = run.title(tma_report::title());
        out.figure("tma", |p| tma_report::draw(p, &title, &latency, &bandwidth))
    }
}

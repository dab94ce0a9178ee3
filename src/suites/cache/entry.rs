//! `gpubench cache` in the suite registry: one `all` entry per memory space.

use anyhow::Result;

use super::measure::conflict::{self, ConflictRow};
use super::measure::{Space, saved};
use crate::harness::{Redraw, SavedRun, SuiteDef};
use super::*;

/// `gpubench cache` in the suite registry: one `all` entry per memory space.
pub struct Cache;

/// The spaces `gpubench all` sweeps, in order. The instruction space comes first: its
/// compiles run off the GPU while the later suites measure (see `instruction::CodeProbe`).
const ALL_SPACES: [&str; 9] = [
    "instruction",
    "global",
    "l2",
    "readonly",
    "shared",
    "constant",
    "constant-uniform",
    "texture",
    "tlb",
];

impl SuiteDef for Cache {
    const NAME: &'static str = "cache";
    const ABOUT: &'static str = "Pointer-chase latency against footprint and the cache levels read from it (Wong Fig. 4)";
    const EXAMPLES: &'static [&'static str] = &["--space texture", "--space l2 --resolution 512"];
    type Args = CacheArgs;

    const RUN: crate::harness::Measure<CacheArgs> = run;

    /// The global space's entry; [`entry`] plans the others.
    const SECONDS_IN_ALL: (f64, f64) = (0.6, 2.0);

    /// Ending at 1 MiB, past the L1 (256 KiB on Hopper) and on the L2's plateau, rather than at
    /// 4 MiB: most of these sweeps' GPU time is their largest footprints. Without the conflict
    /// experiment (about 230 chases each). The readonly and texture spaces sweep so too.
    fn quick(defaults: CacheArgs) -> CacheArgs {
        CacheArgs {
            fine_points: Some(16),
            max_bytes: Some(1048576),
            no_conflict: true,
            ..defaults
        }
    }

    /// The L1 against the shared memory the carveout asks for: three sweeps more (a line of
    /// slope -1 gives the unified size and what the L1 keeps).
    fn full(defaults: CacheArgs) -> CacheArgs {
        CacheArgs {
            carveout: vec![0, 50, 100],
            ..defaults
        }
    }

    /// One entry per space: `cache-global`, `cache-l2`, ….
    fn plan(&self, quick: bool) -> Vec<crate::harness::PlannedSuite> {
        ALL_SPACES
            .iter()
            .map(|&space| {
                let (settings, seconds) = entry(space, quick);
                let planned = crate::harness::PlannedSuite::new::<Self>(
                    &format!("cache-{space}"),
                    &settings,
                    seconds,
                );
                // Its compiles, off the GPU, are the longest host work of any suite: started
                // early they saved 1.3 s of a full `all` on an H200, but cost a quick one, with
                // its coarser grid, 0.5 s (results/h200/bench/2026-11-28-mechanisms-83ca2d1.md).
                if space == "instruction" && !quick {
                    planned.early()
                } else {
                    planned
                }
            })
            .collect()
    }

    const FIGURES: crate::harness::ReadFigures = cache_report::figures;

    fn redraw(&self, run: &SavedRun, out: &mut Redraw) -> Result<()> {
        use crate::report::saved as files;
        use anyhow::Context;
        // The stride is what the run resolved (the metadata's); the space and the threads are
        // what it was asked (settings.json, or the metadata of a run made before it).
        let resolved: Recorded = run.metadata.settings()?;
        let (space, threads) = match run.requested::<CacheArgs>()? {
            Some(asked) => (asked.space, asked.threads),
            None => (
                Space::from_name(&resolved.space)
                    .with_context(|| format!("unknown cache space '{}'", resolved.space))?,
                resolved.threads,
            ),
        };
        let chase = files::find(run.dir, "chase.csv")
            .with_context(|| format!("{} has no chase.csv", run.dir.display()))?;
        let points = saved::load_saved(&chase)?;
        // Every file read before the inference, the run's longest step: a damaged one is
        // refused at once, not after the chase has been fitted and drawn.
        let conflict_rows: Option<Vec<ConflictRow>> = files::find(run.dir, "conflict.csv")
            .map(|_| files::read_csv(run.dir, "conflict.csv"))
            .transpose()?;
        // The levels and the conflict verdict the run inferred and its tables state, not an
        // inference made again here (which today's analysis may read otherwise).
        let saved: cache_report::CacheFile = files::read_json(run.dir, "cache.json")?;
        // The curve drawn is the one the levels were read from: a chase.csv cut short or
        // grown since would be drawn under levels it does not show (#71).
        let sweep = &saved.sweep;
        if sweep.points != points.len() {
            return Err(crate::error::UsageError::new(format!(
                "{}: {} points, but cache.json says the sweep measured {}; one of them was damaged or edited",
                chase.display(),
                points.len(),
                sweep.points
            ))
            .into());
        }
        let title = run.title(&cache_plot::title(
            space.name(),
            resolved.stride_bytes,
            threads,
        ));
        out.plot("cache", |p| {
            cache_plot::draw(p, &title, &points, &saved.report.levels)
        })?;
        match (&conflict_rows, saved.conflict) {
            (Some(rows), Some(analysis)) => {
                let kept = conflict::points_from_rows(rows);
                let title = run.title(&format!("{} conflict experiment", space.name()));
                out.plot("conflict", |p| {
                    cache_plot::draw_conflict(p, &title, &kept, &analysis)
                })?;
            }
            // The verdict drawn is the one the run stated; a run that saved its points without
            // one (none of the committed runs) is not read again by today's analysis.
            (Some(_), None) => eprintln!(
                "{}: conflict.csv but no conflict verdict in cache.json, so no conflict plot (the run's tables state none either)",
                run.dir.display()
            ),
            (None, _) => {}
        }
        if files::find(run.dir, "partitions.csv").is_some() {
            let rows: Vec<super::l2_partitions::SmReading> =
                files::read_csv(run.dir, "partitions.csv")?;
            let title = run.title(super::side_experiments::PARTITIONS_TITLE);
            out.plot("partitions", |p| {
                super::partitions_report::draw(p, &title, &rows)
            })?;
        }
        if let Some(path) = files::find(run.dir, "tlb_strides.csv") {
            let more = saved::load_saved(&path)?;
            let every: Vec<_> = points.iter().chain(&more).copied().collect();
            let title = run.title("TLB chase, one element per stride");
            out.plot("tlb_strides", |p| {
                cache_plot::draw_by_stride(p, &title, &every)
            })?;
        }
        Ok(())
    }

    fn kernels_to_prebuild(&self, settings: &CacheArgs) -> Vec<crate::gpu::prebuilt::Generated> {
        super::kernels_to_prebuild(settings)
    }

    fn curves(&self, dir: &std::path::Path) -> Result<Vec<crate::report::overlay::Curve>> {
        use anyhow::Context;
        let chase = crate::report::saved::find(dir, "chase.csv")
            .with_context(|| format!("{} has no chase.csv", dir.display()))?;
        let points = saved::load_saved(&chase)?;
        let space = dir
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        Ok(cache_report::curves(&space, &points))
    }
}

/// The settings `all` runs the sweep of `space` with, and the GPU seconds it is planned at
/// (the global space's are [`Cache`]'s own [`SuiteDef::in_all`]).
fn entry(space: &str, quick: bool) -> (CacheArgs, f64) {
    if space == "global" {
        return Cache::in_all(quick);
    }
    let mut settings = CacheArgs {
        space: Space::from_name(space).expect("ALL_SPACES are clap's names of the spaces"),
        ..crate::harness::defaults()
    };
    // The L2 and instruction sweeps are the long ones (each L2 point chases tens of
    // MiB, each instruction point is a JIT compile): fewer fine points there. The L2
    // keeps its one-line stride: a stride past the line would overstate the
    // footprint it caches.
    let seconds = match (space, quick) {
        // Bisected to 1/64 of the footprint (about 0.4 MiB at 24 MiB) rather
        // than 1/512: three halvings fewer per edge.
        // Its loads timed over the first 4 MiB of each chain, not 32.
        ("l2", true) => {
            settings.fine_points = Some(2);
            settings.resolution = 64;
            settings.timed_span_mib = 4;
            0.9
        }
        ("l2", false) => {
            settings.fine_points = Some(4);
            4.9
        }
        // The plateau past the last level is flat from about 145 KiB on (H100, H200):
        // ending at 256 KiB halves the largest kernels the driver compiles. Quick
        // bisects to 1/16 of the code size and measures two fine points: after the
        // coarse grid, one round of compiles on the committed H200 curve, where
        // more rounds had outlasted every other suite (at 1/32 it was the last to
        // finish a cold `all --quick` on an H200, 10.2 s).
        ("instruction", true) => {
            settings.stride = Some(256);
            settings.fine_points = Some(2);
            settings.max_bytes = Some(262144);
            settings.resolution = 16;
            0.5
        }
        ("instruction", false) => {
            settings.stride = Some(64);
            settings.fine_points = Some(4);
            settings.max_bytes = Some(262144);
            0.6
        }
        // As the global space's quick sweep ([`Cache`]'s `quick`).
        ("readonly" | "texture", true) => {
            settings = Cache::quick(settings);
            Cache::SECONDS_IN_ALL.0
        }
        (_, true) => {
            settings.fine_points = Some(16);
            0.4
        }
        _ => 1.0,
    };
    (settings, seconds)
}

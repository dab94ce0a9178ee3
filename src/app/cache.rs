//! `gpubench cache --space …` (sweep one memory space and read its levels) and
//! `gpubench analyze cache FILE.csv` (the same inference on a saved curve, no GPU).

use anyhow::Result;
use serde_json::json;

use super::suite;
use crate::analysis::cache_inference;
use crate::cli::{AnalyzeCacheArgs, CacheArgs, ChainChoice, SpaceChoice};
use crate::error::UsageError;
use crate::experiments::cache::{self, Order, Space, saved};
use crate::report::cache as cache_report;
use crate::report::cache_plot;

pub fn analyze_saved(args: &AnalyzeCacheArgs) -> Result<()> {
    let points = saved::load(&args.file)?;
    let report = cache_inference::infer(&points).ok_or_else(|| {
        UsageError::new(format!(
            "{}: the finest stride has fewer than 3 distinct footprints; sweep more footprints",
            args.file.display()
        ))
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", cache_report::render_text(&report));
    }
    Ok(())
}

/// `gpubench cache --space …`: sweep one space and read its levels.
pub fn run(args: &CacheArgs) -> Result<()> {
    let space = match args.space {
        SpaceChoice::Global => Space::Global,
        SpaceChoice::L2 => Space::L2,
        SpaceChoice::Readonly => Space::Readonly,
        SpaceChoice::Shared => Space::Shared,
        SpaceChoice::Constant => Space::Constant,
        SpaceChoice::Texture => Space::Texture,
    };
    let order = match args.chain {
        ChainChoice::Stride => Order::Stride,
        ChainChoice::Random => Order::Random(args.seed),
    };
    // Defaults per space: where each sweep starts on its fastest plateau and ends past the
    // caches in front of memory.
    let (stride, smallest, largest) = match space {
        Space::Global | Space::Readonly | Space::Texture => (32, 4 << 10, 4 << 20),
        Space::L2 => (128, 256 << 10, 128 << 20),
        Space::Shared => (4, 1 << 10, 48 << 10),
        Space::Constant => (64, 256, 64 << 10),
    };
    let stride = args.stride.unwrap_or(stride);
    let smallest = args.min_bytes.unwrap_or(smallest);
    let largest = args.max_bytes.unwrap_or(largest);
    if stride == 0
        || !stride.is_multiple_of(4)
        || smallest < 4 * stride
        || !smallest.is_multiple_of(stride)
        || largest < 4 * smallest
    {
        return Err(UsageError::new(
            "--stride must be a positive multiple of 4, --min-bytes a multiple of it and at least 4 strides, and --max-bytes at least 4 times --min-bytes (three doublings at least)",
        )
        .into());
    }
    if space == Space::Shared && largest > 48 << 10 {
        return Err(UsageError::new(
            "the shared space holds at most 48 KiB per block here; pass --max-bytes 49152 or less",
        )
        .into());
    }
    if largest > 8 << 30 || args.fine_points == 0 {
        return Err(UsageError::new(
            "--max-bytes must be at most 8 GiB and --fine-points at least 1",
        )
        .into());
    }
    let mut gpu = suite::open(
        args.device,
        args.output.as_deref(),
        &[("cache", space.entry())],
    )?;
    let settings = json!({
        "space": space.name(),
        "stride_bytes": stride,
        "min_bytes": smallest,
        "max_bytes": largest,
        "fine_points": args.fine_points,
        "threads": 1,
        "chain": match order { Order::Stride => "fixed stride, address order".to_string(), Order::Random(seed) => format!("fixed stride, random order (seed {seed})") },
        "preferred_shared_carveout_percent": matches!(space, Space::Global | Space::L2 | Space::Readonly).then_some(crate::gpu::launch::CHASE_CARVEOUT_PERCENT),
        "method": "one warm pass, then at least one full timed pass (>= 2048 loads); final index checked; coarse doubling, bisection at each rise, fine sweep after it",
    });
    let suite = suite::start(
        &mut gpu,
        "cache",
        args.output.as_deref(),
        &["cache"],
        settings,
    )?;
    let outcome = (|| -> Result<()> {
        let sweep = cache::sweep(
            &mut gpu,
            space,
            order,
            stride,
            smallest,
            largest,
            args.fine_points,
        )?;
        suite.run.write_csv("chase.csv", &sweep.points)?;
        let report = cache_inference::infer(&sweep.points)
            .ok_or_else(|| anyhow::anyhow!("the sweep gave fewer than 3 footprints"))?;
        let device = &suite.metadata.device;
        suite.run.write_json(
            "cache.json",
            &json!({
                "space": space.name(),
                "report": report,
                "sweep": { "points": sweep.points.len(), "launches": sweep.launches, "seconds": sweep.seconds },
                "device_attributes": {
                    "l2_cache_bytes": device.l2_cache_bytes,
                    "shared_memory_per_multiprocessor_bytes": device.shared_memory_per_multiprocessor_bytes,
                },
            }),
        )?;
        let title = suite.title(&format!(
            "Pointer chase, {} space, {stride}-byte stride",
            space.name()
        ));
        suite.run.write_with("cache.png", |path| {
            cache_plot::draw(path, &title, &sweep.points, &report)
        })?;
        print!("{}", cache_report::render_text(&report));
        println!(
            "{} space: {} points ({} launches) in {:.1} s; the driver reports an L2 of {} KiB",
            space.name(),
            sweep.points.len(),
            sweep.launches,
            sweep.seconds,
            device.l2_cache_bytes / 1024
        );
        Ok(())
    })();
    suite.finish(&mut gpu, outcome)
}

//! `gpubench analyze cache FILE.csv`: the inference of a cache run on a saved curve, no GPU.

use anyhow::Result;

use super::measure::{self as cache, Space, saved};
use super::report as cache_report;
use crate::analysis::cache_inference;
use crate::cli::AnalyzeCacheArgs;
use crate::error::UsageError;

pub fn analyze_saved(args: &AnalyzeCacheArgs) -> Result<()> {
    let points = saved::load(&args.file)?;
    let space = match &args.space {
        Some(name) => Some(Space::from_name(name).ok_or_else(|| {
            UsageError::new(format!(
                "--space {name} is not a cache space; use one of global, l2, readonly, shared, constant, constant-uniform, texture, instruction, tlb"
            ))
        })?),
        None => space_of_run(&args.file),
    };
    // A run's own chase is read as the run read it: with its space's rise threshold. A curve
    // of unknown origin gets a threshold relative to its own noise only.
    let minimum_rise = space.map_or(cache_inference::MinimumRise::NOISE_ONLY, |space| {
        cache::RiseThreshold::of(space).minimum_rise()
    });
    // A run's descending chase, kept beside its chase.csv, is read with it as the run did.
    let descending = args
        .file
        .parent()
        .map(|dir| dir.join(cache::DESCENDING_CSV))
        .filter(|path| path.is_file() && args.file.file_name() == Some("chase.csv".as_ref()))
        .map(|path| saved::load(&path))
        .transpose()?;
    let report = match &descending {
        Some(down) => cache_inference::infer_paired(&points, down, minimum_rise),
        None => cache_inference::infer_with(&points, minimum_rise),
    }
    .ok_or_else(|| {
        UsageError::new(format!(
            "{}: the finest stride has fewer than 3 distinct footprints; sweep more footprints",
            args.file.display()
        ))
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        match space {
            Some(space) => println!(
                "levels read with the {} space's rise threshold ({} x the lower latency + {} cycles)",
                space.name(),
                minimum_rise.relative,
                minimum_rise.absolute
            ),
            None => println!(
                "levels read with a threshold from the curve's own noise (pass --space, or keep the file in its run directory, for a space's threshold)"
            ),
        }
        if descending.is_some() {
            println!(
                "with the run's descending chase ({})",
                cache::DESCENDING_CSV
            );
        }
        print!("{}", cache_report::render_text(&report));
    }
    Ok(())
}

/// The space of the cache run whose directory holds `file` (its `metadata.json`), if any.
fn space_of_run(file: &std::path::Path) -> Option<Space> {
    let dir = file.parent()?;
    let metadata = crate::report::metadata::SavedMetadata::read(dir).ok()?;
    if metadata.suite != "cache" {
        return None;
    }
    Space::from_name(&metadata.settings::<super::Recorded>().ok()?.space)
}

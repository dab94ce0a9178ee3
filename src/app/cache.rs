//! `gpubench analyze cache FILE.csv`: cache levels from a saved chase curve, no GPU.

use anyhow::Result;

use crate::analysis::cache_inference;
use crate::cli::AnalyzeCacheArgs;
use crate::error::UsageError;
use crate::experiments::cache::saved;
use crate::report::cache as cache_report;

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

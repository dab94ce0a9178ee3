//! The settings of `gpubench tma`: its subcommand's flags.

use clap::Args;
use serde::{Deserialize, Serialize};

use super::measure::TILE_WORDS;
use crate::error::{UsageError, bail_usage};

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct TmaArgs {
    /// Footprints of the latency chases, in MiB (fractions allowed): they should span the L2.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0.25,1,4,8,16,24,32,40,48,56,64,96,128,256"
    )]
    pub footprints_mib: Vec<f64>,
    /// MiB each streaming configuration reads in all (at most the 1 GiB tensor, read once).
    #[arg(long, default_value_t = 1024)]
    pub stream_mib: u64,
    /// Milliseconds (at least) of each launch of the L2 bulk-read search, which tries every
    /// slice size, copies in flight and blocks per SM; the fastest of each kind of line is then
    /// timed again over five launches of at least 8 ms, and that is the figure.
    #[arg(long, default_value_t = 3.0)]
    #[serde(default = "search_ms")]
    pub search_ms: f64,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
}

/// `search_ms` where a saved settings.json lacks it (written before the flag existed):
/// clap's default, so the default is written once, in the flag.
fn search_ms() -> f64 {
    crate::harness::defaults::<TmaArgs>().search_ms
}

/// What metadata.json's settings record of a run: the chases' footprints and shape, the
/// stream's size and stages, the L2 read's and DRAM copy's searches and figure launches, and
/// the method. Written by [`super::run`]; nothing reads it back.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub dram_copy_figure_launches: usize,
    pub dram_copy_search: DramCopySearch,
    pub footprints_bytes: Vec<u64>,
    pub l2_read_figure_launches: usize,
    pub l2_read_figure_min_ms: f64,
    pub l2_read_footprint_bytes: u64,
    pub l2_read_search: L2ReadSearch,
    pub method: String,
    pub steps: u32,
    pub stream_bytes_per_configuration: u64,
    pub stream_stages: u32,
    /// Columns and rows of the streamed tensor.
    pub stream_tensor_words: [u32; 2],
    pub tile_bytes: u32,
    pub warm_steps: u32,
}

/// [`Recorded`]'s L2 read search: the patterns tried and how long each is timed.
#[derive(Debug, Serialize, Deserialize)]
pub struct L2ReadSearch {
    pub blocks_per_sm: Vec<u32>,
    pub min_ms: f64,
    pub slice_kib: Vec<u32>,
    pub stages: Vec<u32>,
}

/// [`Recorded`]'s DRAM copy search: the patterns tried.
#[derive(Debug, Serialize, Deserialize)]
pub struct DramCopySearch {
    pub blocks_per_sm: Vec<u32>,
    pub chunk_kib: Vec<u32>,
    pub stages: Vec<u32>,
}

/// The largest chain the suite builds on the host, in MiB.
const MAX_FOOTPRINT_MIB: f64 = 1024.0;

impl TmaArgs {
    /// The chases' footprints in bytes, checked: whole tiles, sorted, each once, at least five.
    pub fn footprints_bytes(&self) -> Result<Vec<u64>, UsageError> {
        let tile = u64::from(TILE_WORDS) * 4;
        let mut bytes: Vec<u64> = self
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
            bail_usage!(
                "--footprints-mib needs at least five sizes, spanning the L2, for the capacity fit"
            );
        }
        Ok(bytes)
    }

    /// The checks of the other flags, before a device is opened.
    pub fn validate(&self) -> Result<(), UsageError> {
        if !(0.5..=100.0).contains(&self.search_ms) {
            bail_usage!("--search-ms must be between 0.5 and 100");
        }
        if !(1..=1024).contains(&self.stream_mib) {
            bail_usage!(
                "--stream-mib must be between 1 and 1024 (the streamed tensor, read at most once)"
            );
        }
        Ok(())
    }
}

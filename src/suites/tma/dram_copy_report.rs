//! Files of the TMA suite's DRAM copy by bulk copies (issue #32): `tma-dram-copy.csv` (every
//! pattern of the search, the re-timed fastest as the figure, or one row saying why nothing was
//! measured) and the summary's rows.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::dram_copy::{CopyReading, DramBulkCopy};
use crate::report::figures::{Figure, Rows};
use crate::report::plot;
use crate::report::run_dir::RunDir;
use crate::gpu::launch::bandwidth::SliceOrder;

pub const FILE: &str = "tma-dram-copy.csv";

/// One pattern as measured. `role` is "search", "figure" (the fastest, timed again) or "not
/// measured" (with the reason in `skipped`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub role: String,
    pub chunk_bytes: u32,
    pub stages: u32,
    pub lag: u32,
    pub blocks_per_sm: u32,
    pub array_bytes: u64,
    pub launches: usize,
    /// Read + write bytes over the GPU time between events around each timed launch: the
    /// median launch's, the slowest's and the fastest's.
    pub gb_per_s: Option<f64>,
    pub gb_per_s_min: Option<f64>,
    pub gb_per_s_max: Option<f64>,
    /// The median over the DRAM's theoretical peak (2 x memory clock x bus width).
    pub fraction_of_peak: Option<f64>,
    /// The figure's row only: target words compared with the source, and how many differed.
    pub checked_words: Option<u64>,
    pub mismatched_words: Option<u64>,
    pub skipped: Option<String>,
    /// "ticket": the blocks took the chunks in order from an atomic ticket (runs before
    /// 2026-11-25 gave block b chunks b, b + grid, ... and had no column).
    pub chunk_order: Option<String>,
}

/// The rows of one run; `peak` in bytes per second.
pub fn rows(copy: &Result<DramBulkCopy, String>, peak: f64) -> Vec<Row> {
    let copy = match copy {
        Ok(copy) => copy,
        Err(why) => {
            return vec![Row {
                role: "not measured".into(),
                skipped: Some(why.clone()),
                ..Row::default()
            }];
        }
    };
    let row = |role: &str, r: &CopyReading| {
        let rate = |ms: f64| 2.0 * copy.array_bytes as f64 / (ms * 1e-3) / 1e9;
        let figure = role == "figure";
        Row {
            role: role.into(),
            chunk_bytes: r.pattern.chunk_bytes,
            stages: r.pattern.stages,
            lag: r.pattern.lag(),
            blocks_per_sm: r.pattern.blocks_per_sm,
            array_bytes: copy.array_bytes,
            launches: r.event_ms.map_or(0, |m| m.n),
            gb_per_s: r.event_ms.map(|m| rate(m.median)),
            gb_per_s_min: r.event_ms.map(|m| rate(m.max)),
            gb_per_s_max: r.event_ms.map(|m| rate(m.min)),
            fraction_of_peak: r.event_ms.map(|m| rate(m.median) * 1e9 / peak),
            checked_words: figure.then_some(copy.checked_words),
            mismatched_words: figure.then_some(copy.mismatched_words),
            skipped: r.skipped.clone(),
            chunk_order: Some(SliceOrder::Ticket.name().into()),
        }
    };
    copy.search
        .iter()
        .map(|r| row("search", r))
        .chain(copy.figure.iter().map(|r| row("figure", r)))
        .collect()
}

pub fn write(run: &RunDir, rows: &[Row]) -> Result<()> {
    run.write_csv(FILE, rows)
}

/// The pattern in words: "16 KiB chunks by ticket, 4 buffers per block (2 awaiting stores), 1
/// block per SM, arrays of 4 GiB" ("by ticket" only where the run says so).
pub fn pattern(row: &Row) -> String {
    format!(
        "{} chunks{}, {} buffers per block ({} awaiting stores), {} block{} per SM, arrays of {}",
        plot::binary_bytes(f64::from(row.chunk_bytes)),
        if row.chunk_order.as_deref() == Some(SliceOrder::Ticket.name()) {
            " by ticket"
        } else {
            ""
        },
        row.stages,
        row.lag,
        row.blocks_per_sm,
        if row.blocks_per_sm == 1 { "" } else { "s" },
        plot::binary_bytes(row.array_bytes as f64),
    )
}

pub const QUANTITY: &str = "DRAM copy by bulk copies through shared memory (read + write bytes)";

/// The summary's rows: the figure's rate with its pattern and its share of the peak; in words
/// why there is none where the copy was not measured or did not reproduce its source. A run
/// made before this measurement existed has no file and no rows.
pub fn figures(dir: &Path) -> Result<Vec<Figure>> {
    if crate::report::saved::find(dir, FILE).is_none() {
        return Ok(Vec::new());
    }
    let rows: Vec<Row> = crate::report::saved::read_csv(dir, FILE)?;
    let mut r = Rows::new("tma", "TMA", FILE);
    if let Some(row) = rows.iter().find(|r| r.role == "not measured") {
        r.text(QUANTITY, row.skipped.as_deref());
        return Ok(r.finish());
    }
    let Some(row) = rows.iter().find(|r| r.role == "figure") else {
        r.text(QUANTITY, Some("not measured: no pattern ran"));
        return Ok(r.finish());
    };
    match (row.mismatched_words, row.gb_per_s) {
        (Some(0), Some(gbs)) => {
            let label = format!(
                "median of {} launches, min-max; {}",
                row.launches,
                pattern(row)
            );
            r.push(
                QUANTITY,
                Some(gbs),
                "GB/s",
                row.gb_per_s_min
                    .zip(row.gb_per_s_max)
                    .map(|(low, high)| (low, high, label.as_str())),
            );
            r.push(
                "DRAM copy by bulk copies: fraction of theoretical peak",
                row.fraction_of_peak.map(|f| 100.0 * f),
                "%",
                None,
            );
        }
        (Some(bad), _) if bad > 0 => {
            let why = format!(
                "not stated: the target differs from the source in {bad} of {} words read back",
                row.checked_words.unwrap_or(0)
            );
            r.text(QUANTITY, Some(&why));
        }
        _ => r.text(
            QUANTITY,
            Some(row.skipped.as_deref().unwrap_or("not measured")),
        ),
    }
    Ok(r.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::stats::Summary;
    use crate::suites::tma::dram_copy::CopyPattern;

    fn copy(mismatched_words: u64) -> DramBulkCopy {
        let pattern = CopyPattern {
            chunk_bytes: 16 << 10,
            stages: 4,
            blocks_per_sm: 1,
        };
        let reading = |ms: &[f64]| CopyReading {
            pattern,
            event_ms: Summary::of(ms),
            skipped: None,
        };
        DramBulkCopy {
            array_bytes: 2 << 30,
            search: vec![
                reading(&[1.5, 1.6]),
                CopyReading {
                    pattern: CopyPattern {
                        chunk_bytes: 32 << 10,
                        stages: 8,
                        blocks_per_sm: 1,
                    },
                    event_ms: None,
                    skipped: Some("do not fit".into()),
                },
            ],
            figure: Some(reading(&[1.47, 1.48, 1.5])),
            checked_words: 49152,
            mismatched_words,
        }
    }

    fn figures_of(rows: &[Row]) -> Vec<Figure> {
        let dir = tempfile::tempdir().unwrap();
        let bytes = crate::report::run_dir::csv_bytes(rows).unwrap();
        std::fs::write(dir.path().join(FILE), bytes).unwrap();
        figures(dir.path()).unwrap()
    }

    #[test]
    fn the_figure_counts_read_and_write_bytes_and_names_its_pattern() {
        let rows = rows(&Ok(copy(0)), 3352.3e9);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2].role, "figure");
        // 4 GiB moved in 1.48 ms.
        let gbs = rows[2].gb_per_s.unwrap();
        assert!((gbs - 2.0 * (2u64 << 30) as f64 / 1.48e-3 / 1e9).abs() < 1e-6);
        assert!(rows[2].gb_per_s_min.unwrap() < gbs && gbs < rows[2].gb_per_s_max.unwrap());
        let figures = figures_of(&rows);
        assert_eq!(figures.len(), 2);
        assert_eq!(figures[0].quantity, QUANTITY);
        assert!(
            figures[0].uncertainty.contains(
                "16 KiB chunks by ticket, 4 buffers per block (2 awaiting stores), 1 block per SM"
            ),
            "{:?}",
            figures[0]
        );
        // A run from before the ticket (no column) reads back, its pattern without the words.
        let mut before = rows[2].clone();
        before.chunk_order = None;
        assert!(pattern(&before).starts_with("16 KiB chunks, 4 buffers"));
        let committed = include_str!("../../../results/h100/peers-a59a5e4/tma/tma-dram-copy.csv");
        let old: Vec<Row> = csv::Reader::from_reader(committed.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(!old.is_empty() && old.iter().all(|r| r.chunk_order.is_none()));
        let percent = figures[1].value.unwrap();
        assert!((percent - 100.0 * gbs * 1e9 / 3352.3e9).abs() < 1e-9);
    }

    #[test]
    fn a_copy_that_did_not_reproduce_its_source_or_did_not_run_gives_no_rate() {
        let bad = figures_of(&rows(&Ok(copy(7)), 3352.3e9));
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].value, None);
        assert!(bad[0].text.as_deref().unwrap().contains("7 of 49152 words"));
        let none = figures_of(&rows(&Err("not measured: 5 bytes free".into()), 3352.3e9));
        assert_eq!(none[0].text.as_deref(), Some("not measured: 5 bytes free"));
    }
}

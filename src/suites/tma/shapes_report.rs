//! Files of the TMA suite's box shapes and asynchronous copies ([`super::shapes`]):
//! `tma-shapes.csv`, the summary's rows and `tma-shapes.png`. A run made before these existed
//! has no file, no rows and no plot.

use std::path::Path;

use anyhow::{Context, Result};

use plotters::prelude::*;

use super::shapes::{BOXES, COPIES, Row, Shapes};
use crate::report::ceilings::Ceiling;
use crate::report::figures::{Figure, Rows};
use crate::report::keys::SEP;
use crate::report::plot::{self, BLUE, GREEN, ORANGE, RED};
use crate::report::run_dir::RunDir;

pub const FILE: &str = "tma-shapes.csv";

pub fn write(run: &RunDir, shapes: &Shapes) -> Result<()> {
    run.write_csv(FILE, &shapes.rows)
}

/// The file, or `None` for a run made before it.
pub fn read(dir: &Path) -> Result<Option<Shapes>> {
    if crate::report::saved::find(dir, FILE).is_none() {
        return Ok(None);
    }
    Ok(Some(Shapes {
        rows: crate::report::saved::read_csv(dir, FILE)?,
    }))
}

impl Shapes {
    /// The rows of one experiment ([`BOXES`], [`COPIES`]).
    pub fn of<'a>(&'a self, experiment: &'a str) -> impl Iterator<Item = &'a Row> + 'a {
        self.rows.iter().filter(move |r| r.experiment == experiment)
    }
}

/// "the L2 (12 MiB)" or "DRAM (1 GiB)".
fn source_words(source: &str, bytes: u64) -> String {
    let size = plot::binary_bytes(bytes as f64);
    match source {
        "l2" => format!("a region in the L2 ({size})"),
        _ => format!("DRAM ({size})"),
    }
}

/// "16 B x 256 rows", "256 B x 4 rows x 4 planes", with ", 128 B swizzle" where swizzled.
pub fn box_words(row: &Row) -> String {
    let mut words = format!("{} B x {} rows", 4 * row.box_x_words, row.box_y);
    if row.rank == 3 {
        words.push_str(&format!(" x {} planes", row.box_z));
    }
    if row.swizzle_bytes > 0 {
        words.push_str(&format!(", {} B swizzle", row.swizzle_bytes));
    }
    words
}

/// The key part of a method's name.
fn method_key(method: &str) -> String {
    method
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// The summary's rows: every tile shape's and every method's rate from each source, in GB/s
/// over the median of three launches with the slowest and fastest, held to the chip's
/// shared-memory ceiling (every byte lands in an SM's shared memory).
pub fn figures(dir: &Path, ceiling: Option<&Ceiling>) -> Result<Vec<Figure>> {
    let Some(shapes) = read(dir)? else {
        return Ok(Vec::new());
    };
    let mut r = Rows::new("tma", "TMA", FILE);
    for row in shapes.of(BOXES) {
        let quantity = format!(
            "TMA {}-D box of {}, {} in flight per block, from {}",
            row.rank,
            box_words(row),
            row.depth,
            source_words(&row.source, row.source_bytes)
        );
        r.key(
            [
                "tma",
                "tiles",
                &row.source,
                &format!("{}x{}x{}", row.box_x_words, row.box_y, row.box_z),
                &format!("swizzle-{}", row.swizzle_bytes),
            ]
            .join(&SEP.to_string()),
        );
        rate_row(&mut r, &quantity, row, ceiling);
    }
    for row in shapes.of(COPIES) {
        let quantity = format!(
            "{} into shared memory, {} KiB in flight per SM, from {}",
            row.method,
            row.bytes_in_flight_per_sm >> 10,
            source_words(&row.source, row.source_bytes)
        );
        r.key(
            [
                "tma",
                "async",
                &row.source,
                &method_key(&row.method),
                &row.depth.to_string(),
            ]
            .join(&SEP.to_string()),
        );
        rate_row(&mut r, &quantity, row, ceiling);
    }
    Ok(r.finish())
}

fn rate_row(r: &mut Rows, quantity: &str, rate: &Row, ceiling: Option<&Ceiling>) {
    if let Some(why) = &rate.skipped {
        r.text(quantity, Some(&format!("not run: {why}")));
        return;
    }
    let label = format!(
        "median of {} launches, min-max; {} B/clock/SM",
        rate.launches,
        rate.bytes_per_clock_per_sm
            .map_or("?".into(), |b| format!("{b:.1}"))
    );
    r.push(
        quantity,
        rate.gb_per_s,
        "GB/s",
        rate.gb_per_s_min
            .zip(rate.gb_per_s_max)
            .map(|(low, high)| (low, high, label.as_str())),
    );
    r.at_most(ceiling);
}

pub fn title() -> &'static str {
    "TMA box shapes and asynchronous copies into shared memory"
}

/// A box in few characters for a plot's axis: row bytes x rows (x planes), "s" where swizzled.
fn box_label(row: &Row) -> String {
    let mut label = format!("{}×{}", 4 * row.box_x_words, row.box_y);
    if row.rank == 3 {
        label.push_str(&format!("×{}", row.box_z));
    }
    if row.swizzle_bytes > 0 {
        label.push('s');
    }
    label
}

/// `tma-shapes.png`: (a) bytes per clock per SM of every box from the L2 region and from DRAM;
/// (b) and (c) every method by the bytes in flight per SM, from the L2 region and from DRAM.
pub fn draw(path: &Path, title: &str, shapes: &Shapes) -> Result<()> {
    let sources = ["l2", "dram"];
    let boxes = crate::analysis::distinct(shapes.of(BOXES).map(box_label));
    let tiles: Vec<plot::BarSeries> = sources
        .iter()
        .zip([GREEN, BLUE])
        .map(|(&source, colour)| plot::BarSeries {
            label: if source == "l2" { "L2 region" } else { "DRAM" }.into(),
            colour,
            values: boxes
                .iter()
                .map(|b| {
                    shapes
                        .of(BOXES)
                        .find(|t| t.source == source && box_label(t) == *b)
                        .and_then(|t| t.bytes_per_clock_per_sm)
                })
                .collect(),
        })
        .collect();
    let mut flights: Vec<u32> = shapes.of(COPIES).map(|c| c.bytes_in_flight_per_sm).collect();
    flights.sort_unstable();
    flights.dedup();
    let methods = crate::analysis::distinct(shapes.of(COPIES).map(|r| r.method.as_str()));
    let copies = |source: &str| -> Vec<plot::BarSeries> {
        methods
            .iter()
            .zip([ORANGE, RED, BLUE, GREEN])
            .map(|(&method, colour)| plot::BarSeries {
                label: method.into(),
                colour,
                values: flights
                    .iter()
                    .map(|&f| {
                        shapes
                            .of(COPIES)
                            .find(|c| {
                                c.source == source && c.method == method && c.bytes_in_flight_per_sm == f
                            })
                            .and_then(|c| c.bytes_per_clock_per_sm)
                    })
                    .collect(),
            })
            .collect()
    };
    let flight_labels: Vec<String> = flights.iter().map(|f| (f >> 10).to_string()).collect();
    let design = plot::Design::panels((3000, 750), 3).with_legend(3);
    plot::titled_plot!(path, design, title, |root| {
        let areas = plot::panels(&root, 3);
        plot::grouped_bars(
            &areas[0],
            "(a) 4 KiB TMA boxes: row bytes × rows (× planes), s swizzled",
            &boxes,
            &tiles,
            "bytes per clock per SM",
            false,
        )?;
        for (area, (source, caption)) in areas[1..].iter().zip([
            ("l2", "(b) into shared memory from the L2 region, by KiB in flight per SM"),
            ("dram", "(c) into shared memory from DRAM, by KiB in flight per SM"),
        ]) {
            plot::grouped_bars(
                area,
                caption,
                &flight_labels,
                &copies(source),
                "bytes per clock per SM",
                false,
            )?;
        }
    })
    .context("drawing tma shapes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::tma::shapes::{CHUNK, COMPARED_BOX, Device, Method, Source, TILE_SHAPES, Timing};

    fn shapes() -> Shapes {
        let device = Device {
            sms: 132,
            mhz: 1755.0,
            shared_per_sm: 0,
            shared_per_block: 0,
            l2_bytes: 50 << 20,
        };
        let rate = |gbs: f64| Timing::Ran {
            bytes: gbs * 1e6,
            event_ms: vec![1.0, 1.1, 0.9],
        };
        let mut rows: Vec<Row> = TILE_SHAPES
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let source = if i % 2 == 0 { Source::L2 } else { Source::Dram };
                let rate = if i == 3 {
                    Timing::Skipped("do not fit".into())
                } else {
                    rate(1000.0 + i as f64)
                };
                Row::new(BOXES, source, device, Method::Tma, s, 8, rate)
            })
            .collect();
        for m in Method::ALL {
            let shape = if m == Method::Tma { COMPARED_BOX } else { CHUNK };
            rows.push(Row::new(COPIES, Source::Dram, device, m, shape, 4, rate(3000.0)));
        }
        Shapes { rows }
    }

    #[test]
    fn the_file_reads_back_as_written_and_gives_a_row_with_a_key_each() {
        let root = tempfile::tempdir().unwrap();
        let run = RunDir::create(Some(&root.path().join("run")), "tma").unwrap();
        let written = shapes();
        write(&run, &written).unwrap();
        let dir = run.path();
        assert_eq!(read(dir).unwrap().as_ref(), Some(&written));
        let ceiling = Ceiling {
            value: 2000.0,
            made_of: "test".into(),
        };
        let figures = figures(dir, Some(&ceiling)).unwrap();
        assert_eq!(figures.len(), written.rows.len());
        let mut keys: Vec<&str> = figures.iter().map(|f| f.key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), figures.len(), "{keys:?}");
        assert!(keys.contains(&"tma/tiles/l2/8x128x1/swizzle-32"), "{keys:?}");
        assert!(keys.contains(&"tma/async/dram/ld.global.cg-st.shared/4"), "{keys:?}");
        assert!(keys.contains(&"tma/async/dram/TMA-2-D-box/4"), "{keys:?}");
        let skipped = &figures[3];
        assert_eq!(skipped.value, None);
        assert_eq!(skipped.text.as_deref(), Some("not run: do not fit"));
        let swizzled = figures
            .iter()
            .find(|f| f.key == "tma/tiles/l2/8x128x1/swizzle-32")
            .unwrap();
        assert_eq!(
            swizzled.quantity,
            "TMA 2-D box of 32 B x 128 rows, 32 B swizzle, 8 in flight per block, from a region in the L2 (12 MiB)"
        );
        // 1 GB over the median of 1.0 ms, the slowest 1.1 and the fastest 0.9.
        let cp = figures
            .iter()
            .find(|f| f.key == "tma/async/dram/cp.async.cg/4")
            .unwrap();
        assert!((cp.value.unwrap() - 3000.0).abs() < 1e-9);
        assert!(cp.low.unwrap() < 3000.0 && cp.high.unwrap() > 3000.0);
        // Above the ceiling: not stated as a figure.
        assert!(cp.is_unresolved(), "{cp:?}");
        assert!(!figures[0].is_unresolved());
        // A run from before has no rows.
        assert!(figures_of_empty().is_empty());
    }

    fn figures_of_empty() -> Vec<Figure> {
        let dir = tempfile::tempdir().unwrap();
        figures(dir.path(), None).unwrap()
    }

    #[test]
    fn the_plot_draws_from_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tma-shapes.png");
        draw(&path, title(), &shapes()).unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 1000);
    }
}

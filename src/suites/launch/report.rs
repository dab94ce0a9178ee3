//! Files of `gpubench launch`: `launch.json` (every launch sample as taken, in microseconds:
//! the host's launch calls and round trips, the GPU's time per kernel back to back and in a
//! graph, the holds, the counts, the method and the SASS of the kernels), `small-kernels.csv`
//! (per volume of the streaming kernel: the median GPU time per launch with its range over
//! the launches and the bandwidth at the median; the points the model T(V) = a + V/b is
//! fitted to), `launch.sass` and `launch.png` (V/T(V) against V with the fitted curve).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use super::analysis::{self, Point, SmallKernelFit};
use super::measure::{BYTES_PER_FLOAT, EMPTY, SCALE, Samples};
use crate::analysis::stats::Summary;
use crate::report::figures::{Domain, EstimateView, Figure, Rows};
use crate::report::plot::{self, BLUE, GREY, RED};
use crate::report::run_dir::RunDir;

pub const JSON: &str = "launch.json";
pub const CSV: &str = "small-kernels.csv";
/// The summary's section.
pub const SECTION: &str = "Launch overhead";

/// `launch.json`, written by [`write`] and read back by [`read`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    pub repeats: u32,
    pub queued: u32,
    pub round_trips: u32,
    pub back_to_back: u32,
    pub samples: Samples,
    pub method: String,
    pub sass: KernelsSass,
}

/// The SASS of the module's kernels ([`KernelInstructions`]).
pub type KernelsSass = crate::report::saved::KernelInstructions;

/// One line of `small-kernels.csv`, read back by [`read_points`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Bytes read and written by one launch (4 bytes read and 4 written per float).
    pub volume_bytes: u64,
    pub floats: u64,
    pub blocks: u32,
    pub launches: usize,
    pub time_us_median: f64,
    pub time_us_min: f64,
    pub time_us_max: f64,
    /// The volume over the median time.
    pub gb_per_s: f64,
}

/// The rows of `small-kernels.csv`: the volumes with a summary (every one with samples).
pub fn rows(samples: &Samples) -> Vec<Row> {
    samples
        .volumes
        .iter()
        .filter_map(|v| {
            let time = Summary::of(&v.time_us)?;
            let point = Point {
                bytes: v.bytes,
                time_us: time,
            };
            Some(Row {
                volume_bytes: v.bytes,
                floats: v.bytes / BYTES_PER_FLOAT,
                blocks: v.blocks,
                launches: time.n,
                time_us_median: time.median,
                time_us_min: time.min,
                time_us_max: time.max,
                gb_per_s: point.gb_per_s(),
            })
        })
        .collect()
}

pub fn write(run: &RunDir, reading: &Reading) -> Result<()> {
    run.write_csv(CSV, rows(&reading.samples))?;
    run.write_json(JSON, reading)
}

pub fn read(dir: &Path) -> Result<Reading> {
    crate::report::saved::read_json(dir, JSON)
}

/// The points of `small-kernels.csv`, as the fit takes them.
pub fn read_points(dir: &Path) -> Result<Vec<Point>> {
    Ok(points(&crate::report::saved::read_csv::<Row>(dir, CSV)?))
}

/// The points of rows of `small-kernels.csv` (the mean and spread of the launches are not
/// kept: the fit takes the median).
pub fn points(rows: &[Row]) -> Vec<Point> {
    rows.iter()
        .map(|r| Point {
            bytes: r.volume_bytes,
            time_us: Summary {
                n: r.launches,
                min: r.time_us_min,
                median: r.time_us_median,
                mean: r.time_us_median,
                max: r.time_us_max,
                stdev: 0.0,
            },
        })
        .collect()
}

/// The SASS of `launch_empty` in full and of `launch_scale` by its memory and arithmetic
/// instructions, in words ("launch_empty: BRA 1, EXIT 1; ..."); `None` without the SASS.
pub fn sass_words(sass: &KernelsSass) -> Option<String> {
    let list = |ops: &BTreeMap<String, usize>, keep: &dyn Fn(&str) -> bool| {
        ops.iter()
            .filter(|(op, _)| keep(op))
            .map(|(op, n)| format!("{op} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let empty = sass.instructions.get(EMPTY)?;
    let scale = sass.instructions.get(SCALE)?;
    let total: usize = scale.values().sum();
    let memory = |op: &str| op.starts_with("LDG") || op.starts_with("STG") || op.starts_with("FMUL");
    Some(format!(
        "{EMPTY}: {}; {SCALE}: {} of {total} instructions",
        list(empty, &|_| true),
        list(scale, &memory)
    ))
}

/// What a host-timed figure's range is over, with the CPU it depends on.
fn host_label(what: &str) -> String {
    format!("min-max over {what}; host wall time, depends on the CPU")
}

/// A median with its range and `label`, where the samples have one.
fn median(r: &mut Rows, quantity: &str, samples: &[f64], label: String) {
    if let Some(s) = Summary::of(samples) {
        r.push(quantity, Some(s.median), "µs", Some((s.min, s.max, &label)));
    }
}

/// The summary's rows: the five launch measurements (median and range), the small-kernel
/// fit (a and b with their 95 % CIs, V½), the smallest volume's time, and the SASS.
pub fn figures(dir: &Path) -> Result<Vec<Figure>> {
    let reading = read(dir)?;
    let s = &reading.samples;
    let mut r = Rows::new("launch", SECTION, JSON);
    let repeats = format!("{} batches", reading.repeats);
    median(
        &mut r,
        "launch call of an empty kernel",
        &s.launch_call_us,
        host_label(&format!("{repeats} of {} launches", reading.queued)),
    );
    median(
        &mut r,
        "launch and synchronise round trip of an empty kernel",
        &s.round_trip_us,
        host_label(&format!("{} round trips", reading.round_trips)),
    );
    let gpu_label = format!(
        "min-max over {repeats} of {} kernels; GPU time between events",
        reading.back_to_back
    );
    median(
        &mut r,
        "empty kernels back to back, GPU time per kernel",
        &s.back_to_back_us,
        gpu_label.clone(),
    );
    median(
        &mut r,
        "empty kernels in a CUDA graph, GPU time per kernel",
        &s.graph_per_kernel_us,
        gpu_label,
    );
    median(
        &mut r,
        "launch and synchronise round trip of the graph of empty kernels",
        &s.graph_round_trip_us,
        host_label(&format!(
            "{} round trips of {} kernels",
            reading.repeats, reading.back_to_back
        )),
    );
    r.from(CSV);
    let points = read_points(dir)?;
    if let Some(fit) = analysis::fit(&points) {
        fit_rows(&mut r, &fit);
    }
    if let Some(first) = points.first() {
        let label = format!(
            "min-max over {} launches; GPU time between events",
            first.time_us.n
        );
        r.push(
            &format!(
                "streaming kernel at its smallest volume ({}), GPU time per launch",
                plot::binary_bytes(first.bytes as f64)
            ),
            Some(first.time_us.median),
            "µs",
            Some((first.time_us.min, first.time_us.max, &label)),
        );
    }
    r.from(JSON);
    r.text(
        "SASS of the timed kernels",
        Some(&sass_words(&reading.sass).unwrap_or_else(|| {
            format!("not disassembled: {}", reading.sass.status)
        })),
    );
    Ok(r.finish())
}

/// The rows of the small-kernel fit.
fn fit_rows(r: &mut Rows, fit: &SmallKernelFit) {
    let a = fit.overhead_us;
    r.estimate(
        "streaming kernel overhead a of T(V) = a + V/b",
        &EstimateView {
            estimate: Some(a.estimate),
            ci95_low: Some(a.ci95_low),
            ci95_high: Some(a.ci95_high),
        },
        "µs",
    );
    if let Some(b) = fit.bandwidth_gb_per_s {
        r.estimate(
            "streaming kernel asymptotic bandwidth b of T(V) = a + V/b",
            &EstimateView {
                estimate: Some(b.estimate),
                ci95_low: b.low,
                ci95_high: b.high,
            },
            "GB/s",
        );
    }
    if let Some(half) = fit.half_bandwidth_bytes {
        let bounds = half
            .low
            .zip(half.high)
            .map(|(low, high)| (low, high, "from the 95% CIs of a and b (together at least 90%)"));
        r.push(
            "streaming kernel volume at half of b, V = a·b",
            Some(half.estimate.round()),
            "bytes",
            bounds,
        );
        r.domain(Domain::Fitted);
    }
}

pub fn title() -> &'static str {
    "Small kernels: bandwidth against volume, T(V) = a + V/b"
}

/// `launch.png`: V/T(V) of every volume (median, with the range of the launches) against V,
/// log-log, with the fitted V/(a + V/b), its asymptote b and V½.
pub fn draw(path: &Path, title: &str, points: &[Point]) -> Result<()> {
    let fit = analysis::fit(points);
    let bandwidth = |bytes: f64, us: f64| bytes / us / 1e3;
    let (low, high) = points.iter().fold((f64::MAX, 0.0f64), |(l, h), p| {
        (l.min(p.bytes as f64), h.max(p.bytes as f64))
    });
    if points.is_empty() {
        return Ok(());
    }
    let rates = points
        .iter()
        .flat_map(|p| {
            [
                bandwidth(p.bytes as f64, p.time_us.max),
                bandwidth(p.bytes as f64, p.time_us.min),
            ]
        })
        .chain(fit.and_then(|f| f.bandwidth_gb_per_s).map(|b| b.estimate))
        .filter(|v| v.is_finite() && *v > 0.0);
    let (bottom, top) = rates.fold((f64::MAX, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
    let (bottom, top) = (bottom / 1.5, top * 1.5);
    let mut entries = vec![plot::Entry::new(
        "measured: median GPU time per launch (bars: range)",
        BLUE,
        plot::Key::Line,
    )];
    if let Some(f) = &fit {
        entries.push(plot::Entry::new(
            format!(
                "fit V/(a + V/b): a = {:.2} µs, b = {:.0} GB/s",
                f.overhead_us.estimate,
                f.bandwidth_gb_per_s.map_or(f64::NAN, |b| b.estimate)
            ),
            RED,
            plot::Key::Line,
        ));
        entries.push(plot::Entry::new(
            "b, and the volume a·b where V/T(V) is half of b",
            GREY,
            plot::Key::Dash,
        ));
    }
    let design = plot::Design::from((1200, 750)).with_legend(entries.len());
    plot::titled_plot!(path, design, title, |root| {
        let root = plot::legend_above(&root, &entries)?;
        let mut chart = plot::log_log_bytes_chart(
            &root,
            (low / 1.2, high * 1.2),
            (bottom, top),
            "volume V read and written per launch (log scale)",
            "V / T(V), GB/s (log scale)",
        )?;
        for p in points {
            let x = p.bytes as f64;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![
                    (x, bandwidth(x, p.time_us.max)),
                    (x, bandwidth(x, p.time_us.min)),
                ],
                BLUE.stroke_width(1),
            )))?;
        }
        chart.draw_series(points.iter().map(|p| {
            let x = p.bytes as f64;
            Circle::new((x, bandwidth(x, p.time_us.median)), 4, BLUE.filled())
        }))?;
        if let Some(f) = &fit {
            let curve = (0..=200).map(|i| {
                let x = low / 1.2 * (high * 1.44 / low).powf(f64::from(i) / 200.0);
                (x, bandwidth(x, f.time_us(x)))
            });
            let shown: Vec<(f64, f64)> = curve.filter(|&(_, y)| y > bottom && y < top).collect();
            chart.draw_series(LineSeries::new(shown, RED.stroke_width(2)))?;
            if let Some(b) = f.bandwidth_gb_per_s {
                chart.draw_series(std::iter::once(DashedPathElement::new(
                    vec![(low / 1.2, b.estimate), (high * 1.2, b.estimate)],
                    6,
                    4,
                    GREY.stroke_width(2),
                )))?;
            }
            if let Some(half) = f.half_bandwidth_bytes.filter(|h| h.estimate > low && h.estimate < high) {
                chart.draw_series(std::iter::once(DashedPathElement::new(
                    vec![(half.estimate, bottom), (half.estimate, top)],
                    6,
                    4,
                    GREY.stroke_width(2),
                )))?;
            }
        }
    })
    .context("drawing launch")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::launch::measure::{Hold, VolumeSamples};

    /// A run's samples: launch figures of an H100's order and a sweep of T(V) = 3 µs + V/3000 GB/s.
    fn samples() -> Samples {
        Samples {
            launch_call_us: vec![2.1, 2.0, 2.3],
            round_trip_us: vec![9.0, 8.5, 11.0, 9.2],
            back_to_back_us: vec![1.6, 1.5, 1.7],
            graph_per_kernel_us: vec![0.9, 1.0, 0.95],
            graph_round_trip_us: vec![480.0, 500.0, 490.0],
            graph_build_us: 2500.0,
            hold: Hold {
                longest_us: 3000.0,
                outrun_batches: 0,
                batches: 40,
            },
            volumes: (12..=30)
                .map(|power| {
                    let bytes = 1u64 << power;
                    let t = 3.0 + bytes as f64 / 3e6;
                    VolumeSamples {
                        bytes,
                        blocks: 8,
                        time_us: vec![t * 1.01, t, t * 0.995],
                    }
                })
                .collect(),
        }
    }

    fn reading() -> Reading {
        let mut scale = BTreeMap::new();
        for op in ["LDG.E", "STG.E", "FMUL", "IMAD.WIDE", "EXIT"] {
            scale.insert(op.to_string(), 1);
        }
        Reading {
            repeats: 3,
            queued: 256,
            round_trips: 4,
            back_to_back: 500,
            samples: samples(),
            method: "synthetic".into(),
            sass: KernelsSass {
                status: "written".into(),
                arch: "sm_90".into(),
                instructions: BTreeMap::from([
                    (
                        EMPTY.to_string(),
                        BTreeMap::from([("EXIT".to_string(), 1), ("BRA".to_string(), 1)]),
                    ),
                    (SCALE.to_string(), scale),
                ]),
            },
        }
    }

    /// What `write` puts in a run directory reads back as itself, and the figures derived
    /// from it carry a unit, a status and the fitted a and b.
    #[test]
    fn a_written_run_reads_back_and_gives_its_figures() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create(Some(&dir.path().join("run")), "launch").unwrap();
        let written = reading();
        write(&run, &written).unwrap();
        assert_eq!(read(run.path()).unwrap(), written);
        let points = read_points(run.path()).unwrap();
        assert_eq!(points.len(), 19);
        assert_eq!(points[0].bytes, 4096);
        assert!((points[0].time_us.median - (3.0 + 4096.0 / 3e6)).abs() < 1e-9);
        let figures = figures(run.path()).unwrap();
        let find = |words: &str| {
            figures
                .iter()
                .find(|f| f.quantity.contains(words))
                .unwrap_or_else(|| panic!("no figure of {words}: {figures:#?}"))
        };
        for figure in &figures {
            assert!(figure.unresolved.is_none(), "{figure:?}");
            assert!(figure.value.is_some() != figure.text.is_some(), "{figure:?}");
            if figure.value.is_some() {
                assert!(!figure.unit.is_empty(), "{figure:?}");
            }
            assert!(figure.key.starts_with("launch/"), "{}", figure.key);
            assert_eq!(crate::report::domain::violation(figure), None);
        }
        let call = find("launch call");
        assert_eq!(call.value, Some(2.1));
        assert!(call.uncertainty.contains("depends on the CPU"));
        assert_eq!(find("round trip of an empty").value, Some(9.1));
        let a = find("overhead a");
        assert_eq!(a.domain, Domain::Fitted);
        assert!((a.value.unwrap() - 3.0).abs() < 0.05, "{a:?}");
        assert!(a.low.unwrap() <= 3.0 && 3.0 <= a.high.unwrap());
        let b = find("asymptotic bandwidth");
        assert_eq!(b.unit, "GB/s");
        assert!((b.value.unwrap() / 3000.0 - 1.0).abs() < 0.01, "{b:?}");
        let half = find("half of b");
        assert!((half.value.unwrap() / 9e6 - 1.0).abs() < 0.02, "{half:?}");
        let sass = find("SASS").text.as_deref().unwrap();
        assert!(sass.starts_with("launch_empty: BRA 1, EXIT 1; launch_scale: FMUL 1, LDG.E 1, STG.E 1 of 5"), "{sass}");
        // The plot draws from the files.
        let png = dir.path().join("launch.png");
        draw(&png, title(), &points).unwrap();
        assert!(std::fs::metadata(&png).unwrap().len() > 1000);
    }

    #[test]
    fn without_the_sass_the_figure_says_why() {
        let sass = KernelsSass {
            status: "no ptxas".into(),
            ..KernelsSass::default()
        };
        assert_eq!(sass_words(&sass), None);
    }
}

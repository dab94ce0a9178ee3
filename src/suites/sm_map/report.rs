//! What `gpubench sm-map` writes and reads back: the raw first touches (`touches.csv`), one
//! row per SM (`sms.csv`), every DSM chase (`dsm.csv`), the run's reading (`sm-map.json`), the
//! summary's rows (each with its value per SM) and the heat map.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use super::analysis::{self, DsmChase, L2Map, Sweep};
use crate::report::figures::{Figure, Rows};
use crate::report::plot;
use crate::report::run_dir::RunDir;

pub const SECTION: &str = "SM map";

/// One of an SM's readings, by its row.
type Column = fn(&SmRow) -> Option<f64>;

/// The title of the heat map.
pub fn title() -> &'static str {
    "Every SM: L2 first touch by home partition, DSM load in its cluster"
}

/// One SM's walk in one sweep and pass, its cycles per line in address order.
#[derive(Debug, Serialize, Deserialize)]
pub struct TouchRow {
    pub sweep: usize,
    pub warm_sm: u32,
    pub sm: u32,
    pub pass: u32,
    pub cycles: String,
}

pub fn touch_rows(sweeps: &[Sweep]) -> Vec<TouchRow> {
    let mut rows = Vec::new();
    for (k, sweep) in sweeps.iter().enumerate() {
        for (sm, walk) in sweep.walks.iter().enumerate() {
            for (pass, values) in [&walk.first, &walk.again].into_iter().enumerate() {
                if values.is_empty() {
                    continue;
                }
                rows.push(TouchRow {
                    sweep: k,
                    warm_sm: sweep.warm_sm,
                    sm: sm as u32,
                    pass: pass as u32,
                    cycles: values
                        .iter()
                        .map(|v| format!("{v:.0}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                });
            }
        }
    }
    rows
}

/// One SM's readings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmRow {
    pub sm: u32,
    pub partition: Option<u32>,
    pub own_cycles: Option<f64>,
    pub other_cycles: Option<f64>,
    pub reread_cycles: Option<f64>,
    pub dsm_cycles: Option<f64>,
    pub dsm_own_cycles: Option<f64>,
}

pub fn sm_rows(l2: &L2Map, chases: &[DsmChase]) -> Vec<SmRow> {
    let n = l2.sms.len();
    let remote = analysis::dsm_per_sm(chases, n, true);
    let own = analysis::dsm_per_sm(chases, n, false);
    l2.sms
        .iter()
        .enumerate()
        .map(|(sm, s)| SmRow {
            sm: s.sm,
            partition: s.partition,
            own_cycles: s.own_cycles,
            other_cycles: s.other_cycles,
            reread_cycles: s.reread_cycles,
            dsm_cycles: remote[sm],
            dsm_own_cycles: own[sm],
        })
        .collect()
}

/// The run's reading besides the rows.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reading {
    pub sms: usize,
    pub lines: u32,
    pub warm_sms: Vec<u32>,
    pub threshold_cycles: Option<f64>,
    pub separated: bool,
    pub probed: usize,
    pub placed: usize,
    pub partitions: usize,
    /// Why the number of partitions is not stated (`analysis::L2Map::unresolved`); absent
    /// from the runs before it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions_unresolved: Option<String>,
    pub cluster: u32,
    pub dsm_clusters: u32,
    /// Why no DSM chase ran, where none did.
    pub dsm_skipped: Option<String>,
    pub steps: u32,
    pub method: String,
    pub sass: crate::harness::suite::KeptSass,
}

pub const READING: &str = "sm-map.json";

pub struct Saved {
    pub reading: Reading,
    pub sms: Vec<SmRow>,
    pub dsm: Vec<DsmChase>,
}

pub fn write(run: &RunDir, sweeps: &[Sweep], saved: &Saved) -> Result<()> {
    run.write_csv("touches.csv", touch_rows(sweeps))?;
    run.write_csv("sms.csv", &saved.sms)?;
    if !saved.dsm.is_empty() {
        run.write_csv("dsm.csv", &saved.dsm)?;
    }
    run.write_json(READING, &saved.reading)
}

pub fn read(dir: &Path) -> Result<Saved> {
    let reading: Reading = crate::report::saved::read_json(dir, READING)?;
    let dsm = if reading.dsm_clusters > 0 {
        crate::report::saved::read_csv(dir, "dsm.csv")?
    } else {
        Vec::new()
    };
    Ok(Saved {
        reading,
        sms: crate::report::saved::read_csv(dir, "sms.csv")?,
        dsm,
    })
}

/// "SM 17 (above), SM 80 (below)", or "none" (the sides, not the cycles, so that a repeat
/// that finds the same SMs says the same words).
fn named(outliers: &[(u32, f64)]) -> String {
    if outliers.is_empty() {
        return "none".into();
    }
    outliers
        .iter()
        .map(|(sm, d)| format!("SM {sm} ({})", if *d > 0.0 { "above" } else { "below" }))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The summary's rows: the partitions (each SM's, per SM), each latency's median over the SMs
/// with its range and its value per SM, and the SMs that stand off.
pub fn figures(dir: &Path) -> Result<Vec<Figure>> {
    let saved = read(dir)?;
    let reading = &saved.reading;
    let column = |value: Column| -> Vec<Option<f64>> {
        let mut values = vec![None; reading.sms];
        for row in &saved.sms {
            if let Some(slot) = values.get_mut(row.sm as usize) {
                *slot = value(row);
            }
        }
        values
    };
    let mut r = Rows::new("sm-map", SECTION, "sms.csv");
    partition_rows(&mut r, reading, column(|s| s.partition.map(f64::from)));
    let latencies: [(&str, Column); 4] = [
        ("L2 first touch, line homed in the SM's partition", |s| {
            s.own_cycles
        }),
        ("L2 first touch, line homed in the other partition", |s| {
            s.other_cycles
        }),
        ("L2 re-read, the copy on the SM's side", |s| s.reread_cycles),
        ("DSM load into another block of the cluster", |s| {
            s.dsm_cycles
        }),
    ];
    let mut off = Vec::new();
    for (quantity, value) in latencies {
        let values = column(value);
        let Some((median, low, high)) = analysis::spread(&values) else {
            continue;
        };
        let quantity = if quantity.starts_with("DSM") {
            format!("{quantity} ({} blocks)", reading.cluster)
        } else {
            quantity.to_string()
        };
        let over = format!(
            "min-max over {} SMs",
            values.iter().filter(|v| v.is_some()).count()
        );
        r.push(&quantity, Some(median), "cycles", Some((low, high, &over)));
        r.per_sm(values.clone());
        let outliers = analysis::outliers(&values);
        if !outliers.is_empty() {
            off.push(format!("{quantity}: {}", named(&outliers)));
        }
    }
    r.text(
        "SMs standing off the others (4 MADs and 5 % from the median)",
        Some(&if off.is_empty() {
            "none".to_string()
        } else {
            off.join("; ")
        }),
    );
    Ok(r.finish())
}

/// The number of partitions with each SM's (`per_sm`), or, where the run could not read it,
/// a row that says so and why, unresolved as not identifiable.
fn partition_rows(r: &mut Rows, reading: &Reading, per_sm: Vec<Option<f64>>) {
    let partitions = "L2 partitions the SMs fall in";
    if let Some(why) = &reading.partitions_unresolved {
        let quantity = format!("{partitions}: not identifiable from this run");
        r.text(&quantity, Some(why));
        r.settle(crate::report::figures::Reason::NotIdentifiable);
        return;
    }
    r.labelled(
        partitions,
        (reading.placed > 0).then_some(reading.partitions as f64),
        "",
        format!(
            "both sweeps place {} of {} SMs probed",
            reading.placed, reading.probed
        ),
    );
    r.per_sm(per_sm);
}

/// A colour from pale yellow (low) through orange to dark purple (high).
fn heat(value: f64, low: f64, high: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 3] = [(255, 237, 160), (240, 100, 40), (60, 10, 90)];
    let t = if high > low {
        ((value - low) / (high - low)).clamp(0.0, 1.0)
    } else {
        0.5
    };
    let (i, f) = if t < 0.5 {
        (0, t * 2.0)
    } else {
        (1, t * 2.0 - 1.0)
    };
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The heat map: (a) per SM (columns) the partition (blue: SM 0's, green: the other) and the
/// three L2 latencies (rows); (b)
/// per pair of SMs in one cluster, the DSM latency from the chasing SM (x) into the chased
/// SM (y).
pub fn draw(path: &Path, title: &str, saved: &Saved) -> Result<()> {
    let n = saved.reading.sms.max(1);
    let rows: [(&str, Column); 3] = [
        ("own partition", |s| s.own_cycles),
        ("other partition", |s| s.other_cycles),
        ("re-read", |s| s.reread_cycles),
    ];
    let l2: Vec<f64> = saved
        .sms
        .iter()
        .flat_map(|s| rows.iter().filter_map(move |(_, v)| v(s)))
        .collect();
    let (l2_low, l2_high) = range(&l2);
    let dsm: Vec<f64> = saved
        .dsm
        .iter()
        .filter(|c| c.rank != c.target_rank)
        .map(|c| c.cycles_per_load)
        .collect();
    let (dsm_low, dsm_high) = range(&dsm);
    let design = plot::Design::panels((1800, 800), 2);
    plot::titled_plot!(path, design, title, |root| {
        let areas = plot::panels(&root, 2);
        let caption = format!(
            "(a) L2 per SM: {l2_low:.0} (pale) to {l2_high:.0} cycles (dark); partition blue: SM 0's"
        );
        let mut chart = plot::framed_chart(&areas[0], &caption, [16, 60, 190])
            .build_cartesian_2d(0.0..n as f64, -0.5..3.5)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("SM (%smid)")
            .y_labels(4)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v: &f64| {
                match v.round() as i64 {
                    0 => "re-read",
                    1 => "homed across",
                    2 => "homed in own",
                    3 => "partition",
                    _ => "",
                }
                .to_string()
            })
            .axis_desc_style((plot::FONT, plot::LABEL_SIZE))
            .label_style((plot::FONT, plot::TICK_SIZE))
            .draw()?;
        for s in &saved.sms {
            let x = f64::from(s.sm);
            for (k, (_, value)) in rows.iter().enumerate() {
                if let Some(v) = value(s) {
                    let y = 2.0 - k as f64;
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(x, y - 0.45), (x + 1.0, y + 0.45)],
                        heat(v, l2_low, l2_high).filled(),
                    )))?;
                }
            }
            if let Some(p) = s.partition {
                let colour = if p == 0 { plot::BLUE } else { plot::GREEN };
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x, 2.55), (x + 1.0, 3.45)],
                    colour.filled(),
                )))?;
            }
        }
        let caption = format!(
            "(b) DSM, clusters of {}: {dsm_low:.0} (pale) to {dsm_high:.0} cycles (dark)",
            saved.reading.cluster
        );
        let mut chart = plot::framed_chart(&areas[1], &caption, [16, 60, 80])
            .build_cartesian_2d(0.0..n as f64, 0.0..n as f64)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("chasing SM")
            .y_desc("chased SM")
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .axis_desc_style((plot::FONT, plot::LABEL_SIZE))
            .label_style((plot::FONT, plot::TICK_SIZE))
            .draw()?;
        chart.draw_series(
            saved
                .dsm
                .iter()
                .filter(|c| c.rank != c.target_rank)
                .map(|c| {
                    let (x, y) = (f64::from(c.sm), f64::from(c.target_sm));
                    Rectangle::new(
                        [(x, y), (x + 1.0, y + 1.0)],
                        heat(c.cycles_per_load, dsm_low, dsm_high).filled(),
                    )
                }),
        )?;
    })
    .context("drawing sm-map")
}

fn range(values: &[f64]) -> (f64, f64) {
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if low.is_finite() {
        (low, high)
    } else {
        (0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::two_latencies;
    use crate::suites::sm_map::analysis::{Walk, first_across, read_l2};

    /// The committed runs with every first touch kept (`touches.csv.gz`).
    const COMMITTED: [&str; 6] = [
        "results/h100/sm-map/run-1",
        "results/h100/sm-map/run-2",
        "results/h200/sm-map/run-1",
        "results/h200/sm-map/run-2",
        "results/h200/sm-map/GPU-ac13bc7f/run-1",
        "results/h200/sm-map/GPU-ac13bc7f/run-2",
    ];

    /// The sweeps of a run, back from its `touches.csv`.
    fn sweeps_of(dir: &Path) -> Vec<Sweep> {
        let rows: Vec<TouchRow> = crate::report::saved::read_csv(dir, "touches.csv").unwrap();
        let sms = rows.iter().map(|r| r.sm as usize + 1).max().unwrap();
        let mut sweeps: Vec<Sweep> = Vec::new();
        for row in rows {
            if sweeps.len() <= row.sweep {
                sweeps.push(Sweep {
                    warm_sm: row.warm_sm,
                    walks: vec![Walk::default(); sms],
                });
            }
            let walk = &mut sweeps[row.sweep].walks[row.sm as usize];
            let values = row.cycles.split(' ').map(|v| v.parse().unwrap()).collect();
            if row.pass == 0 {
                walk.first = values;
            } else {
                walk.again = values;
            }
        }
        sweeps
    }

    #[test]
    fn the_committed_runs_read_back_their_map_and_keep_it_past_a_stray_first_touch() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for run in COMMITTED {
            let dir = root.join(run);
            let saved: Vec<SmRow> = crate::report::saved::read_csv(&dir, "sms.csv").unwrap();
            let mut sweeps = sweeps_of(&dir);
            let map = read_l2(&sweeps);
            assert_eq!((map.partitions(), map.placed), (2, 132), "{run}");
            let partitions: Vec<Option<u32>> = map.sms.iter().map(|s| s.partition).collect();
            let was: Vec<Option<u32>> = saved.iter().map(|s| s.partition).collect();
            assert_eq!(partitions, was, "{run}");
            // One first touch of 5000 cycles in the first sweep: the split over every first
            // touch, as it was made, sees one latency (the way a run read one partition) …
            sweeps[0].walks[40].first[100] = 5000.0;
            let firsts: Vec<f64> = sweeps[0]
                .walks
                .iter()
                .flat_map(|w| w.first.iter().copied())
                .collect();
            assert!(
                !two_latencies::split(&firsts, 20.0, 0.02).unwrap().apart,
                "{run}"
            );
            // … and the reading now sets it aside: the same second warming SM, the same map.
            assert_eq!(first_across(&sweeps[0]), Some(sweeps[1].warm_sm), "{run}");
            let map = read_l2(&sweeps);
            assert_eq!(
                map.sms.iter().map(|s| s.partition).collect::<Vec<_>>(),
                was,
                "{run}"
            );
            // Each SM's walk where it sits with the warming SM, the other emptied: every line
            // near, as on an L2 of one partition (with the SMs' gradient and the near lines'
            // own 284 and 308 cycles within a walk). One partition, stated.
            for sweep in &mut sweeps {
                let warm = was[sweep.warm_sm as usize];
                for (sm, walk) in sweep.walks.iter_mut().enumerate() {
                    if was[sm] != warm {
                        *walk = Walk::default();
                    }
                }
            }
            let map = read_l2(&sweeps);
            assert_eq!(
                (map.partitions(), map.placed),
                (1, 132),
                "{run}: {:?} {:?}",
                map.unresolved,
                map.threshold_cycles
            );
            assert_eq!(map.unresolved, None, "{run}");
        }
    }

    fn reading(partitions: usize, placed: usize, unresolved: Option<&str>) -> Reading {
        Reading {
            sms: 4,
            lines: 512,
            warm_sms: vec![0],
            threshold_cycles: None,
            separated: false,
            probed: 4,
            placed,
            partitions,
            partitions_unresolved: unresolved.map(str::to_string),
            cluster: 8,
            dsm_clusters: 0,
            dsm_skipped: None,
            steps: 1024,
            method: String::new(),
            sass: Default::default(),
        }
    }

    #[test]
    fn an_unresolved_partition_count_is_a_row_that_says_why_and_never_a_number() {
        let mut r = Rows::new("sm-map", SECTION, "sms.csv");
        let why =
            "2 of 4 SM walks spread 225 cycles (5-95 %, median over them) against 47 for the rest";
        partition_rows(&mut r, &reading(0, 0, Some(why)), vec![None; 4]);
        let figures = r.finish();
        assert_eq!(figures.len(), 1);
        let row = &figures[0];
        assert_eq!(
            row.quantity,
            "L2 partitions the SMs fall in: not identifiable from this run"
        );
        assert!(row.is_unresolved());
        assert_eq!((row.value, row.text.as_deref()), (None, Some(why)));
        assert_eq!(row.per_sm, None);
        // Read, it is the count with each SM's partition.
        let mut r = Rows::new("sm-map", SECTION, "sms.csv");
        let per_sm = vec![Some(0.0), Some(1.0), Some(1.0), Some(0.0)];
        partition_rows(&mut r, &reading(2, 4, None), per_sm.clone());
        let figures = r.finish();
        assert_eq!(figures[0].quantity, "L2 partitions the SMs fall in");
        assert_eq!(figures[0].value, Some(2.0));
        assert!(!figures[0].is_unresolved());
        assert_eq!(figures[0].per_sm, Some(per_sm));
        // A resolved reading is written as the runs before the field were (without it), and
        // reads back as resolved.
        let old = serde_json::to_value(reading(2, 4, None)).unwrap();
        assert!(old.get("partitions_unresolved").is_none());
        let back: Reading = serde_json::from_value(old).unwrap();
        assert_eq!(back.partitions_unresolved, None);
    }

    #[test]
    fn heat_runs_from_pale_to_dark_and_holds_a_flat_range() {
        let pale = heat(0.0, 0.0, 10.0);
        let dark = heat(10.0, 0.0, 10.0);
        assert!(u32::from(pale.0) + u32::from(pale.1) > u32::from(dark.0) + u32::from(dark.1));
        assert_eq!(heat(3.0, 5.0, 5.0), heat(7.0, 5.0, 5.0));
        assert_eq!(named(&[]), "none");
        assert_eq!(
            named(&[(17, 24.4), (80, -12.0)]),
            "SM 17 (above), SM 80 (below)"
        );
    }
}

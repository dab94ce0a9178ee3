//! The summary's rows of the L2 partition experiment (`l2_partitions`), read from
//! cache.json's `l2_partitions` (runs before it: absent, no rows), and `partitions.png` from
//! `partitions.csv`.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;

use super::l2_partitions::{Partitions, SmReading};
use crate::analysis::two_latencies::Spread;
use crate::report::figures::Rows;
use crate::report::plot::{self, BLUE, RED};

const SPREAD: &str = "median over lines, 5-95 %";

fn spread(r: &mut Rows, quantity: &str, value: Option<&Spread>) {
    if let Some(s) = value {
        r.push(
            quantity,
            Some(s.median),
            "cycles",
            Some((s.p5, s.p95, SPREAD)),
        );
    }
}

/// The verdict always; the latencies, the SM groups and the home granularity only where the
/// slow first touches stand apart from the fast ones (and the groups only where both sweeps
/// agree on every SM).
pub fn figures(p: &Partitions, r: &mut Rows) {
    r.text(
        "L2 partitions (first touch from every SM)",
        Some(&p.verdict),
    );
    if !p.separated {
        return;
    }
    spread(
        r,
        "L2 first touch, line homed in the reader's partition",
        p.fast_first_touch.as_ref(),
    );
    spread(
        r,
        "L2 first touch, line homed in the other partition",
        p.slow_first_touch.as_ref(),
    );
    spread(r, "L2 re-read after a first touch", p.reread.as_ref());
    if let Some(share) = p.reread_slow_share {
        r.push(
            "L2 re-reads at the other partition's latency",
            Some(100.0 * share),
            "%",
            None,
        );
    }
    if let Some((low, high)) = p.reread_sm_medians {
        r.push(
            "L2 re-read, per-SM median",
            Some((low + high) / 2.0),
            "cycles",
            Some((low, high, "midpoint of the fastest and slowest SM")),
        );
    }
    if let Some([a, b]) = &p.groups {
        let list = |g: &[u32]| g.iter().map(u32::to_string).collect::<Vec<_>>().join(" ");
        r.text(
            "L2 partitions: SMs of each",
            Some(&format!(
                "{} SMs ({}) and {} SMs ({})",
                a.len(),
                list(a),
                b.len(),
                list(b)
            )),
        );
    }
    r.push(
        "L2 lines homed in each partition alternate every",
        p.home_chunk_bytes.map(|b| b as f64),
        "bytes",
        None,
    );
    if let Some(share) = p.home_share {
        r.push(
            "L2 lines homed in the warming SM's partition (first touches from across)",
            Some(100.0 * share),
            "%",
            None,
        );
    }
}

/// `partitions.png`: per SM, the share of first touches at the slow latency, one series per
/// sweep (each warmed from its own SM): an SM on the warming SM's side reads about none slow,
/// one across about the share of lines homed on the warming side, so the two sweeps mirror
/// each other where there are two partitions.
pub fn draw(path: &Path, title: &str, rows: &[SmReading]) -> Result<()> {
    let sms = rows.iter().map(|r| r.sm).max().unwrap_or(0) + 1;
    let mut sweeps: Vec<(usize, u32)> = rows.iter().map(|r| (r.sweep, r.warm_sm)).collect();
    sweeps.sort_unstable();
    sweeps.dedup();
    plot::white_plot!(path, (1400, 700), |root| {
        let mut chart = plot::framed_chart(&root, title, [20, 60, 90])
            .build_cartesian_2d(-1.0..f64::from(sms), -0.05..1.05)?;
        plot::mesh(&mut chart, "SM (%smid)", "first touches at the slow latency")
            .x_label_formatter(&|v| format!("{v:.0}"))
            .draw()?;
        for (k, &(sweep, warm)) in sweeps.iter().enumerate() {
            let points: Vec<(f64, f64)> = rows
                .iter()
                .filter(|r| r.sweep == sweep)
                .map(|r| (f64::from(r.sm), r.slow_share))
                .collect();
            let label = format!("lines warmed by SM {warm}");
            if k % 2 == 0 {
                chart
                    .draw_series(points.iter().map(|&p| Circle::new(p, 5, BLUE.filled())))?
                    .label(label)
                    .legend(|(x, y)| Circle::new((x + 10, y), 5, BLUE.filled()));
            } else {
                chart
                    .draw_series(
                        points
                            .iter()
                            .map(|&p| TriangleMarker::new(p, 7, RED.stroke_width(2))),
                    )?
                    .label(label)
                    .legend(|(x, y)| TriangleMarker::new((x + 10, y), 7, RED.stroke_width(2)));
            }
        }
        plot::draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    })
    .context("drawing partitions")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(p: &Partitions) -> Vec<crate::report::figures::Figure> {
        let mut r = Rows::new("cache", "Memory hierarchy", "cache.json");
        figures(p, &mut r);
        r.finish()
    }

    fn spread(median: f64, p5: f64, p95: f64) -> Option<Spread> {
        Some(Spread {
            median,
            p5,
            p95,
            n: 1024,
        })
    }

    /// Two partitions as the experiment states them (its per-SM readings aside).
    fn two() -> Partitions {
        Partitions {
            threshold_cycles: 375.0,
            separated: true,
            fast_first_touch: spread(287.0, 262.0, 319.0),
            slow_first_touch: spread(464.0, 422.0, 499.0),
            reread: spread(288.0, 263.0, 320.0),
            reread_slow_share: Some(0.0),
            reread_sm_medians: Some((271.0, 316.0)),
            groups: Some([vec![0, 1], vec![2, 3]]),
            home_share: Some(0.5),
            home_chunk_bytes: Some(4096),
            per_sm: Vec::new(),
            verdict: "two L2 partitions".into(),
        }
    }

    #[test]
    fn two_partitions_give_their_latencies_groups_and_granularity() {
        let rows = read(&two());
        let find = |q: &str| rows.iter().find(|f| f.quantity.contains(q)).unwrap();
        assert_eq!(find("other partition").value, Some(464.0));
        assert_eq!(find("other partition").low, Some(422.0));
        assert_eq!(find("alternate every").value, Some(4096.0));
        assert_eq!(
            find("SMs of each").text.as_deref(),
            Some("2 SMs (0 1) and 2 SMs (2 3)")
        );
        assert!(rows.iter().all(|f| !f.is_unresolved()));
    }

    #[test]
    fn one_latency_states_only_the_verdict() {
        let rows = read(&Partitions {
            separated: false,
            slow_first_touch: None,
            reread: None,
            reread_slow_share: None,
            reread_sm_medians: None,
            groups: None,
            home_share: None,
            home_chunk_bytes: None,
            verdict: "one L2 latency".into(),
            ..two()
        });
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].text.as_deref(), Some("one L2 latency"));
    }

    #[test]
    fn the_committed_partitions_draw() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100/l2-partitions/l2-1");
        let rows: Vec<SmReading> = csv::Reader::from_path(dir.join("partitions.csv"))
            .unwrap()
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows.len(), 2 * 132);
        let out = tempfile::tempdir().unwrap();
        let png = out.path().join("partitions.png");
        draw(&png, "L2 first touch per SM", &rows).unwrap();
        assert!(std::fs::metadata(&png).unwrap().len() > 10_000);
    }
}

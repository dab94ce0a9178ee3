//! One suite's curves from several runs drawn over each other, a colour per run: what the
//! fleet page (issue #33) shows beside a figure the runs disagree on, so a reader sees where
//! along the sweep the two GPUs part. A [`Curve`] is one line of a suite's own figure, read
//! back from the files its run wrote (the suite says which, `harness::Suite::curves`).

use anyhow::{Context, Result};
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::ranged1d::Ranged;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::plot::{self, PALETTE};

/// One line of a suite's figure: `y` against `x`, as the run measured it.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// What the line is, the same in every run of the suite ("pointer chase, 64-byte stride").
    pub name: String,
    pub x_label: String,
    pub y_label: String,
    /// `x` is a byte count, drawn on a log scale with binary units.
    pub x_bytes: bool,
    pub points: Vec<(f64, f64)>,
}

/// The curves named alike across `runs` (each run's name and its curves of one suite), in the
/// order the first run that has each lists them: one chart apiece.
pub fn matched(runs: &[(String, Vec<Curve>)]) -> Vec<(String, Vec<(&str, &Curve)>)> {
    let mut charts: Vec<(String, Vec<(&str, &Curve)>)> = Vec::new();
    for (run, curves) in runs {
        for curve in curves {
            match charts.iter_mut().find(|(name, _)| *name == curve.name) {
                Some((_, lines)) => lines.push((run.as_str(), curve)),
                None => charts.push((curve.name.clone(), vec![(run.as_str(), curve)])),
            }
        }
    }
    charts
}

/// The SVG text of one chart: `lines` (a run's name and its curve) over each other, the
/// legend above naming the runs.
pub fn svg(title: &str, lines: &[(&str, &Curve)]) -> Result<String> {
    plot::ensure_font();
    let points = lines.iter().flat_map(|(_, c)| c.points.iter().copied());
    let finite: Vec<(f64, f64)> = points
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    anyhow::ensure!(!finite.is_empty(), "{title}: no finite point to draw");
    let first = lines[0].1;
    let (mut low, mut high) = finite
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), &(x, _)| (l.min(x), h.max(x)));
    if first.x_bytes {
        low = low.max(1.0);
    }
    if high <= low {
        high = low * 2.0 + 1.0;
    }
    let highest = finite.iter().map(|&(_, y)| y).fold(0.0, f64::max);
    let lowest = finite.iter().map(|&(_, y)| y).fold(f64::MAX, f64::min);
    // Runs that part by a few percent are drawn on an axis that shows it: one that starts
    // from zero only when the lines span more than half of it.
    let (bottom, top) = if lowest > 0.5 * highest && highest > lowest {
        let margin = 0.1 * (highest - lowest);
        (lowest - margin, highest + margin)
    } else {
        (0.0, if highest > 0.0 { highest * 1.05 } else { 1.0 })
    };
    let decimals = match top - bottom {
        span if span >= 100.0 => 0,
        span if span >= 10.0 => 1,
        span if span >= 1.0 => 2,
        _ => 3,
    };
    let y_label = if bottom > 0.0 {
        format!("{} (axis not from zero)", first.y_label)
    } else {
        first.y_label.clone()
    };
    let entries: Vec<plot::Entry> = lines
        .iter()
        .enumerate()
        .map(|(i, (run, _))| plot::Entry::new(*run, colour(i), plot::Key::Line))
        .collect();
    let size = plot::canvas(plot::Design::from((1200, 620)).with_legend(entries.len()));
    let mut text = String::new();
    let drawn = (|| -> Result<(), Box<dyn std::error::Error + '_>> {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        root.fill(&WHITE)?;
        let root = plot::titled(&root, title)?;
        let area = plot::legend_above(&root, &entries)?;
        let mut builder = plot::framed_chart(&area, "", [20, 60, 100]);
        if first.x_bytes {
            let mut chart =
                builder.build_cartesian_2d(plot::log_bytes_axis(low, high * 1.1), bottom..top)?;
            plot::mesh(
                &mut chart,
                format!("{} (bytes, log scale)", first.x_label),
                y_label.as_str(),
            )
            .x_label_formatter(&|v| plot::binary_bytes(*v))
            .y_label_formatter(&|v| format!("{v:.decimals$}"))
            .draw()?;
            draw_lines(&mut chart, lines)?;
        } else {
            let mut chart = builder.build_cartesian_2d(low..high, bottom..top)?;
            plot::mesh(&mut chart, first.x_label.as_str(), y_label.as_str())
                .y_label_formatter(&|v| format!("{v:.decimals$}"))
                .draw()?;
            draw_lines(&mut chart, lines)?;
        }
        root.present()?;
        Ok(())
    })()
    .map_err(|e| anyhow::anyhow!("{e}"));
    drawn.with_context(|| format!("drawing {title}"))?;
    let start = text.find("<svg").unwrap_or(0);
    Ok(text[start..].to_string())
}

fn draw_lines<DB: DrawingBackend, X: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, RangedCoordf64>>,
    lines: &[(&str, &Curve)],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    for (i, (_, curve)) in lines.iter().enumerate() {
        chart.draw_series(LineSeries::new(
            curve.points.iter().copied(),
            colour(i).stroke_width(2),
        ))?;
    }
    Ok(())
}

fn colour(run: usize) -> RGBColor {
    PALETTE[run % PALETTE.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(name: &str, scale: f64) -> Curve {
        Curve {
            name: name.into(),
            x_label: "footprint".into(),
            y_label: "cycles per load".into(),
            x_bytes: true,
            points: (10..20)
                .map(|k| (2f64.powi(k), scale * f64::from(k)))
                .collect(),
        }
    }

    #[test]
    fn curves_of_one_name_share_a_chart_in_first_seen_order() {
        let runs = vec![
            (
                "a".to_string(),
                vec![curve("chase", 1.0), curve("tlb", 1.0)],
            ),
            (
                "b".to_string(),
                vec![curve("tlb", 2.0), curve("chase", 2.0)],
            ),
            ("c".to_string(), vec![curve("only here", 1.0)]),
        ];
        let charts = matched(&runs);
        let names: Vec<&str> = charts.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["chase", "tlb", "only here"]);
        let runs_of_tlb: Vec<&str> = charts[1].1.iter().map(|(r, _)| *r).collect();
        assert_eq!(runs_of_tlb, ["a", "b"]);
        assert_eq!(charts[1].1[1].1.points[0].1, 20.0);
    }

    #[test]
    fn a_chart_names_every_run_and_draws_a_line_for_each() {
        let (a, b) = (curve("chase", 1.0), curve("chase", 1.5));
        let svg = svg("Pointer chase", &[("gpu0", &a), ("gpu1", &b)]).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("gpu0") && svg.contains("gpu1"));
        assert!(svg.contains("Pointer chase"));
        // One polyline per run besides the legend's keys.
        assert!(svg.matches("<polyline").count() >= 2, "{svg}");
    }

    #[test]
    fn nothing_to_draw_is_an_error_not_an_empty_chart() {
        let mut empty = curve("chase", 1.0);
        empty.points = vec![(f64::NAN, 1.0)];
        assert!(svg("x", &[("gpu0", &empty)]).is_err());
    }
}

//! Grouped bar charts: per category one bar of each series side by side.

use super::*;

/// One series of [`grouped_bars`]: a bar per category, where measured.
pub struct BarSeries {
    pub label: String,
    pub colour: RGBColor,
    pub values: Vec<Option<f64>>,
}

type DrawResult = Result<(), Box<dyn std::error::Error + 'static>>;

/// A grouped bar chart on `area`: per category one bar of each series side by side, under a
/// legend strip naming the series. With `log` the value axis is logarithmic (ticked 1-2-5),
/// for quantities spanning orders of magnitude.
pub fn grouped_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    categories: &[String],
    series: &[BarSeries],
    y_desc: &str,
    log: bool,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let entries: Vec<Entry> = series
        .iter()
        .map(|s| Entry::new(s.label.clone(), s.colour, Key::Box))
        .collect();
    let area = legend_above(area, &entries)?;
    let values = series
        .iter()
        .flat_map(|s| s.values.iter().flatten().copied());
    let (low, high) = values
        .filter(|v| *v > 0.0)
        .fold((f64::INFINITY, 0.0_f64), |(l, h), v| (l.min(v), h.max(v)));
    let (low, high) = if high > 0.0 { (low, high) } else { (1.0, 1.0) };
    let x = -0.5..(categories.len().max(1) as f64 - 0.5);
    let mut builder = framed_chart(&area, caption, [16, 50, 90]);
    if log {
        let (bottom, top) = (low / 2.0, high * 2.0);
        let mut chart = builder.build_cartesian_2d(x, log_axis(bottom, top))?;
        bars(&mut chart, categories, series, y_desc, bottom)
    } else {
        let mut chart = builder.build_cartesian_2d(x, 0.0..high * 1.15)?;
        bars(&mut chart, categories, series, y_desc, 0.0)
    }
}

fn bars<DB: DrawingBackend, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, Y>>,
    categories: &[String],
    series: &[BarSeries],
    y_desc: &str,
    bottom: f64,
) -> DrawResult
where
    DB::ErrorType: 'static,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let name = |x: &f64| -> String {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < categories.len() {
            categories[i as usize].clone()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(categories.len().max(1))
        .x_label_formatter(&name)
        .y_label_formatter(&|v| {
            if *v >= 10.0 || *v == v.round() {
                format!("{v:.0}")
            } else {
                format!("{v}")
            }
        })
        .y_desc(y_desc)
        .axis_desc_style((FONT, LABEL_SIZE))
        .label_style((FONT, TICK_SIZE))
        .draw()?;
    let width = 0.8 / series.len().max(1) as f64;
    for (k, s) in series.iter().enumerate() {
        let offset = -0.4 + width * (k as f64 + 0.5);
        chart.draw_series(s.values.iter().enumerate().filter_map(|(i, v)| {
            let x = i as f64 + offset;
            v.filter(|v| *v > bottom).map(|v| {
                Rectangle::new(
                    [(x - width * 0.45, bottom), (x + width * 0.45, v)],
                    s.colour.filled(),
                )
            })
        }))?;
    }
    Ok(())
}

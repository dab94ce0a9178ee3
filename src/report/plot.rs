//! Shared plot styling: an embedded font (no fontconfig on a bare machine) and sizes that stay
//! readable when a plot is shrunk to one paper column.

use std::cell::Cell;
use std::path::Path;
use std::sync::Once;

use plotters::chart::{ChartBuilder, ChartContext, MeshStyle, SeriesLabelPosition};
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::combinators::{BindKeyPoints, IntoLogRange, LogCoord, WithKeyPoints};
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::{CoordTranslate, Shift};
use plotters::element::DashedPathElement;
use plotters::prelude::{
    BLACK, Color, DrawingArea, DrawingAreaErrorKind, DrawingBackend, IntoFont, PathElement,
    RGBColor, Rectangle, Text, WHITE,
};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, register_font};

mod bars;

pub use bars::{BarSeries, grouped_bars};

pub const FONT: &str = "sans-serif";
pub const TITLE_SIZE: u32 = 30;
pub const LABEL_SIZE: u32 = 24;
pub const TICK_SIZE: u32 = 20;

/// The colour-blind-safe palette of Okabe & Ito (2008), under the names of the plotters
/// colours it replaces: a report module that imports these by name (an explicit import wins
/// over `plotters::prelude::*`) draws in it.
pub const BLUE: RGBColor = RGBColor(0, 114, 178);
/// Vermillion.
pub const RED: RGBColor = RGBColor(213, 94, 0);
/// Bluish green.
pub const GREEN: RGBColor = RGBColor(0, 158, 115);
/// Sky blue.
pub const CYAN: RGBColor = RGBColor(86, 180, 233);
/// Reddish purple.
pub const MAGENTA: RGBColor = RGBColor(204, 121, 167);
pub const ORANGE: RGBColor = RGBColor(230, 159, 0);
pub const YELLOW: RGBColor = RGBColor(240, 228, 66);
pub const GREY: RGBColor = RGBColor(153, 153, 153);
/// Every colour in the order a plot with many series picks them.
pub const PALETTE: [RGBColor; 7] = [BLUE, RED, GREEN, ORANGE, CYAN, MAGENTA, YELLOW];

/// How wide a plot is meant to be set, which decides its canvas and so how large its text
/// reads: the fonts above are fixed in pixels, so a narrower canvas means larger text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlotWidth {
    /// Each plot's own canvas (1200-1800 px wide), for a screen.
    #[default]
    Screen,
    /// One column of a two-column paper, 3.4 in: tick labels 8 pt, axis labels 9.6 pt.
    Column,
    /// The full text width of a page, 7 in, with the same type sizes.
    Page,
}

/// Tick labels are set at this size (points) when a plot has a physical width.
const TICK_POINTS: f64 = 8.0;

impl PlotWidth {
    /// The printed width in inches, where the plot has one.
    pub fn inches(self) -> Option<f64> {
        match self {
            PlotWidth::Screen => None,
            PlotWidth::Column => Some(3.4),
            PlotWidth::Page => Some(7.0),
        }
    }
}

/// The file a plot is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Png,
    Svg,
    /// Vector PDF: the SVG with the embedded font, converted by svg2pdf.
    Pdf,
}

impl Format {
    pub fn extension(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Svg => "svg",
            Format::Pdf => "pdf",
        }
    }
}

/// How every plot of this process is drawn: set once from the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    pub format: Format,
    pub width: PlotWidth,
    /// No title inside the plot: in a paper the caption says what it shows.
    pub paper: bool,
}

thread_local! {
    static STYLE: Cell<Style> = Cell::new(Style::default());
}

/// Sets the style of the plots this thread draws from now on.
pub fn set_style(style: Style) {
    STYLE.with(|s| s.set(style));
}

pub fn style() -> Style {
    STYLE.with(Cell::get)
}

/// A plot's design: its canvas in pixels on a screen, with `panels` charts side by side and
/// a legend strip of `legend` entries above them (see [`legend_above`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Design {
    pub size: (u32, u32),
    pub panels: u32,
    pub legend: u32,
}

impl From<(u32, u32)> for Design {
    fn from(size: (u32, u32)) -> Design {
        Design {
            size,
            panels: 1,
            legend: 0,
        }
    }
}

impl Design {
    /// `panels` charts side by side on a screen (rearranged in a column, see [`panels`]).
    pub fn panels(size: (u32, u32), panels: usize) -> Design {
        Design {
            panels: panels.max(1) as u32,
            ..Design::from(size)
        }
    }

    /// With a legend strip of `entries` above the charts, which a column plot gives one row
    /// each on top of its charts' height.
    pub fn with_legend(self, entries: usize) -> Design {
        Design {
            legend: entries as u32,
            ..self
        }
    }
}

/// Rows and columns of `count` panels in a column plot: stacked up to two, then two abreast.
fn column_grid(count: u32) -> (u32, u32) {
    if count <= 2 {
        (count.max(1), 1)
    } else {
        (count.div_ceil(2), 2)
    }
}

/// The canvas for a plot: its design on a screen; otherwise as wide as puts the tick labels
/// at [`TICK_POINTS`] once printed at the width's inches. On a page it keeps the design's
/// shape; in a column the panels are rearranged ([`column_grid`]), each keeping its shape
/// within 60 % to 90 % of its width high, under a legend of one row per entry.
pub fn canvas(design: impl Into<Design>) -> (u32, u32) {
    let Design {
        size,
        panels,
        legend,
    } = design.into();
    let Some(inches) = style().width.inches() else {
        return size;
    };
    let width = (f64::from(TICK_SIZE) * inches * 72.0 / TICK_POINTS).round();
    let height = if style().width == PlotWidth::Column {
        let (rows, columns) = column_grid(panels);
        let design_width = f64::from(size.0) / f64::from(panels);
        let panel_width = width / f64::from(columns);
        let one = (f64::from(size.1) * panel_width / design_width)
            .clamp(0.6 * panel_width, 0.9 * panel_width);
        one * f64::from(rows) + f64::from(legend) * f64::from(LEGEND_ROW)
    } else {
        f64::from(size.1) * width / f64::from(size.0)
    };
    (width as u32, height.round() as u32)
}

/// Splits a plot into its `count` panels: side by side, or as [`column_grid`] arranges them
/// in a column plot.
pub fn panels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    count: usize,
) -> Vec<DrawingArea<DB, Shift>> {
    let count = count.max(1);
    if style().width == PlotWidth::Column {
        let (rows, columns) = column_grid(count as u32);
        let mut areas = root.split_evenly((rows as usize, columns as usize));
        areas.truncate(count);
        areas
    } else {
        root.split_evenly((1, count))
    }
}

/// Gives an SVG of `size` pixels its printed size in inches, where the style has one, so the
/// PDF made from it is that size too (the viewBox keeps the drawing's own coordinates).
pub fn printed_svg(svg: String, size: (u32, u32)) -> String {
    let Some(inches) = style().width.inches() else {
        return svg;
    };
    let tall = inches * f64::from(size.1) / f64::from(size.0);
    let drawn = format!("<svg width=\"{}\" height=\"{}\"", size.0, size.1);
    svg.replacen(
        &drawn,
        &format!("<svg width=\"{inches:.2}in\" height=\"{tall:.2}in\""),
        1,
    )
}

/// Splits a plot into two panels, the first taking `share` of the width side by side, or
/// half the height when a column plot stacks them.
pub fn two_panels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    share: f64,
) -> (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>) {
    let (width, height) = root.dim_in_pixel();
    if style().width == PlotWidth::Column {
        root.split_vertically(height / 2)
    } else {
        root.split_horizontally((f64::from(width) * share).round() as u32)
    }
}

/// A chart builder on `area` with `title` over it, unless the style is for a paper (there the
/// caption says what the plot shows).
pub fn chart<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    title: &str,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(area);
    if !style().paper && !title.is_empty() {
        builder.caption(title, (FONT, LABEL_SIZE));
    }
    builder
}

/// [`chart`] in its frame: `margin` pixels around the chart, `x_area` under it for the x
/// axis's ticks and label, `y_area` beside it for the y axis's.
pub fn framed_chart<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    title: &str,
    frame: [u32; 3],
) -> ChartBuilder<'a, 'b, DB> {
    framed(chart(area, title), frame)
}

/// A panel's chart, framed as [`framed_chart`], with its `caption` drawn in every style (a
/// panel's name, which a paper keeps).
pub fn captioned_chart<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    caption: impl AsRef<str>,
    frame: [u32; 3],
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(area);
    builder.caption(caption, (FONT, LABEL_SIZE));
    framed(builder, frame)
}

fn framed<'a, 'b, DB: DrawingBackend>(
    mut builder: ChartBuilder<'a, 'b, DB>,
    [margin, x_area, y_area]: [u32; 3],
) -> ChartBuilder<'a, 'b, DB> {
    builder
        .margin(margin)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area);
    builder
}

/// The mesh of `chart`, its axes described by `x` and `y` in the house's fonts: every plot's
/// panel preamble, before its own tick formatters and `draw`.
pub fn mesh<'a, 'b, DB, XT, YT, X, Y>(
    chart: &'b mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    x: impl Into<String>,
    y: impl Into<String>,
) -> MeshStyle<'a, 'b, X, Y, DB>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = XT> + ValueFormatter<XT>,
    Y: Ranged<ValueType = YT> + ValueFormatter<YT>,
{
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x)
        .y_desc(y)
        .axis_desc_style((FONT, LABEL_SIZE))
        .label_style((FONT, TICK_SIZE));
    mesh
}

/// A plot's area below its `title`, or all of it for a paper.
pub fn titled<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    if style().paper || title.is_empty() {
        Ok(root.clone())
    } else {
        root.titled(title, (FONT, TITLE_SIZE))
    }
}

static FONT_BYTES: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// Registers the embedded DejaVu Sans under [`FONT`] once per process.
pub fn ensure_font() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // The font is compiled in and known to parse; a failure would show as missing text,
        // which the plot tests catch, so there is nothing better to do with the error here.
        let _ = register_font(FONT, FontStyle::Normal, FONT_BYTES);
    });
}

/// A byte count on a size axis, in the largest binary unit that leaves a whole number: the
/// axis ticks are powers of two ([`power_of_two_ticks`]), so this is "4 KiB", "256 KiB",
/// "1 MiB".
pub fn binary_bytes(bytes: f64) -> String {
    let bytes = bytes.round() as u64;
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} B")
}

/// The ticks of a byte axis from `low` to `high`: powers of two, as many as the plot's
/// width leaves room for.
pub fn byte_ticks(low: f64, high: f64) -> Vec<f64> {
    let most = if style().width == PlotWidth::Column {
        5
    } else {
        10
    };
    power_of_two_ticks(low, high, most)
}

/// A log axis of byte counts from `low` to `high`, ticked at powers of two ([`byte_ticks`]).
pub fn log_bytes_axis(low: f64, high: f64) -> WithKeyPoints<LogCoord<f64>> {
    (low..high)
        .log_scale()
        .with_key_points(byte_ticks(low, high))
}

/// The smallest and largest of some byte counts, at least 1 and 2, for a log-scale axis.
pub fn byte_range(values: impl Iterator<Item = u64> + Clone) -> (f64, f64) {
    let low = values.clone().min().unwrap_or(1).max(1);
    let high = values.max().unwrap_or(2).max(2);
    (low as f64, high as f64)
}

/// Two log axes ticked by [`log_bytes_axis`] and [`log_axis`].
pub type LogLog = Cartesian2d<WithKeyPoints<LogCoord<f64>>, WithKeyPoints<LogCoord<f64>>>;

/// A rate against bytes on log axes ([`log_bytes_axis`] from `x`, [`log_axis`] from `y`) on
/// `area`, its mesh drawn with binary-byte and whole-number labels: the frame the bandwidth
/// and small-kernel plots share.
pub fn log_log_bytes_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    (low, high): (f64, f64),
    (bottom, top): (f64, f64),
    x_desc: &str,
    y_desc: &str,
) -> Result<ChartContext<'a, DB, LogLog>, DrawingAreaErrorKind<DB::ErrorType>> {
    let mut chart = framed_chart(area, "", [20, 60, 100])
        .build_cartesian_2d(log_bytes_axis(low, high), log_axis(bottom, top))?;
    mesh(&mut chart, x_desc, y_desc)
        .x_label_formatter(&|v| binary_bytes(*v))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()?;
    Ok(chart)
}

/// A log axis from `low` to `high` that is not bytes, ticked at 1, 2 and 5 times the powers
/// of ten ([`one_two_five_ticks`]).
pub fn log_axis(low: f64, high: f64) -> WithKeyPoints<LogCoord<f64>> {
    (low..high)
        .log_scale()
        .with_key_points(one_two_five_ticks(low, high))
}

/// 1, 2 and 5 times the powers of ten from `low` to `high`, for a log axis that is not bytes.
pub fn one_two_five_ticks(low: f64, high: f64) -> Vec<f64> {
    if !(low > 0.0 && high >= low && high.is_finite()) {
        return Vec::new();
    }
    let first = low.log10().floor() as i32;
    let last = high.log10().ceil() as i32;
    (first..=last)
        .flat_map(|k| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(k)))
        .filter(|&t| t >= low && t <= high)
        .collect()
}

/// Powers of two from `low` to `high` (bytes, a log-scale axis) for its ticks: every doubling,
/// or every second, fourth … so that at most `most` remain.
pub fn power_of_two_ticks(low: f64, high: f64, most: usize) -> Vec<f64> {
    let first = low.max(1.0).log2().ceil() as i32;
    let last = high.max(1.0).log2().floor() as i32;
    if last < first {
        return Vec::new();
    }
    let count = (last - first + 1) as usize;
    let step = count.div_ceil(most.max(1)).max(1);
    (first..=last).step_by(step).map(|k| 2f64.powi(k)).collect()
}

/// The legend every gpubench plot uses: small labels on a translucent white box.
pub fn draw_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    chart
        .configure_series_labels()
        .position(position)
        .label_font((FONT, TICK_SIZE))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
}

/// How a legend entry shows its series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A filled box: bars.
    Box,
    /// A solid line: a measured curve.
    Line,
    /// A dashed line: a reference level or a boundary.
    Dash,
}

/// One entry of a legend strip.
pub struct Entry {
    pub label: String,
    pub colour: RGBColor,
    pub key: Key,
}

impl Entry {
    pub fn new(label: impl Into<String>, colour: RGBColor, key: Key) -> Entry {
        Entry {
            label: label.into(),
            colour,
            key,
        }
    }
}

/// Height of a row of a legend strip, in pixels.
const LEGEND_ROW: u32 = TICK_SIZE * 3 / 2;
/// Width of an entry's key and the gaps around it, in pixels.
const KEY_WIDTH: i32 = 28;
const ENTRY_GAP: i32 = 28;

/// Splits a strip off the top of `area` and draws a legend of `entries` in it, left to right,
/// wrapped into as many rows as the width needs: a legend there covers no data. Returns the
/// rest of the area.
pub fn legend_above<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[Entry],
) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    let font = plotters::style::TextStyle::from((FONT, TICK_SIZE).into_font());
    let width = area.dim_in_pixel().0 as i32;
    let row_height = LEGEND_ROW as i32;
    let left = 20;
    // Where each entry goes: (row, x).
    let mut places = Vec::with_capacity(entries.len());
    let (mut row, mut x) = (0, left);
    for entry in entries {
        let text = area.estimate_text_size(&entry.label, &font)?.0 as i32;
        let span = KEY_WIDTH + text + ENTRY_GAP;
        if x > left && x + span > width {
            row += 1;
            x = left;
        }
        places.push((row, x));
        x += span;
    }
    let rows = if entries.is_empty() { 0 } else { row + 1 };
    let (strip, rest) = area.split_vertically((rows * row_height + 8) as u32);
    for (entry, &(row, x)) in entries.iter().zip(&places) {
        let y = 8 + row * row_height + row_height / 2;
        match entry.key {
            Key::Box => strip.draw(&Rectangle::new(
                [(x, y - 8), (x + 18, y + 8)],
                entry.colour.filled(),
            ))?,
            Key::Line => strip.draw(&PathElement::new(
                vec![(x, y), (x + 20, y)],
                entry.colour.stroke_width(3),
            ))?,
            Key::Dash => strip.draw(&DashedPathElement::new(
                vec![(x, y), (x + 20, y)],
                5,
                3,
                entry.colour.stroke_width(2),
            ))?,
        }
        let style = font.pos(Pos::new(HPos::Left, VPos::Center));
        strip.draw(&Text::new(entry.label.as_str(), (x + KEY_WIDTH, y), style))?;
    }
    Ok(rest)
}

/// Binds `$root` to a drawing area in memory — SVG text when `$path` ends in `.svg`, RGB
/// pixels encoded as PNG otherwise — evaluates `$body` (an `anyhow::Result<()>`) with it, and
/// writes the file only when the drawing succeeded. Writing the bytes ourselves keeps a failed
/// write (a full disk) one plain I/O error instead of the plot backends' debug text.
macro_rules! on_backend {
    ($path:expr, $size:expr, |$root:ident| $body:expr) => {{
        let path: &std::path::Path = $path;
        let size: (u32, u32) = $crate::report::plot::canvas($size);
        let vector = path
            .extension()
            .and_then(|e| e.to_str())
            .filter(|e| *e == "svg" || *e == "pdf");
        if let Some(format) = vector {
            let mut text = String::new();
            let drawn: anyhow::Result<()> = {
                let $root =
                    plotters::prelude::SVGBackend::with_string(&mut text, size).into_drawing_area();
                $body
            };
            let text = $crate::report::plot::printed_svg(text, size);
            drawn.and_then(|()| match format {
                "pdf" => $crate::report::plot::write_pdf(path, &text),
                _ => $crate::report::plot::write_plot(path, text.as_bytes()),
            })
        } else {
            let mut pixels = vec![0u8; size.0 as usize * size.1 as usize * 3];
            let drawn: anyhow::Result<()> = {
                let $root = plotters::prelude::BitMapBackend::with_buffer(&mut pixels, size)
                    .into_drawing_area();
                $body
            };
            drawn.and_then(|()| $crate::report::plot::write_png(path, &pixels, size))
        }
    }};
}
pub(crate) use on_backend;

/// [`on_backend!`] with every plot's preamble: the font registered ([`ensure_font`]) and the
/// canvas, bound to `$root`, filled white. `$body` draws, with `?` on plotters' errors (whose
/// error becomes the plot's); the canvas is presented after it.
macro_rules! white_plot {
    ($path:expr, $size:expr, |$root:ident| $body:expr) => {{
        $crate::report::plot::ensure_font();
        $crate::report::plot::on_backend!($path, $size, |$root| {
            (|| -> Result<(), Box<dyn std::error::Error + '_>> {
                $root.fill(&plotters::style::colors::WHITE)?;
                $body;
                $root.present()?;
                Ok(())
            })()
            .map_err(|e| anyhow::anyhow!("{e}"))
        })
    }};
}
pub(crate) use white_plot;

/// [`white_plot!`] with `$title` above the canvas ([`titled`]), what is left bound to `$root`.
macro_rules! titled_plot {
    ($path:expr, $size:expr, $title:expr, |$root:ident| $body:expr) => {
        $crate::report::plot::white_plot!($path, $size, |canvas| {
            let $root = $crate::report::plot::titled(&canvas, $title)?;
            $body
        })
    };
}
pub(crate) use titled_plot;

/// Encodes RGB `pixels` of `size` as PNG (the encoder plotters itself would use) and writes it.
pub fn write_png(path: &Path, pixels: &[u8], size: (u32, u32)) -> anyhow::Result<()> {
    use image::ImageEncoder;
    let mut bytes = Vec::new();
    // zlib's default level with a filter chosen per row: a figure's flat areas and thin lines
    // come out at about 40 % of the encoder's fastest setting (1.9 against 4.7 MB for the H100
    // run's figures) for about 8 ms more per figure.
    image::codecs::png::PngEncoder::new_with_quality(
        &mut bytes,
        image::codecs::png::CompressionType::Default,
        image::codecs::png::FilterType::Adaptive,
    )
    .write_image(pixels, size.0, size.1, image::ColorType::Rgb8)
    .map_err(|e| anyhow::anyhow!("encoding the PNG: {e}"))?;
    write_plot(path, &bytes)
}

/// Converts a plot's SVG to a vector PDF with the embedded font (so it renders the same on
/// every machine) and writes it.
pub fn write_pdf(path: &Path, svg: &str) -> anyhow::Result<()> {
    use svg2pdf::usvg;
    let mut options = usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_font_data(FONT_BYTES.to_vec());
    fonts.set_sans_serif_family("DejaVu Sans");
    let tree = usvg::Tree::from_str(svg, &options)
        .map_err(|e| anyhow::anyhow!("reading the plot's SVG for the PDF: {e}"))?;
    let pdf = svg2pdf::to_pdf(
        &tree,
        svg2pdf::ConversionOptions::default(),
        // CSS pixels: 96 to the inch, so a figure printed at 3.4 in is a 3.4 in page.
        svg2pdf::PageOptions { dpi: 96.0 },
    )
    .map_err(|e| anyhow::anyhow!("converting the plot to PDF: {e}"))?;
    write_plot(path, &pdf)
}

/// Writes a plot's bytes, saying what the file system said when it cannot.
pub fn write_plot(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    Ok(std::fs::write(path, bytes)?)
}

#[cfg(test)]
mod tests {
    use plotters::prelude::*;

    #[test]
    fn size_axes_tick_at_powers_of_two_in_binary_units() {
        assert_eq!(super::binary_bytes(1024.0), "1 KiB");
        assert_eq!(super::binary_bytes(256.0 * 1024.0), "256 KiB");
        assert_eq!(super::binary_bytes(3.0 * 1048576.0), "3 MiB");
        assert_eq!(super::binary_bytes(2f64.powi(34)), "16 GiB");
        assert_eq!(super::binary_bytes(96.0), "96 B");
        let ticks = super::power_of_two_ticks(3000.0, 5e6, 8);
        assert_eq!(ticks.first(), Some(&4096.0));
        assert!(
            ticks.len() <= 8 && ticks.last().unwrap() <= &5e6,
            "{ticks:?}"
        );
        assert!(ticks.iter().all(|t| t.log2().fract() == 0.0));
        assert_eq!(super::power_of_two_ticks(1024.0, 1024.0, 8), vec![1024.0]);
        assert!(super::power_of_two_ticks(1100.0, 2000.0, 8).is_empty());
        assert_eq!(
            super::one_two_five_ticks(1500.0, 60000.0),
            vec![2000.0, 5000.0, 10000.0, 20000.0, 50000.0]
        );
        assert!(super::one_two_five_ticks(0.0, 10.0).is_empty());
    }

    /// /dev/full accepts the open and fails every write with "no space", like a full disk.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_full_disk_under_a_figure_is_one_plain_io_error() {
        let error = on_backend!(std::path::Path::new("/dev/full"), (64, 32), |root| {
            root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))
        })
        .unwrap_err();
        assert_eq!(
            format!("{error:#}"),
            "No space left on device (os error 28)"
        );
    }
}

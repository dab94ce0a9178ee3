//! Shared plot styling: an embedded font (no fontconfig on a bare machine) and sizes that stay
//! readable when a figure is shrunk to one paper column.

use std::path::Path;
use std::sync::Once;

use plotters::chart::{ChartContext, SeriesLabelPosition};
use plotters::coord::CoordTranslate;
use plotters::prelude::{BLACK, Color, DrawingAreaErrorKind, DrawingBackend, WHITE};
use plotters::style::{FontStyle, register_font};

pub const FONT: &str = "sans-serif";
pub const TITLE_SIZE: u32 = 30;
pub const LABEL_SIZE: u32 = 24;
pub const TICK_SIZE: u32 = 20;

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

/// Binds `$root` to a drawing area in memory — SVG text when `$path` ends in `.svg`, RGB
/// pixels encoded as PNG otherwise — evaluates `$body` (an `anyhow::Result<()>`) with it, and
/// writes the file only when the drawing succeeded. Writing the bytes ourselves keeps a failed
/// write (a full disk) one plain I/O error instead of the plot backends' debug text.
macro_rules! on_backend {
    ($path:expr, $size:expr, |$root:ident| $body:expr) => {{
        let path: &std::path::Path = $path;
        let size: (u32, u32) = $size;
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
            drawn.and_then(|()| match format {
                "pdf" => $crate::report::plot::write_pdf(path, &text),
                _ => $crate::report::plot::write_figure(path, text.as_bytes()),
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

/// Encodes RGB `pixels` of `size` as PNG (the encoder plotters itself would use) and writes it.
pub fn write_png(path: &Path, pixels: &[u8], size: (u32, u32)) -> anyhow::Result<()> {
    use image::ImageEncoder;
    let mut bytes = Vec::new();
    image::codecs::png::PngEncoder::new(&mut bytes)
        .write_image(pixels, size.0, size.1, image::ColorType::Rgb8)
        .map_err(|e| anyhow::anyhow!("encoding the PNG: {e}"))?;
    write_figure(path, &bytes)
}

/// Converts a figure's SVG to a vector PDF with the embedded font (so it renders the same on
/// every machine) and writes it.
pub fn write_pdf(path: &Path, svg: &str) -> anyhow::Result<()> {
    use svg2pdf::usvg;
    let mut options = usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_font_data(FONT_BYTES.to_vec());
    fonts.set_sans_serif_family("DejaVu Sans");
    let tree = usvg::Tree::from_str(svg, &options)
        .map_err(|e| anyhow::anyhow!("reading the figure's SVG for the PDF: {e}"))?;
    let pdf = svg2pdf::to_pdf(
        &tree,
        svg2pdf::ConversionOptions::default(),
        svg2pdf::PageOptions::default(),
    )
    .map_err(|e| anyhow::anyhow!("converting the figure to PDF: {e}"))?;
    write_figure(path, &pdf)
}

/// Writes a figure's bytes, saying what the file system said when it cannot.
pub fn write_figure(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
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

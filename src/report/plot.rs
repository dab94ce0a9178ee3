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
        if path.extension().is_some_and(|e| e == "svg") {
            let mut text = String::new();
            let drawn: anyhow::Result<()> = {
                let $root =
                    plotters::prelude::SVGBackend::with_string(&mut text, size).into_drawing_area();
                $body
            };
            drawn.and_then(|()| $crate::report::plot::write_figure(path, text.as_bytes()))
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

/// Writes a figure's bytes, saying what the file system said when it cannot.
pub fn write_figure(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    Ok(std::fs::write(path, bytes)?)
}

#[cfg(test)]
mod tests {
    use plotters::prelude::*;

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

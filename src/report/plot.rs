//! Shared plot styling: an embedded font (no fontconfig on a bare machine) and sizes that stay
//! readable when a figure is shrunk to one paper column.

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

/// Binds `$root` to a drawing area over `$path` — SVG when the path ends in `.svg`, a bitmap
/// (PNG) otherwise — and evaluates `$body` with it: one drawing routine, either format.
macro_rules! on_backend {
    ($path:expr, $size:expr, |$root:ident| $body:expr) => {{
        let path: &std::path::Path = $path;
        if path.extension().is_some_and(|e| e == "svg") {
            let $root = plotters::prelude::SVGBackend::new(path, $size).into_drawing_area();
            $body
        } else {
            let $root = plotters::prelude::BitMapBackend::new(path, $size).into_drawing_area();
            $body
        }
    }};
}
pub(crate) use on_backend;

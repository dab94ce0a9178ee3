//! Files of `gpubench clock`: `clock.json` (timer overheads, SM clock, counter scope),
//! `clock_scope.csv` (every block's SM and start / end stamps) and `clock.png` (the stamps
//! per block, as Wong et al.'s Fig. 5, and each SM's counter offset).

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;

use crate::analysis::clock::{BlockStamp, CounterScope, SmClock, TwoTimers};
use crate::experiments::clock::TimerOverheads;
use crate::report::plot::{self, BLUE, RED};
use crate::report::run_dir::RunDir;

/// The summary's quantity of the SM clock the run measured (MHz); the core finds it by its
/// key, [`crate::report::keys::SM_CLOCK`].
pub const SM_CLOCK: &str = "SM clock (measured)";

/// The SM clock as NVML and the two timers saw it (`clock.json`'s `two_timers` and `nvml`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ClockAgainstTimers {
    pub two_timers: TwoTimers,
    /// NVML's SM clock just after the long windows, and the card's maximum, where NVML said.
    pub nvml_sm_mhz: Option<u32>,
    pub nvml_max_sm_mhz: Option<u32>,
}

/// `clock.json`: what the run measured of the timers and the SM clock. [`write`] writes it;
/// [`figures`] and the suite's redraw read it.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct ClockFile {
    /// Runs of format 2 on; `null` on the simulated device.
    pub against_timers: Option<ClockAgainstTimers>,
    /// Written on every run, `null` where the scope was not measured: a file without the key
    /// was edited, and is refused rather than summarised without the row.
    #[serde(deserialize_with = "Option::deserialize")]
    pub counter_scope: Option<CounterScope>,
    pub sm_clock: SmClock,
    pub timer_overheads: TimerOverheads,
}

/// Writes `clock.json` and `clock_scope.csv` (the stamps per block).
pub fn write(run: &RunDir, file: &ClockFile, stamps: &[BlockStamp]) -> Result<()> {
    run.write_json("clock.json", file)?;
    run.write_csv("clock_scope.csv", stamps)
}

/// The figure's title, before the device.
pub const TITLE: &str = "Cycle counters";

pub fn draw(
    path: &Path,
    title: &str,
    stamps: &[BlockStamp],
    scope: Option<&CounterScope>,
) -> Result<()> {
    plot::titled_plot!(path, plot::Design::panels((1600, 700), 2), title, |root| {
        let panels = plot::panels(&root, 2);
        let origin = stamps.iter().map(|s| s.start_cycles).min().unwrap_or(0);
        let top = stamps
            .iter()
            .map(|s| s.end_cycles - origin)
            .max()
            .unwrap_or(1)
            .max(1) as f64
            / 1e3;
        let mut chart = plot::captioned_chart(
            &panels[0],
            "block start (blue) and end (red) clock64",
            [20, 60, 110],
        )
        .build_cartesian_2d(0..stamps.len().max(1), 0.0..top * 1.05)?;
        plot::mesh(&mut chart, "block", "clock64 − earliest start (k cycles)")
            .draw()?;
        chart.draw_series(stamps.iter().map(|s| {
            Circle::new(
                (s.block, (s.start_cycles - origin) as f64 / 1e3),
                3,
                BLUE.filled(),
            )
        }))?;
        chart.draw_series(stamps.iter().map(|s| {
            Circle::new(
                (s.block, (s.end_cycles - origin) as f64 / 1e3),
                3,
                RED.filled(),
            )
        }))?;
        if let Some(scope) = scope {
            let sm_max = scope.sms.iter().map(|s| s.smid).max().unwrap_or(1) as i32;
            let low = scope
                .sms
                .iter()
                .map(|s| s.offset_cycles)
                .fold(f64::INFINITY, f64::min);
            let high = scope
                .sms
                .iter()
                .map(|s| s.offset_cycles)
                .fold(f64::NEG_INFINITY, f64::max);
            let pad = ((high - low) * 0.1).max(scope.noise_cycles).max(1.0);
            let mut offsets = plot::captioned_chart(
                &panels[1],
                format!("counter offset per SM: {}", scope.verdict),
                [20, 60, 110],
            )
            .build_cartesian_2d(-1..sm_max + 1, (low - pad)..(high + pad))?;
            plot::mesh(&mut offsets, "SM (%smid)", "clock64 − f·globaltimer (cycles)")
                .y_label_formatter(&|v| format!("{v:.0}"))
                .draw()?;
            offsets.draw_series(
                scope
                    .sms
                    .iter()
                    .map(|s| Circle::new((s.smid as i32, s.offset_cycles), 4, BLUE.filled())),
            )?;
        }
    })
    .context("drawing clock")
}

/// The summary's clock rows: the measured SM clock, each timer's back-to-back cost and whether
/// the SMs share one cycle counter.
pub fn figures(dir: &Path) -> Result<Vec<crate::report::figures::Figure>> {
    use crate::report::figures::{MedianView, Rows};
    use crate::report::saved::read_json;
    let clock: ClockFile = read_json(dir, "clock.json")?;
    let mut r = Rows::new("clock", "Clocks and timers", "clock.json");
    r.key(crate::report::keys::SM_CLOCK.into())
        .push(SM_CLOCK, Some(clock.sm_clock.mhz), "MHz", None);
    // A clock above the card's highest is a timer that ran wrong, not a fast card.
    let metadata = crate::report::metadata::SavedMetadata::read(dir)?;
    let highest = crate::report::ceilings::highest_sm_clock(&metadata).map(|(mhz, what)| {
        crate::report::ceilings::Ceiling {
            value: mhz,
            made_of: what.into(),
        }
    });
    r.at_most(highest.as_ref());
    if let Some(against) = &clock.against_timers {
        two_timer_rows(&mut r, against);
    }
    let o = &clock.timer_overheads;
    let median = |s: &crate::analysis::stats::Summary| MedianView {
        min: Some(s.min),
        median: Some(s.median),
        max: Some(s.max),
    };
    r.median("clock64 back-to-back", &median(&o.clock64_cycles), "cycles");
    r.median("clock (32-bit) back-to-back", &median(&o.clock32_cycles), "cycles");
    r.median("%globaltimer back-to-back", &median(&o.globaltimer_ns), "ns");
    r.text(
        "cycle counter scope",
        clock.counter_scope.map(|s| s.explanation).as_deref(),
    );
    Ok(r.finish())
}

/// The SM clock against the host's clock and %globaltimer, NVML's reading and maximum, and a
/// verdict that says where the timers disagree or the clock reads above NVML's maximum.
fn two_timer_rows(r: &mut crate::report::figures::Rows, a: &ClockAgainstTimers) {
    let t = &a.two_timers;
    let windows = format!(
        "± error over {} pairs of busy-waits {:.0} ms apart",
        t.windows.len(),
        t.window_ns / 1e6
    );
    r.push(
        "SM clock over the host's clock",
        Some(t.host_mhz),
        "MHz",
        Some((t.host_mhz - t.host_error_mhz, t.host_mhz + t.host_error_mhz, &windows)),
    );
    r.push(
        "SM clock over %globaltimer, the same busy-waits",
        Some(t.globaltimer_mhz),
        "MHz",
        None,
    );
    r.text(
        "%globaltimer's rate against the host's clock",
        Some(&format!(
            "{:+.3} % ({:.5} ns per ns)",
            100.0 * (t.globaltimer_per_host - 1.0),
            t.globaltimer_per_host
        )),
    );
    if let (Some(now), Some(max)) = (a.nvml_sm_mhz, a.nvml_max_sm_mhz) {
        r.text(
            "SM clock, NVML",
            Some(&format!("{now} MHz just after the busy-waits, of a maximum {max} MHz")),
        );
    }
    let mut said = Vec::new();
    if t.disagree() {
        said.push(format!(
            "%globaltimer and the host's clock disagree: clock64 over %globaltimer reads {:+.2} % against the host's clock (error {:.3} %), so per-second figures timed by %globaltimer read {} by that much",
            100.0 * t.disagreement(),
            100.0 * t.host_error_mhz / t.host_mhz,
            if t.disagreement() > 0.0 { "high" } else { "low" }
        ));
    }
    if let Some(max) = a.nvml_max_sm_mhz.map(f64::from) {
        let over = |mhz: f64, error: f64| mhz - max > error;
        if over(t.host_mhz, t.host_error_mhz) {
            said.push(format!(
                "the SM clock over the host's clock ({:.1} MHz) is above NVML's maximum of {max:.0} MHz by more than its error",
                t.host_mhz
            ));
        }
        if over(t.globaltimer_mhz, t.host_error_mhz) {
            said.push(format!(
                "clock64 over %globaltimer ({:.1} MHz) is above NVML's maximum of {max:.0} MHz",
                t.globaltimer_mhz
            ));
        }
    }
    let verdict = if said.is_empty() {
        format!(
            "the timers agree within {:.3} % and the clock is within NVML's maximum",
            100.0 * (t.host_error_mhz / t.host_mhz).max(t.disagreement().abs())
        )
    } else {
        said.join("; ")
    };
    r.text("SM clock check", Some(&verdict));
}

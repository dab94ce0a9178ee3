//! `gpubench tensor --sustain SECONDS`: the tensor cores' rate held for seconds, and the clock,
//! power and rate per watt it settles at, on pseudo-random against zero operands. After Luo et
//! al.'s extended paper (arXiv 2501.12084, the sustained wgmma measurement: on an H800 PCIe
//! FP16 wgmma fell from 729.3 to 665.4 TFLOPS at its 350 W limit, and zero data drew less
//! power than random data).
//!
//! Method: `wgmma_f16_sustain` (cuda/tensor_variants.cu) is `wgmma_f16_thr`'s loop, FP16 ->
//! FP32 m64n256k16 with A and B from shared memory (SASS: eight `HGMMA.64x256x16.F32` per
//! `WARPGROUP.ARRIVE`, one `WARPGROUP.DEPBAR` per trip), one block of two warpgroups per SM,
//! [`TRIPS`] loop trips a launch (about 70 ms at the H200's peak). For each fill in turn the
//! launches follow each other for SECONDS; after each, the host reads the GPU time between two
//! CUDA events around the launch alone (its TFLOPS: the FLOP of every block over that time),
//! the median block span in clock64 cycles over that time (the SM clock the kernel ran at,
//! beside NVML's reading), and one NVML sample (power, temperature, SM clock, clock-limit
//! reasons). The settled state
//! is the median over the launches of the last third of the fill's time, with their range.
//! The GPU is measured as it is found: nothing sets clocks or limits; NVML is only read.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use cudarc::driver::PushKernelArg;
use serde::{Deserialize, Serialize};

use crate::analysis::stats::Summary;
use crate::gpu::Gpu;
use crate::gpu::health::HealthSample;
use crate::gpu::launch::{as_i32, line_of, read, timed, zeros};

pub const MODULE: &str = "tensor_variants";
pub const ENTRY: &str = "wgmma_f16_sustain";
/// Loop trips of one launch: 8 wgmma of 2 × 64 × 256 × 16 FLOP per warpgroup each.
pub const TRIPS: u32 = 65_536;
const WARPGROUPS: u64 = 2;
const FLOP_PER_TRIP: u64 = 8 * 2 * 64 * 256 * 16;
/// The fills, in the order they run: the kernel's `zero` argument and the name rows carry.
pub const FILLS: [(&str, i32); 2] = [("pseudo-random", 0), ("zero", 1)];
/// The longest sustained run a flag may ask for, per fill.
pub const MOST_SECONDS: f64 = 600.0;

/// One launch of the sustained run: a row of `sustained.csv`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SustainedRow {
    pub fill: String,
    /// Since the fill's first launch began.
    pub seconds: f64,
    pub tflops: f64,
    /// The median block's clock64 span over the launch's GPU time (between its events).
    pub sm_mhz: f64,
    pub power_watts: Option<f64>,
    pub temperature_c: Option<u32>,
    pub nvml_sm_mhz: Option<u32>,
    /// NVML's clock-limit reasons at the sample, ';'-separated.
    pub clock_limits: String,
}

/// How often the rows so far are saved while the kernel is held (and at each fill's end): a
/// run stopped or failed midway keeps all but the last few seconds. A save takes the host a
/// few milliseconds between two launches of about 86 ms, every few seconds.
pub const SAVE_EVERY: Duration = Duration::from_secs(5);

/// Launches the sustained kernel for `seconds` per fill on `sms` blocks; `sample` reads NVML
/// after every launch (`None`: no NVML, the power columns stay empty); `save` is handed every
/// row so far every [`SAVE_EVERY`] and at the end of each fill.
pub fn measure(
    gpu: &mut Gpu,
    sample: impl Fn() -> Option<HealthSample>,
    mut save: impl FnMut(&[SustainedRow]) -> Result<()>,
    sms: u32,
    seconds: f64,
) -> Result<Vec<SustainedRow>> {
    let mut rows = Vec::new();
    let mut saved = Instant::now();
    for (fill, zero) in FILLS {
        let start = Instant::now();
        let budget = Duration::from_secs_f64(seconds);
        while start.elapsed() < budget {
            let began = start.elapsed().as_secs_f64();
            let (stamps, kernel_seconds) = launch(gpu, sms, TRIPS, zero)?;
            rows.push(row(fill, began, kernel_seconds, &stamps, sms, sample().as_ref())?);
            if saved.elapsed() >= SAVE_EVERY {
                save(&rows)?;
                saved = Instant::now();
            }
        }
        save(&rows)?;
        saved = Instant::now();
    }
    Ok(rows)
}

fn row(
    fill: &str,
    began: f64,
    kernel_seconds: f64,
    stamps: &[i64],
    sms: u32,
    sample: Option<&HealthSample>,
) -> Result<SustainedRow> {
    let spans: Vec<f64> = stamps
        .chunks(2)
        .filter(|s| s.len() == 2 && s[1] > s[0])
        .map(|s| (s[1] - s[0]) as f64)
        .collect();
    let span = Summary::of(&spans).context("the sustained kernel returned no usable stamps")?;
    let flop = f64::from(sms) * (WARPGROUPS * FLOP_PER_TRIP * u64::from(TRIPS)) as f64;
    Ok(SustainedRow {
        fill: fill.into(),
        seconds: began,
        tflops: flop / kernel_seconds / 1e12,
        sm_mhz: span.median / kernel_seconds / 1e6,
        power_watts: sample.and_then(|s| s.power_draw_watts),
        temperature_c: sample.and_then(|s| s.temperature_c),
        nvml_sm_mhz: sample.and_then(|s| s.clocks.as_ref()).map(|c| c.sm_mhz),
        clock_limits: sample
            .and_then(|s| s.clock_limit_reasons.clone())
            .unwrap_or_default()
            .join(";"),
    })
}

/// One launch of `wgmma_f16_sustain` on `sms` blocks of two warpgroups: each block's clock64
/// before and after, and the seconds between two CUDA events around the launch alone (the
/// buffers are allocated before the first event and read after the second).
///
/// Kernel signature: `wgmma_f16_sustain(long long *stamps[2 * blocks], float *sink[blocks *
/// threads], int iterations, int zero)`.
fn launch(gpu: &mut Gpu, sms: u32, trips: u32, zero: i32) -> Result<(Vec<i64>, f64)> {
    let threads = 128 * WARPGROUPS as u32;
    let function = gpu.function(MODULE, ENTRY)?;
    let stream = gpu.stream().clone();
    let mut stamps = zeros::<i64>(gpu, 2 * sms as usize, "block stamps")?;
    let mut sink = zeros::<f32>(gpu, (sms * threads) as usize, "the sink buffer")?;
    let trips = as_i32(trips, "the loop trips")?;
    let mut builder = stream.launch_builder(&function);
    builder
        .arg(&mut stamps)
        .arg(&mut sink)
        .arg(&trips)
        .arg(&zero);
    let config = line_of(sms, threads);
    let ms = timed(gpu, ENTRY, Duration::from_secs(30), || {
        // SAFETY: the four arguments match the kernel's signature above in order and type;
        // stamps holds two per block and sink one per thread; the tiles are static shared
        // memory.
        unsafe { crate::gpu::launch::launch(ENTRY, builder, config) }
    })?;
    Ok((read(gpu, &stamps, "block stamps")?, ms / 1e3))
}

/// A fill's settled state: the median and range over its launches in the last third of its
/// time, and its first launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    pub fill: String,
    pub first_tflops: f64,
    pub launches: usize,
    pub tflops: Summary,
    pub sm_mhz: Summary,
    pub nvml_sm_mhz: Option<Summary>,
    pub power_watts: Option<Summary>,
    pub temperature_c: Option<Summary>,
    /// Every clock-limit reason NVML gave in the last third.
    pub clock_limits: Vec<String>,
}

impl Settled {
    /// TFLOPS per watt of the settled medians.
    pub fn tflops_per_watt(&self) -> Option<f64> {
        self.power_watts
            .as_ref()
            .filter(|p| p.median > 0.0)
            .map(|p| self.tflops.median / p.median)
    }
}

/// Every fill's settled state, in the order the rows name them.
pub fn settled(rows: &[SustainedRow]) -> Vec<Settled> {
    crate::analysis::distinct(rows.iter().map(|r| r.fill.as_str()))
        .into_iter()
        .filter_map(|fill| {
            let of: Vec<&SustainedRow> = rows.iter().filter(|r| r.fill == fill).collect();
            let end = of.iter().map(|r| r.seconds).fold(0.0, f64::max);
            let last: Vec<&SustainedRow> = of
                .iter()
                .copied()
                .filter(|r| r.seconds >= end * 2.0 / 3.0)
                .collect();
            let summary = |value: fn(&SustainedRow) -> Option<f64>| {
                Summary::of(&last.iter().filter_map(|r| value(r)).collect::<Vec<_>>())
            };
            let mut limits: Vec<String> = last
                .iter()
                .flat_map(|r| r.clock_limits.split(';'))
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            limits.sort();
            limits.dedup();
            Some(Settled {
                fill: fill.into(),
                first_tflops: of.first()?.tflops,
                launches: last.len(),
                tflops: summary(|r| Some(r.tflops))?,
                sm_mhz: summary(|r| Some(r.sm_mhz))?,
                nvml_sm_mhz: summary(|r| r.nvml_sm_mhz.map(f64::from)),
                power_watts: summary(|r| r.power_watts),
                temperature_c: summary(|r| r.temperature_c.map(f64::from)),
                clock_limits: limits,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(fill: &str, seconds: f64, tflops: f64, watts: f64) -> SustainedRow {
        SustainedRow {
            fill: fill.into(),
            seconds,
            tflops,
            sm_mhz: 1980.0 * tflops / 700.0,
            power_watts: Some(watts),
            temperature_c: Some(50),
            nvml_sm_mhz: Some(1980),
            clock_limits: if watts > 690.0 { "sw power cap".into() } else { String::new() },
        }
    }

    #[test]
    fn the_settled_state_is_the_last_third_of_each_fill() {
        // Random data falls from 700 to 600 TFLOPS at the power cap; zeros hold 700 at 400 W.
        let mut rows: Vec<SustainedRow> = (0..30)
            .map(|i| {
                let t = f64::from(i) * 0.1;
                let tflops = if t < 1.0 { 700.0 } else { 600.0 };
                sample("pseudo-random", t, tflops, if t < 1.0 { 650.0 } else { 700.0 })
            })
            .collect();
        rows.extend((0..30).map(|i| sample("zero", f64::from(i) * 0.1, 700.0, 400.0)));
        let s = settled(&rows);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].fill, "pseudo-random");
        assert_eq!(s[0].first_tflops, 700.0);
        assert_eq!(s[0].tflops.median, 600.0);
        assert_eq!(s[0].power_watts.as_ref().unwrap().median, 700.0);
        assert_eq!(s[0].clock_limits, vec!["sw power cap".to_string()]);
        assert!((s[0].tflops_per_watt().unwrap() - 600.0 / 700.0).abs() < 1e-12);
        assert_eq!(s[1].tflops.median, 700.0);
        assert!(s[1].clock_limits.is_empty());
        // The last third: 2.9 s is the end, so 1.9 s onwards, ten launches.
        assert_eq!(s[0].launches, 10);
    }

    #[test]
    fn without_nvml_there_is_no_power_and_no_rate_per_watt() {
        let mut row = sample("zero", 0.0, 650.0, 0.0);
        row.power_watts = None;
        let s = settled(&[row]);
        assert!(s[0].power_watts.is_none() && s[0].tflops_per_watt().is_none());
    }

    #[test]
    fn one_launch_is_counted_at_its_flop() {
        // 132 SMs, 65,536 trips at 2 × 8 × 524,288 FLOP each in 0.1 s.
        let stamps: Vec<i64> = (0..132).flat_map(|_| [0, 198_000_000]).collect();
        let r = row("zero", 0.0, 0.1, &stamps, 132, None).unwrap();
        let flop = 132.0 * 2.0 * 8.0 * 524_288.0 * 65_536.0;
        assert!((r.tflops - flop / 0.1 / 1e12).abs() < 1e-9);
        assert!((r.sm_mhz - 1980.0).abs() < 1e-9);
        assert!(row("zero", 0.0, 0.1, &[5, 5], 1, None).is_err());
    }
}

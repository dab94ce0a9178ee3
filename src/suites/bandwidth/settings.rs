//! `gpubench bandwidth`'s arguments.

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::error::{UsageError, bail_usage};

#[derive(Debug, Args, Serialize, Deserialize)]
pub struct BandwidthArgs {
    /// Timed launches per headline point (after calibration); a point is their median.
    #[arg(long, default_value_t = 5)]
    pub repeats: u32,
    /// Timed launches per point of the sweeps against footprint (the occupancy searches time
    /// three).
    #[arg(long, default_value_t = 3)]
    pub sweep_repeats: u32,
    /// Each launch runs at least this long (passes are doubled until it does), in ms.
    #[arg(long, default_value_t = 2.0)]
    pub min_ms: f64,
    /// The L2's headline figures' launches (each operation at its winning occupancy) run at
    /// least this long, in ms: long launches spread the slow start of each over enough passes
    /// that the figure repeats between runs.
    #[arg(long, default_value_t = 8.0)]
    pub headline_ms: f64,
    /// Footprints per doubling in the sweeps.
    #[arg(long, default_value_t = 3)]
    pub points_per_doubling: u32,
    /// Largest device-wide footprint in bytes (default: 16 × the L2, at least 1 GiB, at most
    /// a quarter of the device's memory).
    #[arg(long)]
    pub max_bytes: Option<u64>,
    /// Largest footprint per SM of the L1 sweep, in bytes.
    #[arg(long, default_value_t = 4 << 20)]
    pub max_sm_bytes: u64,
    #[command(flatten)]
    #[serde(flatten)]
    pub target: crate::cli::Target,
}

/// What metadata.json's settings record of a run: the timing, the sizes swept and the method.
/// Written by [`super::run`]; nothing reads it back.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recorded {
    pub headline_ms: f64,
    pub max_device_bytes: u64,
    pub max_sm_bytes: u64,
    pub method: String,
    pub min_ms: f64,
    pub points_per_doubling: u32,
    pub repeats: u32,
    pub sweep_repeats: u32,
}

impl BandwidthArgs {
    /// Every check of the flags that needs no device, before one is opened.
    pub fn validate(&self) -> Result<(), UsageError> {
        if !(1..=100).contains(&self.repeats) {
            bail_usage!("--repeats must be between 1 and 100");
        }
        if !(1..=100).contains(&self.sweep_repeats) {
            bail_usage!("--sweep-repeats must be between 1 and 100");
        }
        if !(0.1..=100.0).contains(&self.min_ms) {
            bail_usage!("--min-ms must be between 0.1 and 100");
        }
        if !(0.1..=100.0).contains(&self.headline_ms) {
            bail_usage!("--headline-ms must be between 0.1 and 100");
        }
        if !(1..=16).contains(&self.points_per_doubling) {
            bail_usage!("--points-per-doubling must be between 1 and 16");
        }
        Ok(())
    }

    /// The largest device-wide footprint: `--max-bytes`, else the device's `default`, checked
    /// (at least 64 MiB) once the device is open.
    pub fn max_device_bytes(&self, default: impl FnOnce() -> u64) -> Result<u64, UsageError> {
        let bytes = self.max_bytes.unwrap_or_else(default);
        if bytes < 64 << 20 {
            bail_usage!("--max-bytes must be at least 67108864 (64 MiB)");
        }
        Ok(bytes)
    }

    /// The check that the buffers the footprints `needed` fit the device's `memory` (with a
    /// tenth to spare), once the device is open.
    pub fn fits(&self, needed: u64, memory: u64) -> Result<(), UsageError> {
        if needed > memory / 10 * 9 {
            bail_usage!(
                "the buffers would need {needed} bytes of the device's {memory}; pass a smaller --max-bytes or --max-sm-bytes"
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::defaults;

    #[test]
    fn bad_settings_are_refused() {
        let good: BandwidthArgs = defaults();
        assert!(good.validate().is_ok());
        assert_eq!(good.max_device_bytes(|| 1 << 30).unwrap(), 1 << 30);
        let changes: [fn(&mut BandwidthArgs); 5] = [
            |a| a.repeats = 0,
            |a| a.sweep_repeats = 0,
            |a| a.min_ms = 0.0,
            |a| a.headline_ms = 500.0,
            |a| a.points_per_doubling = 0,
        ];
        for change in changes {
            let mut bad: BandwidthArgs = defaults();
            change(&mut bad);
            assert!(bad.validate().is_err(), "{bad:?}");
        }
        let small = BandwidthArgs {
            max_bytes: Some(1 << 20),
            ..defaults()
        };
        assert!(small.max_device_bytes(|| 1 << 30).is_err());
        assert!(good.max_device_bytes(|| 1 << 20).is_err());
    }
}

//! Physical ceilings: what the device can do at most, from its SM count, its highest SM clock
//! (NVML's maximum, else the driver's nominal peak) and a per-SM rate per clock, or a share's
//! whole. A rate measured above its ceiling by more than [`TOLERANCE`] is not a figure: either
//! its timer ran wrong or the SM clock ran above the maximum NVML states (an H100 whose
//! clock64 read 1993-1995 MHz against both %globaltimer and the host's clock while NVML said
//! 1980 of a maximum 1980 gave a DFMA rate of 33.67 TFLOPS against 132 SMs × 128 FLOP/clock ×
//! 1.98 GHz = 33.45). The figure is unresolved with the ceiling named
//! ([`Reason::AboveCeiling`]); the clock suite's check says which.

use super::metadata::SavedMetadata;

pub use super::figures::{Ceiling, TOLERANCE, hold};

/// The highest SM clock the device runs at (MHz) and where it was read: NVML's maximum, else
/// the driver's nominal peak; `None` where the run recorded neither.
pub fn highest_sm_clock(metadata: &SavedMetadata) -> Option<(f64, &'static str)> {
    let nvml = metadata
        .nvml
        .identity
        .as_ref()
        .and_then(|i| i.max_clocks)
        .map(|c| f64::from(c.sm_mhz))
        .filter(|mhz| *mhz > 0.0);
    match nvml {
        Some(mhz) => Some((mhz, "NVML's maximum SM clock")),
        None => metadata
            .device
            .nominal_sm_clock_mhz
            .filter(|mhz| *mhz > 0.0)
            .map(|mhz| (mhz, "the driver's nominal SM clock")),
    }
}

/// The ceiling of a chip-wide rate of `per_clock_per_sm` (`per_clock_unit`) on every SM at the
/// highest SM clock, in units of `scale` per second (1e12: TFLOPS, 1e9: GB/s).
pub fn chip_rate(
    metadata: &SavedMetadata,
    per_clock_per_sm: f64,
    per_clock_unit: &str,
    scale: f64,
) -> Option<Ceiling> {
    let sms = metadata.device.multiprocessors;
    let (mhz, clock) = highest_sm_clock(metadata)?;
    (sms > 0 && per_clock_per_sm > 0.0).then(|| Ceiling {
        value: per_clock_per_sm * sms as f64 * mhz * 1e6 / scale,
        made_of: format!(
            "{sms} SMs × {per_clock_per_sm} {per_clock_unit} × {mhz:.0} MHz ({clock})"
        ),
    })
}

/// The ceiling of a share: its whole.
pub fn share() -> Ceiling {
    Ceiling {
        value: 100.0,
        made_of: "the whole".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::health::{Clocks, GpuIdentity, NvmlRecord};
    use crate::report::figures::Figure;

    fn h100() -> SavedMetadata {
        let mut metadata = SavedMetadata::default();
        metadata.device.multiprocessors = 132;
        metadata.device.nominal_sm_clock_mhz = Some(1755.0);
        metadata.nvml = NvmlRecord {
            identity: Some(GpuIdentity {
                max_clocks: Some(Clocks {
                    sm_mhz: 1980,
                    memory_mhz: 2619,
                }),
                ..GpuIdentity::default()
            }),
            ..NvmlRecord::default()
        };
        metadata
    }

    #[test]
    fn a_dfma_rate_above_132_sms_at_1980_mhz_is_unresolved_naming_the_ceiling() {
        let ceiling = chip_rate(&h100(), 128.0, "FLOP/clock", 1e12).unwrap();
        assert!((ceiling.value - 33.454).abs() < 1e-3, "{ceiling:?}");
        let mut fast = Figure::sample("Peak rates", "DFMA", Some(33.70), "TFLOPS", "");
        hold(&mut fast, &ceiling);
        assert!(fast.is_unresolved());
        assert!(
            fast.uncertainty.starts_with("above its physical ceiling: 33.700 TFLOPS is above 33.454 TFLOPS = 132 SMs × 128 FLOP/clock × 1980 MHz (NVML's maximum SM clock), which the device cannot pass"),
            "{}",
            fast.uncertainty
        );
        let mut at = Figure::sample("Peak rates", "DFMA", Some(33.45), "TFLOPS", "");
        hold(&mut at, &ceiling);
        assert!(!at.is_unresolved());
    }

    #[test]
    fn without_nvml_the_nominal_clock_is_the_ceilings_and_without_either_there_is_none() {
        let mut metadata = h100();
        metadata.nvml = NvmlRecord::default();
        let ceiling = chip_rate(&metadata, 128.0, "FLOP/clock", 1e12).unwrap();
        assert!(
            ceiling
                .made_of
                .contains("1755 MHz (the driver's nominal SM clock)")
        );
        metadata.device.nominal_sm_clock_mhz = None;
        assert!(chip_rate(&metadata, 128.0, "FLOP/clock", 1e12).is_none());
    }

    #[test]
    fn a_share_above_100_percent_is_unresolved() {
        let mut over = Figure::sample("x", "share of the peak", Some(100.5), "%", "");
        hold(&mut over, &share());
        assert!(over.is_unresolved());
        let mut whole = Figure::sample("x", "share of the peak", Some(100.0), "%", "");
        hold(&mut whole, &share());
        assert!(!whole.is_unresolved());
    }
}

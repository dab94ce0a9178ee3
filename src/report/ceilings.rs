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

/// What one SM moves per clock at most through its shared memory and L1 data path: 32 banks of
/// 4 bytes (compute capability 5.0 on), the width of every load an SM receives and of every
/// store into its shared memory, whichever level the bytes come from.
pub const SM_BYTES_PER_CLOCK: f64 = 128.0;

/// The ceiling of a rate in bytes per clock per SM: [`SM_BYTES_PER_CLOCK`].
pub fn sm_bytes_per_clock() -> Ceiling {
    Ceiling {
        value: SM_BYTES_PER_CLOCK,
        made_of: "32 banks × 4 bytes, an SM's data path per clock".into(),
    }
}

/// The ceiling of a chip-wide rate in GB/s that passes through the SMs' data paths: every SM
/// at [`SM_BYTES_PER_CLOCK`] at the highest SM clock.
pub fn chip_bytes(metadata: &SavedMetadata) -> Option<Ceiling> {
    chip_rate(metadata, SM_BYTES_PER_CLOCK, "bytes/clock", 1e9)
}

/// The most thread operations an SM issues per clock: 4 schedulers, one warp instruction of
/// 32 threads each (compute capability 7.0 on).
pub const SM_THREAD_OPS_PER_CLOCK: f64 = 128.0;

/// The ceiling of a count of thread operations per clock over the whole device.
pub fn chip_ops_per_clock(
    multiprocessors: i64,
    per_sm: f64,
    per_sm_words: &str,
) -> Option<Ceiling> {
    (multiprocessors > 0 && per_sm > 0.0).then(|| Ceiling {
        value: per_sm * multiprocessors as f64,
        made_of: format!("{multiprocessors} SMs × {per_sm} ({per_sm_words})"),
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
    fn bytes_and_operations_are_held_to_the_sm_s_data_path_and_issue() {
        let path = sm_bytes_per_clock();
        let mut over = Figure::sample("DSM", "read own", Some(129.5), "B/clock/SM", "");
        hold(&mut over, &path);
        assert!(over.is_unresolved());
        let mut at = Figure::sample("DSM", "read own", Some(125.7), "B/clock/SM", "");
        hold(&mut at, &path);
        assert!(!at.is_unresolved());
        // 132 SMs × 128 bytes × 1980 MHz: 33,454 GB/s.
        let chip = chip_bytes(&h100()).unwrap();
        assert!((chip.value - 33_454.08).abs() < 0.01, "{chip:?}");
        let shared = chip_ops_per_clock(132, 32.0, "one update per bank").unwrap();
        assert_eq!(shared.value, 4224.0);
        let mut storm = Figure::sample("Atomics", "shared", Some(4300.0), "ops/clock", "");
        hold(&mut storm, &shared);
        assert!(storm.is_unresolved());
        assert!(chip_ops_per_clock(0, 32.0, "").is_none());
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

//! How the bandwidth-style experiments size a launch: how many blocks an SM's shared memory
//! holds, and how many passes make a launch last long enough to time.

use anyhow::Result;

/// Shared memory the system keeps per resident block, on every GPU since Volta.
pub const RESERVED_SHARED_PER_BLOCK: u64 = 1024;

/// Whether `blocks_per_sm` blocks of `bytes_per_block` dynamic shared memory each fit an SM
/// that offers `per_sm` bytes in all and at most `per_block` to one block.
pub fn shared_fits(blocks_per_sm: u32, bytes_per_block: u64, per_sm: u64, per_block: u64) -> bool {
    bytes_per_block <= per_block
        && u64::from(blocks_per_sm) * (bytes_per_block + RESERVED_SHARED_PER_BLOCK) <= per_sm
}

/// The passes that make a launch last at least `min_seconds`. `time(passes)` runs one launch
/// and returns its seconds; the first, of one pass, also brings the data into its level and
/// the clocks up. Each try after a short launch multiplies the passes by the shortfall (with
/// a fifth to spare, at least doubling, at most 1024-fold, never past `max_passes`), twelve
/// tries at most.
pub fn calibrated_passes(
    min_seconds: f64,
    max_passes: f64,
    mut time: impl FnMut(u32) -> Result<f64>,
) -> Result<u32> {
    let mut passes = 1;
    let mut seconds = time(passes)?;
    for _ in 0..12 {
        if seconds >= min_seconds {
            break;
        }
        let factor = (min_seconds * 1.2 / seconds.max(1e-7)).ceil();
        passes = (f64::from(passes) * factor.clamp(2.0, 1024.0)).min(max_passes) as u32;
        seconds = time(passes)?;
    }
    Ok(passes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_fit_with_the_systems_reserve() {
        // An H100: 228 KiB per SM, 227 KiB to one block.
        let (per_sm, per_block) = (233_472, 232_448);
        assert!(shared_fits(3, 64 << 10, per_sm, per_block));
        // Four blocks of 56 KiB and their reserves fill the SM exactly; a byte more does not fit.
        assert!(shared_fits(4, 56 << 10, per_sm, per_block));
        assert!(!shared_fits(4, (56 << 10) + 1, per_sm, per_block));
        assert!(!shared_fits(1, 228 << 10, per_sm, per_block));
    }

    #[test]
    fn passes_grow_by_the_shortfall_until_the_launch_is_long_enough() {
        // A pass takes 10 us: 2.4 ms (the target and a fifth) of them, in one step.
        let mut tried = Vec::new();
        let passes = calibrated_passes(0.002, 1e7, |n| {
            tried.push(n);
            Ok(1e-5 * f64::from(n))
        })
        .unwrap();
        assert_eq!(tried.len(), 2);
        assert_eq!(passes, tried[1]);
        assert!((240..=241).contains(&passes), "{passes}");
        // A fixed cost per launch makes the first step fall short, and a second one follows.
        let mut launches = 0;
        let passes = calibrated_passes(0.002, 1e7, |n| {
            launches += 1;
            Ok(5e-6 + 1e-5 * f64::from(n))
        })
        .unwrap();
        assert_eq!(launches, 3);
        assert!(5e-6 + 1e-5 * f64::from(passes) >= 0.002);
        // A cap stops the growth; twelve tries at most.
        let mut launches = 0;
        let capped = calibrated_passes(1.0, 50.0, |n| {
            launches += 1;
            Ok(1e-5 * f64::from(n))
        })
        .unwrap();
        assert_eq!((capped, launches), (50, 13));
    }
}

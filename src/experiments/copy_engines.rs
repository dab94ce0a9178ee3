//! The DRAM copy by the copy engines, beside the SMs' own (`gpubench bandwidth`).
//!
//! Why: a ceiling is the highest rate the hardware sustains, with its mover named (#32). On the
//! H100 no SM kernel we know copies DRAM faster than 87 % of the theoretical peak: grid-stride
//! loops with 4 to 16 loads in flight, `.cs`, L2 eviction hints, the 256-byte L2 prefetch,
//! destination offsets of 256 B to 3 MiB and TMA bulk copies through shared memory all stop at
//! 85-87 % (scripts/dram-copy-probe.cu, scripts/dram-copy-layout-probe.cu), while
//! `cuMemcpyDtoD`, which launches no kernel and moves the bytes with the copy engines, reaches
//! about 90 %. The movers differ and each is reported: this one here, the SMs' in `bandwidth`
//! and `tma`. (Since the DRAM kernels take their slices by ticket, the SMs' copy reaches 88 %.)
//!
//! Method: two arrays of 4 GiB (less where free memory is short: an eighth of it, in whole MiB),
//! the source filled with a pattern; [`COPIES`] copies back to back between two events, once
//! to warm up and then `repeats` times; bytes = read + write of every copy; the median of the
//! timings with their range. Per-copy setup is why the size matters: on an H100 one copy of
//! 400 MiB ran about 1 % slower per byte than copies of 2 GiB, and in 18 rounds on two H100s
//! the median of two copies of 4 GiB per timing was 90.3 % of the peak (range 90.1-90.4 %),
//! of 2 GiB 89.8-90.0 % (scripts/dram-write-movers-probe.cu); with 2 GiB arrays this
//! measurement's median was 89.3-89.9 % on five H100s. Three stretches of the target are
//! compared with the source afterwards.

use std::time::Duration;

use anyhow::Result;

use crate::analysis::stats::Summary;
use crate::gpu::Gpu;
use crate::gpu::launch::copy_engines::time_copies;

/// Copies per timing: two of 4 GiB take about 6 ms on an H100.
pub const COPIES: u32 = 2;

/// The largest array copied.
pub const MAX_ARRAY_BYTES: u64 = 4 << 30;

/// Smallest array worth timing: below it the per-copy setup is a large share of the time.
pub const MIN_ARRAY_BYTES: u64 = 64 << 20;

const DEADLINE: Duration = Duration::from_secs(20);

/// The size of each array, given the device memory free: 4 GiB, or an eighth of the free
/// memory in whole MiB; `None` where that is below [`MIN_ARRAY_BYTES`].
pub fn array_bytes(free_bytes: u64) -> Option<u64> {
    let bytes = (free_bytes / 8).min(MAX_ARRAY_BYTES) >> 20 << 20;
    (bytes >= MIN_ARRAY_BYTES).then_some(bytes)
}

/// What one measurement gave.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyEngineReading {
    pub array_bytes: u64,
    pub copies: u32,
    /// Bytes per second over the timings (read + write bytes).
    pub rate: Summary,
    pub checked_words: u64,
    pub mismatched_words: u64,
}

/// Bytes one timing moves: every copy reads and writes its array.
pub fn bytes_per_timing(array_bytes: u64, copies: u32) -> u64 {
    2 * array_bytes * u64::from(copies)
}

/// Times the copy engines' DRAM copy, or says why it was not measured.
pub fn measure(gpu: &Gpu, repeats: u32) -> Result<std::result::Result<CopyEngineReading, String>> {
    let free = gpu.free_memory()?;
    let Some(array) = array_bytes(free) else {
        return Ok(Err(format!(
            "not measured: {free} bytes of device memory free, two arrays of at least {MIN_ARRAY_BYTES} bytes need an eighth of it each"
        )));
    };
    let timings = time_copies(gpu, array, COPIES, repeats, DEADLINE)?;
    let moved = bytes_per_timing(array, COPIES) as f64;
    let rates: Vec<f64> = timings.seconds.iter().map(|s| moved / s).collect();
    let Some(rate) = Summary::of(&rates) else {
        return Ok(Err("not measured: no timing completed".into()));
    };
    Ok(Ok(CopyEngineReading {
        array_bytes: array,
        copies: COPIES,
        rate,
        checked_words: timings.checked_words,
        mismatched_words: timings.mismatched_words,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_are_four_gib_where_memory_allows_else_an_eighth_of_it_in_whole_mib() {
        assert_eq!(array_bytes(80 << 30), Some(4 << 30));
        assert_eq!(array_bytes(32 << 30), Some(4 << 30));
        assert_eq!(array_bytes(16 << 30), Some(2 << 30));
        // 3 GiB + 5 bytes free: an eighth is 384 MiB and a fraction, cut to whole MiB.
        assert_eq!(array_bytes((3 << 30) + 5), Some(384 << 20));
        assert_eq!(array_bytes(8 * (64 << 20)), Some(64 << 20));
        assert_eq!(array_bytes(8 * (64 << 20) - 8), None);
    }

    #[test]
    fn a_timing_counts_the_read_and_the_write_of_every_copy() {
        assert_eq!(bytes_per_timing(2 << 30, 2), 8 << 30);
    }
}

//! DRAM copies by the copy engines: `cuMemcpyDtoDAsync` between two device arrays, which
//! launches no kernel (Nsight Compute profiles none), timed between events like a launch.

use std::time::Duration;

use cudarc::driver::CudaSlice;

use super::{timed, upload, zeros};
use crate::error::GpuError;
use crate::gpu::{Gpu, driver_error};

/// Words of the pattern the source starts from (one MiB); the rest of the source is made by
/// copying what is already there onto the next stretch, doubling it each time.
pub const PATTERN_WORDS: usize = 1 << 18;

/// Words read back from each of three places of the target (its start, middle and end).
const CHECKED_WORDS: usize = 1 << 14;

/// Word `i` of the source (and so of a correct target).
pub fn pattern_word(i: usize) -> u32 {
    let k = (i % PATTERN_WORDS) as u32;
    k.wrapping_mul(2_654_435_761) ^ 0x5bd1_e995
}

/// What [`time_copies`] saw.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyEngineTimings {
    /// GPU seconds of each timing of `copies` back-to-back copies (the warm-up left out).
    pub seconds: Vec<f64>,
    /// Target words read back and compared with the source's pattern, and how many differed.
    pub checked_words: u64,
    pub mismatched_words: u64,
}

/// Copies an array of `array_bytes` (a whole number of MiB) onto another `copies` times back
/// to back between two events, once to warm up and then `repeats` times, and checks three
/// stretches of the target against the source.
pub fn time_copies(
    gpu: &Gpu,
    array_bytes: u64,
    copies: u32,
    repeats: u32,
    deadline: Duration,
) -> Result<CopyEngineTimings, GpuError> {
    let words = usize::try_from(array_bytes / 4).unwrap_or(usize::MAX);
    let stream = gpu.stream().clone();
    let what = "the copy engines' copy";
    let (source, mut target) = patterned_pair(gpu, words, "the copy engines' arrays")?;
    let mut seconds = Vec::new();
    for timing in 0..=repeats {
        let ms = timed(gpu, what, deadline, || {
            for _ in 0..copies {
                stream
                    .memcpy_dtod(&source, &mut target)
                    .map_err(driver_error("copying on the device"))?;
            }
            Ok(())
        })?;
        if timing > 0 {
            seconds.push(ms / 1e3);
        }
    }
    let (checked_words, mismatched_words) = check_copy(gpu, &target)?;
    Ok(CopyEngineTimings {
        seconds,
        checked_words,
        mismatched_words,
    })
}

/// A source of `words` words (a whole number of [`PATTERN_WORDS`]) holding the pattern, and a
/// zeroed target as long; `what` names them in an error.
pub fn patterned_pair(
    gpu: &Gpu,
    words: usize,
    what: &str,
) -> Result<(CudaSlice<u32>, CudaSlice<u32>), GpuError> {
    if words < PATTERN_WORDS || !words.is_multiple_of(PATTERN_WORDS) {
        return Err(GpuError::driver(
            format!("sizing {what}"),
            format!("{} bytes is not a whole number of MiB", 4 * words),
        ));
    }
    let stream = gpu.stream().clone();
    let first: Vec<u32> = (0..PATTERN_WORDS).map(pattern_word).collect();
    let seed = upload(gpu, &first, what)?;
    let mut source = zeros::<u32>(gpu, words, what)?;
    let target = zeros::<u32>(gpu, words, what)?;
    let action = format!("filling {what}");
    let copy_error = || driver_error(&action);
    stream
        .memcpy_dtod(&seed, &mut source.slice_mut(..PATTERN_WORDS))
        .map_err(copy_error())?;
    let mut filled = PATTERN_WORDS;
    while filled < words {
        let n = filled.min(words - filled);
        let (done, mut rest) = source.split_at_mut(filled);
        stream
            .memcpy_dtod(&done.slice(..n), &mut rest.slice_mut(..n))
            .map_err(copy_error())?;
        filled += n;
    }
    Ok((source, target))
}

/// `target` zeroed, so that a later [`check_copy`] sees only what the copies after it wrote.
pub fn clear(gpu: &Gpu, target: &mut CudaSlice<u32>) -> Result<(), GpuError> {
    gpu.stream()
        .memset_zeros(target)
        .map_err(driver_error("clearing a copy's target"))
}

/// Words of `target` read back from its start, middle and end and compared with the source's
/// pattern: (checked, differing).
pub fn check_copy(gpu: &Gpu, target: &CudaSlice<u32>) -> Result<(u64, u64), GpuError> {
    let words = target.len();
    let stretch = CHECKED_WORDS.min(words);
    let mut checked = 0;
    let mut mismatched = 0;
    for start in [0, words / 2 - stretch / 2, words - stretch] {
        let back = gpu
            .stream()
            .clone_dtoh(&target.slice(start..start + stretch))
            .map_err(driver_error("reading a copy's target"))?;
        checked += back.len() as u64;
        mismatched += back
            .iter()
            .enumerate()
            .filter(|(k, w)| **w != pattern_word(start + k))
            .count() as u64;
    }
    Ok((checked, mismatched))
}

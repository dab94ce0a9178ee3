//! DRAM copies by the copy engines: `cuMemcpyDtoDAsync` between two device arrays, which
//! launches no kernel (Nsight Compute profiles none), timed between events like a launch.

use std::time::Duration;

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
    if words < PATTERN_WORDS || words % PATTERN_WORDS != 0 {
        return Err(GpuError::Driver {
            action: "sizing the copy engines' arrays".into(),
            detail: format!("{array_bytes} bytes is not a whole number of MiB"),
        });
    }
    let stream = gpu.stream().clone();
    let what = "the copy engines' copy";
    let first: Vec<u32> = (0..PATTERN_WORDS).map(pattern_word).collect();
    let seed = upload(gpu, &first, "the copy engines' pattern")?;
    let mut source = zeros::<u32>(gpu, words, "the copy engines' source")?;
    let mut target = zeros::<u32>(gpu, words, "the copy engines' target")?;
    let copy_error = || driver_error("copying on the device");
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
    let mut seconds = Vec::new();
    for timing in 0..=repeats {
        let ms = timed(gpu, what, deadline, || {
            for _ in 0..copies {
                stream
                    .memcpy_dtod(&source, &mut target)
                    .map_err(copy_error())?;
            }
            Ok(())
        })?;
        if timing > 0 {
            seconds.push(ms / 1e3);
        }
    }
    let mut checked_words = 0;
    let mut mismatched_words = 0;
    for start in [0, words / 2, words - CHECKED_WORDS] {
        let stretch = stream
            .clone_dtoh(&target.slice(start..start + CHECKED_WORDS))
            .map_err(driver_error("reading the copy engines' target"))?;
        checked_words += stretch.len() as u64;
        mismatched_words += stretch
            .iter()
            .enumerate()
            .filter(|(k, w)| **w != pattern_word(start + k))
            .count() as u64;
    }
    Ok(CopyEngineTimings {
        seconds,
        checked_words,
        mismatched_words,
    })
}

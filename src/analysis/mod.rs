//! Pure statistics and fits: functions over plain numbers, no GPU and no I/O.

pub mod cache_fit;
pub mod cache_inference;
pub mod cache_model;
pub mod calibration;
pub mod chase;
pub mod clock;
pub mod confidence_map;
pub mod divergence_patterns;
pub mod linear_fit;
pub mod miss_fraction;
pub mod peaks;
pub mod roofline;
pub mod sass;
pub mod stack_emulator;
pub mod stats;
pub mod two_latencies;

/// The distinct values of `values`, in the order they are first seen.
pub fn distinct<T: PartialEq>(values: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut seen = Vec::new();
    for value in values {
        if !seen.contains(&value) {
            seen.push(value);
        }
    }
    seen
}

/// `work` on each of `parts`, a scoped thread each, the results joined in part order; a
/// worker's panic is the caller's.
pub fn in_parallel<P: Send, T: Send>(
    parts: impl Iterator<Item = P>,
    work: impl Fn(P) -> Vec<T> + Sync,
) -> Vec<T> {
    let work = &work;
    std::thread::scope(|scope| {
        let workers: Vec<_> = parts.map(|part| scope.spawn(move || work(part))).collect();
        workers
            .into_iter()
            .flat_map(|w| {
                w.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

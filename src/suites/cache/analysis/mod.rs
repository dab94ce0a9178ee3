//! The cache suite's own inference, pure and tested on synthetic data: the conflict
//! experiment's ways and way size (`conflict`), the fetch granularity of a stride sweep
//! (`granularity`), the individually timed loads' two latencies (`per_load`) and the TLB's
//! reach and page size (`tlb`). What the cache suite shares with `gpubench calibrate` (the cache
//! model, its fit and the inference) stays in `crate::analysis`.

pub mod conflict;
pub mod granularity;
pub mod per_load;
pub mod tlb;

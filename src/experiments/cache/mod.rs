//! Memory-hierarchy pointer chase, after Wong et al., "Inferring cache characteristics from
//! latency plots" (Fig. 4): dependent loads through a precomputed chain, average latency
//! against footprint, and the cache geometry read from the steps (`analysis::cache_inference`).
//!
//! So far only the offline side exists: [`saved`] reads a chase curve from CSV for
//! `gpubench analyze cache`. The GPU chase kernels and the per-space sweeps are still to be
//! written.

pub mod saved;

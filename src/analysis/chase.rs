//! One point of a pointer chase's latency curve: what the cache inference reads, the cache
//! model simulates and the fit compares (a leaf, so that those three need not name each other).

use serde::Serialize;

/// The average latency of one load at one footprint and stride.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChasePoint {
    pub footprint_bytes: u64,
    pub stride_bytes: u64,
    pub cycles: f64,
}

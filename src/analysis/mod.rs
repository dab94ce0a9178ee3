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

//! Reporters: they write what experiments measured and analysis computed, and compute nothing.

pub mod accel_sim;
pub mod calibration;
pub mod calibration_families;
pub mod compare;
pub mod curated;
pub mod devices;
pub mod domain;
pub mod dram_bulk_copy;
pub mod emulation;
pub mod export;
pub mod figures;
pub mod fleet;
pub mod html;
pub mod info;
pub mod known_rows;
pub mod l2_bulk_read;
pub mod metadata;
pub mod overlay;
pub mod plot;
pub mod plots_tex;
pub mod roofline;
pub mod run_dir;
pub mod saved;
pub mod summary;
pub mod text;
pub mod throttling;

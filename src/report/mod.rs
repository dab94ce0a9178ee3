//! Reporters: they write what experiments measured and analysis computed, and compute nothing.

pub mod bandwidth;
pub mod branch;
pub mod cache;
pub mod cache_plot;
pub mod clock;
pub mod compare;
pub mod devices;
pub mod divergence;
pub mod divergence_model;
pub mod divergence_split;
pub mod emulation;
pub mod figures;
pub mod figures_tex;
pub mod info;
pub mod metadata;
pub mod pipeline;
pub mod plot;
pub mod regs;
pub mod run_dir;
pub mod saved;
pub mod shared;
pub mod slots;
pub mod summary;
pub mod sync;
pub mod tensor;

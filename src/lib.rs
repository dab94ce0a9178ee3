//! gpubench: microbenchmarks of NVIDIA GPU microarchitecture.
//!
//! The pipeline is visible in the modules: [`cli`] → [`app`] → [`experiments`] (kernel and
//! launch plan, through the [`gpu`] seam) → samples → [`analysis`] (pure) → [`report`].

pub mod analysis;
pub mod app;
pub mod cli;
pub mod error;
pub mod experiments;
pub mod gpu;
pub mod harness;
pub mod input;
pub mod kernels;
pub mod report;
pub mod suites;

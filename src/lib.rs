//! gpubench: microbenchmarks of NVIDIA GPU microarchitecture.
//!
//! The pipeline is visible in the modules: [`cli`] → [`app`] → a suite of [`suites`] (its
//! settings, launchers, measurement, analysis and files, in its folder), through [`harness`],
//! on what the core shares: [`experiments`] (launch plans two or more suites use), the
//! [`gpu`] seam, [`analysis`] (pure) and [`report`].
//!
//! A suite is its folder: code that serves exactly one suite lives in `src/suites/<name>/`;
//! the core keeps what two or more suites, or a suite-agnostic command of [`app`], use
//! (`tests/layers.rs` reads this from the use graph).

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

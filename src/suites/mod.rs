//! The suites, one folder each: a suite's flags, its measurement, its pure analysis (tested on
//! synthetic data), the files and figures it writes and reads back, and its `SuiteDef` all
//! live in `src/suites/<name>/`, on the core (`harness`, `gpu`, `analysis`, `report`) that
//! never names a suite. The registry (`app::registry`) is the one place that names each: its
//! `SUITES` line, and the two `gpubench analyze` commands it hands to the divergence and cache
//! suites. `docs/layout.md` ("Adding a suite") walks through the shape.

pub mod atomics;
pub mod bandwidth;
pub mod branch;
pub mod cache;
pub mod clock;
pub mod divergence;
pub mod dsm;
pub mod flops;
pub mod pipeline;
pub mod regs;
pub mod shared;
pub mod slots;
pub mod sync;
pub mod tensor;
pub mod tma;

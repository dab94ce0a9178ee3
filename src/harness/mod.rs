//! The harness every suite runs in, below the suites and above the core: what a suite is to
//! the rest of gpubench (`interface`: [`SuiteDef`], [`Suite`], what `report` hands a suite),
//! one entry of `gpubench all`'s plan ([`PlannedSuite`]), and the skeleton of one run of a suite
//! (`suite`: open the device, write `metadata.json`, measure, record the figures). It names no
//! suite; `app::registry` lists them.

pub mod interface;
pub mod plan;
pub mod sharing;
pub mod suite;
pub mod worker;

pub use interface::{Measure, ReadFigures, Redraw, SavedRun, Suite, SuiteDef};
pub use plan::{PlannedSuite, defaults};

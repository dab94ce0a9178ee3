//! The suites, one folder each: a suite's flags, its measurement, its pure analysis (tested on
//! synthetic data), the files and figures it writes and reads back, and its `SuiteDef` all
//! live in `src/suites/<name>/`, on the core (`harness`, `gpu`, `analysis`, `report`) that
//! never names a suite. A suite is registered by its one line below, which declares its
//! module and puts it in [`ALL`], in the order `gpubench all` runs them. Beyond that line only
//! `app::registry` names suites: the two `gpubench analyze` commands it hands to the divergence
//! and cache suites. `docs/adding-a-suite.md` walks through adding one.

/// `module::Type` per line: declares `pub mod module;` and lists `&module::Type` in [`ALL`].
macro_rules! suites {
    ($($module:ident :: $suite:ident,)*) => {
        $(pub mod $module;)*

        /// Every suite, in the order `gpubench all` runs them.
        pub static ALL: &[&dyn crate::harness::Suite] = &[$(&$module::$suite),*];
    };
}

// The clock first, quick probes before the long sweeps. The pipeline suite comes a few suites
// in: the toolkit's ptxas needs about two seconds for its module, which `all` compiles while
// the suites before it measure.
suites! {
    clock::Clock,
    divergence::Divergence,
    shared::Shared,
    branch::Branch,
    sync::Sync,
    regs::Regs,
    slots::Slots,
    pipeline::Pipeline,
    dpx::Dpx,
    bandwidth::Bandwidth,
    cache::Cache,
    tensor::Tensor,
    flops::Flops,
    atomics::Atomics,
    dsm::Dsm,
    tma::Tma,
    sm_map::SmMap,
    launch::Launch,
}

//! Experiments two or more suites (or a suite and a suite-agnostic command) share: what to
//! launch and in which order, producing raw samples: the chains the cache, atomics and TMA
//! suites chase (`chain`), host work built ahead of the GPU's (`ahead`: atomics, TMA), the
//! bandwidth-style launch sizes (`launch_size`: bandwidth, TMA), the copy engines' DRAM copy
//! (`copy_engines`: bandwidth, TMA) and the clock probes of the clock suite, `info` and every
//! run's metadata (`clock`). What one suite alone
//! launches lives in its folder (`suites/<name>/`). Each module states its method and the
//! paper section it follows.

pub mod ahead;
pub mod chain;
pub mod clock;
pub mod copy_engines;
pub mod launch_size;

//! Experiments: what to launch and in which order, producing raw samples. Each module sits
//! beside its kernel source in `cuda/` and states its method and the paper section it follows.

pub mod ahead;
pub mod chain;
pub mod clock;
pub mod copy_engines;
pub mod launch_size;

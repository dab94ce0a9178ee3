//! The context a worker process of `gpubench all` keeps between the suites it runs one after
//! another (see `harness::worker`).

use std::sync::Arc;

use cudarc::driver::CudaContext;

/// Whether this process keeps its context between suites (a worker process of `gpubench all`
/// runs several, one after another), and the context it keeps.
static KEPT: std::sync::Mutex<(bool, Option<Arc<CudaContext>>)> =
    std::sync::Mutex::new((false, None));

/// From now on the first context [`super::Gpu::open`] creates outlives its `Gpu`: the next suite of
/// this process retains the same (primary) context instead of creating one, which on an H200
/// takes about 0.1 s of the GPU's turn (and a creation disturbs another process's timing, see
/// [`super::lease`], so it cannot be done ahead of the turn). The context holds nothing of a suite
/// once its `Gpu` is dropped: no suite sets a context-wide limit or cache setting, and its
/// modules and memory go with its `Gpu`.
pub fn keep_context_between_suites() {
    KEPT.lock().unwrap_or_else(|e| e.into_inner()).0 = true;
}

/// Releases the context kept for later suites, if any (the process drops it before it exits:
/// an exit with a live context disturbs another process's timing, see [`super::lease`]).
pub fn release_kept_context() {
    let kept = KEPT.lock().unwrap_or_else(|e| e.into_inner()).1.take();
    drop(kept);
}

pub(super) fn keep_for_later_suites(context: &Arc<CudaContext>) {
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    if kept.0 && kept.1.is_none() {
        kept.1 = Some(context.clone());
    }
}

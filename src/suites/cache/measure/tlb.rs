//! TLB space (Wong et al., "TLB"): one element per page-scale stride, footprints up to a large
//! share of device memory. The buffer is allocated once at the largest footprint and each
//! point's chain is scattered into it on the device (`tlb_chain_init`), so no GiB-sized chain
//! is built on the host; elements hold element numbers, not word indices, so footprints past
//! 16 GiB work. Loads bypass L1 (`ld.global.cg`): a few thousand elements stay in L2, and the
//! latency grows with the translations that miss.
//!
//! The page size comes from a second sweep, over strides at one footprint past the first
//! TLB's reach (`analysis::granularity`): below the page size several loads share a page
//! and its one translation, so cycles per load grow with the stride until it reaches a page.

use anyhow::{Result, bail};

use super::{Order, chain};
use crate::gpu::Gpu;
use crate::suites::cache::launch::TlbBuffer;

/// Cycles per load over `footprint` bytes with one element every `stride` bytes.
pub fn measure(
    gpu: &mut Gpu,
    buffer: &mut TlbBuffer,
    order: Order,
    footprint: u64,
    stride: u64,
) -> Result<f64> {
    let n = footprint / stride;
    if n < 2 || n > u64::from(u32::MAX) {
        bail!("a TLB chase needs 2 to 2^32 elements, not {n}");
    }
    // The visiting order of n elements, as the word-index chains use (element numbers here).
    let (_, visit) = chain(n * 4, 4, order);
    let mut next = vec![0_u32; visit.len()];
    for i in 0..visit.len() {
        next[visit[i]] = visit[(i + 1) % visit.len()] as u32;
    }
    let n = visit.len() as u32;
    let laps = super::chase_passes(n, 4000.0);
    let (cycles, element) = buffer.chase(gpu, stride, &next, laps)?;
    let expected = visit[(laps.loads() % u64::from(n)) as usize] as i64;
    if element != expected {
        bail!(
            "the TLB chase over {footprint} B ended at element {element}, not {expected}: the loads were not all made"
        );
    }
    Ok(cycles as f64 / f64::from(laps.steps))
}

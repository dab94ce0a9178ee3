//! Fine-grained chase (after Mei & Chu, "Dissecting GPU memory hierarchy through
//! microbenchmarking"): every load timed on its own, so single accesses show as hits or misses
//! rather than disappearing into an average. One thread, one warm pass, then up to
//! [`launch::PER_LOAD_LIMIT`] loads; each latency includes one clock read and the shared-memory
//! store that makes the clock wait for the load, a constant the plateaus share.

use std::time::Duration;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use super::{Order, Space, chain, expected_index};
use crate::gpu::Gpu;
use crate::suites::cache::launch;

/// One timed load of `loads.csv`, as written and as read back.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadSample {
    pub footprint_bytes: u64,
    pub stride_bytes: u64,
    pub load: u32,
    pub index: i64,
    pub cycles: i64,
}

pub fn entry(space: Space) -> Option<&'static str> {
    match space {
        Space::Global => Some("per_load_global"),
        Space::L2 => Some("per_load_l2"),
        Space::Readonly => Some("per_load_readonly"),
        _ => None,
    }
}

/// `loads` individually timed loads at one footprint, each index checked against the chain.
pub fn record(
    gpu: &mut Gpu,
    space: Space,
    order: Order,
    footprint_bytes: u64,
    stride_bytes: u64,
    loads: u32,
) -> Result<Vec<LoadSample>> {
    let Some(entry) = entry(space) else {
        bail!("per-load timing runs on the global, l2 and readonly spaces only");
    };
    let (chain, visit) = chain(footprint_bytes, stride_bytes, order);
    let warm = visit.len() as u32;
    let laps = crate::gpu::launch::Laps {
        warm,
        steps: loads,
        deadline: Duration::from_secs(10),
    };
    let results = launch::chase_per_load(gpu, entry, &chain, laps)?;
    let mut samples = Vec::with_capacity(results.len());
    for (i, (cycles, index)) in results.into_iter().enumerate() {
        let expected = expected_index(&visit, stride_bytes, u64::from(warm) + i as u64 + 1);
        if index != expected {
            bail!(
                "per-load chase over {footprint_bytes} B: load {i} read index {index}, not {expected}"
            );
        }
        samples.push(LoadSample {
            footprint_bytes,
            stride_bytes,
            load: i as u32,
            index,
            cycles,
        });
    }
    Ok(samples)
}

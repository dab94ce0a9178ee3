//! Branch order (cuda/branch.cu), after Wong et al., section IV-C, Listing 3 and Figs 7–8:
//! one warp runs a 32-way if / else-if chain whose clause order comes from an array, for an
//! ascending, a descending and a random order; then two warps diverge 32 ways at once, to see
//! whether warps overlap while each serialises its own paths.

use anyhow::Result;
use rand::seq::SliceRandom;
use rand::{SeedableRng, rngs::StdRng};

use super::analysis::{self as branch, PathInterval, WARP_LANES};
use super::launch;
use crate::gpu::Gpu;

#[derive(Debug, Clone)]
pub struct OrderRun {
    pub name: &'static str,
    pub order: [i32; WARP_LANES],
    pub warps: u32,
    pub paths: Vec<PathInterval>,
}

pub fn orders(seed: u64) -> Vec<(&'static str, [i32; WARP_LANES], u32)> {
    let ascending: [i32; WARP_LANES] = std::array::from_fn(|i| i as i32);
    let descending: [i32; WARP_LANES] = std::array::from_fn(|i| (WARP_LANES - 1 - i) as i32);
    let mut random = ascending;
    random.shuffle(&mut StdRng::seed_from_u64(seed));
    vec![
        ("ascending", ascending, 1),
        ("descending", descending, 1),
        ("random", random, 1),
        ("two warps", ascending, 2),
    ]
}

pub fn measure(gpu: &mut Gpu, seed: u64, work: u32) -> Result<Vec<OrderRun>> {
    orders(seed)
        .into_iter()
        .map(|(name, order, warps)| {
            // One untimed launch first, so the chain's code is in the instruction cache.
            launch::branch_order(gpu, &order, warps * WARP_LANES as u32, work)?;
            let stamps = launch::branch_order(gpu, &order, warps * WARP_LANES as u32, work)?;
            let paths = branch::intervals(&order, &stamps);
            // Each path does `work` between its two clock reads; a clock that did not move is
            // a kernel that did not run (a GPU or driver fault), not a path that took no time.
            if let Some(still) = paths.iter().find(|p| p.end_cycles <= p.start_cycles) {
                anyhow::bail!(
                    "the {name} branch-order run's clock did not advance across thread {}'s path ({} to {} cycles): the kernel did not run as written; check the GPU with nvidia-smi and run the suite again",
                    still.thread,
                    still.start_cycles,
                    still.end_cycles
                );
            }
            Ok(OrderRun {
                name,
                order,
                warps,
                paths,
            })
        })
        .collect()
}

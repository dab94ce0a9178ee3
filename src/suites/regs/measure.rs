//! Register file (cuda/regs.cu), after Wong et al., section IV-E, Fig. 9: the kernel that
//! keeps many values live is JIT-compiled once per register cap (the caps concurrently, on
//! host threads); for each, the largest block
//! that launches is found by bisection over multiples of 32 threads, and set beside the
//! driver's own CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK.

use anyhow::Result;

use super::analysis::RegisterPoint;
use crate::gpu::Gpu;
use crate::gpu::jit::CappedKernel;

/// Caps from `min` to `max` in steps of `step`, and always 255 (the hardware limit).
pub fn caps(min: u32, max: u32, step: u32) -> Vec<u32> {
    let mut caps: Vec<u32> = (min..=max).step_by(step.max(1) as usize).collect();
    if caps.last() != Some(&max) {
        caps.push(max);
    }
    caps
}

/// The largest multiple of 32 threads in 32..=limit that launches, or 0 if none does.
fn largest_block(kernel: &CappedKernel, gpu: &Gpu, limit: u32) -> Result<u32> {
    let (mut good, mut bad) = (0_u32, limit / 32 + 1);
    while bad - good > 1 {
        let middle = (good + bad) / 2;
        if kernel.launches(gpu, middle * 32)? {
            good = middle;
        } else {
            bad = middle;
        }
    }
    Ok(good * 32)
}

pub fn measure(gpu: &mut Gpu, caps: &[u32], max_threads: u32) -> Result<Vec<RegisterPoint>> {
    let mut points = Vec::new();
    let kernels = CappedKernel::load_many(gpu, "regs", "regs_pressure", caps)?;
    for (&cap, kernel) in caps.iter().zip(&kernels) {
        let max = largest_block(kernel, gpu, max_threads)?;
        points.push(RegisterPoint {
            cap,
            registers: u32::try_from(kernel.registers).unwrap_or(0),
            max_threads: max,
            max_threads_attribute: u32::try_from(kernel.max_threads_attribute).unwrap_or(0),
        });
    }
    Ok(points)
}

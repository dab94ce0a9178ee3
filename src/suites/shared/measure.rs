//! Shared-memory latency and bank conflicts (cuda/shared.cu), after Wong et al.'s shared
//! memory section and Erez's lecture on banks. One warp times chains of dependent loads in
//! which lane l reads element l × stride: strides 1..=33 elements of 4, 8 and 16 bytes, one
//! launch per point. The stride-1, 4-byte point is the conflict-free load latency; the others
//! give cycles against the number of wavefronts the bank model predicts
//! (the suite's `analysis`).

use anyhow::{Result, ensure};

use super::analysis::StridePoint;
use crate::analysis::stats;
use super::settings::SharedArgs;
use super::launch;
use crate::gpu::Gpu;

pub const ELEMENT_BYTES: [u32; 3] = [4, 8, 16];

pub fn measure(gpu: &mut Gpu, args: &SharedArgs) -> Result<Vec<StridePoint>> {
    let mut points = Vec::new();
    for element_bytes in ELEMENT_BYTES {
        for stride in 1..=args.max_stride {
            let lanes = launch::shared_stride(gpu, element_bytes, stride, args.iterations)?;
            let per_load: Vec<f64> = lanes
                .iter()
                .map(|&cycles| cycles as f64 / f64::from(args.iterations))
                .collect();
            let cycles_per_load = stats::median(&per_load).unwrap_or(f64::NAN);
            ensure!(
                cycles_per_load.is_finite() && cycles_per_load > 0.0,
                "the shared-memory kernel returned no usable timing for {element_bytes}-byte elements at stride {stride}"
            );
            points.push(StridePoint {
                element_bytes,
                stride,
                cycles_per_load,
            });
        }
    }
    Ok(points)
}

//! Shared-memory latency and bank conflicts (cuda/shared.cu), after Wong et al.'s shared
//! memory section and Erez's lecture on banks. One warp times chains of dependent loads in
//! which lane l reads element l × stride: strides 1..=33 elements of 4, 8 and 16 bytes, one
//! launch per point. The stride-1, 4-byte point is the conflict-free load latency; the others
//! give cycles against the number of wavefronts the bank model predicts
//! (the suite's `analysis`).

use anyhow::{Result, ensure};

use super::analysis::StridePoint;
use crate::analysis::stats;
use crate::error::UsageError;
use super::launch;
use crate::gpu::Gpu;

pub const ELEMENT_BYTES: [u32; 3] = [4, 8, 16];

#[derive(Debug, Clone, PartialEq)]
pub struct SharedConfig {
    pub max_stride: u32,
    /// Dependent loads per timed chain (a multiple of 32: the loop is unrolled 32 times).
    pub iterations: u32,
}

impl Default for SharedConfig {
    fn default() -> Self {
        SharedConfig {
            max_stride: 33,
            iterations: 1024,
        }
    }
}

impl SharedConfig {
    pub fn validate(&self) -> Result<(), UsageError> {
        if self.iterations == 0 || !self.iterations.is_multiple_of(32) || self.iterations > 1 << 20
        {
            return Err(UsageError::new(format!(
                "--iterations must be a multiple of 32 between 32 and 1048576, not {}",
                self.iterations
            )));
        }
        if self.max_stride == 0 || self.max_stride > 64 {
            return Err(UsageError::new(format!(
                "--max-stride must be between 1 and 64, not {}",
                self.max_stride
            )));
        }
        Ok(())
    }
}

pub fn measure(gpu: &mut Gpu, config: &SharedConfig) -> Result<Vec<StridePoint>> {
    let mut points = Vec::new();
    for element_bytes in ELEMENT_BYTES {
        for stride in 1..=config.max_stride {
            let lanes = launch::shared_stride(gpu, element_bytes, stride, config.iterations)?;
            let per_load: Vec<f64> = lanes
                .iter()
                .map(|&cycles| cycles as f64 / f64::from(config.iterations))
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

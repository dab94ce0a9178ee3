//! Register-file allocation (Wong et al., section IV-E, Fig. 9): from the largest block that
//! launches at each register count, infer the allocation unit per warp and check it against
//! the register file the device reports.
//!
//! Model: a warp gets `ceil(registers × 32 / G) × G` registers, G the allocation unit; the
//! register file of R registers is split evenly over P partitions (the SM's sub-partitions,
//! each with its own warp scheduler), a warp lives in one of them, and a block's warps are
//! dealt round-robin, so a block fits while `ceil(warps / P)` warps fit in R / P registers; it
//! has at most `max_threads` threads. Every G and P in lists of powers of two is tried; the
//! pairs that predict every measured block size are consistent.

use serde::{Deserialize, Serialize};

pub const WARP: u32 = 32;
pub const UNITS: [u32; 7] = [32, 64, 128, 256, 512, 1024, 2048];
pub const PARTITIONS: [u32; 4] = [1, 2, 4, 8];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RegisterPoint {
    /// The JIT register cap asked for.
    pub cap: u32,
    /// Registers per thread the kernel got (CU_FUNC_ATTRIBUTE_NUM_REGS).
    pub registers: u32,
    /// Largest block (a multiple of 32) that launched.
    pub max_threads: u32,
    /// The driver's own answer (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK).
    pub max_threads_attribute: u32,
}

/// The allocator: unit G registers per warp, register file split over P partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allocator {
    pub unit_registers_per_warp: u32,
    pub partitions: u32,
}

/// Largest block the model allows.
pub fn predicted_threads(
    registers: u32,
    allocator: Allocator,
    register_file: u32,
    max_threads: u32,
) -> u32 {
    let unit = allocator.unit_registers_per_warp;
    let per_warp = (registers * WARP).div_ceil(unit) * unit;
    let per_partition = (register_file / allocator.partitions)
        .checked_div(per_warp)
        .unwrap_or(u32::MAX / WARP / 8);
    (per_partition * allocator.partitions * WARP).min(max_threads)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Allocation {
    /// Allocators that predict every point.
    pub consistent: Vec<Allocator>,
    /// The coarsest consistent unit, with the fewest partitions among those (the other
    /// consistent allocators differ from it on no measured point).
    pub allocator: Option<Allocator>,
    pub unit_registers_per_thread: Option<f64>,
    /// The most registers any measured block held: registers × threads, before rounding.
    pub largest_block_registers: u32,
    /// Block sizes when registers limit them are multiples of this many threads.
    pub register_limited_thread_quantum: Option<u32>,
    /// Points where the empirical largest block differs from the driver's attribute.
    pub attribute_mismatches: Vec<u32>,
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

pub fn infer(points: &[RegisterPoint], register_file: u32, max_threads: u32) -> Allocation {
    let consistent: Vec<Allocator> = UNITS
        .iter()
        .flat_map(|&unit| {
            PARTITIONS.iter().map(move |&partitions| Allocator {
                unit_registers_per_warp: unit,
                partitions,
            })
        })
        .filter(|&allocator| {
            points.iter().all(|p| {
                predicted_threads(p.registers, allocator, register_file, max_threads)
                    == p.max_threads
            })
        })
        .collect();
    let allocator = consistent
        .iter()
        .copied()
        .max_by_key(|a| (a.unit_registers_per_warp, std::cmp::Reverse(a.partitions)));
    let limited: Vec<u32> = points
        .iter()
        .filter(|p| p.max_threads < max_threads)
        .map(|p| p.max_threads)
        .collect();
    Allocation {
        unit_registers_per_thread: allocator
            .map(|a| f64::from(a.unit_registers_per_warp) / f64::from(WARP)),
        allocator,
        consistent,
        largest_block_registers: points
            .iter()
            .map(|p| p.registers * p.max_threads)
            .max()
            .unwrap_or(0),
        register_limited_thread_quantum: limited.iter().copied().reduce(gcd),
        attribute_mismatches: points
            .iter()
            .filter(|p| p.max_threads != p.max_threads_attribute)
            .map(|p| p.cap)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn simulated(allocator: Allocator, register_file: u32) -> Vec<RegisterPoint> {
        (16..=255)
            .step_by(3)
            .map(|registers| {
                let threads = predicted_threads(registers, allocator, register_file, 1024);
                RegisterPoint {
                    cap: registers,
                    registers,
                    max_threads: threads,
                    max_threads_attribute: threads,
                }
            })
            .collect()
    }

    const HOPPER_LIKE: Allocator = Allocator {
        unit_registers_per_warp: 256,
        partitions: 4,
    };

    #[test]
    fn recovers_a_partitioned_allocator() {
        let allocation = infer(&simulated(HOPPER_LIKE, 65_536), 65_536, 1024);
        assert_eq!(allocation.allocator, Some(HOPPER_LIKE));
        assert_eq!(allocation.unit_registers_per_thread, Some(8.0));
        assert_eq!(allocation.consistent, vec![HOPPER_LIKE]);
        assert_eq!(allocation.register_limited_thread_quantum, Some(128));
        assert!(allocation.attribute_mismatches.is_empty());
    }

    #[test]
    fn an_inconsistent_measurement_leaves_no_allocator() {
        let mut points = simulated(HOPPER_LIKE, 65_536);
        points[40].max_threads -= 32;
        let allocation = infer(&points, 65_536, 1024);
        assert!(allocation.consistent.is_empty());
        assert_eq!(allocation.allocator, None);
        assert_eq!(allocation.attribute_mismatches, vec![points[40].cap]);
    }

    proptest! {
        /// Any allocator is recovered, or one that predicts the very same block sizes.
        #[test]
        fn any_allocator_is_recovered(unit_index in 0usize..6, partition_index in 0usize..3, file_kib in 16u32..=64) {
            let truth = Allocator { unit_registers_per_warp: UNITS[unit_index], partitions: PARTITIONS[partition_index] };
            let register_file = file_kib * 1024;
            let points = simulated(truth, register_file);
            let allocation = infer(&points, register_file, 1024);
            prop_assert!(allocation.consistent.contains(&truth));
            let chosen = allocation.allocator.unwrap();
            for p in &points {
                prop_assert_eq!(predicted_threads(p.registers, chosen, register_file, 1024), p.max_threads);
            }
        }
    }
}

//! Register-file allocation (Wong et al., section IV-E, Fig. 9): from the largest block that
//! launches at each register count, infer the allocation unit per warp and check it against
//! the register file the device reports.
//!
//! Model: a warp gets `ceil(registers × 32 / G) × G` registers, G the allocation unit; a
//! block fits while its warps' registers total at most the register file per block R, and it
//! has at most `max_threads` threads. Every G in a list of powers of two is tried; the ones that
//! predict every measured block size are consistent.

use serde::Serialize;

pub const WARP: u32 = 32;
pub const UNITS: [u32; 7] = [32, 64, 128, 256, 512, 1024, 2048];

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

/// Largest block the model allows.
pub fn predicted_threads(registers: u32, unit: u32, register_file: u32, max_threads: u32) -> u32 {
    let per_warp = (registers * WARP).div_ceil(unit) * unit;
    let warps = register_file
        .checked_div(per_warp)
        .unwrap_or(u32::MAX / WARP);
    (warps * WARP).min(max_threads)
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Allocation {
    /// Allocation units (registers per warp) that predict every point.
    pub consistent_units: Vec<u32>,
    /// The coarsest consistent unit (the others then differ on no measured point).
    pub unit_registers_per_warp: Option<u32>,
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
    let consistent_units: Vec<u32> = UNITS
        .iter()
        .copied()
        .filter(|&unit| {
            points.iter().all(|p| {
                predicted_threads(p.registers, unit, register_file, max_threads) == p.max_threads
            })
        })
        .collect();
    let unit = consistent_units.last().copied();
    let limited: Vec<u32> = points
        .iter()
        .filter(|p| p.max_threads < max_threads)
        .map(|p| p.max_threads)
        .collect();
    Allocation {
        unit_registers_per_thread: unit.map(|u| f64::from(u) / f64::from(WARP)),
        unit_registers_per_warp: unit,
        consistent_units,
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

    fn simulated(unit: u32, register_file: u32) -> Vec<RegisterPoint> {
        (16..=255)
            .step_by(3)
            .map(|registers| {
                let threads = predicted_threads(registers, unit, register_file, 1024);
                RegisterPoint {
                    cap: registers,
                    registers,
                    max_threads: threads,
                    max_threads_attribute: threads,
                }
            })
            .collect()
    }

    #[test]
    fn recovers_the_unit_of_a_simulated_allocator() {
        let allocation = infer(&simulated(256, 65_536), 65_536, 1024);
        assert_eq!(allocation.unit_registers_per_warp, Some(256));
        assert_eq!(allocation.unit_registers_per_thread, Some(8.0));
        assert_eq!(allocation.consistent_units, vec![256]);
        assert_eq!(allocation.register_limited_thread_quantum, Some(32));
        assert!(allocation.attribute_mismatches.is_empty());
    }

    #[test]
    fn an_inconsistent_measurement_leaves_no_unit() {
        let mut points = simulated(256, 65_536);
        points[40].max_threads -= 32;
        let allocation = infer(&points, 65_536, 1024);
        assert!(allocation.consistent_units.is_empty());
        assert_eq!(allocation.unit_registers_per_warp, None);
        assert_eq!(allocation.attribute_mismatches, vec![points[40].cap]);
    }

    proptest! {
        #[test]
        fn any_unit_and_register_file_is_recovered(unit_index in 0usize..6, file_kib in 16u32..=64) {
            let unit = UNITS[unit_index];
            let register_file = file_kib * 1024;
            let allocation = infer(&simulated(unit, register_file), register_file, 1024);
            prop_assert_eq!(allocation.unit_registers_per_warp, Some(unit));
        }
    }
}

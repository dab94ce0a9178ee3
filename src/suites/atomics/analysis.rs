//! What the atomics suite infers from its chases and storms: cycles per dependent step, operations
//! per clock, how many loop trips a storm needs for a given duration, which unit serves an
//! atomic (whether its latency follows the L2 load's from an L2-resident to a DRAM-resident
//! footprint) and what the SASS made of each operation.

use serde::{Deserialize, Serialize};

use crate::analysis::stats::Summary;

/// Cycles per step of a chase of `steps` dependent steps that took `cycles`.
pub fn cycles_per_step(cycles: i64, steps: u32) -> Option<f64> {
    (cycles > 0 && steps > 0).then(|| cycles as f64 / f64::from(steps))
}

/// Operations per SM clock over the whole GPU: `ops` in `ms` at `mhz`.
pub fn ops_per_clock(ops: f64, ms: f64, mhz: f64) -> Option<f64> {
    (ms > 0.0 && mhz > 0.0 && ops > 0.0).then(|| ops / (ms * 1e-3 * mhz * 1e6))
}

/// Loop trips for a storm to last about `target_ms`, from a probe of `probe_iterations` trips
/// that took `probe_ms`, between 1 and `max`.
pub fn iterations_for(target_ms: f64, probe_ms: f64, probe_iterations: u32, max: u32) -> u32 {
    if probe_ms <= 0.0 || !probe_ms.is_finite() {
        return max;
    }
    let scaled = target_ms / probe_ms * f64::from(probe_iterations);
    scaled.round().clamp(1.0, f64::from(max)) as u32
}

/// The rate of repeated storms: operations per clock over the GPU and per SM, median and range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StormRate {
    pub per_clock: Summary,
    pub per_clock_per_sm: f64,
}

pub fn storm_rate(ops: f64, ms: &[f64], mhz: f64, sms: u32) -> Option<StormRate> {
    let rates: Option<Vec<f64>> = ms.iter().map(|&t| ops_per_clock(ops, t, mhz)).collect();
    let per_clock = Summary::of(&rates?)?;
    Some(StormRate {
        per_clock,
        per_clock_per_sm: per_clock.median / f64::from(sms.max(1)),
    })
}

/// Where an atomic is served, judged from its latency and the matching L2 load's (ld.global.cg
/// of the same chain) at an L2-resident and a DRAM-resident footprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ServedBy {
    /// It takes at least an L2 load's round trip while the chain is in the L2, and at least
    /// half the load's step once the chain leaves it: it is performed at the L2 (or beyond).
    L2,
    /// Faster than an L2 load: something nearer the SM performs it.
    NearerThanL2,
    /// Neither (or the load shows no step to judge by).
    Unclear,
}

/// How much an atomic adds to an L2 load of the same chain, and where it is performed.
/// `near` and `far` are (atomic, load) cycles per step at the two footprints.
pub fn served_by(near: (f64, f64), far: (f64, f64)) -> (f64, ServedBy) {
    let extra = near.0 - near.1;
    let load_step = far.1 - near.1;
    let atomic_step = far.0 - near.0;
    let verdict = if extra < 0.0 {
        ServedBy::NearerThanL2
    } else if load_step > 0.0 && atomic_step >= 0.5 * load_step {
        ServedBy::L2
    } else {
        ServedBy::Unclear
    };
    (extra, verdict)
}

/// What ptxas made of one atomic kernel: the atomic (or load) instruction of its loop, how many
/// of them the function holds, and whether it is a compare-and-swap loop standing in for an
/// operation the hardware lacks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AtomicSass {
    pub kernel: String,
    pub instruction: Option<String>,
    pub count: usize,
    pub emulated: bool,
}

/// The atomic instruction of every kernel in `sass` (cuobjdump text), from the per-kernel
/// memory-instruction counts: the most frequent atomic or reduction opcode (a load for the
/// load chases) and how many of that kind the function holds; a kernel whose atomic is
/// `ATOMS.CAST.SPIN` is a compare-and-swap loop.
pub fn atomic_instructions(sass: &str) -> Vec<AtomicSass> {
    crate::analysis::sass::memory_instructions(sass)
        .into_iter()
        .map(|(kernel, ops)| {
            let is_atomic = |op: &str| ["ATOM", "RED"].iter().any(|p| op.starts_with(p));
            let wanted = if kernel.ends_with("_load_lat") {
                |op: &str| op.starts_with("LD")
            } else {
                is_atomic
            };
            let best = ops
                .iter()
                .filter(|(op, _)| wanted(op))
                .max_by_key(|(op, n)| (**n, std::cmp::Reverse((*op).clone())));
            AtomicSass {
                emulated: ops.keys().any(|op| op.contains("CAST.SPIN")),
                instruction: best.map(|(op, _)| op.clone()),
                // ptxas may narrow some loads of a chain (LDS for LDS.64 where only the low
                // word forms the address): every load of the kind counts.
                count: ops
                    .iter()
                    .filter(|(op, _)| wanted(op))
                    .map(|(_, n)| n)
                    .sum(),
                kernel,
            }
        })
        .collect()
}

impl AtomicSass {
    /// At least one of the instruction per unrolled step of the loop (`unroll`): no operation
    /// was folded away or merged.
    pub fn as_written(&self, unroll: usize) -> bool {
        self.instruction.is_some() && self.count >= unroll
    }

    /// The instruction as a table shows it: a CAS loop says so.
    pub fn describe(&self) -> Option<String> {
        let op = self.instruction.as_ref()?;
        Some(if self.emulated {
            format!("{op} (compare-and-swap loop)")
        } else {
            op.clone()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chase_and_a_storm_become_cycles_and_operations_per_clock() {
        assert_eq!(cycles_per_step(2048 * 300, 2048), Some(300.0));
        assert_eq!(cycles_per_step(0, 2048), None);
        assert_eq!(cycles_per_step(100, 0), None);
        // 2e9 operations in 1 s at 2000 MHz: one per clock.
        assert_eq!(ops_per_clock(2e9, 1000.0, 2000.0), Some(1.0));
        assert_eq!(ops_per_clock(2e9, 0.0, 2000.0), None);
        let rate = storm_rate(2e9, &[1000.0, 500.0, 2000.0], 2000.0, 4).unwrap();
        assert_eq!(rate.per_clock.median, 1.0);
        assert_eq!((rate.per_clock.min, rate.per_clock.max), (0.5, 2.0));
        assert_eq!(rate.per_clock_per_sm, 0.25);
        assert!(storm_rate(2e9, &[1000.0, 0.0], 2000.0, 4).is_none());
    }

    #[test]
    fn a_probe_scales_to_the_target_duration_within_bounds() {
        assert_eq!(iterations_for(2.0, 0.5, 4, 4096), 16);
        assert_eq!(iterations_for(2.0, 100.0, 4, 4096), 1);
        assert_eq!(iterations_for(2.0, 1e-6, 4, 4096), 4096);
        assert_eq!(iterations_for(2.0, 0.0, 4, 4096), 4096);
    }

    #[test]
    fn an_atomic_that_follows_the_loads_step_is_served_where_the_load_is() {
        // A simulated L2 of 260 cycles and DRAM 600 cycles past it; the atomic adds 40.
        let (extra, by) = served_by((300.0, 260.0), (640.0, 600.0));
        assert_eq!(extra, 40.0);
        assert_eq!(by, ServedBy::L2);
        // An atomic with a flat latency does not follow the load.
        assert_eq!(
            served_by((300.0, 260.0), (305.0, 600.0)).1,
            ServedBy::Unclear
        );
        // No step in the load: nothing to follow.
        assert_eq!(
            served_by((300.0, 260.0), (300.0, 260.0)).1,
            ServedBy::Unclear
        );
    }

    const SASS: &str = "\t\tFunction : atomic_shared_u64_add_lat
        /*0300*/                   LDS.64 R4, [R8] ;                 /* 0x0 */
        /*0310*/                   ATOMS.CAST.SPIN.64 P0, [R8], R4, R6 ; /* 0x0 */
        /*0320*/                   ATOMS.CAST.SPIN.64 P0, [R8], R4, R6 ; /* 0x0 */
\t\tFunction : atomic_global_u32_load_lat
        /*0300*/                   LDG.E.STRONG.GPU R4, desc[UR4][R2.64] ; /* 0x0 */
        /*0310*/                   LDG.E.STRONG.GPU R4, desc[UR4][R2.64] ; /* 0x0 */
\t\tFunction : atomic_global_u32_red_add_thr
        /*0300*/                   REDG.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ; /* 0x0 */
";

    #[test]
    fn the_sass_names_each_kernels_atomic_and_its_cas_loops() {
        let kernels = atomic_instructions(SASS);
        let find = |k: &str| kernels.iter().find(|s| s.kernel == k).unwrap();
        let shared = find("atomic_shared_u64_add_lat");
        assert_eq!(shared.instruction.as_deref(), Some("ATOMS.CAST.SPIN.64"));
        assert!(shared.emulated);
        assert_eq!(
            shared.describe().as_deref(),
            Some("ATOMS.CAST.SPIN.64 (compare-and-swap loop)")
        );
        let load = find("atomic_global_u32_load_lat");
        assert_eq!(load.instruction.as_deref(), Some("LDG.E.STRONG.GPU"));
        assert!(!load.emulated);
        assert!(load.as_written(2) && !load.as_written(16));
        let red = find("atomic_global_u32_red_add_thr");
        assert_eq!(
            (red.instruction.as_deref(), red.count),
            (Some("REDG.E.ADD.STRONG.GPU"), 1)
        );
    }
}

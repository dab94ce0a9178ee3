//! Atomics (cuda/atomics.cu), for issue #17 after the pointer-chase method of Wong et al. 2010
//! (section 4) and the Hopper context of Luo et al. 2024. Latency: one thread chases a chain of
//! indices with the atomic itself (add 0, max 0, min ~0, CAS whose compare no index equals: the
//! atomic returns the next index and leaves memory unchanged), beside the same chase with an
//! L2 load (`ld.global.cg`) or a shared load; global chains at an L2-resident and a
//! DRAM-resident footprint, so the suite can tell whether the atomic's latency follows the L2
//! load's. Throughput: every thread of one 1024-thread block per SM issues atomics with the
//! returned value used (`atom`) or not (`red`), all on one address (the grid's or the block's),
//! one address per block, one per warp, or one per thread; operations per clock from events
//! around the launch at the measured SM clock. Where the words lie decides which L2 slices a
//! global storm contends on, and a DRAM-resident chain's latency moves with its pages: global
//! chains are chased on [`COPIES`] allocations and global storms repeated on
//! [`STORM_PLACEMENTS`] placements, so a figure's range covers where its memory happened to
//! land.

use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;

use super::analysis::{self as atomics, StormRate};
use crate::analysis::stats::Summary;
use crate::error::GpuError;
use crate::experiments::ahead::Ahead;
use crate::experiments::chain::{Order, chain};
use crate::gpu::Gpu;
use crate::gpu::launch::Laps;
use super::launch::{self, AtomicWord};

/// cuda/atomics.cu's unroll of every loop, its shared ring's words and a throughput block.
pub const ATOMIC_UNROLL: u32 = 16;
pub const SHARED_WORDS: u32 = 1024;
pub const BLOCK_THREADS: u32 = 1024;
/// Bytes between the elements of a global chain: one per 128-byte line.
pub const CHAIN_STRIDE_BYTES: u64 = 128;
/// Words between two elements of the shared ring (33 words: a different bank each step).
pub const SHARED_STRIDE_WORDS: u32 = 33;
/// Timed steps of every chase.
pub const STEPS: u32 = 2048;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Space {
    Global,
    Shared,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Width {
    U32,
    U64,
}

impl Width {
    pub fn name(self) -> &'static str {
        match self {
            Width::U32 => "u32",
            Width::U64 => "u64",
        }
    }
}

/// The operations of a latency chase: four atomics and the load they are compared with.
pub const CHASE_OPS: [&str; 5] = ["load", "add", "cas", "min", "max"];
/// The throughput variants: `atom` returns the old value, `red` does not.
pub const VARIANTS: [&str; 7] = [
    "atom_add", "atom_cas", "atom_min", "atom_max", "red_add", "red_min", "red_max",
];

/// Where the threads of a storm aim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Pattern {
    /// Every thread on one address: the whole grid's (global) or the block's (shared).
    OneAddress,
    /// One address per block (global only): contention inside an SM, none between SMs.
    PerBlock,
    /// One address per warp: the 32 lanes of a warp on one word.
    PerWarp,
    /// Every thread its own word, consecutive words across a warp.
    PerThread,
}

impl Pattern {
    /// The kernel's `pattern` argument.
    pub fn code(self) -> u32 {
        match self {
            Pattern::OneAddress => 0,
            Pattern::PerBlock => 1,
            Pattern::PerWarp => 2,
            Pattern::PerThread => 3,
        }
    }

    pub fn describe(self, space: Space) -> &'static str {
        match (self, space) {
            (Pattern::OneAddress, Space::Global) => "one address for the whole GPU",
            (Pattern::OneAddress, Space::Shared) => "one address per block",
            (Pattern::PerBlock, _) => "one address per SM",
            (Pattern::PerWarp, _) => "one address per warp",
            (Pattern::PerThread, _) => "one address per thread",
        }
    }

    pub fn of(space: Space) -> &'static [Pattern] {
        match space {
            Space::Global => &[
                Pattern::OneAddress,
                Pattern::PerBlock,
                Pattern::PerWarp,
                Pattern::PerThread,
            ],
            Space::Shared => &[Pattern::OneAddress, Pattern::PerWarp, Pattern::PerThread],
        }
    }
}

pub fn latency_entry(space: Space, width: Width, op: &str) -> String {
    format!("atomic_{}_{}_{op}_lat", space.name(), width.name())
}

pub fn throughput_entry(space: Space, width: Width, variant: &str) -> String {
    format!("atomic_{}_{}_{variant}_thr", space.name(), width.name())
}

/// Every entry of cuda/atomics.cu.
pub fn entries() -> Vec<String> {
    let mut all = Vec::new();
    for space in [Space::Global, Space::Shared] {
        for width in [Width::U32, Width::U64] {
            all.extend(CHASE_OPS.iter().map(|op| latency_entry(space, width, op)));
            all.extend(VARIANTS.iter().map(|v| throughput_entry(space, width, v)));
        }
    }
    all
}

/// The chase's operand: one that leaves every index in memory as it is (all ones never equals
/// an index, is never below one, and CAS compares with it).
fn chase_value(op: &str) -> u64 {
    match op {
        "cas" | "min" => u64::MAX,
        _ => 0,
    }
}

/// The storm's operand: add 1, CAS 0 over words that hold 0 (every CAS succeeds), min/max 1.
fn storm_value(variant: &str) -> u64 {
    if variant == "atom_cas" { 0 } else { 1 }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chase {
    pub space: Space,
    pub width: Width,
    pub op: &'static str,
    /// Bytes the chain spans (the shared ring: its words).
    pub footprint_bytes: u64,
    /// The median over the chain's copies (global: [`COPIES`] allocations; shared: one).
    pub cycles_per_step: f64,
    /// The fastest and slowest copy, where there are several.
    pub copies_range: Option<(f64, f64)>,
}

/// Separate allocations of every global chain, each chased: a DRAM-resident chain's latency
/// depends on where its pages landed (one 128 MiB chain read 608 to 648 cycles per load in
/// four processes on one H100), so one allocation is no repeatable figure.
pub const COPIES: usize = 3;

/// Placements (2 MiB apart) a global storm is launched on, once each at least: which L2
/// slices the contended words fall in sets the rate. With three, one address per SM read
/// 13.7 to 15.3 ops/clock in one process and 17.0 to 20.2 in the next on one H100, so three
/// pages were not a sample of where the words can land.
pub const STORM_PLACEMENTS: usize = 8;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Storm {
    pub space: Space,
    pub width: Width,
    pub variant: &'static str,
    pub pattern: Pattern,
    pub iterations: u32,
    pub rate: StormRate,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Results {
    pub chases: Vec<Chase>,
    pub storms: Vec<Storm>,
}

/// What a run measures.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Global chain footprints: the first should fit the L2, the last should not.
    pub footprints: Vec<u64>,
    /// Timed launches per storm.
    pub repeats: usize,
    /// How long a storm should last.
    pub storm_ms: f64,
}

trait Word: AtomicWord {
    fn from_u64(v: u64) -> Self;
    fn width() -> Width;
}

impl Word for u32 {
    fn from_u64(v: u64) -> u32 {
        v as u32
    }
    fn width() -> Width {
        Width::U32
    }
}

impl Word for u64 {
    fn from_u64(v: u64) -> u64 {
        v
    }
    fn width() -> Width {
        Width::U64
    }
}

/// A random chain of one element per 128-byte line over `footprint` bytes, as indices of words
/// of type T (the 32-bit chain's word indices, halved for 64-bit words), and the index of the
/// element at each position of the cycle.
fn chain_of<T: Word>(footprint: u64, seed: u64) -> (Vec<T>, Vec<T>) {
    let (words, visit) = chain(footprint, CHAIN_STRIDE_BYTES, Order::Random(seed));
    let per_element = CHAIN_STRIDE_BYTES / 4;
    let (step, divide) = match T::width() {
        Width::U32 => (1, 1),
        Width::U64 => (2, 2),
    };
    let chain = words
        .iter()
        .step_by(step)
        .map(|&w| T::from_u64(u64::from(w) / divide))
        .collect();
    let order = visit
        .iter()
        .map(|&e| T::from_u64(e as u64 * per_element / divide))
        .collect();
    (chain, order)
}

/// The global chains of one width, built on the host ahead of their chases.
type ChainsAhead<T> = Ahead<(Vec<T>, Vec<T>)>;

fn chains_ahead<T: Word + Send + 'static>(plan: &Plan) -> ChainsAhead<T> {
    let jobs = plan
        .footprints
        .iter()
        .map(|&footprint| {
            // Each width its own order, so no chase walks lines another left in the L2.
            let seed = 0x5eed ^ footprint ^ ((T::width() as u64) << 40);
            move || chain_of::<T>(footprint, seed)
        })
        .collect();
    Ahead::start(jobs, 1)
}

/// Every global chain the chases of [`measure`] walk, built on host threads from now on.
pub struct Chains {
    narrow: ChainsAhead<u32>,
    wide: ChainsAhead<u64>,
}

/// Starts building the chains of `plan` (call it before the GPU is open, so they are built
/// while the process waits for the GPU).
pub fn start_chains(plan: &Plan) -> Chains {
    Chains {
        narrow: chains_ahead(plan),
        wide: chains_ahead(plan),
    }
}

fn chases<T: Word>(
    gpu: &mut Gpu,
    plan: &Plan,
    chains: &ChainsAhead<T>,
    out: &mut Vec<Chase>,
) -> Result<()> {
    let width = T::width();
    for &footprint in &plan.footprints {
        let (chain, order) = chains.next()?;
        let elements = order.len() as u64;
        // All copies held at once, so each has pages of its own.
        let copies = (0..COPIES)
            .map(|_| launch::upload_words(gpu, &chain))
            .collect::<Result<Vec<_>, GpuError>>()?;
        // A full warm pass puts an L2-sized chain in the L2; a chain far larger gains nothing
        // from one, so it is warmed no longer than it is timed.
        let warm = elements.min(8 * u64::from(STEPS)) as u32;
        let walked = u64::from(warm + STEPS);
        let laps = Laps {
            warm,
            steps: STEPS,
            deadline: Duration::from_secs(10) + Duration::from_secs_f64(walked as f64 * 4e-6),
        };
        for (k, op) in CHASE_OPS.into_iter().enumerate() {
            // Where the chain is longer than all the chases together, each starts where the
            // last one stopped: none of them finds its lines in the L2 from an earlier one.
            let position = if elements >= walked * CHASE_OPS.len() as u64 {
                k as u64 * walked
            } else {
                0
            };
            let start = order[position as usize];
            let entry = latency_entry(Space::Global, width, op);
            let value = T::from_u64(chase_value(op));
            let mut per_copy = Vec::with_capacity(COPIES);
            for words in &copies {
                let (cycles, _) =
                    launch::atomic_global_latency(gpu, &entry, words, (value, start), laps)?;
                per_copy.push(
                    atomics::cycles_per_step(cycles, STEPS)
                        .with_context(|| format!("{entry} returned no cycles"))?,
                );
            }
            let spread =
                Summary::of(&per_copy).with_context(|| format!("{entry} measured no copy"))?;
            out.push(Chase {
                space: Space::Global,
                width,
                op,
                footprint_bytes: footprint,
                cycles_per_step: spread.median,
                copies_range: Some((spread.min, spread.max)),
            });
        }
    }
    for op in CHASE_OPS {
        let entry = latency_entry(Space::Shared, width, op);
        let value = T::from_u64(chase_value(op));
        let (cycles, _) = launch::atomic_shared_latency(
            gpu,
            &entry,
            value,
            SHARED_STRIDE_WORDS,
            SHARED_WORDS,
            STEPS,
        )?;
        out.push(Chase {
            space: Space::Shared,
            width,
            op,
            footprint_bytes: u64::from(SHARED_WORDS) * size_of::<T>() as u64,
            cycles_per_step: atomics::cycles_per_step(cycles, STEPS)
                .with_context(|| format!("{entry} returned no cycles"))?,
            copies_range: None,
        });
    }
    Ok(())
}

fn storms<T: Word>(
    gpu: &mut Gpu,
    plan: &Plan,
    sms: u32,
    mhz: f64,
    out: &mut Vec<Storm>,
) -> Result<()> {
    let width = T::width();
    for space in [Space::Global, Space::Shared] {
        for variant in VARIANTS {
            let entry = throughput_entry(space, width, variant);
            let value = T::from_u64(storm_value(variant));
            for &pattern in Pattern::of(space) {
                let mut storm = |iterations: u32, placement: usize| -> Result<f64, GpuError> {
                    launch::atomic_throughput(
                        gpu,
                        &entry,
                        space == Space::Global,
                        sms,
                        BLOCK_THREADS,
                        value,
                        pattern.code(),
                        iterations,
                        placement,
                    )
                };
                // The probe also brings the clocks up and the code into the caches. A probe of a
                // few trips is mostly launch overhead, so the trips it asks for can last a few
                // microseconds, where the overhead is most of the time (one H100 run read the
                // per-thread red storm at a quarter of its rate so): grow the storm until it
                // lasts at least half the target.
                const PROBE: u32 = 4;
                const MAX_TRIPS: u32 = 1 << 16;
                let probe_ms = storm(PROBE, 0)?;
                let mut iterations =
                    atomics::iterations_for(plan.storm_ms, probe_ms, PROBE, MAX_TRIPS);
                for _ in 0..4 {
                    let ms = storm(iterations, 0)?;
                    let next = atomics::iterations_for(plan.storm_ms, ms, iterations, MAX_TRIPS);
                    if ms >= 0.5 * plan.storm_ms || next <= iterations {
                        break;
                    }
                    iterations = next;
                }
                // Global storms: each launch on another placement of the words (see
                // [`STORM_PLACEMENTS`]).
                let (launches, placements) = if space == Space::Global {
                    (plan.repeats.max(STORM_PLACEMENTS), STORM_PLACEMENTS)
                } else {
                    (plan.repeats, 1)
                };
                let ms = (0..launches)
                    .map(|r| storm(iterations, r % placements))
                    .collect::<Result<Vec<f64>, GpuError>>()?;
                let ops = f64::from(sms)
                    * f64::from(BLOCK_THREADS)
                    * f64::from(iterations)
                    * f64::from(ATOMIC_UNROLL);
                let rate = atomics::storm_rate(ops, &ms, mhz, sms)
                    .with_context(|| format!("{entry} took no time"))?;
                out.push(Storm {
                    space,
                    width,
                    variant,
                    pattern,
                    iterations,
                    rate,
                });
            }
        }
    }
    Ok(())
}

/// Runs every chase (on `chains`, from [`start_chains`] of `plan`) and storm for 32- and
/// 64-bit words.
pub fn measure(gpu: &mut Gpu, plan: &Plan, chains: Chains, sms: u32, mhz: f64) -> Result<Results> {
    let mut results = Results::default();
    chases(gpu, plan, &chains.narrow, &mut results.chases)?;
    chases(gpu, plan, &chains.wide, &mut results.chases)?;
    storms::<u32>(gpu, plan, sms, mhz, &mut results.storms)?;
    storms::<u64>(gpu, plan, sms, mhz, &mut results.storms)?;
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_in_the_embedded_ptx_and_the_constants_are_the_kernels() {
        let ptx = crate::kernels::module("atomics").unwrap().ptx;
        for entry in entries() {
            assert!(ptx.contains(&format!(".entry {entry}(")), "{entry}");
        }
        assert_eq!(entries().len(), 48);
        let source = include_str!("../../../cuda/atomics.cu");
        for (name, value) in [
            ("ATOMIC_UNROLL", ATOMIC_UNROLL),
            ("SHARED_WORDS", SHARED_WORDS),
        ] {
            assert!(
                source.contains(&format!("#define {name} {value}\n")),
                "{name}"
            );
        }
    }

    #[test]
    fn a_chain_of_either_width_is_one_cycle_through_every_line() {
        let footprint = 64 * 1024;
        for width in [Width::U32, Width::U64] {
            let ((next, order), per_line): ((Vec<u64>, Vec<u64>), u64) = match width {
                Width::U32 => {
                    let (chain, order) = chain_of::<u32>(footprint, 7);
                    let wide = |v: Vec<u32>| v.into_iter().map(u64::from).collect();
                    ((wide(chain), wide(order)), 32)
                }
                Width::U64 => (chain_of::<u64>(footprint, 7), 16),
            };
            let lines = footprint / CHAIN_STRIDE_BYTES;
            let mut at = 0_u64;
            let mut seen = std::collections::BTreeSet::new();
            for position in 0..lines {
                assert_eq!(at, order[position as usize], "{width:?}: order");
                assert_eq!(at % per_line, 0, "{width:?}: off a line start");
                assert!(seen.insert(at), "{width:?}: {at} visited twice");
                at = next[at as usize];
            }
            assert_eq!(at, 0, "{width:?}: not one cycle");
            assert_eq!(seen.len() as u64, lines);
        }
    }

    #[test]
    fn the_chase_operands_leave_every_index_unchanged() {
        let index = 12_345_u64;
        for op in CHASE_OPS {
            let v = chase_value(op);
            let after = match op {
                "add" => index + v,
                "cas" => {
                    if index == v {
                        v
                    } else {
                        index
                    }
                }
                "min" => index.min(v),
                "max" => index.max(v),
                _ => index,
            };
            assert_eq!(after, index, "{op}");
            // The same holds for 32-bit words, where the operand is truncated.
            let v32 = v as u32;
            let i32 = index as u32;
            let after32 = match op {
                "add" => i32.wrapping_add(v32),
                "min" => i32.min(v32),
                "max" => i32.max(v32),
                _ => i32,
            };
            assert_eq!(after32, i32, "{op} u32");
        }
    }
}

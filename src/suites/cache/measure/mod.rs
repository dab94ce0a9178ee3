//! Memory-hierarchy pointer chase (cuda/cache.cu), after Wong et al., "Inferring cache
//! characteristics from latency plots" (Fig. 4) and Listings 1–2: one thread follows a chain
//! of fixed stride through a footprint, one untimed pass warms the caches, a timed run of at
//! least one full pass gives the average cycles per load, and the final element is checked.
//! The L2 space's address-order chase has its warm pass made by a whole block and times at
//! most the first [`L2_TIMED_SPAN_BYTES`] of the chain ([`measure_point`]).
//! The chains are load-to-use: the global spaces and tlb chase 64-bit addresses (`p = *p`),
//! shared chases shared-window addresses, constant byte offsets, texture element indices, so
//! no address arithmetic sits between two loads (the run checks this in the SASS:
//! [`Space::expected_loads`]). The word-index chase gpubench used before survives as
//! [`measure_index_chase`], to report what the arithmetic cost.
//!
//! Sweeps: [`COARSE_PER_DOUBLING`] geometric points in every doubling from the smallest
//! footprint to the largest come first, so no level can fall between two samples; then each
//! rise between them ([`RiseThreshold`], per space) gets a bisection for where the clear rise
//! is, a second with a tenth of the threshold for where it starts, a third for where it ends
//! (all rises' bisections side by side, so a probe that compiles prepares them in one batch),
//! and `fine_points` points across the whole rise (a stride apart where they reach). A rise
//! still climbing at the largest footprint, or past the point budget, is listed as
//! unresolved. `analysis::cache_inference` reads the levels from the result.
//!
//! Spaces: `global` (default loads), `l2` (`ld.global.cg`), `readonly` (`ld.global.nc`),
//! `shared`, `constant` (the 64 KiB `__constant__` array, index in a per-thread register:
//! LDC), `constant-uniform` (the same with a warp-uniform index: ULDC), `texture`
//! (`tex1Dfetch` through a texture object over linear memory), `instruction`
//! ([`instruction`]: straight-line code of growing size) and `tlb` ([`tlb`]: page-scale strides
//! over GiBs). Chains visit the footprint's elements in address order (Wong), or in a seeded
//! random order that defeats prefetching. The global spaces also run with several threads at
//! once (contention) and per load ([`per_load`], after Mei & Chu). [`conflict`] runs the
//! fixed-stride conflict experiment; [`partitions`] the first touch of L2 lines from every
//! SM; [`saved`] reads a curve back for `gpubench analyze cache`.

pub mod conflict;
mod footprints;
pub mod instruction;
pub mod partition_launch;
pub mod partitions;
pub mod per_load;
pub mod saved;
pub mod tlb;

#[cfg(test)]
mod fit_tests;

pub use crate::experiments::chain::{Order, chain};
pub use footprints::*;

use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use crate::analysis::cache_inference::ChasePoint;
use crate::gpu::Gpu;
use crate::gpu::launch::Laps;
use crate::suites::cache::launch;

/// A memory space the chase walks: `--space`'s values (clap's names are [`Space::name`]'s)
/// and what settings record. (Its variants' notes are plain comments: `--space`'s own help
/// says what each is, and clap would list them again.)
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Space {
    Global,
    L2,
    Readonly,
    Shared,
    // Constant memory with the index in a per-thread register (`LDC`): the constant caches.
    Constant,
    // Constant memory with a warp-uniform index (`ULDC`): the uniform datapath's own path.
    ConstantUniform,
    // `tex1Dfetch` through a texture object over linear memory.
    Texture,
    // Instruction fetch: straight-line kernels of growing code size.
    Instruction,
    // Address translation: one element per page-scale stride, footprints of GiBs.
    Tlb,
}

impl Space {
    /// The space named `name` ([`Space::name`]).
    pub fn from_name(name: &str) -> Option<Space> {
        <Space as clap::ValueEnum>::from_str(name, false).ok()
    }

    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::L2 => "l2",
            Space::Readonly => "readonly",
            Space::Shared => "shared",
            Space::Constant => "constant",
            Space::ConstantUniform => "constant-uniform",
            Space::Texture => "texture",
            Space::Instruction => "instruction",
            Space::Tlb => "tlb",
        }
    }

    /// Whether a chain of this space is walked in descending order beside the ascending
    /// sweep (host-built chains of the data spaces; not the L2's, the TLB's or the code's).
    pub fn descends(self) -> bool {
        matches!(
            self,
            Space::Global
                | Space::Readonly
                | Space::Shared
                | Space::Constant
                | Space::ConstantUniform
                | Space::Texture
        )
    }

    /// Whether the space's chase kernel runs on several threads (`--threads`) and per load.
    pub fn global_loads(self) -> bool {
        matches!(self, Space::Global | Space::L2 | Space::Readonly)
    }

    /// The SASS load opcodes (whole, suffixes included: they name the path) the timed loop of
    /// this space's chase may execute; anything else means the compiler chose another path and
    /// the run says so.
    pub fn expected_loads(self) -> &'static [&'static str] {
        match self {
            Space::Global => &["LDG.E.64"],
            Space::L2 | Space::Tlb => &["LDG.E.64.STRONG.GPU", "LDG.E.64.EF", "LDG.E.64.STRONG.SM"],
            Space::Readonly => &["LDG.E.64.CONSTANT"],
            Space::Shared => &["LDS"],
            Space::Constant => &["LDC"],
            Space::ConstantUniform => &["ULDC"],
            Space::Texture => &["TLD", "TEX", "TLD.LZ"],
            Space::Instruction => &[],
        }
    }

    pub fn entry(self) -> &'static str {
        match self {
            Space::Global => "chase_global",
            Space::L2 => "chase_l2",
            Space::Readonly => "chase_readonly",
            Space::Shared => "chase_shared",
            Space::Constant => "chase_constant",
            Space::ConstantUniform => "chase_constant_uniform",
            Space::Texture => "chase_texture",
            Space::Instruction => instruction::ENTRY,
            Space::Tlb => "chase_tlb",
        }
    }
}

/// The file of a run's descending chase, beside its `chase.csv`.
pub const DESCENDING_CSV: &str = "chase-descending.csv";

/// Levels up to this size are chased again in descending order, at this many footprints on
/// each side of their rise: enough for both plateaus' medians, a few milliseconds a level
/// (the L2 and the TLB are larger, and their chains are built on the device in address
/// order).
pub const DESCENDING_LARGEST_LEVEL: u64 = 4 << 20;
pub const DESCENDING_PER_SIDE: usize = 4;

/// The descending chase beside an ascending sweep over `swept` that read levels of
/// `level_sizes`: each of their [`descending_footprints`] chased in [`Order::Descending`].
pub fn chase_descending(
    gpu: &mut Gpu,
    space: Space,
    threads: u32,
    level_sizes: &[u64],
    swept: &[u64],
    stride_bytes: u64,
    l2_span_bytes: u64,
) -> Result<Vec<ChasePoint>> {
    descending_footprints(
        level_sizes,
        swept,
        DESCENDING_LARGEST_LEVEL,
        DESCENDING_PER_SIDE,
    )
    .into_iter()
    .map(|footprint| {
        let cycles = measure_point(
            gpu,
            space,
            Order::Descending,
            threads,
            footprint,
            stride_bytes,
            l2_span_bytes,
        )?;
        Ok(ChasePoint {
            footprint_bytes: footprint,
            stride_bytes,
            cycles,
        })
    })
    .collect()
}

/// Where to chase a second time in descending order, to tell a next-line prefetcher from a
/// longer line (`analysis::cache_inference::infer_paired`): for each level of at most
/// `largest_level` bytes, up to `per_side` of the swept footprints between a quarter of its
/// size and the size, and as many between twice and four times it (the plateaus on either
/// side of its rise), every k-th of those swept there counting down from the highest.
pub fn descending_footprints(
    level_sizes: &[u64],
    swept: &[u64],
    largest_level: u64,
    per_side: usize,
) -> Vec<u64> {
    let mut chosen = Vec::new();
    for &size in level_sizes.iter().filter(|&&s| s > 0 && s <= largest_level) {
        for (from, to) in [(size / 4, size), (2 * size, 4 * size)] {
            let inside: Vec<u64> = swept
                .iter()
                .copied()
                .filter(|f| (from..=to).contains(f))
                .collect();
            let step = inside.len().div_ceil(per_side.max(1)).max(1);
            chosen.extend(inside.iter().rev().step_by(step));
        }
    }
    chosen.sort_unstable();
    chosen.dedup();
    chosen
}

/// The index a chase from 0 reaches after `loads` loads.
pub fn expected_index(visit: &[usize], stride_bytes: u64, loads: u64) -> i64 {
    let k = (stride_bytes / 4).max(1) as usize;
    (visit[(loads % visit.len() as u64) as usize] * k) as i64
}

/// A chase's passes over `elements`: one warm pass, then at least one full timed pass (at
/// least 2048 loads, a multiple of the 16 loads each timed loop holds), and a deadline of 10 s
/// plus `ns_per_load` for every load.
pub fn chase_passes(elements: u32, ns_per_load: f64) -> Laps {
    let steps = elements.max(2048).div_ceil(16) * 16;
    let loads = f64::from(elements) + f64::from(steps);
    let deadline = Duration::from_secs(10) + Duration::from_secs_f64(loads * ns_per_load / 1e9);
    Laps {
        warm: elements,
        steps,
        deadline,
    }
}

/// Cycles per load at one footprint: a full warm pass, then at least one full timed pass.
/// With `threads` > 1 (global spaces only) thread t starts t/threads of the way round the chain
/// and the result is the mean over threads. The L2 space with one thread times at most
/// `l2_span_bytes` of the chain ([`measure_block_warmed_point`]).
pub fn measure_point(
    gpu: &mut Gpu,
    space: Space,
    order: Order,
    threads: u32,
    footprint_bytes: u64,
    stride_bytes: u64,
    l2_span_bytes: u64,
) -> Result<f64> {
    // Address-order chains of the pointer chases and the texture's are built on the device,
    // with no host copy.
    if order == Order::Stride
        && matches!(space, Space::Global | Space::L2 | Space::Readonly)
        && stride_bytes.is_multiple_of(8)
    {
        return measure_stride_point(
            gpu,
            space,
            threads,
            footprint_bytes,
            stride_bytes,
            l2_span_bytes,
        );
    }
    if order == Order::Stride && space == Space::Texture && stride_bytes.is_multiple_of(4) {
        let n = (footprint_bytes / stride_bytes).max(1);
        let laps = chase_passes(u32::try_from(n)?, 2000.0);
        let result = launch::chase_texture_stride(gpu, (n, stride_bytes), laps)?;
        let expected = (laps.loads() % n * stride_bytes / 4) as i64;
        return cycles_per_load(space, footprint_bytes, &[result], [expected], laps.steps);
    }
    let (chain, visit) = chain(footprint_bytes, stride_bytes, order);
    let n = visit.len() as u32;
    let laps = chase_passes(n, 2000.0);
    let loads = laps.loads();
    let positions: Vec<u64> = (0..u64::from(threads))
        .map(|t| t * u64::from(n) / u64::from(threads))
        .collect();
    let results = match space {
        Space::Shared => vec![launch::chase_shared(gpu, &chain, laps)?],
        Space::Constant | Space::ConstantUniform => {
            vec![launch::chase_constant(gpu, space.entry(), &chain, laps)?]
        }
        Space::Texture => vec![launch::chase_texture(gpu, &chain, laps)?],
        Space::Global | Space::L2 | Space::Readonly => {
            let starts: Vec<u32> = positions
                .iter()
                .map(|&p| expected_index(&visit, stride_bytes, p) as u32)
                .collect();
            launch::chase(gpu, space.entry(), &chain, &starts, laps)?
        }
        Space::Instruction | Space::Tlb => bail!("the {} space has its own sweep", space.name()),
    };
    let expected = positions
        .iter()
        .map(|&position| expected_index(&visit, stride_bytes, position + loads));
    cycles_per_load(space, footprint_bytes, &results, expected, laps.steps)
}

/// Cycles per timed load, the mean over threads, once every thread is shown to have ended on
/// the word `expected` says (else the loads were not all made).
fn cycles_per_load(
    space: Space,
    footprint_bytes: u64,
    results: &[(i64, i64)],
    expected: impl IntoIterator<Item = i64>,
    steps: u32,
) -> Result<f64> {
    for (&(_, index), expected) in results.iter().zip(expected) {
        if index != expected {
            bail!(
                "the {} chase over {footprint_bytes} B ended at index {index}, not {expected}: the loads were not all made",
                space.name()
            );
        }
    }
    let total: i64 = results.iter().map(|&(cycles, _)| cycles).sum();
    Ok(total as f64 / results.len() as f64 / f64::from(steps))
}

/// [`measure_point`] for an address-order pointer chase: the same warm and timed passes, the
/// chain built on the device.
fn measure_stride_point(
    gpu: &mut Gpu,
    space: Space,
    threads: u32,
    footprint_bytes: u64,
    stride_bytes: u64,
    l2_span_bytes: u64,
) -> Result<f64> {
    let n = (footprint_bytes / stride_bytes).max(1);
    if space == Space::L2 && threads == 1 {
        return measure_block_warmed_point(gpu, footprint_bytes, n, stride_bytes, l2_span_bytes);
    }
    let n32 = u32::try_from(n)?;
    let laps = chase_passes(n32, 2000.0);
    let loads = laps.loads();
    let starts: Vec<u64> = (0..u64::from(threads))
        .map(|t| t * n / u64::from(threads))
        .collect();
    let results = launch::chase_stride(gpu, space.entry(), (n, stride_bytes), &starts, laps)?;
    let expected = starts
        .iter()
        .map(|&start| ((start + loads) % n * stride_bytes / 4) as i64);
    cycles_per_load(space, footprint_bytes, &results, expected, laps.steps)
}

/// How much of the chain the L2 space's timed loads cover at most by default (`cache
/// --timed-span-mib`): that many bytes of its addresses from element 0 (the whole chain when
/// it is shorter). Measured side by side on an H100, the window moved no latency; at 16 MiB
/// the onset of the first rise, which lies past 16 MiB there, came out 1.3 MiB apart in two
/// runs, so the default leaves every footprint up to 32 MiB whole.
pub const L2_TIMED_SPAN_BYTES: u64 = 32 << 20;

/// [`measure_stride_point`] for the L2 space with one thread: the warm pass made by a whole
/// block, then one thread's timed loads from element 0 over the first `span_bytes` of the
/// chain (at least 2048 loads, at most one pass). Each timed load's element was last
/// read in the warm pass, with every other element read in between, in the same order as in
/// a full timed pass, so it hits or misses as it would there; the window averages fewer of them.
fn measure_block_warmed_point(
    gpu: &mut Gpu,
    footprint_bytes: u64,
    n: u64,
    stride_bytes: u64,
    span_bytes: u64,
) -> Result<f64> {
    let window = (span_bytes / stride_bytes).max(2048);
    let steps = n.max(2048).min(window).div_ceil(16) * 16;
    let steps32 = u32::try_from(steps)?;
    let deadline = chase_passes(steps32, 2000.0).deadline;
    let result = launch::chase_l2_block_warmed(gpu, n, stride_bytes, steps32, deadline)?;
    let expected = (steps % n * stride_bytes / 4) as i64;
    cycles_per_load(Space::L2, footprint_bytes, &[result], [expected], steps32)
}

/// Cycles per load of the global chase written with 32-bit word indices (`j = chain[j]`, the
/// chase gpubench used before the pointer chase) at one footprint: the difference to the
/// pointer chase there is the index arithmetic the old figure counted as the load's.
pub fn measure_index_chase(gpu: &mut Gpu, footprint_bytes: u64, stride_bytes: u64) -> Result<f64> {
    let (chain, visit) = chain(footprint_bytes, stride_bytes, Order::Stride);
    let n = visit.len() as u32;
    let laps = chase_passes(n, 2000.0);
    let (cycles, index) = launch::chase_index(gpu, &chain, laps)?;
    let expected = expected_index(&visit, stride_bytes, laps.loads());
    if index != expected {
        bail!("the index chase over {footprint_bytes} B ended at index {index}, not {expected}");
    }
    Ok(cycles as f64 / f64::from(laps.steps))
}

/// The stride sweep that shows a fetch granularity (`analysis::granularity`: a line, a sector,
/// a page) when `footprint` is past the level's capacity: cycles per load, from `measure`, for
/// each of `strides` that leaves at least `min_elements` elements, as (stride, cycles).
pub fn stride_sweep(
    footprint: u64,
    strides: impl IntoIterator<Item = u64>,
    min_elements: u64,
    mut measure: impl FnMut(u64) -> Result<f64>,
) -> Result<Vec<(u64, f64)>> {
    let mut points = Vec::new();
    for stride in strides {
        if footprint / stride >= min_elements {
            points.push((stride, measure(stride)?));
        }
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--space`'s values, the settings' names and [`Space::name`] are one list.
    #[test]
    fn every_space_is_named_as_clap_and_the_settings_name_it() {
        for &space in <Space as clap::ValueEnum>::value_variants() {
            let clap = clap::ValueEnum::to_possible_value(&space).unwrap();
            assert_eq!(clap.get_name(), space.name());
            assert_eq!(Space::from_name(space.name()), Some(space));
            assert_eq!(
                serde_json::to_value(space).unwrap(),
                serde_json::Value::from(space.name())
            );
        }
    }

    #[test]
    fn chains_visit_every_element_once_per_pass() {
        let (chain, visit) = chain(256, 32, Order::Stride);
        assert_eq!(chain.len(), 64);
        let mut seen = vec![];
        let mut j = 0_usize;
        for _ in 0..8 {
            seen.push(j);
            j = chain[j] as usize;
        }
        assert_eq!(seen, vec![0, 8, 16, 24, 32, 40, 48, 56]);
        assert_eq!(j, 0, "back to the start after one pass");
        assert_eq!(expected_index(&visit, 32, 8), 0);
        assert_eq!(expected_index(&visit, 32, 11), 24);
        assert!(chain.iter().all(|&i| (i as usize) < chain.len()));
    }

    #[test]
    fn descending_chains_walk_down_from_the_top() {
        let (chain, visit) = chain(256, 32, Order::Descending);
        assert_eq!(visit, vec![0, 7, 6, 5, 4, 3, 2, 1]);
        let mut j = 0_usize;
        let mut seen = vec![];
        for step in 0..8 {
            assert_eq!(j as i64, expected_index(&visit, 32, step));
            seen.push(j);
            j = chain[j] as usize;
        }
        assert_eq!(seen, vec![0, 56, 48, 40, 32, 24, 16, 8]);
        assert_eq!(j, 0);
    }

    #[test]
    fn descending_footprints_sit_on_both_plateaus_of_each_small_level() {
        let swept: Vec<u64> = (1..=64).map(|k| k * 1024).collect();
        let chosen = descending_footprints(&[8 << 10, 1 << 30], &swept, 1 << 20, 3);
        let below = chosen.iter().filter(|&&f| (2 << 10..=8 << 10).contains(&f));
        let above = chosen
            .iter()
            .filter(|&&f| (16 << 10..=32 << 10).contains(&f));
        assert_eq!(below.count(), 3, "{chosen:?}");
        assert_eq!(above.count(), 3, "{chosen:?}");
        assert_eq!(chosen.len(), 6, "the level past the largest is left out");
        assert!(chosen.contains(&(8 << 10)) && chosen.contains(&(32 << 10)));
    }

    #[test]
    fn random_chains_are_one_cycle_through_every_element() {
        let (chain, visit) = chain(4096, 64, Order::Random(7));
        let n = visit.len();
        assert_eq!(n, 64);
        let mut seen = std::collections::BTreeSet::new();
        let mut j = 0_usize;
        for step in 0..n {
            assert_eq!(j as i64, expected_index(&visit, 64, step as u64));
            assert!(seen.insert(j), "element {j} visited twice");
            j = chain[j] as usize;
        }
        assert_eq!(j, 0);
        assert_ne!(visit, (0..n).collect::<Vec<_>>(), "the order is shuffled");
        assert_eq!(
            super::chain(4096, 64, Order::Random(7)).1,
            visit,
            "and repeatable"
        );
    }
}

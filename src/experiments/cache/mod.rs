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
//! fixed-stride conflict experiment; [`saved`] reads a curve back for `gpubench analyze
//! cache`.

pub mod conflict;
pub mod instruction;
pub mod per_load;
pub mod saved;
pub mod tlb;

#[cfg(test)]
mod fit_tests;

use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use crate::analysis::cache_inference::ChasePoint;
use crate::gpu::{Gpu, launch};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Global,
    L2,
    Readonly,
    Shared,
    /// Constant memory with the index in a per-thread register (`LDC`): the constant caches.
    Constant,
    /// Constant memory with a warp-uniform index (`ULDC`): the uniform datapath's own path.
    ConstantUniform,
    /// `tex1Dfetch` through a texture object over linear memory.
    Texture,
    /// Instruction fetch: straight-line kernels of growing code size.
    Instruction,
    /// Address translation: one element per page-scale stride, footprints of GiBs.
    Tlb,
}

impl Space {
    /// The space named `name` ([`Space::name`]).
    pub fn from_name(name: &str) -> Option<Space> {
        [
            Space::Global,
            Space::L2,
            Space::Readonly,
            Space::Shared,
            Space::Constant,
            Space::ConstantUniform,
            Space::Texture,
            Space::Instruction,
            Space::Tlb,
        ]
        .into_iter()
        .find(|s| s.name() == name)
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

/// The order a chain visits its elements in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Address order, one element per stride (Wong et al.).
    Stride,
    /// A seeded random order of the same elements, starting at element 0.
    Random(u64),
}

/// A chain over `footprint_bytes` with one element every `stride_bytes` (both multiples of
/// 4), visited in `order`; k = stride / 4 words, n = footprint / stride elements; words between
/// elements are 0. Returns the words and the visiting order (element numbers, starting at 0).
pub fn chain(footprint_bytes: u64, stride_bytes: u64, order: Order) -> (Vec<u32>, Vec<usize>) {
    use rand::seq::SliceRandom;
    use rand::{SeedableRng, rngs::StdRng};
    let words = (footprint_bytes / 4) as usize;
    let k = (stride_bytes / 4).max(1) as usize;
    let n = (words / k).max(1);
    let mut visit: Vec<usize> = (0..n).collect();
    if let Order::Random(seed) = order {
        visit[1..].shuffle(&mut StdRng::seed_from_u64(seed));
    }
    let mut chain = vec![0_u32; words.max(1)];
    for i in 0..n {
        chain[visit[i] * k] = (visit[(i + 1) % n] * k) as u32;
    }
    (chain, visit)
}

/// The index a chase from 0 reaches after `loads` loads.
pub fn expected_index(visit: &[usize], stride_bytes: u64, loads: u64) -> i64 {
    let k = (stride_bytes / 4).max(1) as usize;
    (visit[(loads % visit.len() as u64) as usize] * k) as i64
}

/// A chase's passes over `elements`: one warm pass, then at least one full timed pass (at
/// least 2048 loads, a multiple of the 16 loads each timed loop holds), and a deadline of 10 s
/// plus `ns_per_load` for every load.
pub fn chase_passes(elements: u32, ns_per_load: f64) -> (u32, u32, Duration) {
    let steps = elements.max(2048).div_ceil(16) * 16;
    let loads = f64::from(elements) + f64::from(steps);
    let deadline = Duration::from_secs(10) + Duration::from_secs_f64(loads * ns_per_load / 1e9);
    (elements, steps, deadline)
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
        let (warm, steps, deadline) = chase_passes(u32::try_from(n)?, 2000.0);
        let result = launch::chase_texture_stride(gpu, n, stride_bytes, warm, steps, deadline)?;
        let expected = (u64::from(warm + steps) % n * stride_bytes / 4) as i64;
        return cycles_per_load(space, footprint_bytes, &[result], [expected], steps);
    }
    let (chain, visit) = chain(footprint_bytes, stride_bytes, order);
    let n = visit.len() as u32;
    let (warm, steps, deadline) = chase_passes(n, 2000.0);
    let loads = u64::from(warm + steps);
    let positions: Vec<u64> = (0..u64::from(threads))
        .map(|t| t * u64::from(n) / u64::from(threads))
        .collect();
    let results = match space {
        Space::Shared => vec![launch::chase_shared(gpu, &chain, warm, steps, deadline)?],
        Space::Constant | Space::ConstantUniform => vec![launch::chase_constant(
            gpu,
            space.entry(),
            &chain,
            warm,
            steps,
            deadline,
        )?],
        Space::Texture => vec![launch::chase_texture(gpu, &chain, warm, steps, deadline)?],
        Space::Global | Space::L2 | Space::Readonly => {
            let starts: Vec<u32> = positions
                .iter()
                .map(|&p| expected_index(&visit, stride_bytes, p) as u32)
                .collect();
            launch::chase(gpu, space.entry(), &chain, &starts, warm, steps, deadline)?
        }
        Space::Instruction | Space::Tlb => bail!("the {} space has its own sweep", space.name()),
    };
    let expected = positions
        .iter()
        .map(|&position| expected_index(&visit, stride_bytes, position + loads));
    cycles_per_load(space, footprint_bytes, &results, expected, steps)
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
    let (warm, steps, deadline) = chase_passes(n32, 2000.0);
    let loads = u64::from(warm + steps);
    let starts: Vec<u64> = (0..u64::from(threads))
        .map(|t| t * n / u64::from(threads))
        .collect();
    let results = launch::chase_stride(
        gpu,
        space.entry(),
        n,
        stride_bytes,
        &starts,
        warm,
        steps,
        deadline,
    )?;
    let expected = starts
        .iter()
        .map(|&start| ((start + loads) % n * stride_bytes / 4) as i64);
    cycles_per_load(space, footprint_bytes, &results, expected, steps)
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
    let (_, _, deadline) = chase_passes(steps32, 2000.0);
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
    let (warm, steps, deadline) = chase_passes(n, 2000.0);
    let (cycles, index) = launch::chase_index(gpu, &chain, warm, steps, deadline)?;
    let expected = expected_index(&visit, stride_bytes, u64::from(warm + steps));
    if index != expected {
        bail!("the index chase over {footprint_bytes} B ended at index {index}, not {expected}");
    }
    Ok(cycles as f64 / f64::from(steps))
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

#[derive(Debug, Clone)]
pub struct SweepResult {
    pub points: Vec<ChasePoint>,
    pub launches: usize,
    pub seconds: f64,
    /// Doublings `[from, to)` whose curve rises but that the sweep did not sample densely (the
    /// point budget ran out, or the last doubling still rises: a level may lie past it).
    pub unresolved: Vec<Unresolved>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Unresolved {
    pub from_bytes: u64,
    pub to_bytes: u64,
    pub why: String,
}

/// What counts as a rise between two coarse points: more than `relative` × the lower latency
/// plus `absolute` cycles. Caches in front of memory step by tens of percent; instruction fetch
/// (about one cycle per instruction) and translation (a few cycles on a few hundred) by less.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RiseThreshold {
    pub relative: f64,
    pub absolute: f64,
}

impl RiseThreshold {
    pub fn of(space: Space) -> RiseThreshold {
        match space {
            Space::Instruction => RiseThreshold {
                relative: 0.05,
                absolute: 0.05,
            },
            Space::Tlb => RiseThreshold {
                relative: 0.0,
                absolute: 2.5,
            },
            _ => RiseThreshold {
                relative: 0.05,
                absolute: 2.0,
            },
        }
    }

    /// The same threshold as the rise a level needs in `analysis::cache_inference`.
    pub fn minimum_rise(self) -> crate::analysis::cache_inference::MinimumRise {
        crate::analysis::cache_inference::MinimumRise {
            relative: self.relative,
            absolute: self.absolute,
        }
    }

    fn rises(self, low: f64, high: f64) -> bool {
        high > low * (1.0 + self.relative) + self.absolute
    }

    /// A tenth of the rise threshold: the first, small steps of a cache overflowing set by set.
    fn starts_rising(self, low: f64, high: f64) -> bool {
        high > low * (1.0 + self.relative / 10.0) + self.absolute / 10.0
    }
}

/// Coarse points per doubling: every doubling is sampled this often before any rise is refined,
/// so no level between the smallest and largest footprint can fall between two samples.
pub const COARSE_PER_DOUBLING: u32 = 4;

/// The most points one sweep measures; rises past it are listed as unresolved.
pub const POINT_BUDGET: usize = 1500;

/// The coarse grid: `per_doubling` geometric points in every doubling from `smallest` to
/// `largest` (both included), rounded to multiples of `stride`.
pub fn coarse_grid(stride: u64, smallest: u64, largest: u64, per_doubling: u32) -> Vec<u64> {
    let mut grid = Vec::new();
    let mut base = smallest;
    while base <= largest {
        for k in 0..per_doubling {
            let f = base as f64 * 2f64.powf(f64::from(k) / f64::from(per_doubling));
            let f = ((f / stride as f64).round() as u64).max(1) * stride;
            if f <= largest && grid.last().is_none_or(|&last| f > last) {
                grid.push(f);
            }
        }
        match base.checked_mul(2) {
            Some(next) => base = next,
            None => break,
        }
    }
    if grid.last() != Some(&largest) && largest.is_multiple_of(stride) {
        grid.push(largest);
    }
    grid
}

/// What a sweep measures with: cycles per load at a footprint, and, where measuring a
/// footprint needs costly preparation (the instruction space compiles a kernel per size), a
/// batch of footprints it will probably ask for next, to prepare together.
pub trait Probe {
    fn measure(&mut self, footprint: u64) -> Result<f64>;

    fn prepare(&mut self, _footprints: &[u64]) -> Result<()> {
        Ok(())
    }
}

impl<F: FnMut(u64) -> Result<f64>> Probe for F {
    fn measure(&mut self, footprint: u64) -> Result<f64> {
        self(footprint)
    }
}

/// Coarse grid over every doubling, then at each rise bisection and dense sampling, measuring
/// each footprint (a multiple of `stride`) once with `measure`, which returns cycles per load.
pub fn sweep(
    threshold: RiseThreshold,
    stride: u64,
    smallest: u64,
    largest: u64,
    fine_points: u64,
    mut measure_footprint: impl FnMut(u64) -> Result<f64>,
) -> Result<SweepResult> {
    sweep_with(
        threshold,
        Grid {
            stride,
            relative_resolution: 0.0,
        },
        smallest,
        largest,
        fine_points,
        &mut measure_footprint,
    )
}

/// Where a sweep measures: multiples of `stride`; bisections stop once they bracket an edge
/// to within `relative_resolution` of its footprint (or one stride, if that is more).
#[derive(Debug, Clone, Copy)]
pub struct Grid {
    pub stride: u64,
    pub relative_resolution: f64,
}

/// The midpoints the next `depth` steps of a bisection between `good` and `bad` (in strides)
/// may measure, whichever way each step goes.
fn bisection_midpoints(good: u64, bad: u64, depth: u32, into: &mut Vec<u64>) {
    if depth == 0 || bad - good <= 1 {
        return;
    }
    let middle = (good + bad) / 2;
    into.push(middle);
    bisection_midpoints(good, middle, depth - 1, into);
    bisection_midpoints(middle, bad, depth - 1, into);
}

/// Bisection steps prepared at once when `bisections` advance side by side: each prepares
/// 2^depth − 1 midpoints, and together they fill the host's cores up to four times over. A
/// round of compiles lasts at least as long as its largest kernel (0.8 s for the 185 KiB
/// kernels at the H100's second instruction-cache rise), so more waves of smaller ones cost
/// little: replaying the committed H100 instruction sweep with the driver's measured cost
/// (64 µs per instruction) on 16 cores, 6 rounds took 5.4 s where filling them twice over
/// took 7 rounds and 6.3 s; eight times over, 4 rounds took 8.8 s.
fn lookahead_depth(cores: usize, bisections: usize) -> u32 {
    let per = (4 * cores / bisections.max(1)) + 1;
    (usize::BITS - per.leading_zeros()).saturating_sub(1).max(1)
}

/// Which side of an edge a latency lies on, for one bisection.
#[derive(Debug, Clone, Copy)]
enum Edge {
    /// Past a clear rise above the plateau at the given latency.
    Rises(f64),
    /// Past the first small step above it (a tenth of the threshold).
    StartsRising(f64),
    /// At or past the given latency, near the top of the rise.
    Reaches(f64),
}

/// A bisection in strides: `good` is before the edge, `bad` past it.
#[derive(Debug, Clone, Copy)]
struct Bisection {
    good: u64,
    bad: u64,
    edge: Edge,
}

impl Bisection {
    fn past(&self, threshold: RiseThreshold, y: f64) -> bool {
        match self.edge {
            Edge::Rises(low) => threshold.rises(low, y),
            Edge::StartsRising(low) => threshold.starts_rising(low, y),
            Edge::Reaches(top) => y >= top,
        }
    }
}

/// [`sweep`] on a [`Grid`] with any [`Probe`]. The points measured are the same whether or
/// not the probe prepares ahead.
pub fn sweep_with(
    threshold: RiseThreshold,
    grid: Grid,
    smallest: u64,
    largest: u64,
    fine_points: u64,
    probe: &mut dyn Probe,
) -> Result<SweepResult> {
    let cores = std::thread::available_parallelism().map_or(4, usize::from);
    sweep_on_cores(
        threshold,
        grid,
        (smallest, largest),
        fine_points,
        probe,
        cores,
    )
}

/// [`sweep_with`] preparing ahead for `cores` host cores.
fn sweep_on_cores(
    threshold: RiseThreshold,
    grid: Grid,
    (smallest, largest): (u64, u64),
    fine_points: u64,
    probe: &mut dyn Probe,
    cores: usize,
) -> Result<SweepResult> {
    let Grid {
        stride,
        relative_resolution,
    } = grid;
    // The widest bracket a bisection may stop at, in strides.
    let close_enough = |good: u64| ((good as f64 * relative_resolution) as u64).max(1);
    let started = Instant::now();
    let mut points: Vec<ChasePoint> = Vec::new();
    let measure =
        |probe: &mut dyn Probe, footprint: u64, points: &mut Vec<ChasePoint>| -> Result<f64> {
            if let Some(p) = points.iter().find(|p| p.footprint_bytes == footprint) {
                return Ok(p.cycles);
            }
            let cycles = probe.measure(footprint)?;
            points.push(ChasePoint {
                footprint_bytes: footprint,
                stride_bytes: stride,
                cycles,
            });
            Ok(cycles)
        };
    // Footprints handed to the probe's `prepare` so far.
    let mut asked: std::collections::HashSet<u64> = std::collections::HashSet::new();
    let mut coarse = Vec::new();
    let grid_points = coarse_grid(stride, smallest, largest, COARSE_PER_DOUBLING);
    probe.prepare(&grid_points)?;
    asked.extend(&grid_points);
    for footprint in grid_points {
        coarse.push((footprint, measure(probe, footprint, &mut points)?));
    }
    // Rises: a step between neighbouring coarse points that climbs past a tenth of the
    // threshold, inside a doubling that climbs past the whole threshold (a slow rise may climb
    // little from one neighbour to the next); neighbouring steps merge into one region.
    let per = COARSE_PER_DOUBLING as usize;
    let in_rising_doubling = |k: usize| {
        let from = k.saturating_sub(per - 1);
        (from..=k).any(|i| threshold.rises(coarse[i].1, coarse[(i + per).min(coarse.len() - 1)].1))
    };
    let mut regions: Vec<((u64, f64), (u64, f64))> = Vec::new();
    for (k, pair) in coarse.windows(2).enumerate() {
        if !(threshold.starts_rising(pair[0].1, pair[1].1) && in_rising_doubling(k)) {
            continue;
        }
        match regions.last_mut() {
            Some(region) if region.1.0 == pair[0].0 => region.1 = pair[1],
            _ => regions.push((pair[0], pair[1])),
        }
    }
    let mut unresolved = Vec::new();
    let doubling_of = |f: u64| {
        let mut from = smallest;
        while from.saturating_mul(2) <= f {
            from *= 2;
        }
        (from, from.saturating_mul(2))
    };
    let over_budget = |low_f: u64, high_f: u64| {
        let (from, _) = doubling_of(low_f);
        let (_, to) = doubling_of(high_f.saturating_sub(1).max(low_f));
        Unresolved {
            from_bytes: from,
            to_bytes: to,
            why: format!(
                "the curve rises from {low_f} B to {high_f} B but the sweep's {POINT_BUDGET}-point budget was spent"
            ),
        }
    };
    // A rise is bisected only if the bisections' worst case (three, each to one stride) still
    // fits the budget, and sampled densely only if the budget is not spent when its turn
    // comes; the others are listed as unresolved.
    let mut admitted: Vec<((u64, f64), (u64, f64))> = Vec::new();
    let mut projected = points.len();
    for &region in &regions {
        let ((low_f, _), (high_f, _)) = region;
        let span = (high_f - low_f) / stride;
        let worst = 3 * (u64::BITS - span.leading_zeros()) as usize;
        if projected + worst > POINT_BUDGET {
            unresolved.push(over_budget(low_f, high_f));
            continue;
        }
        projected += worst;
        admitted.push(region);
    }
    // Three bisections per rise, all rises' side by side, so a probe that prepares ahead
    // (compiles) does so for all of them at once: where the rise is clear, where it starts
    // (with a tenth of the threshold: the first, small steps of a cache overflowing set by
    // set), and where it has (nearly) reached the level above.
    let mut rises: Vec<[Bisection; 3]> = admitted
        .iter()
        .map(|&((low_f, low_y), (high_f, high_y))| {
            let (good, bad) = (low_f / stride, high_f / stride);
            let top = high_y - 0.1 * (high_y - low_y);
            [
                Edge::Rises(low_y),
                Edge::StartsRising(low_y),
                Edge::Reaches(top),
            ]
            .map(|edge| Bisection { good, bad, edge })
        })
        .collect();
    let bisections = rises.as_flattened_mut();
    loop {
        let active: Vec<usize> = (0..bisections.len())
            .filter(|&i| bisections[i].bad - bisections[i].good > close_enough(bisections[i].good))
            .collect();
        if active.is_empty() {
            break;
        }
        // Before a step whose midpoint was never prepared: the midpoints of the next steps,
        // whichever way they go, for every bisection in that state.
        let unprepared: Vec<&Bisection> = active
            .iter()
            .map(|&i| &bisections[i])
            .filter(|b| !asked.contains(&((b.good + b.bad) / 2 * stride)))
            .collect();
        if !unprepared.is_empty() {
            let depth = lookahead_depth(cores, unprepared.len());
            let mut next = Vec::new();
            for b in unprepared {
                bisection_midpoints(b.good, b.bad, depth, &mut next);
            }
            let mut next: Vec<u64> = next
                .into_iter()
                .map(|k| k * stride)
                .filter(|f| asked.insert(*f))
                .collect();
            next.sort_unstable();
            probe.prepare(&next)?;
        }
        for i in active {
            let b = &mut bisections[i];
            let middle = (b.good + b.bad) / 2;
            let y = measure(probe, middle * stride, &mut points)?;
            if b.past(threshold, y) {
                b.bad = middle;
            } else {
                b.good = middle;
            }
        }
    }
    // Densely across each whole rise (a model fit reads every step of it), a stride apart
    // where `fine_points` allow, with a margin of plateau on either side.
    let mut fine: Vec<u64> = Vec::new();
    for (k, &((low_f, _), (high_f, _))) in admitted.iter().enumerate() {
        if points.len() + fine.len() >= POINT_BUDGET {
            unresolved.push(over_budget(low_f, high_f));
            continue;
        }
        let [clear, first, top] = rises[k];
        let (edge, end) = (clear.good, top.bad.max(clear.good));
        let width = end - edge;
        let start = first
            .good
            .min(edge.saturating_sub(width / 4))
            .saturating_sub(16);
        let start = start.max(smallest.div_ceil(stride));
        let stop = (end + width / 8 + 16).min(high_f / stride);
        let step = (stop.saturating_sub(start))
            .div_ceil(fine_points.max(1))
            .max(1);
        for footprint in (start..=stop).step_by(step as usize).map(|k| k * stride) {
            if !points.iter().any(|p| p.footprint_bytes == footprint) && !fine.contains(&footprint)
            {
                fine.push(footprint);
            }
        }
    }
    // One batch for every rise's fine points.
    probe.prepare(&fine)?;
    for footprint in fine {
        measure(probe, footprint, &mut points)?;
    }
    if let [.., before, last] = coarse[..]
        && threshold.rises(before.1, last.1)
    {
        unresolved.push(Unresolved {
            from_bytes: before.0,
            to_bytes: last.0,
            why: format!(
                "the curve still rises at the largest footprint ({:.1} to {:.1} cycles): a level may lie past it; pass a larger --max-bytes",
                before.1, last.1
            ),
        });
    }
    points.sort_by_key(|p| p.footprint_bytes);
    Ok(SweepResult {
        launches: points.len(),
        points,
        seconds: started.elapsed().as_secs_f64(),
        unresolved,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A two-level L2-like curve (a near and a far half, then memory) swept as the L2 is: the
    /// bisections stop at 1/512 of the footprint, so each of the two edges (whose three
    /// bisections share one path on a sharp step) takes several halvings fewer, and both
    /// edges still come out within 1 % of the simulated sizes.
    #[test]
    fn a_coarser_bisection_keeps_both_edges_of_a_partitioned_cache() {
        let stride = 128;
        let (near, far) = (24_u64 << 20, 48_u64 << 20);
        let curve = |footprint: u64| -> f64 {
            if footprint <= near {
                280.0
            } else if footprint <= far {
                530.0
            } else {
                670.0
            }
        };
        let run = |relative_resolution: f64| {
            sweep_with(
                RiseThreshold::of(Space::L2),
                Grid {
                    stride,
                    relative_resolution,
                },
                256 << 10,
                128 << 20,
                4,
                &mut |f| Ok(curve(f)),
            )
            .unwrap()
        };
        let exact = run(0.0);
        let coarse = run(1.0 / 512.0);
        assert!(
            coarse.points.len() + 2 * 6 <= exact.points.len(),
            "{} points against {}",
            coarse.points.len(),
            exact.points.len()
        );
        let report = crate::analysis::cache_inference::infer(&coarse.points).unwrap();
        let sizes: Vec<u64> = report.levels.iter().filter_map(|l| l.size_bytes).collect();
        assert_eq!(sizes.len(), 2, "{sizes:?}");
        for (size, truth) in sizes.iter().zip([near, far]) {
            assert!(
                size.abs_diff(truth) * 100 <= truth,
                "{size} against {truth}"
            );
        }
    }

    /// A probe that prepares ahead sees the same points as one that does not, and every
    /// footprint it measures was prepared first (none waits for its own compile).
    #[test]
    fn preparing_ahead_changes_no_point_and_leaves_nothing_unprepared() {
        struct Recording<F> {
            curve: F,
            prepared: std::collections::HashSet<u64>,
            batches: usize,
            unprepared: Vec<u64>,
        }
        impl<F: Fn(u64) -> f64> Probe for Recording<F> {
            fn measure(&mut self, footprint: u64) -> Result<f64> {
                if !self.prepared.contains(&footprint) {
                    self.unprepared.push(footprint);
                }
                Ok((self.curve)(footprint))
            }
            fn prepare(&mut self, footprints: &[u64]) -> Result<()> {
                self.batches += 1;
                self.prepared.extend(footprints);
                Ok(())
            }
        }
        let curve = |f: u64| match f {
            0..=33_000 => 1.0,
            33_001..=40_000 => 1.0 + (f - 33_000) as f64 / 7000.0,
            40_001..=130_000 => 2.2,
            _ => 5.3,
        };
        let threshold = RiseThreshold::of(Space::Instruction);
        let plain = sweep(threshold, 64, 1024, 512 << 10, 4, |f| Ok(curve(f))).unwrap();
        let mut recording = Recording {
            curve,
            prepared: Default::default(),
            batches: 0,
            unprepared: vec![],
        };
        let grid = Grid {
            stride: 64,
            relative_resolution: 0.0,
        };
        let ahead = sweep_with(threshold, grid, 1024, 512 << 10, 4, &mut recording).unwrap();
        assert_eq!(plain.points, ahead.points);
        assert!(
            recording.unprepared.is_empty(),
            "{:?}",
            recording.unprepared
        );
        assert!(
            recording.batches * 2 < ahead.points.len(),
            "{} batches for {} points",
            recording.batches,
            ahead.points.len()
        );
    }

    /// Three rises, as the instruction space shows on Hopper, swept for a 16-core host: the
    /// nine bisections advance side by side, so the compile batches are the coarse grid's, one
    /// per two or three halvings of the longest bisection, and the fine points' together.
    #[test]
    fn the_rises_bisections_share_their_compile_batches() {
        #[derive(Default)]
        struct Batches {
            prepared: std::collections::HashSet<u64>,
            batches: usize,
            unprepared: usize,
        }
        impl Probe for Batches {
            fn measure(&mut self, footprint: u64) -> Result<f64> {
                self.unprepared += usize::from(!self.prepared.contains(&footprint));
                Ok(match footprint {
                    0..=32_000 => 1.0,
                    32_001..=40_000 => 1.0 + (footprint - 32_000) as f64 / 7000.0,
                    40_001..=128_000 => 2.2,
                    128_001..=150_000 => 2.2 + (footprint - 128_000) as f64 / 7000.0,
                    150_001..=200_000 => 5.3,
                    200_001..=220_000 => 5.3 + (footprint - 200_000) as f64 / 5000.0,
                    _ => 9.3,
                })
            }
            fn prepare(&mut self, footprints: &[u64]) -> Result<()> {
                self.batches += 1;
                self.prepared.extend(footprints);
                Ok(())
            }
        }
        let mut probe = Batches::default();
        let grid = Grid {
            stride: 64,
            relative_resolution: 0.0,
        };
        let threshold = RiseThreshold::of(Space::Instruction);
        let result = sweep_on_cores(threshold, grid, (1024, 512 << 10), 4, &mut probe, 16).unwrap();
        assert_eq!(probe.unprepared, 0);
        // The widest bracket between coarse points here is under 2^10 strides: ten halvings.
        assert!(
            probe.batches <= 2 + 10 / 2,
            "{} batches for {} points",
            probe.batches,
            result.points.len()
        );
        let report =
            crate::analysis::cache_inference::infer_with(&result.points, threshold.minimum_rise())
                .unwrap();
        let sizes: Vec<u64> = report.levels.iter().filter_map(|l| l.size_bytes).collect();
        assert_eq!(sizes.len(), 3, "{sizes:?}");
        for (size, truth) in sizes.iter().zip([32_000_u64, 128_000, 200_000]) {
            assert!(size.abs_diff(truth) * 100 <= truth, "{sizes:?}");
        }
    }

    #[test]
    fn bisection_midpoints_cover_every_path_of_the_next_steps() {
        let mut next = Vec::new();
        bisection_midpoints(0, 16, 3, &mut next);
        next.sort_unstable();
        assert_eq!(next, vec![2, 4, 6, 8, 10, 12, 14]);
        let mut short = Vec::new();
        bisection_midpoints(4, 5, 3, &mut short);
        assert!(short.is_empty());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(16))]
        /// The adaptive sweep over a simulated LRU cache (no GPU) samples the start of the rise
        /// one stride at a time, so the inferred size is right to within one line (the first
        /// overflowing set of a large cache adds less than the plateau's tolerance), with under
        /// half the points of a linear scan (four coarse points a doubling come first). Lines of at least four strides, as the inference
        /// asks, and at most 64 sets, so each set's step (the miss penalty / sets) stands above
        /// the inference's 0.25-cycle plateau floor; with more sets the first few steps merge
        /// into the plateau and the size comes out a few lines long.
        #[test]
        fn the_adaptive_sweep_finds_a_simulated_cache_to_a_line(
            line_log in 7_u32..=8,
            sets_log in 2_u32..=6,
            ways in 1_u64..=16,
            hit in 20.0_f64..60.0,
            extra in 100.0_f64..500.0,
        ) {
            use crate::analysis::cache_model::{Geometry, Hierarchy, chase_latency};
            let line = 1_u64 << line_log;
            let geometry = Geometry { size_bytes: (1 << sets_log) * ways * line, line_bytes: line, ways };
            let hierarchy = Hierarchy::one_level(geometry, hit, hit + extra);
            let stride = 32;
            let smallest = (geometry.size_bytes / 8).max(4 * stride).next_power_of_two();
            let largest = smallest << 6;
            let threshold = RiseThreshold::of(Space::Global);
            let result = sweep(threshold, stride, smallest, largest, 160, |footprint| {
                Ok(chase_latency(&hierarchy, footprint, stride))
            })
            .unwrap();
            let report = crate::analysis::cache_inference::infer(&result.points).unwrap();
            let size = report.levels[0].size_bytes.unwrap();
            proptest::prop_assert!(size.abs_diff(geometry.size_bytes) <= line, "{size} vs {geometry:?}");
            proptest::prop_assert!(result.launches < (largest / stride / 2) as usize, "{} launches", result.launches);
        }
    }
}

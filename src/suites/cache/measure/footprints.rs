//! Which footprints a cache sweep measures (the module doc of [`super`] gives the method):
//! a coarse geometric grid, then per rise a bisection for where it is clear, where it starts
//! and where it ends, and fine points across it, prepared ahead in batches where a probe
//! compiles (the instruction space).

use super::*;

#[derive(Debug, Clone)]
pub struct SweepResult {
    pub points: Vec<ChasePoint>,
    pub launches: usize,
    pub seconds: f64,
    /// Doublings `[from, to)` whose curve rises but that the sweep did not sample densely (the
    /// point budget ran out, or the last doubling still rises: a level may lie past it).
    pub unresolved: Vec<Unresolved>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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

/// The file a sweep's points are appended to as each is measured ([`SoFar`]).
pub const SO_FAR: &str = "chase-so-far.csv";

/// A sweep's points appended (and flushed) to [`SO_FAR`] as each is measured, in `chase.csv`'s
/// columns: a process that dies in the sweep keeps the points it finished (GPGPU-Sim calls
/// abort() on a deadlock it detects: no unwinding, no `Drop`, so only what is on disk already
/// survives), and `gpubench analyze cache` reads the file as it reads a `chase.csv`.
/// [`SoFar::finish`] removes it once the whole sweep is written.
pub struct SoFar {
    path: std::path::PathBuf,
    file: csv::Writer<std::fs::File>,
    stride: u64,
}

impl SoFar {
    pub fn create(dir: &std::path::Path, stride: u64) -> Result<Self> {
        let path = dir.join(SO_FAR);
        // The header (ChasePoint's fields) at once, not with the first point: a sweep that
        // dies before its first point still leaves a file that reads as a curve of no points.
        let create = || -> Result<csv::Writer<std::fs::File>> {
            let mut file = csv::WriterBuilder::new()
                .has_headers(false)
                .from_path(&path)?;
            file.write_record(["footprint_bytes", "stride_bytes", "cycles"])?;
            file.flush()?;
            Ok(file)
        };
        let file = create().map_err(|e| anyhow::anyhow!("cannot create {}: {e}", path.display()))?;
        Ok(SoFar { path, file, stride })
    }

    /// `probe`, each of whose points is appended here as it is measured.
    pub fn keeping<'a>(&'a mut self, probe: &'a mut dyn Probe) -> Keeping<'a> {
        Keeping {
            probe,
            so_far: self,
        }
    }

    /// The sweep ended and its points are written whole: the file of points so far goes.
    pub fn finish(self) -> Result<()> {
        drop(self.file);
        std::fs::remove_file(&self.path)
            .map_err(|e| anyhow::anyhow!("cannot remove {}: {e}", self.path.display()))
    }

    fn append(&mut self, footprint: u64, cycles: f64) -> Result<()> {
        let point = ChasePoint {
            footprint_bytes: footprint,
            stride_bytes: self.stride,
            cycles,
        };
        // A point a second at most on a simulator, thousands a second on a GPU: one small
        // write and flush each is no measurable part of a sweep.
        self.file
            .serialize(point)
            .map_err(anyhow::Error::from)
            .and_then(|()| Ok(self.file.flush()?))
            .map_err(|e| anyhow::anyhow!("cannot append to {}: {e}", self.path.display()))
    }
}

/// A probe whose points are kept as they are measured ([`SoFar::keeping`]).
pub struct Keeping<'a> {
    probe: &'a mut dyn Probe,
    so_far: &'a mut SoFar,
}

impl Probe for Keeping<'_> {
    fn measure(&mut self, footprint: u64) -> Result<f64> {
        let cycles = self.probe.measure(footprint)?;
        self.so_far.append(footprint, cycles)?;
        Ok(cycles)
    }

    fn prepare(&mut self, footprints: &[u64]) -> Result<()> {
        self.probe.prepare(footprints)
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

/// Bisection steps prepared at once: the halvings the widest of `brackets` (each `(good, bad,
/// close_enough)` in strides) still needs to come within its `close_enough`, at most as many as
/// fill the host's cores up to four times over with 2^depth − 1 midpoints per distinct
/// bracket (a rise's three bisections share theirs until they part). A round of compiles
/// lasts at least as long as its largest kernel (0.8 s for the 185 KiB kernels at the H100's
/// second instruction-cache rise), so more waves of smaller ones cost little: replaying the
/// committed H100 instruction sweep with the driver's measured cost (64 µs per instruction)
/// on 16 cores, 6 rounds took 5.4 s where filling them twice over took 7 rounds and 6.3 s;
/// eight times over, 4 rounds took 8.8 s. Each round also waits for the GPU to
/// measure what it compiled, so a round the brackets do not need is not prepared.
fn lookahead_depth(cores: usize, brackets: &[(u64, u64, u64)]) -> u32 {
    let mut distinct: Vec<(u64, u64)> = brackets.iter().map(|&(g, b, _)| (g, b)).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let per = (4 * cores / distinct.len().max(1)) + 1;
    let fill = (usize::BITS - per.leading_zeros()).saturating_sub(1).max(1);
    let needed = brackets
        .iter()
        .map(|&(good, bad, close)| {
            let (span, close) = (bad.saturating_sub(good), close.max(1));
            // Halvings until the bracket is within `close`: ceil(log2(span / close)).
            let ratio = span.div_ceil(close);
            u64::BITS - ratio.saturating_sub(1).leading_zeros()
        })
        .max()
        .unwrap_or(1);
    fill.min(needed).max(1)
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
    let stride = grid.stride;
    let started = Instant::now();
    let mut points: Vec<ChasePoint> = Vec::new();
    // Footprints handed to the probe's `prepare` so far.
    let mut asked: std::collections::HashSet<u64> = std::collections::HashSet::new();
    let mut coarse = Vec::new();
    let grid_points = coarse_grid(stride, smallest, largest, COARSE_PER_DOUBLING);
    probe.prepare(&grid_points)?;
    asked.extend(&grid_points);
    for footprint in grid_points {
        coarse.push((
            footprint,
            measure_once(probe, footprint, stride, &mut points)?,
        ));
    }
    let regions = rising_regions(threshold, &coarse);
    let mut unresolved = Vec::new();
    let admitted = admit(&regions, points.len(), stride, smallest, &mut unresolved);
    let mut sweep = Bisecting {
        threshold,
        grid,
        cores,
        probe,
        asked: &mut asked,
        points: &mut points,
    };
    let rises = sweep.bisect(&admitted)?;
    let fine = fine_footprints(
        &admitted,
        &rises,
        (&points, &asked),
        (smallest, stride, fine_points),
        &mut unresolved,
    );
    // One batch for every rise's fine points (prepared already, where they moved).
    probe.prepare(&fine)?;
    for footprint in fine {
        measure_once(probe, footprint, stride, &mut points)?;
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

/// A rise between two coarse points: (footprint, cycles) at its low and high ends.
type Region = ((u64, f64), (u64, f64));

impl Grid {
    /// The widest bracket a bisection from `good` may stop at, in strides.
    fn close_enough(self, good: u64) -> u64 {
        ((good as f64 * self.relative_resolution) as u64).max(1)
    }
}

/// The cycles of `footprint`, measured once: a footprint already in `points` gives its
/// measured cycles back, a new one is measured with `probe` and added, so a sweep never pays
/// twice for a footprint its coarse grid, bisections and fine points share.
fn measure_once(
    probe: &mut dyn Probe,
    footprint: u64,
    stride: u64,
    points: &mut Vec<ChasePoint>,
) -> Result<f64> {
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
}

/// The rises of the coarse curve: a step between neighbouring coarse points that climbs past
/// a tenth of the threshold, inside a doubling that climbs past the whole threshold (a slow
/// rise may climb little from one neighbour to the next); neighbouring steps merge into one
/// region. Kept apart so what counts as a rise is read in one place.
fn rising_regions(threshold: RiseThreshold, coarse: &[(u64, f64)]) -> Vec<Region> {
    let per = COARSE_PER_DOUBLING as usize;
    let in_rising_doubling = |k: usize| {
        let from = k.saturating_sub(per - 1);
        (from..=k).any(|i| threshold.rises(coarse[i].1, coarse[(i + per).min(coarse.len() - 1)].1))
    };
    let mut regions: Vec<Region> = Vec::new();
    for (k, pair) in coarse.windows(2).enumerate() {
        if !(threshold.starts_rising(pair[0].1, pair[1].1) && in_rising_doubling(k)) {
            continue;
        }
        match regions.last_mut() {
            Some(region) if region.1.0 == pair[0].0 => region.1 = pair[1],
            _ => regions.push((pair[0], pair[1])),
        }
    }
    regions
}

/// The doubling `[from, to)` from `smallest` that holds `f`.
fn doubling_of(smallest: u64, f: u64) -> (u64, u64) {
    let mut from = smallest;
    while from.saturating_mul(2) <= f {
        from *= 2;
    }
    (from, from.saturating_mul(2))
}

/// The unresolved entry of a rise from `low_f` to `high_f` the point budget left unsampled:
/// the doublings it spans, so a reader knows where a level may hide.
fn over_budget(smallest: u64, low_f: u64, high_f: u64) -> Unresolved {
    let (from, _) = doubling_of(smallest, low_f);
    let (_, to) = doubling_of(smallest, high_f.saturating_sub(1).max(low_f));
    Unresolved {
        from_bytes: from,
        to_bytes: to,
        why: format!(
            "the curve rises from {low_f} B to {high_f} B but the sweep's {POINT_BUDGET}-point budget was spent"
        ),
    }
}

/// The rises the point budget admits: a rise is bisected only if the bisections' worst case
/// (three, each to one stride) still fits the budget after the `measured` points; the others
/// are listed in `unresolved`.
fn admit(
    regions: &[Region],
    measured: usize,
    stride: u64,
    smallest: u64,
    unresolved: &mut Vec<Unresolved>,
) -> Vec<Region> {
    let mut admitted: Vec<Region> = Vec::new();
    let mut projected = measured;
    for &region in regions {
        let ((low_f, _), (high_f, _)) = region;
        let span = (high_f - low_f) / stride;
        let worst = 3 * (u64::BITS - span.leading_zeros()) as usize;
        if projected + worst > POINT_BUDGET {
            unresolved.push(over_budget(smallest, low_f, high_f));
            continue;
        }
        projected += worst;
        admitted.push(region);
    }
    admitted
}

/// What the bisections of a sweep work with: the probe, the footprints handed to its
/// `prepare` so far and the points measured so far.
struct Bisecting<'a> {
    threshold: RiseThreshold,
    grid: Grid,
    cores: usize,
    probe: &'a mut dyn Probe,
    asked: &'a mut std::collections::HashSet<u64>,
    points: &'a mut Vec<ChasePoint>,
}

impl Bisecting<'_> {
    /// Three bisections per rise, all rises' side by side, so a probe that prepares ahead
    /// (compiles) does so for all of them at once: where the rise is clear, where it starts
    /// (with a tenth of the threshold: the first, small steps of a cache overflowing set by
    /// set), and where it has (nearly) reached the level above. Returns each rise's three,
    /// finished.
    fn bisect(&mut self, admitted: &[Region]) -> Result<Vec<[Bisection; 3]>> {
        let (stride, grid) = (self.grid.stride, self.grid);
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
                .filter(|&i| {
                    bisections[i].bad - bisections[i].good > grid.close_enough(bisections[i].good)
                })
                .collect();
            if active.is_empty() {
                break;
            }
            self.prepare_ahead(bisections, &active)?;
            for i in active {
                let b = &mut bisections[i];
                let middle = (b.good + b.bad) / 2;
                let y = measure_once(&mut *self.probe, middle * stride, stride, self.points)?;
                if b.past(self.threshold, y) {
                    b.bad = middle;
                } else {
                    b.good = middle;
                }
            }
        }
        Ok(rises)
    }

    /// Before a step whose midpoint was never prepared: the midpoints of the next steps,
    /// whichever way they go, for every bisection in that state, prepared in one batch.
    fn prepare_ahead(&mut self, bisections: &[Bisection], active: &[usize]) -> Result<()> {
        let (stride, grid) = (self.grid.stride, self.grid);
        let unprepared: Vec<&Bisection> = active
            .iter()
            .map(|&i| &bisections[i])
            .filter(|b| !self.asked.contains(&((b.good + b.bad) / 2 * stride)))
            .collect();
        if !unprepared.is_empty() {
            let brackets: Vec<(u64, u64, u64)> = unprepared
                .iter()
                .map(|b| (b.good, b.bad, grid.close_enough(b.good)))
                .collect();
            let depth = lookahead_depth(self.cores, &brackets);
            let mut next = Vec::new();
            for b in unprepared {
                bisection_midpoints(b.good, b.bad, depth, &mut next);
            }
            let mut next: Vec<u64> = next
                .into_iter()
                .map(|k| k * stride)
                .filter(|f| self.asked.insert(*f))
                .collect();
            next.sort_unstable();
            self.probe.prepare(&next)?;
        }
        Ok(())
    }
}

/// The fine points of every admitted rise: densely across each whole rise (a model fit reads
/// every step of it), a stride apart where `fine_points` allow, with a margin of plateau on
/// either side. A rise the point budget has no room for is listed in `unresolved`.
fn fine_footprints(
    admitted: &[Region],
    rises: &[[Bisection; 3]],
    (points, asked): (&[ChasePoint], &std::collections::HashSet<u64>),
    (smallest, stride, fine_points): (u64, u64, u64),
    unresolved: &mut Vec<Unresolved>,
) -> Vec<u64> {
    let mut fine: Vec<u64> = Vec::new();
    for (k, &((low_f, _), (high_f, _))) in admitted.iter().enumerate() {
        if points.len() + fine.len() >= POINT_BUDGET {
            unresolved.push(over_budget(smallest, low_f, high_f));
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
        let unmeasured = |footprint: u64, fine: &[u64]| {
            !points.iter().any(|p| p.footprint_bytes == footprint) && !fine.contains(&footprint)
        };
        for k in (start..=stop).step_by(step as usize) {
            // Where points lie more than a stride apart, each moves to the nearest footprint
            // within half a step that was prepared ahead for a bisection but not measured (a
            // probe that compiles then needs no round of compiles for them).
            let reach = (step - 1) / 2;
            let footprint = (k.saturating_sub(reach).max(start)..=(k + reach).min(stop))
                .map(|c| c * stride)
                .filter(|f| asked.contains(f) && unmeasured(*f, &fine))
                .min_by_key(|f| f.abs_diff(k * stride))
                .unwrap_or(k * stride);
            if unmeasured(footprint, &fine) {
                fine.push(footprint);
            }
        }
    }
    fine
}

#[cfg(test)]
mod tests;

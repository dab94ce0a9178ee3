//! Files of `gpubench dsm`: `dsm-latency.csv` (per cluster size: cycles per load into the other
//! blocks, median and range over ranks, into the own block through the cluster window and
//! through ld.shared, the SM of every rank), `dsm-occupancy.csv` (clusters that fit at once per
//! size), `dsm-bandwidth.csv` (bytes per clock per SM and over the GPU of every read pattern),
//! `dsm.json` (all of it with the growth of the remote latency per block of cluster size) and
//! `dsm.png`; from the writes on (issue #74), `dsm-stores.csv` (the stores' rates, as the
//! reads'), `dsm-threads.csv` (the pair partner's read and store per block size),
//! `dsm-histogram.csv` (adds per clock per SM of each histogram) and `dsm-writes.png`. Runs from
//! before the writes have none of the three files and are read as they were.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use super::analysis::growth_per_block;
use super::measure::{
    Bandwidth, HISTOGRAM_BINS, HISTOGRAM_OPS, PATTERNS, Results, STORE_PATTERNS, SWEEP_CLUSTER,
};
use crate::analysis::linear_fit::Interval;
use crate::report::figures::{Ceiling, Domain, Figure, Rows};
use crate::report::plot::{self, BLUE, GREEN, ORANGE, RED};
use crate::report::run_dir::RunDir;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LatencyRow {
    pub cluster: u32,
    pub remote_cycles: f64,
    pub remote_min: f64,
    pub remote_max: f64,
    pub own_through_window_cycles: f64,
    pub local_cycles: f64,
    pub distinct_sms: bool,
    /// Cycles per load into ranks 0..n, ';'-separated.
    pub per_rank: String,
    /// The SM of ranks 0..n, ';'-separated.
    pub smids: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OccupancyRow {
    pub cluster: u32,
    pub max_active_clusters: u32,
    pub blocks: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BandwidthRow {
    pub cluster: u32,
    pub pattern: String,
    pub clusters: u32,
    pub bytes_per_clock_per_sm: f64,
    pub bytes_per_clock_per_sm_min: f64,
    pub bytes_per_clock_per_sm_max: f64,
    pub gpu_bytes_per_clock: f64,
    /// At the SM clock measured before the suite.
    pub gpu_gb_per_s: f64,
}

/// The pair partner's read or store at one block size (cluster of [`SWEEP_CLUSTER`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ThreadsRow {
    pub operation: String,
    pub threads: u32,
    pub cluster: u32,
    pub clusters: u32,
    pub bytes_per_clock_per_sm: f64,
    pub bytes_per_clock_per_sm_min: f64,
    pub bytes_per_clock_per_sm_max: f64,
    pub gpu_bytes_per_clock: f64,
}

/// One histogram's adds per clock per SM (median over SMs and the range).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HistogramRow {
    pub cluster: u32,
    pub operation: String,
    pub bins: u32,
    pub clusters: u32,
    pub adds_per_block: u64,
    pub adds_per_clock_per_sm: f64,
    pub adds_per_clock_per_sm_min: f64,
    pub adds_per_clock_per_sm_max: f64,
    pub gpu_adds_per_clock: f64,
}

fn joined<T: ToString>(values: &[T]) -> String {
    values
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(";")
}

pub fn latency_rows(results: &Results) -> Vec<LatencyRow> {
    results
        .latency
        .iter()
        .map(|l| LatencyRow {
            cluster: l.latency.cluster,
            remote_cycles: l.latency.remote.median,
            remote_min: l.latency.remote.min,
            remote_max: l.latency.remote.max,
            own_through_window_cycles: l.latency.own_through_window,
            local_cycles: l.latency.local,
            distinct_sms: l.latency.distinct_sms,
            per_rank: joined(
                &l.per_rank
                    .iter()
                    .map(|c| format!("{c:.1}"))
                    .collect::<Vec<_>>(),
            ),
            smids: joined(&l.smids),
        })
        .collect()
}

pub fn occupancy_rows(results: &Results) -> Vec<OccupancyRow> {
    results
        .occupancy
        .iter()
        .map(|o| OccupancyRow {
            cluster: o.cluster,
            max_active_clusters: o.max_active_clusters,
            blocks: o.cluster * o.max_active_clusters,
        })
        .collect()
}

pub fn bandwidth_rows(results: &Results, mhz: f64) -> Vec<BandwidthRow> {
    rate_rows(&results.bandwidth, mhz)
}

pub fn store_rows(results: &Results, mhz: f64) -> Vec<BandwidthRow> {
    rate_rows(&results.stores, mhz)
}

pub fn threads_rows(results: &Results) -> Vec<ThreadsRow> {
    results
        .threads
        .iter()
        .map(|t| ThreadsRow {
            operation: t.operation.into(),
            threads: t.threads,
            cluster: SWEEP_CLUSTER,
            clusters: t.clusters,
            bytes_per_clock_per_sm: t.rate.per_sm.median,
            bytes_per_clock_per_sm_min: t.rate.per_sm.min,
            bytes_per_clock_per_sm_max: t.rate.per_sm.max,
            gpu_bytes_per_clock: t.rate.gpu_bytes_per_clock,
        })
        .collect()
}

pub fn histogram_rows(results: &Results) -> Vec<HistogramRow> {
    results
        .histogram
        .iter()
        .map(|h| HistogramRow {
            cluster: h.cluster,
            operation: h.operation.into(),
            bins: h.bins,
            clusters: h.clusters,
            adds_per_block: h.adds_per_block,
            adds_per_clock_per_sm: h.rate.per_sm.median,
            adds_per_clock_per_sm_min: h.rate.per_sm.min,
            adds_per_clock_per_sm_max: h.rate.per_sm.max,
            gpu_adds_per_clock: h.rate.gpu_bytes_per_clock,
        })
        .collect()
}

fn rate_rows(rates: &[Bandwidth], mhz: f64) -> Vec<BandwidthRow> {
    rates
        .iter()
        .map(|b| BandwidthRow {
            cluster: b.cluster,
            pattern: b.pattern.into(),
            clusters: b.clusters,
            bytes_per_clock_per_sm: b.rate.per_sm.median,
            bytes_per_clock_per_sm_min: b.rate.per_sm.min,
            bytes_per_clock_per_sm_max: b.rate.per_sm.max,
            gpu_bytes_per_clock: b.rate.gpu_bytes_per_clock,
            gpu_gb_per_s: b.rate.gpu_bytes_per_clock * mhz * 1e6 / 1e9,
        })
        .collect()
}

/// The slope of the median remote latency over cluster size, from the rows.
pub fn growth(rows: &[LatencyRow]) -> Option<Interval> {
    let medians: Vec<(u32, f64)> = rows.iter().map(|r| (r.cluster, r.remote_cycles)).collect();
    growth_per_block(&medians)
}

/// `dsm.json`: every latency, occupancy and bandwidth row with what each measured, the growth
/// of the remote latency with the cluster and the SASS kept; written by [`write`] (the
/// figures come from the CSVs).
#[derive(Debug, Serialize, Deserialize)]
pub struct DsmFile {
    pub bandwidth: String,
    pub bandwidth_rows: Vec<BandwidthRow>,
    pub latency: String,
    pub latency_rows: Vec<LatencyRow>,
    pub occupancy: String,
    pub occupancy_rows: Vec<OccupancyRow>,
    /// Cycles the median remote load gains per block of cluster (none with too few sizes).
    pub remote_latency_growth_cycles_per_block: Option<Interval>,
    pub sass: crate::harness::suite::KeptSass,
    pub shared_bytes_per_block: u32,
    /// The writes (absent from runs before them).
    pub writes: Option<Writes>,
}

/// `dsm.json`'s writes: what each table measured and its rows.
#[derive(Debug, Serialize, Deserialize)]
pub struct Writes {
    pub stores: String,
    pub store_rows: Vec<BandwidthRow>,
    pub threads: String,
    pub threads_rows: Vec<ThreadsRow>,
    pub histogram: String,
    pub histogram_rows: Vec<HistogramRow>,
}

/// The rows of the writes, as [`write`] takes them.
pub struct WriteRows {
    pub stores: Vec<BandwidthRow>,
    pub threads: Vec<ThreadsRow>,
    pub histogram: Vec<HistogramRow>,
}

impl WriteRows {
    pub fn of(results: &Results, mhz: f64) -> WriteRows {
        WriteRows {
            stores: store_rows(results, mhz),
            threads: threads_rows(results),
            histogram: histogram_rows(results),
        }
    }
}

pub fn write(
    run: &RunDir,
    latency: &[LatencyRow],
    occupancy: &[OccupancyRow],
    bandwidth: &[BandwidthRow],
    writes: &WriteRows,
    shared_bytes: u32,
    sass: &crate::harness::suite::KeptSass,
) -> Result<()> {
    run.write_csv("dsm-latency.csv", latency)?;
    run.write_csv("dsm-occupancy.csv", occupancy)?;
    run.write_csv("dsm-bandwidth.csv", bandwidth)?;
    run.write_csv("dsm-stores.csv", &writes.stores)?;
    run.write_csv("dsm-threads.csv", &writes.threads)?;
    run.write_csv("dsm-histogram.csv", &writes.histogram)?;
    run.write_json(
        "dsm.json",
        &DsmFile {
            bandwidth: "every block of a GPU full of clusters reads 64 KiB of one block's shared memory per pass with 16-byte loads; bytes per clock of each block's span (one block per SM), summed over blocks for the GPU".into(),
            bandwidth_rows: bandwidth.to_vec(),
            latency: "cycles per load of thread 0 of block 0 chasing a 1024-word ring (stride 33 words) in each block's shared memory through the cluster window (mapa + ld.shared::cluster; SASS: a generic LD), after one untimed lap; local: the same ring in its own memory with ld.shared (LDS)".into(),
            latency_rows: latency.to_vec(),
            occupancy: "cuOccupancyMaxActiveClusters for 1024-thread blocks holding the most dynamic shared memory a block may have (one block per SM)".into(),
            occupancy_rows: occupancy.to_vec(),
            remote_latency_growth_cycles_per_block: growth(latency),
            sass: sass.clone(),
            shared_bytes_per_block: shared_bytes,
            writes: Some(Writes {
                stores: "every block of a GPU full of clusters stores 64 KiB into one block's shared memory per pass with 16-byte stores (st.shared::cluster.v4, SASS ST.E.128; own: st.shared.v4, STS.128); each thread fences at cluster scope (MEMBAR.ALL.GPU) before the block's closing barrier and stamp; bytes per clock of each block's span".into(),
                store_rows: writes.stores.clone(),
                threads: format!("the pair partner's read and store as above in clusters of {SWEEP_CLUSTER}, at each block size (one block per SM)"),
                threads_rows: writes.threads.clone(),
                histogram: "every thread adds 1 `iterations` times to bin (thread + 97 x pass) mod bins of the target's histogram (red/atom.shared::cluster.add.u32: ATOM.E.ADD.STRONG.GPU, red's answer to RZ; own: atom.shared.add.u32, ATOMS.ADD), fence at cluster scope, barrier, stamp; adds per clock of each block's span; every block's bins checked to hold the adds sent".into(),
                histogram_rows: writes.histogram.clone(),
            }),
        },
    )
}

pub fn title() -> &'static str {
    "Distributed shared memory: latency, clusters that fit, read bandwidth"
}

/// `dsm.png`: (a) cycles per load against cluster size: into the other blocks (median, range
/// over ranks), the own block through the window and ld.shared; (b) clusters that fit at once;
/// (c) bytes per clock per SM of every read pattern per cluster size.
pub fn draw(
    path: &Path,
    title: &str,
    latency: &[LatencyRow],
    occupancy: &[OccupancyRow],
    bandwidth: &[BandwidthRow],
) -> Result<()> {
    let lines = [
        (
            "other blocks (median, range over ranks)",
            BLUE,
            plot::Key::Line,
        ),
        ("own block, cluster window", ORANGE, plot::Key::Dash),
        ("own block, ld.shared", GREEN, plot::Key::Dash),
    ];
    let entries: Vec<plot::Entry> = lines
        .iter()
        .map(|&(l, c, k)| plot::Entry::new(l, c, k))
        .collect();
    let (sizes, series) = pattern_series(bandwidth, &PATTERNS);
    let top = latency
        .iter()
        .map(|r| r.remote_max.max(r.own_through_window_cycles))
        .fold(50.0, f64::max)
        * 1.15;
    let most = latency.iter().map(|r| r.cluster).max().unwrap_or(16) as f64;
    let design = plot::Design::panels((1800, 700), 3).with_legend(5);
    plot::titled_plot!(path, design, title, |root| {
        let areas = plot::panels(&root, 3);
        let left = plot::legend_above(&areas[0], &entries)?;
        let mut chart = plot::framed_chart(&left, "(a) latency of a chase", [16, 60, 90])
            .build_cartesian_2d(1.5..most + 0.5, 0.0..top)?;
        plot::mesh(&mut chart, "blocks per cluster", "cycles per load")
            .disable_x_mesh()
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .draw()?;
        chart.draw_series(LineSeries::new(
            latency
                .iter()
                .map(|r| (f64::from(r.cluster), r.remote_cycles)),
            BLUE.stroke_width(3),
        ))?;
        chart.draw_series(latency.iter().map(|r| {
            let x = f64::from(r.cluster);
            PathElement::new(
                vec![(x, r.remote_min), (x, r.remote_max)],
                BLUE.stroke_width(2),
            )
        }))?;
        for (value, colour) in [
            (|r: &LatencyRow| r.own_through_window_cycles) as fn(&LatencyRow) -> f64,
            |r: &LatencyRow| r.local_cycles,
        ]
        .into_iter()
        .zip([ORANGE, GREEN])
        {
            chart.draw_series(std::iter::once(DashedPathElement::new(
                latency.iter().map(|r| (f64::from(r.cluster), value(r))),
                6,
                4,
                colour.stroke_width(2),
            )))?;
        }
        let categories: Vec<String> = occupancy.iter().map(|o| o.cluster.to_string()).collect();
        plot::grouped_bars(
            &areas[1],
            "(b) clusters that fit at once, by blocks per cluster",
            &categories,
            &[plot::BarSeries {
                label: "clusters (one 1024-thread block per SM)".into(),
                colour: BLUE,
                values: occupancy
                    .iter()
                    .map(|o| Some(f64::from(o.max_active_clusters)))
                    .collect(),
            }],
            "clusters",
            false,
        )?;
        plot::grouped_bars(
            &areas[2],
            "(c) reading 64 KiB per pass, by blocks per cluster",
            &sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            &series,
            "bytes per clock per SM",
            false,
        )?;
    })
    .context("drawing dsm")
}

/// The cluster sizes of `rows` (in their order) and one bar series per pattern of `patterns`
/// (its colour by place in the list): bytes per clock per SM at each size.
fn pattern_series(
    rows: &[BandwidthRow],
    patterns: &[(u32, &str)],
) -> (Vec<u32>, Vec<plot::BarSeries>) {
    let mut sizes: Vec<u32> = rows.iter().map(|b| b.cluster).collect();
    sizes.dedup();
    let colours = [GREEN, ORANGE, BLUE, RED, plot::MAGENTA];
    let series = patterns
        .iter()
        .zip(colours)
        .map(|(&(_, pattern), colour)| plot::BarSeries {
            label: pattern.into(),
            colour,
            values: sizes
                .iter()
                .map(|&c| {
                    rows.iter()
                        .find(|b| b.cluster == c && b.pattern == pattern)
                        .map(|b| b.bytes_per_clock_per_sm)
                })
                .collect(),
        })
        .collect();
    (sizes, series)
}

pub struct Saved {
    pub latency: Vec<LatencyRow>,
    pub occupancy: Vec<OccupancyRow>,
    pub bandwidth: Vec<BandwidthRow>,
    /// `None` for a run from before the writes.
    pub writes: Option<WriteRows>,
}

pub fn read(dir: &Path) -> Result<Saved> {
    use crate::report::saved::{find, read_csv};
    let writes = match find(dir, "dsm-stores.csv") {
        None => None,
        Some(_) => Some(WriteRows {
            stores: read_csv(dir, "dsm-stores.csv")?,
            threads: read_csv(dir, "dsm-threads.csv")?,
            histogram: read_csv(dir, "dsm-histogram.csv")?,
        }),
    };
    Ok(Saved {
        latency: read_csv(dir, "dsm-latency.csv")?,
        occupancy: read_csv(dir, "dsm-occupancy.csv")?,
        bandwidth: read_csv(dir, "dsm-bandwidth.csv")?,
        writes,
    })
}

/// The summary's rows: local and windowed own-block latency, the remote latency per cluster
/// size and its growth per block, the clusters that fit, and every read pattern's rate.
pub fn figures(dir: &Path) -> Result<Vec<Figure>> {
    let saved = read(dir)?;
    let mut r = Rows::new("dsm", "Distributed shared memory", "dsm-latency.csv");
    if let Some(first) = saved.latency.first() {
        r.labelled(
            "own shared memory, ld.shared latency",
            Some(first.local_cycles),
            "cycles",
            "one thread, mean of 2048 loads".into(),
        );
        r.labelled(
            "own shared memory through the cluster window latency",
            Some(first.own_through_window_cycles),
            "cycles",
            "one thread, mean of 2048 loads".into(),
        );
    }
    for row in &saved.latency {
        r.push(
            &format!(
                "another block's shared memory latency, cluster of {}",
                row.cluster
            ),
            Some(row.remote_cycles),
            "cycles",
            Some((row.remote_min, row.remote_max, "min-max over ranks")),
        );
    }
    if let Some(slope) = growth(&saved.latency) {
        r.push(
            "remote latency growth per block of cluster size",
            Some(slope.estimate),
            "cycles",
            Some((slope.ci95_low, slope.ci95_high, "95% CI")),
        );
        r.domain(Domain::Fitted);
    }
    r.from("dsm-occupancy.csv");
    let largest = saved
        .occupancy
        .iter()
        .filter(|o| o.max_active_clusters > 0)
        .map(|o| o.cluster)
        .max();
    r.labelled(
        "largest cluster that fits",
        largest.map(f64::from),
        "blocks",
        "one 1024-thread block per SM".into(),
    );
    for o in saved
        .occupancy
        .iter()
        .filter(|o| o.cluster.is_power_of_two() && o.cluster > 1)
    {
        r.labelled(
            &format!("clusters of {} that fit at once", o.cluster),
            Some(f64::from(o.max_active_clusters)),
            "clusters",
            "cuOccupancyMaxActiveClusters".into(),
        );
    }
    r.from("dsm-bandwidth.csv");
    // Bytes a block reads from any block's shared memory reach its SM through the SM's data path.
    let ceiling = crate::report::ceilings::sm_bytes_per_clock();
    for b in &saved.bandwidth {
        let quantity = format!("read {}, cluster of {}", b.pattern, b.cluster);
        let rate = [b.bytes_per_clock_per_sm, b.bytes_per_clock_per_sm_min, b.bytes_per_clock_per_sm_max];
        per_sm_row(&mut r, &quantity, rate, "B/clock/SM", Some(&ceiling));
    }
    if let Some(writes) = &saved.writes {
        write_figures(&mut r, writes, &ceiling);
    }
    Ok(r.finish())
}

/// The writes' rows: every store's rate, the pair partner's per block size, every histogram's
/// adds per clock per SM.
fn write_figures(r: &mut Rows, writes: &WriteRows, ceiling: &Ceiling) {
    r.from("dsm-stores.csv");
    for b in &writes.stores {
        let quantity = format!("store {}, cluster of {}", b.pattern, b.cluster);
        let rate = [b.bytes_per_clock_per_sm, b.bytes_per_clock_per_sm_min, b.bytes_per_clock_per_sm_max];
        per_sm_row(r, &quantity, rate, "B/clock/SM", Some(ceiling));
    }
    r.from("dsm-threads.csv");
    for t in &writes.threads {
        let quantity = format!(
            "{} pair partner, cluster of {}, {} threads per block",
            t.operation, t.cluster, t.threads
        );
        let rate = [t.bytes_per_clock_per_sm, t.bytes_per_clock_per_sm_min, t.bytes_per_clock_per_sm_max];
        per_sm_row(r, &quantity, rate, "B/clock/SM", Some(ceiling));
    }
    r.from("dsm-histogram.csv");
    for h in &writes.histogram {
        let quantity = format!(
            "histogram of {} bins {}, cluster of {}",
            h.bins, h.operation, h.cluster
        );
        let rate = [h.adds_per_clock_per_sm, h.adds_per_clock_per_sm_min, h.adds_per_clock_per_sm_max];
        per_sm_row(r, &quantity, rate, "ops/clock/SM", None);
    }
}

/// A rate's row: the median over SMs with their range, held to `ceiling` where there is one.
fn per_sm_row(r: &mut Rows, quantity: &str, [median, min, max]: [f64; 3], unit: &str, ceiling: Option<&Ceiling>) {
    r.push(quantity, Some(median), unit, Some((min, max, "min-max over SMs")));
    r.at_most(ceiling);
}

pub fn writes_title() -> &'static str {
    "Distributed shared memory: stores and histogram atomics"
}

/// `dsm-writes.png`: (a) bytes per clock per SM of every store target per cluster size; (b) the
/// pair partner's read and store per block size; (c) adds per clock per SM of every histogram
/// in the smallest and the largest cluster (log scale: one contended word and spread bins
/// differ by orders of magnitude).
pub fn draw_writes(path: &Path, title: &str, writes: &WriteRows) -> Result<()> {
    let (sizes, stores) = pattern_series(&writes.stores, &STORE_PATTERNS);
    let threads: Vec<u32> = {
        let mut t: Vec<u32> = writes.threads.iter().map(|t| t.threads).collect();
        t.dedup();
        t
    };
    let sweep: Vec<plot::BarSeries> = ["read", "store"]
        .iter()
        .zip([BLUE, ORANGE])
        .map(|(&operation, colour)| plot::BarSeries {
            label: format!("{operation}, pair partner"),
            colour,
            values: threads
                .iter()
                .map(|&n| {
                    writes
                        .threads
                        .iter()
                        .find(|t| t.threads == n && t.operation == operation)
                        .map(|t| t.bytes_per_clock_per_sm)
                })
                .collect(),
        })
        .collect();
    // The smallest and the largest cluster (the table holds every size): twelve bars of every
    // operation would not leave their labels room.
    let ends: Vec<u32> = {
        let mut e: Vec<u32> = sizes.first().into_iter().chain(sizes.last()).copied().collect();
        e.dedup();
        e
    };
    let cases: Vec<(u32, u32)> = ends
        .iter()
        .flat_map(|&c| HISTOGRAM_BINS.iter().map(move |&b| (c, b)))
        .collect();
    let histograms: Vec<plot::BarSeries> = HISTOGRAM_OPS
        .iter()
        .zip([GREEN, BLUE, RED])
        .map(|(&(_, _, operation), colour)| plot::BarSeries {
            label: operation.into(),
            colour,
            values: cases
                .iter()
                .map(|&(c, b)| {
                    writes
                        .histogram
                        .iter()
                        .find(|h| h.cluster == c && h.bins == b && h.operation == operation)
                        .map(|h| h.adds_per_clock_per_sm)
                })
                .collect(),
        })
        .collect();
    let design = plot::Design::panels((2100, 700), 3).with_legend(4);
    plot::titled_plot!(path, design, title, |root| {
        let areas = plot::panels(&root, 3);
        plot::grouped_bars(
            &areas[0],
            "(a) storing 64 KiB per pass, by blocks per cluster",
            &sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            &stores,
            "bytes per clock per SM",
            false,
        )?;
        plot::grouped_bars(
            &areas[1],
            &format!("(b) pair partner, clusters of {SWEEP_CLUSTER}, by threads per block"),
            &threads.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
            &sweep,
            "bytes per clock per SM",
            false,
        )?;
        plot::grouped_bars(
            &areas[2],
            "(c) histogram adds, by blocks per cluster / bins",
            &cases
                .iter()
                .map(|(c, b)| format!("{c} / {b}"))
                .collect::<Vec<_>>(),
            &histograms,
            "adds per clock per SM",
            true,
        )?;
    })
    .context("drawing dsm writes")
}

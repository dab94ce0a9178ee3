//! Files of `gpubench calibrate`: `outcomes.csv` (each simulated cache, what was stated and
//! whether it was right), `reliability.csv` and `reliability.png` (stated confidence against
//! the share right, per tenth), `calibration.json` (the study's settings and bins).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use plotters::prelude::*;

use super::plot::{self, BLUE, FONT, GREY};
use super::run_dir::{RunDir, csv_bytes};
use super::saved;
use crate::analysis::calibration::families::{Item, groups};
use crate::analysis::calibration::{Bin, Outcome, fit_map_of, reliability_of};
use crate::error::{UsageError, bail_usage};

/// One row of `outcomes.csv`: the case, then what was stated about it.
#[derive(serde::Serialize)]
struct Row<'a> {
    size_bytes: u64,
    line_bytes: u64,
    ways: u64,
    replacement: &'a str,
    hashed_index: bool,
    next_line_prefetch: bool,
    victim_lines: u64,
    sector_bytes: Option<u64>,
    noise_cycles: f64,
    outliers: bool,
    coarse: bool,
    stride_bytes: u64,
    hit_cycles: f64,
    miss_cycles: f64,
    miss_spread_cycles: f64,
    seed: u64,
    reading: &'a str,
    confidence: Option<f64>,
    raw_confidence: Option<f64>,
    basis: &'a str,
    stated_size_bytes: Option<u64>,
    stated_line_bytes: Option<u64>,
    stated_fetch_bytes: Option<u64>,
    stated_ways: Option<u64>,
    right: bool,
    capacity_bytes: u64,
    capacity_hits_up_to_bytes: Option<u64>,
    capacity_low_bytes: Option<u64>,
    capacity_high_bytes: Option<u64>,
    capacity_covered: Option<bool>,
}

pub fn write(
    run: &RunDir,
    outcomes: &[Outcome],
    bins: &[Bin],
    settings: &serde_json::Value,
) -> Result<()> {
    let rows = outcomes.iter().map(|o| Row {
        size_bytes: o.case.size_bytes,
        line_bytes: o.case.line_bytes,
        ways: o.case.ways,
        replacement: o.case.replacement,
        hashed_index: o.case.hashed_index,
        next_line_prefetch: o.case.next_line_prefetch,
        victim_lines: o.case.victim_lines,
        sector_bytes: o.case.sector_bytes,
        noise_cycles: o.case.noise_cycles,
        outliers: o.case.outliers,
        coarse: o.case.coarse,
        stride_bytes: o.case.stride_bytes,
        hit_cycles: o.case.hit_cycles,
        miss_cycles: o.case.miss_cycles,
        miss_spread_cycles: o.case.miss_spread_cycles,
        seed: o.case.seed,
        reading: o.reading,
        confidence: o.confidence,
        raw_confidence: o.raw_confidence,
        basis: o.basis,
        stated_size_bytes: o.stated_size_bytes,
        stated_line_bytes: o.stated_line_bytes,
        stated_fetch_bytes: o.stated_fetch_bytes,
        stated_ways: o.stated_ways,
        right: o.right,
        capacity_bytes: o.case.capacity_bytes(),
        capacity_hits_up_to_bytes: o.capacity.map(|c| c.hits_up_to_bytes),
        capacity_low_bytes: o.capacity.map(|c| c.low_bytes),
        capacity_high_bytes: o.capacity.map(|c| c.high_bytes),
        capacity_covered: o.capacity_covered(),
    });
    let answers = outcomes.iter().map(|o| (o.confidence, o.right));
    write_study(run, &csv_bytes(rows)?, answers, bins, settings)
}

/// The study's files from `outcomes.csv`'s bytes and each answer's (confidence, right).
fn write_study(
    run: &RunDir,
    outcomes_csv: &[u8],
    answers: impl Iterator<Item = (Option<f64>, bool)>,
    bins: &[Bin],
    settings: &serde_json::Value,
) -> Result<()> {
    let (mut readings, mut answered, mut right) = (0, 0, 0);
    for (confidence, is_right) in answers {
        readings += 1;
        answered += usize::from(confidence.is_some());
        right += usize::from(is_right);
    }
    run.write("outcomes.csv", outcomes_csv)?;
    run.write_csv("reliability.csv", bins)?;
    run.write_json(
        "calibration.json",
        &serde_json::json!({
            "settings": settings,
            "cases": readings,
            "answered": answered,
            "right": right,
            "bins": bins,
            "method": "each case a simulated cache (LRU, FIFO, tree-PLRU, bit-PLRU, SRRIP, bimodal insertion, random; hashed index 15 %, next-line prefetch 15 %, victim buffer of 2-16 lines 15 %, sectored lines 15 % of those of 64 B or more; a miss cost by line (a per-line offset of 2-25 % of the rise) 15 %; noise 0.02-1 cycle; outliers 20 %; coarse sweeps 20 %) swept as an ascending chase and as a descending one; each case read twice by cache_inference as a run is (the ascending chase alone, and both: reading); right = every stated line and way count true and the size within a line of the capacity (sets and victim buffer), or, for a size stated as the capacity interval (a misfit), the interval holding it; capacity_covered = the capacity interval holds that capacity",
        }),
    )
}

/// The settings of one study directory that a merge checks.
#[derive(serde::Deserialize)]
struct ShardSettings {
    cases: u64,
    seed: u64,
    #[serde(default)]
    first_case: u64,
    #[serde(default)]
    seconds: f64,
    git_commit: Option<String>,
}

#[derive(serde::Deserialize)]
struct Shard {
    settings: ShardSettings,
}

/// What `outcomes.csv` says of one answer: its basis, raw and stated confidence, and whether
/// it was right (the columns the diagram and the table are made from).
#[derive(Debug, serde::Deserialize)]
pub struct Answer {
    pub confidence: Option<f64>,
    pub raw_confidence: Option<f64>,
    pub basis: String,
    pub right: bool,
    /// The case's family (studies before the families were split: no victim buffers, no
    /// sectors, no capacity interval).
    #[serde(default)]
    pub replacement: String,
    #[serde(default)]
    pub hashed_index: bool,
    #[serde(default)]
    pub next_line_prefetch: bool,
    #[serde(default)]
    pub victim_lines: u64,
    pub sector_bytes: Option<u64>,
    pub capacity_covered: Option<bool>,
    /// Studies before the per-line miss cost: none.
    #[serde(default)]
    pub miss_spread_cycles: f64,
}

impl Answer {
    /// The answer as the held-out-family split reads it.
    pub fn item(&self) -> Item<'_> {
        Item {
            groups: groups(
                &self.replacement,
                self.hashed_index,
                self.next_line_prefetch,
                self.victim_lines,
                self.sector_bytes.is_some(),
                self.miss_spread_cycles > 0.0,
            ),
            basis: &self.basis,
            raw_confidence: self.raw_confidence,
            right: self.right,
            covered: self.capacity_covered,
        }
    }
}

/// The answers of the study in `dir` (its `outcomes.csv`, plain or gzip-compressed).
pub fn answers(dir: &Path) -> Result<Vec<Answer>> {
    saved::read_csv(dir, "outcomes.csv")
}

/// Shards joined into one study, not yet written.
pub struct Merged {
    outcomes_csv: Vec<u8>,
    pub answers: Vec<Answer>,
    pub bins: Vec<Bin>,
    /// The calibration table this study would make (`calibration::fit_map`).
    pub table: Vec<(String, [f64; 12])>,
    pub seed: u64,
    pub cases: u64,
    settings: serde_json::Value,
}

impl Merged {
    pub fn write(&self, run: &RunDir) -> Result<()> {
        write_study(
            run,
            &self.outcomes_csv,
            self.answers.iter().map(|a| (a.confidence, a.right)),
            &self.bins,
            &self.settings,
        )
    }
}

/// Joins the studies in `shards` (one seed, one build, consecutive cases: `gpubench
/// calibrate --first-case`) into one study, as if it had run at once. Shards that do not
/// make one study are refused in a sentence.
pub fn merge(shards: &[PathBuf]) -> Result<Merged> {
    let mut read: Vec<(&PathBuf, ShardSettings)> = shards
        .iter()
        .map(|dir| {
            Ok((
                dir,
                saved::read_json::<Shard>(dir, "calibration.json")?.settings,
            ))
        })
        .collect::<Result<_>>()?;
    read.sort_by_key(|(_, s)| s.first_case);
    let (first_dir, first) = &read[0];
    for pair in read.windows(2) {
        let ((a_dir, a), (b_dir, b)) = (&pair[0], &pair[1]);
        let refuse = |why: String| -> Result<()> {
            Err(UsageError::new(format!(
                "{} and {} are not shards of one study: {why}; run each with the same --seed on one build and consecutive --first-case",
                a_dir.display(),
                b_dir.display()
            ))
            .into())
        };
        if a.seed != b.seed {
            refuse(format!("seeds {} and {}", a.seed, b.seed))?;
        }
        if a.git_commit != first.git_commit || b.git_commit != first.git_commit {
            refuse("they were run by different builds".to_string())?;
        }
        if a.first_case + a.cases != b.first_case {
            refuse(format!(
                "the first ends before case {}, the second starts at case {}",
                a.first_case + a.cases,
                b.first_case
            ))?;
        }
    }
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header: Option<csv::StringRecord> = None;
    let mut answers = Vec::new();
    for (dir, settings) in &read {
        let path = saved::find(dir, "outcomes.csv")
            .with_context(|| format!("{} has no outcomes.csv", dir.display()))?;
        let text = crate::input::read_text(&path)?;
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let this_header = reader.headers()?.clone();
        match &header {
            None => {
                writer.write_record(&this_header)?;
                header = Some(this_header.clone());
            }
            Some(h) if *h != this_header => {
                bail_usage!(
                    "{} has other columns than {}: shards must come from one build",
                    path.display(),
                    first_dir.display()
                );
            }
            Some(_) => {}
        }
        let mut readings = 0;
        for record in reader.records() {
            let record = record.with_context(|| format!("unreadable row in {}", path.display()))?;
            let answer: Answer = record
                .deserialize(Some(&this_header))
                .with_context(|| format!("unreadable row in {}", path.display()))?;
            answers.push(answer);
            writer.write_record(&record)?;
            readings += 1;
        }
        // Two readings per case: the ascending chase alone and both directions.
        if readings != 2 * settings.cases {
            bail_usage!(
                "{} has {readings} rows for {} cases (two each): the study is damaged",
                path.display(),
                settings.cases
            );
        }
    }
    let cases: u64 = read.iter().map(|(_, s)| s.cases).sum();
    let bins = reliability_of(answers.iter().map(|a| (a.confidence, a.right)));
    let settings = serde_json::json!({
        "cases": cases,
        "seed": first.seed,
        "first_case": first.first_case,
        "seconds": read.iter().map(|(_, s)| s.seconds).sum::<f64>(),
        "git_commit": first.git_commit,
        "merged_from": read.iter().map(|(dir, s)| serde_json::json!({
            "directory": dir.file_name().map(|n| n.to_string_lossy().into_owned()),
            "first_case": s.first_case,
            "cases": s.cases,
        })).collect::<Vec<_>>(),
        "gpubench_version": env!("CARGO_PKG_VERSION"),
    });
    let table = fit_map_of(
        answers
            .iter()
            .map(|a| (a.basis.as_str(), a.raw_confidence, a.right)),
    );
    Ok(Merged {
        table,
        outcomes_csv: writer.into_inner().context("finishing outcomes.csv")?,
        answers,
        bins,
        seed: first.seed,
        cases,
        settings,
    })
}

/// The reliability diagram of a study of `cases` simulated caches (seed `seed`) drawn into
/// `run`, and its table printed; the diagram's title, which the families' diagram takes too.
pub fn draw_into(run: &RunDir, cases: u64, seed: u64, bins: &[Bin]) -> Result<String> {
    let title = format!("Cache-level confidence on {cases} simulated caches (seed {seed})");
    run.write_plot("reliability", |path| draw(path, &title, bins))?;
    print!("{}", render(bins));
    Ok(title)
}

pub fn render(bins: &[Bin]) -> String {
    let mut text = format!(
        "{:<12} {:>8} {:>16} {:>12}\n",
        "confidence", "answers", "mean confidence", "share right"
    );
    for b in bins {
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
        text += &format!(
            "{:<12} {:>8} {:>16} {:>12}\n",
            format!("{:.1}-{:.1}", b.from, b.to),
            b.answers,
            f(b.mean_confidence),
            f(b.share_right)
        );
    }
    text
}

/// The ±0.1 band around the diagonal of a reliability diagram, as a polygon.
pub const BAND: [(f64, f64); 6] = [
    (0.0, 0.1),
    (0.9, 1.0),
    (1.0, 1.0),
    (1.0, 0.9),
    (0.1, 0.0),
    (0.0, 0.0),
];

/// The reliability diagram: each bin's share right against its mean stated confidence, the
/// diagonal where they agree, and the ±0.1 band the study allows.
pub fn draw(path: &Path, title: &str, bins: &[Bin]) -> Result<()> {
    plot::titled_plot!(path, (900, 800), title, |root| {
        let mut chart =
            plot::framed_chart(&root, "", [20, 60, 80]).build_cartesian_2d(0.0..1.0, 0.0..1.0)?;
        plot::mesh(
            &mut chart,
            "stated confidence (bin mean)",
            "share of answers right",
        )
        .draw()?;
        chart.draw_series(std::iter::once(Polygon::new(BAND.to_vec(), GREY.mix(0.2))))?;
        chart.draw_series(LineSeries::new(
            vec![(0.0, 0.0), (1.0, 1.0)],
            GREY.stroke_width(2),
        ))?;
        let points: Vec<(f64, f64, usize)> = bins
            .iter()
            .filter_map(|b| Some((b.mean_confidence?, b.share_right?, b.answers)))
            .collect();
        chart.draw_series(LineSeries::new(
            points.iter().map(|(c, s, _)| (*c, *s)),
            BLUE.stroke_width(2),
        ))?;
        for (c, s, n) in &points {
            chart.draw_series(std::iter::once(Circle::new((*c, *s), 6, BLUE.filled())))?;
            chart.draw_series(std::iter::once(Text::new(
                format!("{n}"),
                (*c, (*s - 0.04).max(0.01)),
                (FONT, plot::TICK_SIZE),
            )))?;
        }
    })
    .context("drawing the reliability diagram")
}

//! Files of `gpubench dpx`: `dpx.json` (every sample as taken: the latency chains' cycles per
//! repeat, the throughput kernels' span on every SM per repeat, the SASS opcode counts of every
//! kernel, the counts and the method), `functions.csv` (per function: the SASS of one call,
//! its latency and its rate per SM), `mixes.csv` (per mix: the rates alone and mixed, the two
//! predictions and the verdict) and `dpx.sass`. The summary's rows are derived from
//! `dpx.json` alone.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::analysis::{self, PipeReading, Pipes};
use super::measure::{
    CHAINS, FUNCTIONS, LATENCY_STEPS, MIXES, Samples, THREADS, THROUGHPUT_STEPS, latency_entries,
};
use crate::analysis::stats::Summary;
use crate::report::figures::{Figure, Reason, Rows};
use crate::report::keys::{self, SEP};
use crate::report::run_dir::RunDir;

pub const JSON: &str = "dpx.json";
pub const FUNCTIONS_CSV: &str = "functions.csv";
pub const MIXES_CSV: &str = "mixes.csv";
/// The summary's section.
pub const SECTION: &str = "DPX";
/// The unit of every rate.
pub const RATE_UNIT: &str = "calls/clk/SM";

/// `dpx.json`, written by [`write`] and read back by [`read`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    pub repeats: u32,
    pub latency_iterations: u32,
    pub throughput_iterations: u32,
    pub samples: Samples,
    pub method: String,
    pub sass: KernelsSass,
}

/// The SASS of the module's kernels ([`KernelInstructions`]).
pub type KernelsSass = crate::report::saved::KernelInstructions;

/// One line of `functions.csv`, read back by [`read_functions`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionRow {
    pub name: String,
    pub call: String,
    pub dpx: bool,
    /// The SASS of one call in words ("VIADDMNMX ×1"); empty without the SASS.
    pub sass_per_call: String,
    /// Cycles per call of the one-thread chain: median over the repeats, with the range.
    pub latency_cycles: Option<f64>,
    pub latency_cycles_min: Option<f64>,
    pub latency_cycles_max: Option<f64>,
    /// Calls per clock per SM at full occupancy: median over the SMs (each SM's own the
    /// median over the repeats), with the range over the SMs.
    pub calls_per_clk_sm: Option<f64>,
    pub calls_per_clk_sm_min: Option<f64>,
    pub calls_per_clk_sm_max: Option<f64>,
    pub sms: usize,
}

/// One line of `mixes.csv`, read back by [`read_mixes`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixRow {
    pub name: String,
    pub a: String,
    pub b: String,
    /// Calls per clock per SM of A alone, of B alone and of the mix (both counted): medians
    /// over the SMs.
    pub rate_a: f64,
    pub rate_b: f64,
    pub rate_mix: f64,
    pub shared_prediction: f64,
    pub separate_prediction: f64,
    pub pipes: Pipes,
}

/// What a run reads as: every function's row and every mix's reading, with each rate's
/// value per SM.
pub struct Table {
    pub functions: Vec<(FunctionRow, Vec<Option<f64>>)>,
    pub mixes: Vec<(MixRow, Vec<Option<f64>>)>,
}

/// The calls per thread the long latency chain adds over the short one.
fn latency_added_calls(reading: &Reading) -> u64 {
    u64::from(LATENCY_STEPS[1] - LATENCY_STEPS[0]) * u64::from(reading.latency_iterations)
}

/// The calls per block the long throughput kernel adds over the short one.
fn throughput_added_calls(reading: &Reading) -> u64 {
    u64::from(THROUGHPUT_STEPS[1] - THROUGHPUT_STEPS[0])
        * u64::from(CHAINS)
        * u64::from(THREADS)
        * u64::from(reading.throughput_iterations)
}

/// The SASS of one call of `name`, from its latency kernels; `None` without the SASS.
pub fn call_sass(reading: &Reading, name: &str) -> Option<BTreeMap<String, f64>> {
    let [short, long] = latency_entries(name);
    let counts = &reading.sass.instructions;
    let added = u64::from(LATENCY_STEPS[1] - LATENCY_STEPS[0]);
    Some(analysis::sass_per_call(counts.get(&short)?, counts.get(&long)?, added))
}

/// The per-SM rates of `name`'s throughput kernels and their summary over the SMs.
fn rates(reading: &Reading, name: &str) -> (Vec<Option<f64>>, Option<Summary>) {
    let per_sm = reading
        .samples
        .throughput
        .iter()
        .find(|t| t.name == name)
        .map(|t| analysis::rate_per_sm(&t.per_sm, throughput_added_calls(reading)))
        .unwrap_or_default();
    let values: Vec<f64> = per_sm.iter().flatten().copied().collect();
    (per_sm, Summary::of(&values))
}

/// Every function's and mix's reading.
pub fn table(reading: &Reading) -> Table {
    let functions = FUNCTIONS
        .iter()
        .map(|f| {
            let latency = reading
                .samples
                .latency
                .iter()
                .find(|l| l.name == f.name)
                .and_then(|l| analysis::per_call(&l.cycles, latency_added_calls(reading)));
            let (per_sm, rate) = rates(reading, f.name);
            let row = FunctionRow {
                name: f.name.into(),
                call: f.call.into(),
                dpx: f.dpx,
                sass_per_call: call_sass(reading, f.name)
                    .map(|s| analysis::sass_words(&s))
                    .unwrap_or_default(),
                latency_cycles: latency.map(|s| s.median),
                latency_cycles_min: latency.map(|s| s.min),
                latency_cycles_max: latency.map(|s| s.max),
                calls_per_clk_sm: rate.map(|s| s.median),
                calls_per_clk_sm_min: rate.map(|s| s.min),
                calls_per_clk_sm_max: rate.map(|s| s.max),
                sms: rate.map_or(0, |s| s.n),
            };
            (row, per_sm)
        })
        .collect::<Vec<_>>();
    let rate_of = |name: &str| {
        functions
            .iter()
            .find(|(row, _)| row.name == name)
            .and_then(|(row, _)| row.calls_per_clk_sm)
    };
    let mixes = MIXES
        .iter()
        .filter_map(|m| {
            let (per_sm, mixed) = rates(reading, &m.name());
            let verdict = analysis::pipes(rate_of(m.a)?, rate_of(m.b)?, mixed?.median)?;
            Some((mix_row(&m.name(), m.a, m.b, &verdict), per_sm))
        })
        .collect();
    Table { functions, mixes }
}

fn mix_row(name: &str, a: &str, b: &str, v: &PipeReading) -> MixRow {
    MixRow {
        name: name.into(),
        a: a.into(),
        b: b.into(),
        rate_a: v.rate_a,
        rate_b: v.rate_b,
        rate_mix: v.rate_mix,
        shared_prediction: v.shared_prediction,
        separate_prediction: v.separate_prediction,
        pipes: v.pipes,
    }
}

pub fn write(run: &RunDir, reading: &Reading) -> Result<()> {
    let table = table(reading);
    run.write_csv(FUNCTIONS_CSV, table.functions.into_iter().map(|(row, _)| row))?;
    run.write_csv(MIXES_CSV, table.mixes.into_iter().map(|(row, _)| row))?;
    run.write_json(JSON, reading)
}

pub fn read(dir: &Path) -> Result<Reading> {
    crate::report::saved::read_json(dir, JSON)
}

pub fn read_functions(dir: &Path) -> Result<Vec<FunctionRow>> {
    crate::report::saved::read_csv(dir, FUNCTIONS_CSV)
}

pub fn read_mixes(dir: &Path) -> Result<Vec<MixRow>> {
    crate::report::saved::read_csv(dir, MIXES_CSV)
}

/// A key of this suite: `dpx/NAME/WHAT`.
fn key(name: &str, what: &str) -> String {
    format!("dpx{SEP}{name}{SEP}{what}")
}

/// The verdict of a mix in words.
pub fn pipes_words(row: &MixRow) -> String {
    let verdict = match row.pipes {
        Pipes::Shared => "one pipe: the mix runs at the rate a pipe shared by both predicts",
        Pipes::Separate => "separate pipes: the mix runs at the rate two pipes predict",
        Pipes::NotIdentified => "not identified: the mix lies near neither prediction, or they are too close",
    };
    format!(
        "{verdict} ({:.1} {RATE_UNIT} mixed; shared predicts {:.1}, separate {:.1}; {} alone {:.1}, {} alone {:.1})",
        row.rate_mix,
        row.shared_prediction,
        row.separate_prediction,
        row.a,
        row.rate_a,
        row.b,
        row.rate_b
    )
}

/// The summary's rows: per function its latency, its rate per SM (with every SM's value) and
/// the SASS of one call; per mix its rate and the verdict on the pipes.
pub fn figures(dir: &Path) -> Result<Vec<Figure>> {
    let reading = read(dir)?;
    let table = table(&reading);
    let mut r = Rows::new("dpx", SECTION, JSON);
    let latency_label = format!(
        "min-max over {} repeats; (long − short chain) over the {} calls it adds",
        reading.repeats,
        latency_added_calls(&reading)
    );
    let arch = if reading.sass.arch.is_empty() {
        "the device".to_string()
    } else {
        reading.sass.arch.clone()
    };
    for (row, per_sm) in &table.functions {
        let folded = call_sass(&reading, &row.name).is_some_and(|s| s.is_empty());
        let call = row.call.split(" (").next().unwrap_or(&row.call);
        let interval = row
            .latency_cycles_min
            .zip(row.latency_cycles_max)
            .map(|(l, h)| (l, h, latency_label.as_str()));
        r.key(key(&row.name, keys::LATENCY)).push(
            &format!("{call} latency, cycles per call"),
            row.latency_cycles,
            "cycles",
            interval,
        );
        if folded {
            r.unresolved(Reason::NotIdentifiable, "the chain compiled to no instruction");
        }
        let label = format!(
            "min-max over {} SMs, each the median of {} repeats; full occupancy",
            row.sms, reading.repeats
        );
        let interval = row
            .calls_per_clk_sm_min
            .zip(row.calls_per_clk_sm_max)
            .map(|(l, h)| (l, h, label.as_str()));
        r.key(key(&row.name, keys::THROUGHPUT)).push(
            &format!("{call} throughput"),
            row.calls_per_clk_sm,
            RATE_UNIT,
            interval,
        );
        r.per_sm(per_sm.clone());
        if folded {
            r.unresolved(Reason::NotIdentifiable, "the chain compiled to no instruction");
        }
        let sass = if reading.sass.instructions.is_empty() {
            format!("not disassembled: {}", reading.sass.status)
        } else {
            format!("{} on {arch}", row.sass_per_call)
        };
        r.key(key(&row.name, "sass"))
            .text(&format!("{call}: SASS of one call"), Some(&sass));
    }
    for (row, per_sm) in &table.mixes {
        let label = format!(
            "min-max over the SMs, each the median of {} repeats; both kinds of call counted",
            reading.repeats
        );
        let (_, mixed) = rates(&reading, &row.name);
        let interval = mixed.map(|s| (s.min, s.max, label.as_str()));
        r.key(key(&row.name, keys::THROUGHPUT)).push(
            &format!("{} and {} alternating, throughput", row.a, row.b),
            Some(row.rate_mix),
            RATE_UNIT,
            interval,
        );
        r.per_sm(per_sm.clone());
        r.key(key(&row.name, "pipes")).text(
            &format!("{} and {}: one pipe or two", row.a, row.b),
            Some(&pipes_words(row)),
        );
        if row.pipes == Pipes::NotIdentified {
            r.settle(Reason::NotIdentifiable);
        }
    }
    Ok(r.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::dpx::measure::{LatencySamples, SmSpan, ThroughputSamples};

    const SMS: usize = 4;

    /// Latency `cycles` per call over 64 trips, 32 and 128 calls a trip, 500 cycles around.
    fn latency(name: &str, cycles: f64) -> LatencySamples {
        let at = |calls: f64| (500.0 + cycles * 64.0 * calls) as i64;
        LatencySamples {
            name: name.into(),
            cycles: vec![[at(32.0), at(128.0)]; 3],
        }
    }

    /// Every SM at `rate` calls per clock: 8 blocks, the long kernel adding 8 × 8 × 256 × 32
    /// calls per block.
    fn throughput(name: &str, rate: f64) -> ThroughputSamples {
        let added = 8.0 * 8.0 * 256.0 * 32.0 * 8.0;
        let span = |cycles: f64| SmSpan {
            blocks: 8,
            cycles: cycles as i64,
        };
        ThroughputSamples {
            name: name.into(),
            per_sm: vec![[vec![span(1000.0); SMS], vec![span(1000.0 + added / rate); SMS]]; 3],
        }
    }

    fn reading() -> Reading {
        let mut instructions = BTreeMap::new();
        for f in &FUNCTIONS {
            let [short, long] = latency_entries(f.name);
            let op = if f.name == "imad" { "IMAD" } else { "VIADDMNMX" };
            instructions.insert(short, BTreeMap::from([(op.to_string(), 32), ("EXIT".into(), 1)]));
            instructions.insert(long, BTreeMap::from([(op.to_string(), 128), ("EXIT".into(), 1)]));
        }
        let rate = |name: &str| match name {
            "imad" => 64.0,
            "mix_viaddmax_s32_iadd3" => 64.0,
            "mix_viaddmax_s32_imad" => 126.0,
            "mix_vimax3_s32_iadd3" => 90.0,
            _ => 64.0,
        };
        let names = FUNCTIONS
            .iter()
            .map(|f| f.name.to_string())
            .chain(MIXES.iter().map(|m| m.name()));
        Reading {
            repeats: 3,
            latency_iterations: 64,
            throughput_iterations: 32,
            samples: Samples {
                latency: FUNCTIONS.iter().map(|f| latency(f.name, 4.0)).collect(),
                throughput: names.map(|n| throughput(&n, rate(&n))).collect(),
            },
            method: "synthetic".into(),
            sass: KernelsSass {
                status: "written".into(),
                arch: "sm_90".into(),
                instructions,
            },
        }
    }

    #[test]
    fn a_written_run_reads_back_and_gives_its_figures() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create(Some(&dir.path().join("run")), "dpx").unwrap();
        let written = reading();
        write(&run, &written).unwrap();
        assert_eq!(read(run.path()).unwrap(), written);
        let functions = read_functions(run.path()).unwrap();
        assert_eq!(functions.len(), FUNCTIONS.len());
        assert_eq!(functions[4].sass_per_call, "VIADDMNMX ×1");
        assert!((functions[4].latency_cycles.unwrap() - 4.0).abs() < 1e-9);
        assert!((functions[4].calls_per_clk_sm.unwrap() - 64.0).abs() < 1e-6);
        assert_eq!(functions[4].sms, SMS);
        let mixes = read_mixes(run.path()).unwrap();
        assert_eq!(mixes.len(), MIXES.len());
        assert_eq!(mixes[0].pipes, Pipes::Shared);
        assert_eq!(mixes[1].pipes, Pipes::Separate);
        assert_eq!(mixes[2].pipes, Pipes::NotIdentified);
        let figures = figures(run.path()).unwrap();
        assert_eq!(figures.len(), FUNCTIONS.len() * 3 + MIXES.len() * 2);
        let mut keys: Vec<&str> = figures.iter().map(|f| f.key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), figures.len(), "every key is its own");
        for figure in &figures {
            assert!(figure.key.starts_with("dpx/"), "{}", figure.key);
            assert!(figure.value.is_some() != figure.text.is_some(), "{figure:?}");
            assert_eq!(crate::report::domain::violation(figure), None);
        }
        let find = |key: &str| figures.iter().find(|f| f.key == key).unwrap();
        let latency = find("dpx/viaddmax_s32/latency");
        assert!((latency.value.unwrap() - 4.0).abs() < 1e-9);
        assert_eq!(latency.unit, "cycles");
        let rate = find("dpx/viaddmax_s32/throughput");
        assert_eq!(rate.per_sm.as_ref().unwrap().len(), SMS);
        assert_eq!(
            find("dpx/vibmax_s32/sass").text.as_deref(),
            Some("VIADDMNMX ×1 on sm_90")
        );
        assert!(find("dpx/mix_viaddmax_s32_imad/pipes").text.as_deref().unwrap().starts_with("separate pipes"));
        assert!(find("dpx/mix_vimax3_s32_iadd3/pipes").is_unresolved());
        assert!(!find("dpx/mix_viaddmax_s32_iadd3/pipes").is_unresolved());
    }

    #[test]
    fn a_chain_folded_away_leaves_its_figures_unresolved() {
        let mut folded = reading();
        let [short, long] = latency_entries("vimax3_s32");
        let counts = folded.sass.instructions.get(&short).unwrap().clone();
        folded.sass.instructions.insert(long, counts);
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create(Some(&dir.path().join("run")), "dpx").unwrap();
        write(&run, &folded).unwrap();
        let figures = figures(run.path()).unwrap();
        let find = |key: &str| figures.iter().find(|f| f.key == key).unwrap();
        assert!(find("dpx/vimax3_s32/latency").is_unresolved());
        assert!(find("dpx/vimax3_s32/throughput").is_unresolved());
        assert!(!find("dpx/vimin3_s32/latency").is_unresolved());
        assert!(
            find("dpx/vimax3_s32/sass")
                .text
                .as_deref()
                .unwrap()
                .starts_with("none")
        );
    }

    #[test]
    fn without_the_sass_the_figure_says_why() {
        let mut bare = reading();
        bare.sass = KernelsSass {
            status: "no ptxas".into(),
            ..KernelsSass::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create(Some(&dir.path().join("run")), "dpx").unwrap();
        write(&run, &bare).unwrap();
        let figures = figures(run.path()).unwrap();
        let sass = figures.iter().find(|f| f.key == "dpx/imad/sass").unwrap();
        assert_eq!(sass.text.as_deref(), Some("not disassembled: no ptxas"));
    }
}

//! `gpubench export`: a machine model of the GPU from a run directory (issue #34, part 1), as
//! data others consume: identity, clocks, the memory hierarchy per space and level, latency and
//! throughput per SASS instruction, the compute units' rates, and every other figure of the
//! summary, each value with its unit, interval, uncertainty, calibrated confidence and the file
//! it came from. A value the run did not settle (confidence below 0.5, not identifiable,
//! uncalibrated, or not confirmed by a repeat) is exported as `unresolved`, with what the run
//! saw under `seen` and never under `value`. The schema is generated from these types
//! (`schemars`), versioned by [`SCHEMA_ID`], and committed as `schema/machine-model.schema.json`;
//! the same run always exports the same bytes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::figures::Figure;
use super::summary::Summary;

/// The schema's name and version; a change that breaks a reader bumps the number.
pub const SCHEMA_ID: &str = "gpubench-machine-model/2";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MachineModel {
    /// [`SCHEMA_ID`].
    pub schema: String,
    /// The run's caption: GPU, driver, clock, toolkit, gpubench version and commit, date.
    pub run: String,
    pub gpu: Gpu,
    /// Per memory space and level, in the order the run measured them.
    pub memory: Vec<MemoryLevel>,
    /// Per SASS instruction the pipeline suite timed.
    pub instructions: Vec<Instruction>,
    /// The CUDA cores' FMA rates and the tensor cores' instructions.
    pub compute: Vec<ComputeUnit>,
    /// Every figure of the summary, in its order, each naming its section.
    pub figures: Vec<Quantity>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    pub name: String,
    pub compute_capability: String,
    pub multiprocessors: i64,
    pub driver_version: Option<String>,
    pub cuda_version: String,
    /// The SM clock the run measured (MHz).
    pub sm_clock: Option<Quantity>,
    /// What the driver reports (not measured): registers, shared memory, L2, DRAM interface.
    pub registers_per_multiprocessor: Option<u64>,
    pub registers_per_block: Option<u64>,
    pub shared_memory_per_multiprocessor_bytes: Option<u64>,
    pub shared_memory_per_block_optin_bytes: Option<u64>,
    pub l2_cache_bytes: Option<u64>,
    pub memory_clock_mhz: Option<f64>,
    pub memory_bus_bits: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryLevel {
    /// global, l2, readonly, shared, constant, constant-uniform, texture, instruction, tlb.
    pub space: String,
    /// "1", "2", … for cache levels; "memory" past the last one.
    pub level: String,
    pub size: Option<Quantity>,
    /// The capacity read from the latency curve with no model of sets and ways: the largest
    /// footprint with no miss, with the interval the calibration study found to hold the true
    /// capacity on every family of caches (`docs/caches.md`; models before it: absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Quantity>,
    pub line: Option<Quantity>,
    pub ways: Option<Quantity>,
    pub sets: Option<Quantity>,
    pub latency: Option<Quantity>,
    /// The read bandwidth the bandwidth suite measured at this level, where it did.
    pub read_bandwidth: Option<Quantity>,
    /// The SASS load of the timed loop (LDG.E.64, LDC, ULDC, TLD.LZ, …).
    pub load_instruction: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Instruction {
    pub sass: String,
    pub latency: Option<Quantity>,
    pub throughput: Option<Quantity>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ComputeUnit {
    /// "FP32 FFMA", "wgmma m64n256k16 FP16→FP32".
    pub instruction: String,
    pub latency: Option<Quantity>,
    pub rate_per_sm: Option<Quantity>,
    pub rate_over_chip: Option<Quantity>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// A figure: settled, and where a repeat was made, confirmed by it.
    Figure,
    /// Seen but not settled; `seen` holds what the run saw, `value` is absent.
    Unresolved,
}

/// One value with everything a reader needs to weigh it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Quantity {
    /// The figure's stable key ([`crate::report::keys`]): what a program reading the model
    /// finds it by; the section and quantity are its words.
    pub key: String,
    pub section: String,
    pub quantity: String,
    pub status: Status,
    /// The number, for a settled figure.
    pub value: Option<f64>,
    /// What an unresolved reading saw.
    pub seen: Option<f64>,
    /// A verdict in words, for figures that are words.
    pub text: Option<String>,
    pub unit: String,
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// What `low`–`high` is, the confidence, or why the value is unresolved.
    pub uncertainty: String,
    /// The calibrated confidence of an inferred value, where one is stated.
    pub confidence: Option<f64>,
    /// The file it came from, relative to the run directory.
    pub source: String,
    /// One value per SM, indexed by `%smid` (null where that SM gave none), for a quantity
    /// that differs across the SMs (the `sm-map` suite's: an SM's L2 partition, its L2 and
    /// DSM latencies); absent for the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_sm: Option<Vec<Option<f64>>>,
}

impl Quantity {
    pub fn of(f: &Figure) -> Quantity {
        let unresolved = f.is_unresolved();
        Quantity {
            key: f.key.clone(),
            section: f.section.clone(),
            quantity: f.quantity.clone(),
            status: if unresolved {
                Status::Unresolved
            } else {
                Status::Figure
            },
            value: if unresolved { None } else { f.value },
            seen: if unresolved { f.value } else { None },
            text: f.text.clone(),
            unit: f.unit.clone(),
            low: f.low,
            high: f.high,
            uncertainty: f.uncertainty.clone(),
            confidence: f.stated_confidence(),
            source: f.source.clone(),
            per_sm: f.per_sm.clone(),
        }
    }
}

/// The machine model of `summary`, of the GPU `gpu`.
pub fn model(summary: &Summary, gpu: Gpu) -> MachineModel {
    let q = |f: Option<&Figure>| f.map(Quantity::of);
    let memory = super::curated::memory_levels(&summary.figures)
        .into_iter()
        .map(|l| MemoryLevel {
            space: l.space,
            level: l.level,
            size: q(l.size),
            capacity: q(l.capacity),
            line: q(l.line),
            ways: q(l.ways),
            sets: q(l.sets),
            latency: q(l.latency),
            read_bandwidth: q(l.read_bandwidth),
            load_instruction: l.load,
        })
        .collect();
    let instructions = super::curated::sass_instructions(&summary.figures)
        .into_iter()
        .map(|(sass, latency, throughput)| Instruction {
            sass: sass.to_string(),
            latency: Some(Quantity::of(latency)),
            throughput: q(throughput),
        })
        .collect();
    let compute = super::curated::compute_units(&summary.figures)
        .into_iter()
        .map(|u| ComputeUnit {
            instruction: u.name,
            latency: q(u.latency),
            rate_per_sm: q(u.per_sm),
            rate_over_chip: q(u.chip),
        })
        .collect();
    MachineModel {
        schema: SCHEMA_ID.into(),
        run: summary.caption.clone(),
        gpu,
        memory,
        instructions,
        compute,
        figures: summary.figures.iter().map(Quantity::of).collect(),
    }
}

/// The JSON schema of [`MachineModel`], as committed in `schema/machine-model.schema.json`.
pub fn schema() -> String {
    let schema = schemars::schema_for!(MachineModel);
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serialises");
    text.push('\n');
    text
}

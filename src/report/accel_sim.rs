//! `gpubench export --format accel-sim` (issue #34, part 2): the options of a GPGPU-Sim /
//! Accel-Sim `gpgpusim.config` that the run's machine model determines, each with a comment
//! naming the figure and its standing, and a list of the options it does not determine. The
//! file is meant to follow a base configuration of the same GPU (GPGPU-Sim takes the last
//! value of an option it reads twice), such as the simulator's own
//! `configs/tested-cfgs/SM90_H100/gpgpusim.config`. Option names and value formats are those
//! GPGPU-Sim's sources register and parse (`option_parser_register` and the `sscanf` formats in
//! `gpu-sim.cc`, `cuda-sim.cc`, `gpu-cache.h`); `tests/export.rs` checks every line against
//! the option table taken from those sources (`tests/fixtures/gpgpusim-options.tsv`).

use std::fmt::Write as _;

use super::export::{MachineModel, Quantity, Status};
use super::keys::{self, Known};

/// One option line: its name, value and why.
struct Line {
    option: &'static str,
    value: String,
    why: String,
}

/// A base configuration of the same GPU (`export --base`): the value of each option as
/// GPGPU-Sim reads the file (the last value of an option wins; `#` starts a comment). A cache
/// string's fields after its geometry (policy, MSHRs, queues), which no run measures, are taken
/// from it, so that the export appended to that base changes the geometry alone.
#[derive(Debug, Clone, PartialEq)]
pub struct Base {
    name: String,
    options: std::collections::BTreeMap<String, String>,
}

impl Base {
    /// The options of `text`, a gpgpusim.config named `name` where the export says so.
    pub fn parse(name: &str, text: &str) -> Base {
        let options = text
            .lines()
            .filter_map(|line| {
                let line = line.split('#').next()?.trim();
                let (option, value) = line.split_once(char::is_whitespace)?;
                // An option is a dash and a name ("-gpgpu_n_clusters", "-dram_latency").
                let named = option
                    .strip_prefix('-')
                    .is_some_and(|name| name.starts_with(|c: char| c.is_ascii_alphabetic()));
                named.then(|| (option.to_string(), value.trim().to_string()))
            })
            .collect();
        Base {
            name: name.to_string(),
            options,
        }
    }

    /// Whether it sets no option at all (an empty file, `/dev/null`, a JSON file: no
    /// gpgpusim.config).
    pub fn is_empty(&self) -> bool {
        self.options.is_empty()
    }

    /// The fields of cache string `option` after its geometry, where the base sets it.
    fn unmeasured_fields(&self, option: &str) -> Option<&str> {
        self.options
            .get(option)?
            .split_once(',')
            .map(|(_, rest)| rest)
    }

    /// `geometry` ("S:4:128:256") with the base's fields after it, and what to say of them;
    /// `reference` (the fields and whose they are) where the base does not set `option`.
    fn cache_string(
        base: Option<&Base>,
        option: &str,
        geometry: String,
        reference: (&str, &str),
    ) -> (String, String) {
        match base.and_then(|b| Some((b, b.unmeasured_fields(option)?))) {
            Some((base, fields)) => (
                format!("{geometry},{fields}"),
                format!("{}'s (--base), not measured", base.name),
            ),
            None => (
                format!("{geometry},{}", reference.0),
                format!("{}, not measured", reference.1),
            ),
        }
    }
}

/// What a pointer chase's load-to-use adds to GPGPU-Sim's `-gpgpu_l1_latency`: the cycles of
/// its pipeline around the L1's own (issue, operand collection, writeback). Learned by running
/// gpubench's cache suite on GPGPU-Sim configurations whose option is known: the L1 hit of
/// `results/sim/*/global` less the configuration's `-gpgpu_l1_latency` (`tests/export.rs`
/// recomputes it from those runs and fails when it drifts by more than half a cycle).
pub const L1_CHASE_OVER_OPTION: f64 = 4.1;
/// The same for an L2 hit by `ld.global.cg` and `-gpgpu_l2_rop_latency`: the interconnect's
/// two crossings and the L1's miss path (`results/sim/*/l2`), on a crossbar (`-network_mode
/// 2`), the interconnect of every configuration since Volta and the one assumed where the
/// export is given no base.
pub const L2_CHASE_OVER_OPTION: f64 = 11.9;
/// What an L2 hit's chase adds over `-gpgpu_l2_rop_latency`, by the interconnect the base
/// configuration models (its `-network_mode`), and the shipped configurations it was learned
/// on: the crossing is the interconnect's, so each is learned on configurations of that
/// interconnect only (`tests/export.rs` recomputes each from `results/sim/*/answer-key.json`;
/// `results/sim/answer-keys.md` states each run's error with it left out).
pub const L2_CHASE_OVER_OPTION_BY_NETWORK: [(&str, f64, &str); 2] = [
    (
        CROSSBAR,
        L2_CHASE_OVER_OPTION,
        "a crossbar (-network_mode 2): SM7_QV100, SM7_GV100, SM7_TITANV, SM75_RTX2060, SM75_RTX2060_S, SM86_RTX3070",
    ),
    (
        INTERSIM,
        21.9,
        "intersim's iSLIP butterfly (-network_mode 1): SM6_TITANX, SM3_KEPLER_TITAN",
    ),
];
/// GPGPU-Sim's `-network_mode` of a crossbar: what an export given no base assumes.
const CROSSBAR: &str = "2";
/// GPGPU-Sim's `-network_mode` of intersim's network.
const INTERSIM: &str = "1";
/// The same for a shared-memory chase and `-gpgpu_smem_latency` (`results/sim/*/shared`).
pub const SMEM_CHASE_OVER_OPTION: f64 = 5.0;
/// GPGPU-Sim's sectored caches ('S') split a line into four 32-byte sectors (gpu-cache.h,
/// SECTOR_CHUNCK_SIZE and SECTOR_SIZE): a fetch granularity of 32 B is written as 128 B lines.
const SECTOR_BYTES: f64 = 32.0;
const SECTORED_LINE_BYTES: f64 = 128.0;

/// Options a run does not determine, with what would: left to the base configuration (an
/// option a run did determine is left out of this list).
const NOT_DETERMINED: [(&str, &str); 12] = [
    (
        "-gpgpu_shmem_per_block",
        "not written: GPGPU-Sim's configurations give it the default per-block limit (48 or 64 KiB), the machine model carries the opt-in limit (the round trip on SM7_QV100 wrote 98304 against its 65536)",
    ),
    (
        "-gpgpu_cache:dl1",
        "not written: the conflict experiment found no plain set index (or no fetch granularity), so the L1's sets and ways are not identified",
    ),
    (
        "-gpgpu_cache:dl2",
        "not written: GPGPU-Sim's dl2 is one slice of many behind a set-index hash, and the run sees the whole L2 (split in two partitions GPGPU-Sim does not model as such): its sets and ways per slice are not identified",
    ),
    (
        "-gpgpu_cache:il1",
        "not written: no conflict experiment reads its sets and ways",
    ),
    (
        "-gpgpu_tex_cache:l1",
        "not written: no conflict experiment reads its sets and ways",
    ),
    ("-gpgpu_dram_timing_opt", "DRAM timings are not measured"),
    (
        "-dram_latency",
        "not written: in GPGPU-Sim a miss costs -dram_latency plus the DRAM timing (-gpgpu_dram_timing_opt) at the DRAM clock, which a chase does not separate (a miss by .cg added 23.0 cycles to -dram_latency 100 on SM7_QV100's HBM timing, 11.1 to 96 and 11.6 to 254 on SM75_RTX2060's and SM86_RTX3070's shared GDDR6 timing: the offset follows the DRAM timing, which the run does not measure)",
    ),
    (
        "-gpgpu_pipeline_widths",
        "issue and writeback widths are not measured",
    ),
    ("-gpgpu_num_reg_banks", "register banks are not measured"),
    (
        "-gpgpu_scheduler",
        "the warp scheduler's policy is not measured",
    ),
    (
        "-ptx_opcode_latency_tesnor",
        "the tensor pipe's latency in GPGPU-Sim's terms is not what the tensor suite times (one mma.sync or wgmma round trip)",
    ),
    ("-ptx_opcode_initiation_tensor", "as above"),
];

/// A settled number of the model, by its key ([`crate::report::keys`]).
fn settled<'a>(model: &'a MachineModel, key: Known) -> Option<&'a Quantity> {
    let key = key.key();
    model
        .figures
        .iter()
        .find(|q| q.key == key && q.status == Status::Figure && q.value.is_some())
}

/// A level's quantity of a memory space, as [`settled`] finds it.
fn memory<'a>(space: &'a str, level: &'a str, what: &'a str) -> Known<'a> {
    Known::Memory { space, level, what }
}

fn said(q: &Quantity) -> String {
    let standing = if q.uncertainty.is_empty() {
        String::new()
    } else {
        format!(", {}", q.uncertainty)
    };
    format!(
        "{} = {:.4} {} ({}{standing})",
        q.quantity,
        q.value.unwrap_or(f64::NAN),
        q.unit,
        q.source
    )
}

/// A latency option's value and reason: the chase's latency less `offset`, what GPGPU-Sim
/// `adds` to the option in the same chase; or, where that leaves less than one cycle (a
/// latency GPGPU-Sim's pipeline alone exceeds), why the option is not written.
fn translated(q: &Quantity, offset: f64, adds: &str) -> Result<(String, String), String> {
    let cycles = (q.value.unwrap_or(0.0) - offset).round();
    if cycles < 1.0 {
        return Err(format!(
            "not written: {} is less than the {offset} cycles GPGPU-Sim adds in the same chase plus one",
            said(q)
        ));
    }
    Ok((
        format!("{cycles:.0}"),
        format!("{} less {offset} cycles: what {adds}", said(q)),
    ))
}

/// Cycles between a unit's issues in one of the SM's four sub-cores, from the SM's rate in
/// thread instructions per clock: 4 x 32 lanes / rate, at least 1.
fn initiation(rate: f64) -> u32 {
    (128.0 / rate).round().max(1.0) as u32
}

/// A `ptx_opcode_*` list of `(position, latency, rate)`; `None` where any position other than
/// MAX is missing. MAX is not timed by gpubench: it is given ADD's numbers, and said so.
fn opcode_lists(
    entries: &[(&str, Option<&Quantity>, Option<&Quantity>)],
) -> Option<(String, String, String)> {
    let add = entries.first()?;
    let (mut latencies, mut initiations, mut why) = (Vec::new(), Vec::new(), Vec::new());
    for (position, latency, rate) in entries {
        let (latency, rate) = if *position == "MAX" {
            why.push("MAX: not timed by gpubench, ADD's numbers (an assumption)".to_string());
            (add.1?, add.2?)
        } else {
            let (latency, rate) = ((*latency)?, (*rate)?);
            why.push(format!("{position}: {} and {}", said(latency), said(rate)));
            (latency, rate)
        };
        latencies.push(format!("{:.0}", latency.value?.round()));
        initiations.push(initiation(rate.value?).to_string());
    }
    Some((latencies.join(","), initiations.join(","), why.join("; ")))
}

/// The option lines the model determines, and the options it measured but cannot give
/// GPGPU-Sim (with why), in the order the config writes them.
#[derive(Default)]
struct Lines {
    written: Vec<Line>,
    unwritten: Vec<(&'static str, String)>,
}

impl Lines {
    fn push(&mut self, option: &'static str, value: String, why: String) {
        self.written.push(Line { option, value, why });
    }

    /// A latency option as [`translated`] gave it: written, or listed as not written with why.
    fn latency(&mut self, option: &'static str, translated: Result<(String, String), String>) {
        match translated {
            Ok((value, why)) => self.push(option, value, why),
            Err(why) => self.unwritten.push((option, why)),
        }
    }
}

/// The [`Lines`] of `model`: those written, and those not.
fn lines(model: &MachineModel, base: Option<&Base>) -> (Vec<Line>, Vec<(&'static str, String)>) {
    let mut lines = Lines::default();
    driver_lines(model, &mut lines);
    latency_lines(model, base, &mut lines);
    opcode_lines(model, &mut lines);
    constant_cache_line(model, base, &mut lines);
    (lines.written, lines.unwritten)
}

/// What the driver reports and the SM clock the run measured: SMs, clocks, registers, shared
/// memory.
fn driver_lines(model: &MachineModel, lines: &mut Lines) {
    let gpu = &model.gpu;
    lines.push(
        "-gpgpu_n_clusters",
        gpu.multiprocessors.to_string(),
        format!("{} SMs (the driver), one per cluster", gpu.multiprocessors),
    );
    lines.push(
        "-gpgpu_n_cores_per_cluster",
        "1".into(),
        "one SM per cluster".into(),
    );
    if let (Some(sm), Some(memory)) = (
        gpu.sm_clock.as_ref().and_then(|q| q.value),
        gpu.memory_clock_mhz,
    ) {
        lines.push(
            "-gpgpu_clock_domains",
            format!("{sm:.1}:{sm:.1}:{sm:.1}:{memory:.1}"),
            format!(
                "core, interconnect and L2 at the SM clock measured ({sm:.1} MHz; the interconnect and L2 clocks are not measured); DRAM at the driver's memory clock ({memory:.0} MHz): check it against your base configuration's dram_data_command_freq_ratio"
            ),
        );
    }
    if let Some(registers) = gpu.registers_per_multiprocessor {
        lines.push(
            "-gpgpu_shader_registers",
            registers.to_string(),
            "the driver's registers per SM".into(),
        );
    }
    if let Some(registers) = gpu.registers_per_block {
        lines.push(
            "-gpgpu_registers_per_block",
            registers.to_string(),
            "the driver's registers per block".into(),
        );
    }
    if let Some(bytes) = gpu.shared_memory_per_multiprocessor_bytes {
        lines.push(
            "-gpgpu_shmem_size",
            bytes.to_string(),
            "the driver's shared memory per SM".into(),
        );
    }
}

/// The L1, shared-memory and L2 latencies (GPGPU-Sim's share of each chase taken off) and the
/// L1's geometry; a latency GPGPU-Sim's pipeline alone exceeds is listed as not written.
fn latency_lines(model: &MachineModel, base: Option<&Base>, lines: &mut Lines) {
    let latency = |space, level| settled(model, memory(space, level, keys::level::LATENCY));
    if let Some(l1) = latency("global", "1") {
        let translated = translated(
            l1,
            L1_CHASE_OVER_OPTION,
            "GPGPU-Sim's pipeline adds to this option in the same chase (learned on SM7_QV100, SM7_GV100, SM7_TITANV, SM75_RTX2060, SM75_RTX2060_S, SM86_RTX3070; results/sim/answer-keys.md)",
        );
        lines.latency("-gpgpu_l1_latency", translated);
    }
    if let Some((value, why)) = l1_geometry(model, base) {
        lines.push("-gpgpu_cache:dl1", value, why);
    }
    if let Some(shared) = latency("shared", keys::BEYOND) {
        let translated = translated(
            shared,
            SMEM_CHASE_OVER_OPTION,
            "GPGPU-Sim's pipeline adds to this option in the same chase (learned on SM7_QV100, SM75_RTX2060, SM86_RTX3070, SM6_TITANX, SM3_KEPLER_TITAN; results/sim/answer-keys.md)",
        );
        lines.latency("-gpgpu_smem_latency", translated);
    }
    if let Some(l2) = latency("l2", "1") {
        // The crossing is the interconnect's: learned per interconnect.
        let mode = base
            .and_then(|b| b.options.get("-network_mode"))
            .map_or(CROSSBAR, |m| m.trim());
        let translated = match L2_CHASE_OVER_OPTION_BY_NETWORK
            .iter()
            .find(|(m, _, _)| *m == mode)
        {
            Some((_, offset, learned_on)) => translated(
                l2,
                *offset,
                &format!(
                    "GPGPU-Sim's interconnect and miss path add to this option in the same chase, learned on {learned_on}{}",
                    if base.is_some() {
                        ""
                    } else {
                        "; no --base: a crossbar assumed"
                    }
                ),
            ),
            None => Err(format!(
                "not written: {} holds the crossing of an interconnect, and what GPGPU-Sim's adds is learned for -network_mode 1 and 2 only, not this base's {mode}",
                said(l2)
            )),
        };
        lines.latency("-gpgpu_l2_rop_latency", translated);
    }
}

/// Where a GPGPU-Sim opcode position's latency and rate come from: a SASS opcode's figures, a
/// PTX operation's, or none (MAX, which gpubench does not time: see [`opcode_lists`]).
#[derive(Clone, Copy)]
enum Timed {
    Sass(&'static str),
    Ptx(&'static str),
    Not,
}

/// A unit's `ptx_opcode_*` lists: its latency and initiation options, and GPGPU-Sim's positions
/// in order (ADD, MAX, MUL, MAD, DIV, and SHFL for int) with what times each.
struct OpcodeLists {
    latency: &'static str,
    initiation: &'static str,
    positions: &'static [(&'static str, Timed)],
}

/// The int, fp and dp units' lists.
const OPCODE_LISTS: [OpcodeLists; 3] = [
    OpcodeLists {
        latency: "-ptx_opcode_latency_int",
        initiation: "-ptx_opcode_initiation_int",
        positions: &[
            ("ADD", Timed::Sass("IADD3")),
            ("MAX", Timed::Not),
            ("MUL", Timed::Sass("IMAD")),
            ("MAD", Timed::Sass("IMAD")),
            ("DIV", Timed::Ptx("uint32 div")),
            ("SHFL", Timed::Sass("SHFL")),
        ],
    },
    OpcodeLists {
        latency: "-ptx_opcode_latency_fp",
        initiation: "-ptx_opcode_initiation_fp",
        positions: &[
            ("ADD", Timed::Sass("FADD")),
            ("MAX", Timed::Not),
            ("MUL", Timed::Sass("FMUL")),
            ("MAD", Timed::Sass("FFMA")),
            ("DIV", Timed::Ptx("fp32 div")),
        ],
    },
    OpcodeLists {
        latency: "-ptx_opcode_latency_dp",
        initiation: "-ptx_opcode_initiation_dp",
        positions: &[
            ("ADD", Timed::Sass("DADD")),
            ("MAX", Timed::Not),
            ("MUL", Timed::Sass("DMUL")),
            ("MAD", Timed::Sass("DFMA")),
            ("DIV", Timed::Ptx("fp64 div")),
        ],
    },
];

/// The `ptx_opcode_*` latency and initiation lists of the int, fp, dp and sfu units.
fn opcode_lines(model: &MachineModel, lines: &mut Lines) {
    let sass = |opcode, what| settled(model, Known::Sass { opcode, what });
    let figure = |timed, what| match timed {
        Timed::Sass(opcode) => sass(opcode, what),
        Timed::Ptx(operation) => settled(model, Known::Ptx { operation, what }),
        Timed::Not => None,
    };
    for list in OPCODE_LISTS {
        let timed: Vec<_> = list
            .positions
            .iter()
            .map(|&(position, timed)| {
                (
                    position,
                    figure(timed, keys::LATENCY),
                    figure(timed, keys::THROUGHPUT),
                )
            })
            .collect();
        if let Some((latencies, initiations, why)) = opcode_lists(&timed) {
            lines.push(list.latency, latencies, why.clone());
            lines.push(
                list.initiation,
                initiations,
                "cycles between issues per sub-core: 128 lanes / the SM's rate".into(),
            );
        }
    }
    if let (Some(l), Some(r)) = (
        sass("MUFU.RCP", keys::LATENCY),
        sass("MUFU.RCP", keys::THROUGHPUT),
    ) {
        lines.push(
            "-ptx_opcode_latency_sfu",
            format!("{:.0}", l.value.unwrap_or(0.0).round()),
            said(l),
        );
        lines.push(
            "-ptx_opcode_initiation_sfu",
            initiation(r.value.unwrap_or(1.0)).to_string(),
            said(r),
        );
    }
}

/// `-gpgpu_const_cache:l1`, where the run identified the constant cache's whole geometry.
fn constant_cache_line(model: &MachineModel, base: Option<&Base>, lines: &mut Lines) {
    // The constant cache is the one level whose whole geometry a run identifies.
    let constant = |what| settled(model, memory("constant", "1", what));
    if let (Some(sets), Some(line), Some(ways)) = (
        constant(keys::level::SETS),
        constant(keys::level::LINE),
        constant(keys::level::WAYS),
    ) {
        let (value, whose) = Base::cache_string(
            base,
            "-gpgpu_const_cache:l1",
            format!(
                "N:{:.0}:{:.0}:{:.0}",
                sets.value.unwrap_or(0.0),
                line.value.unwrap_or(0.0),
                ways.value.unwrap_or(0.0)
            ),
            ("L:R:f:N:L,S:2:64,4", "the reference H100 configuration's"),
        );
        lines.push(
            "-gpgpu_const_cache:l1",
            value,
            format!(
                "sets, line and ways: {}; {}; {}; the policy, MSHR and miss-queue fields are {whose}",
                said(sets),
                said(line),
                said(ways)
            ),
        );
    }
}

/// `-gpgpu_cache:dl1` where the conflict experiment read a plain set index (ways, way size)
/// and the stride sweep a fetch granularity: a 32-byte granularity is GPGPU-Sim's sectored
/// line (128 B of four sectors), any other is the line itself. The fields after the geometry
/// (policy, MSHRs, queues) are not measured: they are SM7_QV100's, and said so.
fn l1_geometry(model: &MachineModel, base: Option<&Base>) -> Option<(String, String)> {
    let first = |what| settled(model, memory("global", "1", what));
    let ways = first(keys::level::CONFLICT_WAYS)?;
    let way = first(keys::level::CONFLICT_WAY_SIZE)?;
    let fetch = first(keys::level::FETCH_GRANULARITY)?;
    let (ways_n, way_bytes, fetch_bytes) = (ways.value?, way.value?, fetch.value?);
    let (kind, line) = if fetch_bytes == SECTOR_BYTES {
        ('S', SECTORED_LINE_BYTES)
    } else {
        ('N', fetch_bytes)
    };
    let sets = way_bytes / line;
    if sets < 1.0 || sets.fract() != 0.0 {
        return None;
    }
    let (value, whose) = Base::cache_string(
        base,
        "-gpgpu_cache:dl1",
        format!("{kind}:{sets:.0}:{line:.0}:{ways_n:.0}"),
        ("L:T:m:L:L,A:512:8,16:0,32", "SM7_QV100's"),
    );
    Some((
        value,
        format!(
            "{sets:.0} sets x {line:.0} B x {ways_n:.0} ways: {}; {}; {}{}; the set index linear (the conflict experiment's plain index); LRU, write-through, MSHRs and queues are {whose}; with -gpgpu_adaptive_cache_config 1 GPGPU-Sim sizes the ways from -gpgpu_unified_l1d_size instead",
            said(ways),
            said(way),
            said(fetch),
            if kind == 'S' {
                " (GPGPU-Sim's sectored line: four 32 B sectors)"
            } else {
                ""
            }
        ),
    ))
}

/// The settled quantities measured per SM, as comments: no GPGPU-Sim option takes an SM's
/// own L2 partition or latencies (its model places every SM alike), so a chiplet-aware model
/// reads them here or from the machine model's `per_sm`. Empty where the run has none.
fn per_sm_block(model: &MachineModel) -> String {
    let measured: Vec<&Quantity> = model
        .figures
        .iter()
        .filter(|q| q.status == Status::Figure && q.per_sm.is_some())
        .collect();
    if measured.is_empty() {
        return String::new();
    }
    let mut text = String::from(
        "# Measured per SM (index = %smid; - where that SM gave none). No GPGPU-Sim option takes these:\n",
    );
    for q in measured {
        let values: Vec<String> = q
            .per_sm
            .iter()
            .flatten()
            .map(|v| v.map_or("-".into(), |v| format!("{v:.0}")))
            .collect();
        let unit = if q.unit.is_empty() {
            String::new()
        } else {
            format!(" ({})", q.unit)
        };
        let _ = writeln!(
            text,
            "#   {}: {}",
            one_line(&format!("{}{unit}", q.quantity)),
            values.join(" ")
        );
    }
    text + "\n"
}

/// What the run measured that no GPGPU-Sim option can express, each with what the simulator
/// does instead (the loop, `results/sim/loop-h200/loop.md`, set each beside the simulated GPU's
/// reading): a simulated GPU built from this file measures these differently. Empty where the
/// run has none of them.
fn inexpressible_block(model: &MachineModel) -> String {
    let lacks: [(Known, &str); 3] = [
        (
            Known::Banks {
                what: keys::banks::CONFLICT_COST,
            },
            "GPGPU-Sim replays a conflicting shared-memory access one cycle per extra way and no option sets that cost",
        ),
        (
            Known::IndexChain { space: "global" },
            "the index's arithmetic runs on GPGPU-Sim's integer pipeline, whose issue and dispatch no option sets (-ptx_opcode_latency_int is its latency alone): a chase that computes its index reads longer there (results/sim/loop-h200/loop.md sets the simulated readings beside the measured ones)",
        ),
        (
            memory("constant", "1", keys::level::LATENCY),
            "GPGPU-Sim has no option for a constant-cache hit: it costs what the simulator's pipeline does (results/sim/loop-h200/loop.md)",
        ),
    ];
    let found: Vec<String> = lacks
        .iter()
        .filter_map(|(key, why)| {
            let q = settled(model, *key)?;
            Some(format!("# - {}: {why}\n", one_line(&said(q))))
        })
        .collect();
    if found.is_empty() {
        return String::new();
    }
    format!(
        "# Measured, but no GPGPU-Sim option can express it (a simulated GPU built from this file measures it differently):\n{}\n",
        found.concat()
    )
}

/// `text` on one line: every line break or other control character a space. Whatever a run
/// or a `--base` holds (a device name, a path, a figure's words), it stays inside its comment
/// or its value and never becomes an option line of its own.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Whether every number of `line`'s value that a run measured (every field of a plain
/// option; a cache option's geometry, before its first comma, where the rest is a base's or
/// the reference's) is at least 1: GPGPU-Sim takes no zero or negative SM count, clock,
/// register file, latency, initiation interval or cache geometry, and a value starting with a
/// dash would read as an option of its own.
fn measured_fields_at_least_one(line: &Line) -> bool {
    let measured = if line.option.contains("cache") {
        line.value.split(',').next().unwrap_or("")
    } else {
        line.value.as_str()
    };
    measured
        .split([':', ','])
        .enumerate()
        // A cache's kind ('N', 'S') leads its geometry.
        .filter(|(i, field)| {
            !(*i == 0 && field.len() == 1 && field.starts_with(char::is_alphabetic))
        })
        .all(|(_, field)| field.parse::<f64>().is_ok_and(|x| x >= 1.0))
}

/// The config text: a header, every determined option with its reason, the undetermined list.
pub fn config(model: &MachineModel, base: Option<&Base>) -> String {
    let mut text = format!(
        "# GPGPU-Sim / Accel-Sim options measured by gpubench ({}).\n# Run: {}\n# Append to a base configuration of the same GPU (the last value of an option wins).\n\n",
        one_line(&model.schema),
        one_line(&model.run)
    );
    let (lines, mut unwritten) = lines(model, base);
    let (lines, below_one): (Vec<Line>, Vec<Line>) =
        lines.into_iter().partition(measured_fields_at_least_one);
    for line in below_one {
        unwritten.push((
            line.option,
            format!(
                "not written: its value {} holds a count, clock or latency below one, which no GPU has",
                line.value
            ),
        ));
    }
    let written: Vec<&str> = lines.iter().map(|l| l.option).collect();
    for line in &lines {
        let _ = writeln!(
            text,
            "# {}\n{} {}\n",
            one_line(&line.why),
            line.option,
            one_line(&line.value)
        );
    }
    text += &per_sm_block(model);
    text += &inexpressible_block(model);
    text += "# Not determined by this run (left at the base configuration's values):\n";
    for (option, why) in NOT_DETERMINED {
        if !written.contains(&option) {
            let _ = writeln!(text, "#   {option}: {why}");
        }
    }
    for (option, why) in unwritten {
        let _ = writeln!(text, "#   {option}: {}", one_line(&why));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A config's option lines as (option, value), each asserted to be one option and one
    /// value: nothing a value holds starts a line or a token of its own.
    fn option_lines(text: &str) -> Vec<(String, String)> {
        text.lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|l| {
                let mut tokens = l.split_whitespace();
                let (Some(option), Some(value), None) =
                    (tokens.next(), tokens.next(), tokens.next())
                else {
                    panic!("not one option and one value: {l:?}");
                };
                (option.to_string(), value.to_string())
            })
            .collect()
    }

    /// The committed H100 model with one number set to `bad`: each of the driver's facts the
    /// options take, the SM clock, and each figure's value in turn.
    fn with_one_number(model: &MachineModel, bad: f64) -> Vec<(String, MachineModel)> {
        let mut variants = Vec::new();
        let mut vary = |what: String, change: &dyn Fn(&mut MachineModel)| {
            let mut m = model.clone();
            change(&mut m);
            variants.push((what, m));
        };
        // As `as` converts: -1 to 0 for the unsigned facts, 1e19 to the type's largest.
        vary("multiprocessors".into(), &|m| {
            m.gpu.multiprocessors = bad as i64
        });
        vary("registers".into(), &|m| {
            m.gpu.registers_per_multiprocessor = Some(bad as u64);
            m.gpu.registers_per_block = Some(bad as u64);
        });
        vary("shared memory".into(), &|m| {
            m.gpu.shared_memory_per_multiprocessor_bytes = Some(bad as u64)
        });
        vary("memory clock".into(), &|m| {
            m.gpu.memory_clock_mhz = Some(bad)
        });
        vary("SM clock".into(), &|m| {
            if let Some(q) = m.gpu.sm_clock.as_mut() {
                q.value = Some(bad);
            }
        });
        for i in 0..model.figures.len() {
            vary(model.figures[i].quantity.clone(), &|m| {
                m.figures[i].value = Some(bad)
            });
        }
        variants
    }

    /// #71: every number the options are made of set to 0, -1 and 1e19 in turn: the config's
    /// option lines stay options gpubench writes, each once, one option and one value per
    /// line, every measured number in them at least 1 (no value starts with a dash); an option
    /// the committed model writes and the damaged one does not is listed as not written.
    #[test]
    fn zero_negative_and_huge_numbers_never_make_an_option_line_gpubench_does_not_write() {
        let model = h100_model();
        let written: Vec<String> = option_lines(&config(&model, None))
            .into_iter()
            .map(|(option, _)| option)
            .collect();
        assert!(written.len() >= 12, "{written:?}");
        let mut cases = 0;
        for bad in [0.0, -1.0, 1e19] {
            for (what, damaged) in with_one_number(&model, bad) {
                let text = config(&damaged, None);
                let lines = option_lines(&text);
                let mut seen = std::collections::BTreeSet::new();
                for (option, value) in &lines {
                    assert!(written.contains(option), "{what} = {bad}: {option}");
                    assert!(
                        seen.insert(option.clone()),
                        "{what} = {bad}: {option} twice"
                    );
                    let line = Line {
                        option: if option.contains("cache") {
                            "cache"
                        } else {
                            ""
                        },
                        value: value.clone(),
                        why: String::new(),
                    };
                    assert!(
                        measured_fields_at_least_one(&line) && !value.starts_with('-'),
                        "{what} = {bad}: {option} {value}"
                    );
                }
                for option in written.iter().filter(|o| !seen.contains(*o)) {
                    assert!(
                        text.contains(&format!("#   {option}: not written: ")),
                        "{what} = {bad}: {option} dropped without a word"
                    );
                }
                cases += 1;
            }
        }
        assert!(cases > 300, "{cases}");
    }

    /// The committed H100 run's machine model.
    fn h100_model() -> MachineModel {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/results/h100/all/machine-model.json"
        ))
        .unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// #76: a conflict experiment that reads 6 ways of 8 KiB beside a 32-byte fetch (GPGPU-Sim's
    /// sector) gives the 6-way L1D's string, 64 sets of 128 B lines: nothing in the export
    /// asks for a power-of-two way count.
    #[test]
    fn a_six_way_l1_is_exported_with_its_way_count() {
        let mut model = h100_model();
        let like = |key: &str, value: f64| {
            let mut q = model
                .figures
                .iter()
                .find(|q| q.key == format!("cache/constant/1/{key}"))
                .unwrap()
                .clone();
            q.key = format!("cache/global/1/{key}");
            q.value = Some(value);
            q
        };
        let added = [
            like("conflict-ways", 6.0),
            like("conflict-way-size", 8192.0),
        ];
        model.figures.extend(added);
        let (value, why) = l1_geometry(&model, None).unwrap();
        assert!(value.starts_with("S:64:128:6,"), "{value}: {why}");
    }

    /// #76: the L2's translation is learned per interconnect: a crossbar base (or none) takes
    /// the crossbar's, an intersim base (-network_mode 1) intersim's, 10 cycles more; a base of
    /// an interconnect with none learned gets no -gpgpu_l2_rop_latency, and says why.
    #[test]
    fn the_l2_latency_is_translated_by_the_bases_interconnect() {
        let model = h100_model();
        let with = |mode: &str| {
            let base = Base::parse(
                "base",
                &format!("-network_mode {mode}\n-gpgpu_n_clusters 80\n"),
            );
            config(&model, Some(&base))
        };
        let crossbar = with("2");
        assert!(
            crossbar.contains("\n-gpgpu_l2_rop_latency 264\n"),
            "{crossbar}"
        );
        assert!(config(&model, None).contains("\n-gpgpu_l2_rop_latency 264\n"));
        let intersim = with("1");
        assert!(
            intersim.contains("\n-gpgpu_l2_rop_latency 254\n") && intersim.contains("intersim"),
            "{intersim}"
        );
        let other = with("3");
        assert!(!other.contains("\n-gpgpu_l2_rop_latency "), "{other}");
        assert!(
            other.contains("#   -gpgpu_l2_rop_latency: not written: ")
                && other.contains("not this base's 3"),
            "{other}"
        );
    }

    /// #76: what the H100 measured and GPGPU-Sim cannot express (a bank conflict's cost, the
    /// index chain, a constant-cache hit) is named in the file, each with its figure, and
    /// never as an option line.
    #[test]
    fn what_gpgpu_sim_cannot_express_is_named_with_its_figure() {
        let model = h100_model();
        let text = config(&model, None);
        let block = text
            .split("# Measured, but no GPGPU-Sim option can express it")
            .nth(1)
            .expect("the block")
            .split("\n\n")
            .next()
            .unwrap();
        for (key, says) in [
            (
                Known::Banks {
                    what: keys::banks::CONFLICT_COST,
                },
                "one cycle per extra way",
            ),
            (Known::IndexChain { space: "global" }, "integer pipeline"),
            (
                memory("constant", "1", keys::level::LATENCY),
                "constant-cache hit",
            ),
        ] {
            let q = settled(&model, key).unwrap_or_else(|| panic!("{} in the model", key.key()));
            let line = block
                .lines()
                .find(|l| l.contains(says))
                .unwrap_or_else(|| panic!("{says}: {block}"));
            assert!(line.starts_with("# - "), "{line}");
            assert!(line.contains(&format!("{:.4}", q.value.unwrap())), "{line}");
        }
        // A model without those figures has no such block.
        let mut bare = model.clone();
        bare.figures.clear();
        assert!(!config(&bare, None).contains("no GPGPU-Sim option can express"));
    }

    const BASE: &str = "# a base\n-gpgpu_cache:dl1 S:4:128:64,L:T:m:L:L,A:256:32,16:0,32 # shipped\n\
        -gpgpu_n_clusters 80\n-gpgpu_cache:dl1  S:4:128:64,L:T:m:L:L,A:512:8,16:0,32\n\
        #-gpgpu_const_cache:l1 N:128:64:8,L:R:f:N:L,S:2:64,4\n";

    #[test]
    fn a_base_gives_the_fields_after_the_geometry_from_its_last_value() {
        let base = Base::parse("QV100", BASE);
        assert_eq!(
            base.unmeasured_fields("-gpgpu_cache:dl1"),
            Some("L:T:m:L:L,A:512:8,16:0,32")
        );
        // Commented out is not set.
        assert_eq!(base.unmeasured_fields("-gpgpu_const_cache:l1"), None);
        let (value, whose) = Base::cache_string(
            Some(&base),
            "-gpgpu_cache:dl1",
            "S:4:128:256".into(),
            ("L:T:m:L:L,A:1:1,16:0,32", "the reference's"),
        );
        assert_eq!(value, "S:4:128:256,L:T:m:L:L,A:512:8,16:0,32");
        assert_eq!(whose, "QV100's (--base), not measured");
    }

    #[test]
    fn without_the_option_in_a_base_the_reference_fields_stay_and_say_so() {
        let base = Base::parse("QV100", BASE);
        for base in [None, Some(&base)] {
            let (value, whose) = Base::cache_string(
                base,
                "-gpgpu_const_cache:l1",
                "N:8:64:4".into(),
                ("L:R:f:N:L,S:2:64,4", "the reference H100 configuration's"),
            );
            assert_eq!(value, "N:8:64:4,L:R:f:N:L,S:2:64,4");
            assert_eq!(whose, "the reference H100 configuration's, not measured");
        }
    }
}

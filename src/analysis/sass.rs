//! Marks the timed region of each kernel in `cuobjdump -sass` output and counts the
//! control instructions there (SSY / .S pops on Kepler–Pascal; BSSY / BSYNC convergence
//! barriers on Volta and later; branches, warp syncs, breaks).
//!
//! The timed region of a kernel is the code between two of its clock reads (`SR_CLOCKLO`),
//! named by their order: `divergence_single` and `divergence_double` read the clock four
//! times (two for the overhead pair, then start and stop), so their region is reads 3 → 4;
//! `divergence_split` reads it before the loop, inside it and after the barrier: 1 → 3.

use std::collections::BTreeMap;

use serde::Serialize;

/// Opcodes (before the first '.') that steer control flow or reconvergence.
const CONTROL: &[&str] = &[
    "SSY",
    "SYNC",
    "BSSY",
    "BSYNC",
    "BRA",
    "BRX",
    "JMP",
    "JMX",
    "CALL",
    "RET",
    "EXIT",
    "BREAK",
    "BRK",
    "PBK",
    "CONT",
    "PCNT",
    "WARPSYNC",
    "BAR",
    "BMOV",
    "YIELD",
    "KILL",
    "NANOSLEEP",
];

/// Which clock reads (1-based) open and close the timed region of a kernel.
pub fn timed_reads(kernel: &str) -> Option<(usize, usize)> {
    match kernel {
        "divergence_single" | "divergence_double" => Some((3, 4)),
        "divergence_split" => Some((1, 3)),
        // The L2 partition probe times each load by itself: one clock read before, one after.
        "l2_partition_probe" => Some((1, 2)),
        // Every cache chase reads the clock once before and once after its timed loop.
        name if name.starts_with("chase_") => Some((1, 2)),
        // So does every arithmetic chain of cuda/pipeline.cu, and every peak-rate loop of
        // cuda/flops*.cu (stamped after the barrier on both sides).
        name if ["lat_", "thr_", "sass_lat_", "sass_thr_", "flops_"]
            .iter()
            .any(|prefix| name.starts_with(prefix)) =>
        {
            Some((1, 2))
        }
        _ => None,
    }
}

/// The opcode of one SASS line (`/*0170*/ @!P0 BRA 0x540 ;` → "BRA"), if it holds one.
fn opcode(line: &str) -> Option<&str> {
    let after_address = line.trim_start().strip_prefix("/*")?.split_once("*/")?.1;
    let instruction = after_address.split(';').next()?.trim();
    let mut words = instruction.split_whitespace();
    let first = words.next()?;
    if first.starts_with('@') {
        words.next()
    } else {
        Some(first)
    }
}

/// Opcodes (before the first '.') that load data: global, constant, shared, texture, local.
const LOADS: &[&str] = &[
    "LDG", "LDC", "ULDC", "LDS", "LD", "LDL", "TLD", "TEX", "TLD4", "LDSM",
];

/// Whether `line` loads data that is not a kernel parameter (bank 0 of the constant space holds
/// the parameters; `c[0x0]` reads are the loop's bounds, not the chase).
fn is_data_load(opcode: &str, line: &str) -> bool {
    let base = opcode.split('.').next().unwrap_or(opcode);
    LOADS.contains(&base) && !line.contains("c[0x0]")
}

fn is_control(opcode: &str) -> bool {
    let base = opcode.split('.').next().unwrap_or(opcode);
    CONTROL.contains(&base) || opcode.ends_with(".S")
}

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct KernelSass {
    pub kernel: String,
    /// Control opcodes in the timed region and how often each appears (static count).
    pub timed_region_control: BTreeMap<String, usize>,
    pub timed_region_instructions: usize,
    /// Data loads in the timed region (full opcode, e.g. `LDG.E.64.CONSTANT`) and how often.
    /// The earliest runs' records (format 1) split the timed region no further than control.
    #[serde(default)]
    pub timed_region_loads: BTreeMap<String, usize>,
    /// Everything else there that is neither control nor a data load (address arithmetic,
    /// loop counters), by opcode.
    #[serde(default)]
    pub timed_region_other: BTreeMap<String, usize>,
}

impl KernelSass {
    /// Every opcode of the timed region with its static count: control, loads and the rest.
    pub fn timed_opcodes(&self) -> BTreeMap<String, usize> {
        let mut all = self.timed_region_other.clone();
        for (op, n) in self
            .timed_region_control
            .iter()
            .chain(&self.timed_region_loads)
        {
            *all.entry(op.clone()).or_default() += n;
        }
        all
    }
}

/// The kernel being read: its counts so far, its timed region, and the clock reads seen.
struct Reading {
    kernel: KernelSass,
    region: Option<(usize, usize)>,
    clock_reads: usize,
}

impl Reading {
    /// The two-character mark of one line, counting it where it falls in the region.
    fn mark(&mut self, line: &str) -> &'static str {
        let (Some((open, close)), Some(op)) = (self.region, opcode(line)) else {
            return "  ";
        };
        let is_clock = line.contains("SR_CLOCKLO");
        if is_clock {
            self.clock_reads += 1;
        }
        let reads = self.clock_reads;
        if reads < open || reads >= close || (is_clock && reads == open) {
            return "  ";
        }
        self.kernel.timed_region_instructions += 1;
        if is_control(op) {
            *self
                .kernel
                .timed_region_control
                .entry(op.to_string())
                .or_default() += 1;
            "T*"
        } else {
            let counts = if is_data_load(op, line) {
                &mut self.kernel.timed_region_loads
            } else {
                &mut self.kernel.timed_region_other
            };
            *counts.entry(op.to_string()).or_default() += 1;
            "T "
        }
    }
}

/// Annotates `sass`: every line gets a two-character prefix, "T " inside a timed region,
/// "T*" for a control instruction there, "  " elsewhere; a header explains the marks.
pub fn annotate(sass: &str) -> (String, Vec<KernelSass>) {
    let mut out = String::from(
        "// gpubench: 'T ' marks the timed region (between the clock reads that start and stop\n// the measurement), 'T*' a control instruction there (branch, convergence barrier, sync).\n",
    );
    let mut kernels = Vec::new();
    let mut current: Option<Reading> = None;
    for line in sass.lines() {
        if let Some(name) = line.trim().strip_prefix("Function : ") {
            kernels.extend(current.take().map(|r| r.kernel));
            let name = name.trim().to_string();
            current = Some(Reading {
                region: timed_reads(&name),
                kernel: KernelSass {
                    kernel: name,
                    timed_region_control: BTreeMap::new(),
                    timed_region_instructions: 0,
                    timed_region_loads: BTreeMap::new(),
                    timed_region_other: BTreeMap::new(),
                },
                clock_reads: 0,
            });
            out += &format!("  {line}\n");
            continue;
        }
        let mark = current.as_mut().map_or("  ", |reading| reading.mark(line));
        out += &format!("{mark}{line}\n");
    }
    kernels.extend(current.map(|r| r.kernel));
    (out, kernels)
}

/// Whether a peak-rate kernel's timed region is the loop as written: at least `per_trip`
/// instructions `opcode` (one loop trip, fully unrolled), and besides them no more than a few
/// dozen others (the barrier, the stamp's store, the loop's counter and branch). `None` when it
/// is; else why not, in words.
pub fn arithmetic_loop_problem(
    kernel: &KernelSass,
    opcode: &str,
    per_trip: usize,
) -> Option<String> {
    let opcodes = kernel.timed_opcodes();
    let fmas = opcodes.get(opcode).copied().unwrap_or(0);
    let others = kernel.timed_region_instructions.saturating_sub(fmas);
    if fmas < per_trip {
        Some(format!(
            "{}'s timed loop holds {fmas} {opcode} where the kernel asks for {per_trip} per trip",
            kernel.kernel
        ))
    } else if others > LOOP_SURROUNDINGS {
        Some(format!(
            "{}'s timed region holds {others} instructions besides its {fmas} {opcode} (at most {LOOP_SURROUNDINGS} expected)",
            kernel.kernel
        ))
    } else {
        None
    }
}

/// What may surround a peak-rate loop in its timed region: the stamp (a predicated store and
/// its address), the barrier, constants set up after the first clock read, the loop's test.
const LOOP_SURROUNDINGS: usize = 32;

/// Opcodes (before the first '.') that move data to or from memory (loads, stores, atomics).
const MEMORY: &[&str] = &[
    "LDG", "STG", "LDS", "STS", "LDL", "STL", "LD", "ST", "ATOMG", "ATOMS", "ATOM", "RED", "REDG",
    "UTMALDG", "UBLKCP", "LDGSTS",
];

/// Every memory instruction of every kernel in `sass` (full opcode, static count), for
/// kernels timed as a whole (the bandwidth kernels, timed between events around the launch).
pub fn memory_instructions(sass: &str) -> BTreeMap<String, BTreeMap<String, usize>> {
    counted(sass, |op, _| {
        MEMORY
            .contains(&op.split('.').next().unwrap_or(op))
            .then(|| op.to_string())
    })
}

/// Every instruction of every kernel in `sass` but the `NOP`s that pad its end (full opcode,
/// static count), for kernels timed as a whole that are short enough to state in full.
pub fn instructions(sass: &str) -> BTreeMap<String, BTreeMap<String, usize>> {
    counted(sass, |op, _| (op != "NOP").then(|| op.to_string()))
}

/// Every data load of every kernel in `sass` (global, constant but the parameters, shared,
/// texture, local; static count), for a kernel whose timed regions are several (the cache
/// suite's storage probe: one per path, in the branches of a switch). A constant load is named
/// with its bank (`LDC c[0x3]`: bank 3 holds `__constant__` data, bank 2 the compiler's own
/// tables, such as a switch's jumps); any other by its full opcode.
pub fn data_loads(sass: &str) -> BTreeMap<String, BTreeMap<String, usize>> {
    counted(sass, |op, line| {
        if !is_data_load(op, line) {
            return None;
        }
        let bank = line
            .find("c[0x")
            .and_then(|at| line[at..].find(']').map(|end| &line[at..=at + end]));
        Some(match bank {
            Some(bank) if op.starts_with("LDC") || op.starts_with("ULDC") => format!("{op} {bank}"),
            _ => op.to_string(),
        })
    })
}

/// The instructions of every kernel in `sass` that `key` names (from the opcode and the
/// line), counted by that name.
fn counted(
    sass: &str,
    key: impl Fn(&str, &str) -> Option<String>,
) -> BTreeMap<String, BTreeMap<String, usize>> {
    let mut kernels: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in sass.lines() {
        if let Some(name) = line.trim().strip_prefix("Function : ") {
            let name = name.trim().to_string();
            kernels.entry(name.clone()).or_default();
            current = Some(name);
            continue;
        }
        let (Some(kernel), Some(op)) = (&current, opcode(line)) else {
            continue;
        };
        if let Some(name) = key(op, line) {
            *kernels
                .get_mut(kernel)
                .expect("entered above")
                .entry(name)
                .or_default() += 1;
        }
    }
    kernels
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of the H200 run's SASS of `storage_probe` (cuobjdump of ptxas -arch=sm_90 output
    /// of cuda/ptx/cache.ptx): parameters and the switch's jump table are no chase's loads.
    #[test]
    fn data_loads_name_a_constant_load_by_its_bank_and_leave_the_parameters_out() {
        let sass = "\t\tFunction : storage_probe
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0090*/                   LDG.E R7, desc[UR8][R4.64] ;
        /*0150*/                   TLD.LZ RZ, R7, R7, UR4, 0x0, 1D, 0x1 ;
        /*01e0*/                   LDC R7, c[0x3][R7] ;
        /*02b0*/                   LDG.E.CONSTANT R7, desc[UR8][R6.64] ;
        /*0360*/                   LDG.E R7, desc[UR8][R6.64] ;
        /*03e0*/                   LDC R4, c[0x2][R3] ;
        /*0400*/                   IADD3 R7, R7, 0x1, RZ ;
";
        let loads = &data_loads(sass)["storage_probe"];
        let expected: BTreeMap<String, usize> = [
            ("LDC c[0x2]", 1),
            ("LDC c[0x3]", 1),
            ("LDG.E", 2),
            ("LDG.E.CONSTANT", 1),
            ("TLD.LZ", 1),
        ]
        .into_iter()
        .map(|(op, n)| (op.to_string(), n))
        .collect();
        assert_eq!(loads, &expected);
    }

    fn region(kernel: &str, body: &[&str]) -> KernelSass {
        let mut sass = format!("\tFunction : {kernel}\n        /*0000*/ CS2R R10, SR_CLOCKLO ;\n");
        for (i, op) in body.iter().enumerate() {
            sass += &format!("        /*{:04x}*/ {op} R1, R2, R3, R4 ;\n", 16 * (i + 1));
        }
        sass += "        /*ff00*/ CS2R R12, SR_CLOCKLO ;\n";
        annotate(&sass).1.remove(0)
    }

    #[test]
    fn a_peak_rate_loop_is_as_written_only_with_its_whole_trip_of_fmas() {
        let mut body = vec!["FFMA"; 256];
        body.extend([
            "UIADD3",
            "ISETP.LE.AND",
            "BAR.SYNC.DEFER_BLOCKING",
            "HFMA2.MMA",
        ]);
        assert_eq!(
            arithmetic_loop_problem(&region("flops_ffma", &body), "FFMA", 256),
            None
        );
        let short = region("flops_ffma", &vec!["FFMA"; 128]);
        let problem = arithmetic_loop_problem(&short, "FFMA", 256).unwrap();
        assert!(problem.contains("holds 128 FFMA"), "{problem}");
        // HFMA2.MMA is not HFMA2: a loop of the tensor pipe's variant is not the one asked for.
        let other = region("flops_hfma2", &vec!["HFMA2.MMA"; 256]);
        assert!(arithmetic_loop_problem(&other, "HFMA2", 256).is_some());
        let mut crowded = vec!["DFMA"; 256];
        crowded.extend(vec!["IMAD"; 40]);
        let problem =
            arithmetic_loop_problem(&region("flops_dfma", &crowded), "DFMA", 256).unwrap();
        assert!(problem.contains("40 instructions besides"), "{problem}");
    }

    #[test]
    fn counts_every_instruction_or_the_memory_ones_per_kernel() {
        let sass = "\tFunction : launch_empty\n        /*0000*/ EXIT ;\n        /*0010*/ BRA 0x10 ;\n        /*0020*/ NOP ;\n\tFunction : copy\n        /*0000*/ LDG.E R2, desc[UR4][R2.64] ;\n        /*0010*/ @P0 STG.E desc[UR4][R4.64], R2 ;\n        /*0020*/ EXIT ;\n";
        let all = instructions(sass);
        assert_eq!(
            all["launch_empty"],
            BTreeMap::from([("BRA".to_string(), 1), ("EXIT".to_string(), 1)])
        );
        assert_eq!(all["copy"].len(), 3);
        let memory = memory_instructions(sass);
        assert!(memory["launch_empty"].is_empty());
        assert_eq!(
            memory["copy"],
            BTreeMap::from([("LDG.E".to_string(), 1), ("STG.E".to_string(), 1)])
        );
    }

    #[test]
    fn reads_opcodes_with_and_without_predicates() {
        assert_eq!(
            opcode("        /*0290*/              @!P0 BRA 0x140 ;   /* 0x */"),
            Some("BRA")
        );
        assert_eq!(
            opcode("        /*0240*/                   BSYNC B1 ;  /* 0x */"),
            Some("BSYNC")
        );
        assert_eq!(
            opcode("                                   /* 0x000fe20000000800 */"),
            None
        );
        assert!(is_control("BSSY") && is_control("NOP.S") && is_control("BRA.U"));
        assert!(!is_control("IMAD.MOV.U32") && !is_control("CS2R"));
    }

    /// The H100 SASS of l2_partition_probe (cuobjdump 13.2 of ptxas 13.0 -arch=sm_90 output
    /// of cuda/ptx/l2_partition.ptx): the window holds the one load and the shared store that
    /// waits for it.
    #[test]
    fn the_partition_probe_times_one_l2_load_per_window() {
        let sass = include_str!("../../tests/fixtures/l2_partition_probe.sm_90.sass");
        let (_, kernels) = annotate(sass);
        let probe = &kernels[0];
        assert_eq!(probe.kernel, "l2_partition_probe");
        assert_eq!(
            probe.timed_region_loads,
            BTreeMap::from([("LDG.E.STRONG.GPU".to_string(), 1)])
        );
        assert_eq!(probe.timed_region_other.get("STS"), Some(&1));
        assert!(probe.timed_region_control.is_empty(), "{probe:?}");
    }

    /// The H100 SASS of divergence_single (cuobjdump of ptxas -arch=sm_90 output).
    #[test]
    fn marks_the_timed_loop_of_the_h100_single_loop() {
        let sass = include_str!("../../tests/fixtures/divergence_single.sm_90.sass");
        let (text, kernels) = annotate(sass);
        assert_eq!(kernels.len(), 1);
        let single = &kernels[0];
        assert_eq!(single.kernel, "divergence_single");
        assert_eq!(single.timed_region_control.get("BSSY"), Some(&1));
        assert_eq!(single.timed_region_control.get("BSYNC"), Some(&1));
        assert!(single.timed_region_control.get("BRA").copied().unwrap_or(0) >= 2);
        assert!(
            text.lines()
                .any(|l| l.starts_with("T*") && l.contains("BSYNC"))
        );
        // The stop read closes the region and is not inside it.
        assert!(
            text.lines()
                .any(|l| l.starts_with("  ") && l.contains("CS2R R12, SR_CLOCKLO"))
        );
    }

    /// The H100 SASS of the cache chases (ptxas -arch=sm_90 of cuda/cache.cu's PTX, encodings
    /// stripped): each timed loop is sixteen loads back to back, the pointer chase on LDG.E.64,
    /// the register-index constant chase on LDC, the uniform one on ULDC, shared on LDS; the
    /// old word-index chase has an IMAD.WIDE.U32 before every load.
    #[test]
    fn reads_the_load_instruction_of_every_cache_chase() {
        let sass = include_str!("../../tests/fixtures/cache_chases.sm_90.sass");
        let (_, kernels) = annotate(sass);
        let loads = |name: &str| {
            kernels
                .iter()
                .find(|k| k.kernel == name)
                .unwrap_or_else(|| panic!("{name} missing"))
                .clone()
        };
        for (kernel, opcode) in [
            ("chase_global", "LDG.E.64"),
            ("chase_constant", "LDC"),
            ("chase_constant_uniform", "ULDC"),
            ("chase_shared", "LDS"),
        ] {
            let k = loads(kernel);
            assert_eq!(k.timed_region_loads.len(), 1, "{k:?}");
            assert_eq!(k.timed_region_loads.get(opcode), Some(&16), "{k:?}");
            assert!(
                k.timed_region_other.keys().all(|op| !op.starts_with("IMAD")
                    && !op.starts_with("LEA")
                    && !op.starts_with("SHF")),
                "address arithmetic in the timed loop of {kernel}: {k:?}"
            );
        }
        let index = loads("chase_global_index");
        assert_eq!(index.timed_region_loads.get("LDG.E"), Some(&16));
        assert_eq!(index.timed_region_other.get("IMAD.WIDE.U32"), Some(&16));
    }

    /// The asynchronous movers count as memory instructions: TMA tensor and bulk copies and
    /// cp.async (lines as cuobjdump 13.2 prints them for sm_90).
    #[test]
    fn counts_the_asynchronous_copies() {
        let sass = "\tFunction : tma_l2_read\n\
            /*0c80*/ SYNCS.ARRIVE.TRANS64 RZ, [UR19], R0 ;\n\
            /*0d00*/ UBLKCP.S.G [UR18], [UR12], UR20 ;\n\
            /*0e30*/ STL [UR18], R0 ;\n\
            \tFunction : cpa\n\
            /*0100*/ LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64] ;\n";
        let kernels = memory_instructions(sass);
        assert_eq!(kernels["tma_l2_read"].get("UBLKCP.S.G"), Some(&1));
        assert_eq!(kernels["tma_l2_read"].get("STL"), Some(&1));
        assert!(!kernels["tma_l2_read"].contains_key("SYNCS.ARRIVE.TRANS64"));
        assert_eq!(kernels["cpa"].get("LDGSTS.E.BYPASS.128"), Some(&1));
    }

    /// The H100 SASS of cuda/bandwidth.cu: each kernel moves data with the 16-byte instruction
    /// its method names, and with nothing narrower but the sink's one store.
    #[test]
    fn counts_the_vector_accesses_of_the_bandwidth_kernels() {
        let kernels =
            memory_instructions(include_str!("../../tests/fixtures/bandwidth.sm_90.sass"));
        let ops = |kernel: &str| kernels.get(kernel).cloned().unwrap_or_default();
        assert_eq!(ops("bw_read_device").get("LDG.E.NA.128"), Some(&5));
        assert_eq!(
            ops("bw_read_device_strong").get("LDG.E.128.STRONG.GPU"),
            Some(&5)
        );
        assert_eq!(ops("bw_read_sm").get("LDG.E.128"), Some(&5));
        assert!(ops("bw_read_sm").contains_key("ATOMG.E.ADD.STRONG.GPU"));
        assert_eq!(ops("bw_write_device").get("STG.E.128"), Some(&4));
        assert_eq!(ops("bw_copy_device").get("LDG.E.NA.128"), Some(&5));
        assert_eq!(ops("bw_shared_read").get("LDS.128"), Some(&5));
        assert_eq!(ops("bw_shared_write").get("STS.128"), Some(&5));
        assert_eq!(kernels.len(), 8);
    }
}

//! Latency and throughput of one SASS instruction, from two chains that differ only in length
//! (after Jia et al.'s dissections of Volta and Turing, and Wong et al., section IV-B).
//!
//! A chain kernel runs `steps` dependent steps per loop trip; the loop's own instructions, the
//! clock reads and the launch are the same in a short chain and a long one, so the difference
//! of the two timings is the cost of the added steps alone. What a step is comes from
//! the SASS, not from the source: the difference of the two timed loops' instruction counts.
//! Where a step holds an instruction besides the one measured (ptxas adds an `FMUL.RZ` before
//! `MUFU.SIN`), that instruction's own latency, measured by a chain of its own, is subtracted.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::stats;

/// Whether `opcode` ("MUFU.EX2", "FMUL.RZ") is an instance of `target` ("MUFU.EX2", "FMUL"):
/// equal, or `target` followed by a modifier.
pub fn matches(opcode: &str, target: &str) -> bool {
    opcode == target
        || opcode
            .strip_prefix(target)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// The instructions the longer chain's timed loop has beyond the shorter one's, by opcode
/// (static counts, one loop trip). `None` when the longer one has fewer of some opcode: the
/// two loops are not the same loop with more steps.
pub fn added_instructions(
    short: &BTreeMap<String, usize>,
    long: &BTreeMap<String, usize>,
) -> Option<BTreeMap<String, usize>> {
    let mut added = BTreeMap::new();
    for opcode in short.keys().chain(long.keys()) {
        let before = short.get(opcode).copied().unwrap_or(0);
        let after = long.get(opcode).copied().unwrap_or(0);
        match after.checked_sub(before)? {
            0 => {}
            n => {
                added.insert(opcode.clone(), n);
            }
        }
    }
    Some(added)
}

/// One chain pair's reading.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InstructionLatency {
    /// The measured instructions found in the added steps, e.g. "HMUL2 ×8 + HFMA2.MMA ×8".
    pub sass: String,
    /// Other instructions in the added steps, e.g. "FMUL.RZ ×16"; empty for a pure chain.
    pub companions: String,
    /// Cycles per measured instruction, companions' latencies subtracted.
    pub latency_cycles: Option<f64>,
    /// Range of that figure over the repeats (each repeat's short and long launch paired).
    pub latency_min: Option<f64>,
    pub latency_max: Option<f64>,
    /// Thread instructions per clock on one SM, from the throughput chains.
    pub throughput_per_clock_per_sm: Option<f64>,
    /// How the figure was obtained, or why there is none.
    pub method: String,
}

/// What the chains measured, for one instruction.
pub struct ChainTimings<'a> {
    /// Opcodes (with modifiers) that count as the instruction measured.
    pub targets: &'a [&'a str],
    /// Timed-loop opcode counts of the short and long latency chains, and of the throughput
    /// chains (`None` where no SASS could be made).
    pub latency_counts: Option<(BTreeMap<String, usize>, BTreeMap<String, usize>)>,
    pub throughput_counts: Option<(BTreeMap<String, usize>, BTreeMap<String, usize>)>,
    /// Loop trips of every launch.
    pub iterations: u32,
    /// Per repeat: (short, long) cycles of warp 0's chain.
    pub latency_spans: &'a [(i64, i64)],
    /// Per repeat: (short, long) cycles the whole block was busy, and its threads.
    pub throughput_spans: &'a [(i64, i64)],
    pub throughput_threads: u32,
}

fn describe(counts: &[(&String, &usize)]) -> String {
    counts
        .iter()
        .map(|(op, n)| format!("{op} ×{n}"))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Reads one instruction's chains. `known` gives the latency already measured for an
/// instruction that may sit beside the measured one in a step (looked up by opcode).
pub fn read(timings: &ChainTimings, known: &dyn Fn(&str) -> Option<f64>) -> InstructionLatency {
    let mut reading = InstructionLatency {
        sass: String::new(),
        companions: String::new(),
        latency_cycles: None,
        latency_min: None,
        latency_max: None,
        throughput_per_clock_per_sm: None,
        method: String::new(),
    };
    let Some((short, long)) = &timings.latency_counts else {
        reading.method =
            "not measured: no SASS of the chains (ptxas and cuobjdump are needed to count the instructions a step holds)".into();
        return reading;
    };
    let Some(added) = added_instructions(short, long) else {
        reading.method = "not measured: the long chain's loop has fewer of some instruction than the short one's, so the two are not one loop at two lengths".into();
        return reading;
    };
    let is_target = |op: &str| timings.targets.iter().any(|t| matches(op, t));
    let (measured, others): (Vec<_>, Vec<_>) = added.iter().partition(|(op, _)| is_target(op));
    reading.sass = describe(&measured);
    reading.companions = describe(&others);
    let instructions: usize = measured.iter().map(|(_, n)| **n).sum();
    if instructions == 0 {
        reading.method = format!(
            "not measured: the added steps hold no {} (they hold {}): ptxas replaced the chain",
            timings.targets.join(" or "),
            if others.is_empty() {
                "nothing".to_string()
            } else {
                reading.companions.clone()
            }
        );
        return reading;
    }
    let mut companion_cycles = 0.0;
    for (op, n) in &others {
        let Some(latency) = known(op) else {
            reading.method = format!(
                "not measured: each step also holds {}, whose latency no chain of its own measured",
                reading.companions
            );
            return reading;
        };
        companion_cycles += latency * **n as f64;
    }
    let trips = f64::from(timings.iterations);
    let per_instruction = |(short, long): &(i64, i64)| {
        ((long - short) as f64 / trips - companion_cycles) / instructions as f64
    };
    let each: Vec<f64> = timings.latency_spans.iter().map(per_instruction).collect();
    let summary = stats::Summary::of(&each);
    reading.latency_min = summary.map(|s| s.min);
    reading.latency_max = summary.map(|s| s.max);
    reading.latency_cycles = summary.map(|s| s.median).filter(|l| *l > 0.0);
    reading.method = if others.is_empty() {
        format!(
            "(long chain − short chain) / {instructions} instructions; median of {} repeats",
            timings.latency_spans.len()
        )
    } else {
        format!(
            "(long chain − short chain − {} at their own measured latency) / {instructions} instructions; median of {} repeats",
            reading.companions,
            timings.latency_spans.len()
        )
    };
    if reading.latency_cycles.is_none() {
        reading.method = format!(
            "not measured: the longer chain was not slower ({})",
            reading.method
        );
    }
    if let Some((short, long)) = &timings.throughput_counts
        && let Some(added) = added_instructions(short, long)
    {
        let per_thread: usize = added
            .iter()
            .filter(|(op, _)| is_target(op))
            .map(|(_, n)| *n)
            .sum();
        let rates: Vec<f64> = timings
            .throughput_spans
            .iter()
            .filter(|(short, long)| long > short)
            .map(|(short, long)| {
                f64::from(timings.throughput_threads) * trips * per_thread as f64
                    / (long - short) as f64
            })
            .collect();
        reading.throughput_per_clock_per_sm = stats::median(&rates).filter(|_| per_thread > 0);
    }
    reading
}

/// Reads every instruction of a table in order: a companion in one row is subtracted at the
/// latency of the first earlier row whose instruction it is.
pub fn read_table(rows: &[ChainTimings]) -> Vec<InstructionLatency> {
    let mut read_so_far: Vec<(&[&str], Option<f64>)> = Vec::new();
    let mut out = Vec::new();
    for row in rows {
        let known = |op: &str| {
            read_so_far
                .iter()
                .find(|(targets, _)| targets.iter().any(|t| matches(op, t)))
                .and_then(|(_, latency)| *latency)
        };
        let reading = read(row, &known);
        read_so_far.push((row.targets, reading.latency_cycles));
        out.push(reading);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
        pairs.iter().map(|(op, n)| (op.to_string(), *n)).collect()
    }

    /// A simulated chain kernel: `overhead` cycles per trip for the loop, then `steps` steps
    /// of the given per-instruction latencies, one after another.
    fn span(iterations: u32, overhead: f64, steps: usize, step_latencies: &[f64]) -> i64 {
        let trip = overhead + steps as f64 * step_latencies.iter().sum::<f64>();
        (f64::from(iterations) * trip).round() as i64 + 37
    }

    fn loop_counts(step: &[(&str, usize)], steps: usize) -> BTreeMap<String, usize> {
        let mut c = counts(&[("ISETP.LE.AND", 1), ("BRA", 1), ("UIADD3", 1)]);
        for (op, n) in step {
            *c.entry(op.to_string()).or_default() += n * steps;
        }
        c
    }

    #[test]
    fn opcodes_match_with_modifiers_only() {
        assert!(matches("FMUL.RZ", "FMUL"));
        assert!(matches("MUFU.EX2", "MUFU.EX2"));
        assert!(!matches("MUFU.EX2", "MUFU.LG2"));
        assert!(!matches("FMULX", "FMUL"));
        assert!(!matches("HFMA2.MMA", "HFMA2.M"));
    }

    #[test]
    fn the_loop_and_the_clock_reads_cancel() {
        // FFMA of 4 cycles in a loop costing 12.5 cycles a trip: a single chain reads 4.39.
        for overhead in [0.0, 5.0, 12.5, 40.0] {
            let iterations = 1024;
            let spans: Vec<(i64, i64)> = (0..3)
                .map(|_| {
                    (
                        span(iterations, overhead, 16, &[4.0]),
                        span(iterations, overhead, 32, &[4.0]),
                    )
                })
                .collect();
            let t = ChainTimings {
                targets: &["FFMA"],
                latency_counts: Some((
                    loop_counts(&[("FFMA", 1)], 16),
                    loop_counts(&[("FFMA", 1)], 32),
                )),
                throughput_counts: Some((
                    loop_counts(&[("FFMA", 4)], 16),
                    loop_counts(&[("FFMA", 4)], 32),
                )),
                iterations,
                latency_spans: &spans,
                throughput_spans: &[(1_000_000, 1_500_000)],
                throughput_threads: 1024,
            };
            let r = read(&t, &|_| None);
            let latency = r.latency_cycles.unwrap();
            assert!((latency - 4.0).abs() < 1e-3, "{overhead}: {latency}");
            assert_eq!(r.sass, "FFMA ×16");
            assert!(r.companions.is_empty());
            // 1024 threads × 1024 trips × 64 more FFMAs per thread in 500 000 more cycles.
            let rate = r.throughput_per_clock_per_sm.unwrap();
            assert!((rate - 1024.0 * 1024.0 * 64.0 / 500_000.0).abs() < 1e-9);
        }
    }

    #[test]
    fn a_companion_is_subtracted_at_its_own_latency() {
        let iterations = 512;
        let spans = [(
            span(iterations, 9.0, 16, &[4.0, 18.0]),
            span(iterations, 9.0, 32, &[4.0, 18.0]),
        )];
        let step = [("FMUL.RZ", 1), ("MUFU.SIN", 1)];
        let t = ChainTimings {
            targets: &["MUFU.SIN"],
            latency_counts: Some((loop_counts(&step, 16), loop_counts(&step, 32))),
            throughput_counts: None,
            iterations,
            latency_spans: &spans,
            throughput_spans: &[],
            throughput_threads: 1024,
        };
        let fmul = |op: &str| matches(op, "FMUL").then_some(4.0);
        let r = read(&t, &fmul);
        assert!((r.latency_cycles.unwrap() - 18.0).abs() < 1e-2, "{r:?}");
        assert_eq!(r.companions, "FMUL.RZ ×16");
        // Without the companion's latency there is no figure, and the reason says so.
        let r = read(&t, &|_| None);
        assert_eq!(r.latency_cycles, None);
        assert!(r.method.contains("FMUL.RZ"), "{}", r.method);
    }

    #[test]
    fn fused_or_removed_chains_are_counted_as_compiled() {
        let iterations = 256;
        // ptxas fused two PTX adds into one IADD3: the 16 added steps hold 8 instructions.
        let spans = [(
            span(iterations, 6.0, 8, &[4.5]),
            span(iterations, 6.0, 16, &[4.5]),
        )];
        let t = ChainTimings {
            targets: &["IADD3"],
            latency_counts: Some((
                loop_counts(&[("IADD3", 1)], 8),
                loop_counts(&[("IADD3", 1)], 16),
            )),
            throughput_counts: None,
            iterations,
            latency_spans: &spans,
            throughput_spans: &[],
            throughput_threads: 1024,
        };
        let r = read(&t, &|_| None);
        assert!((r.latency_cycles.unwrap() - 4.5).abs() < 1e-2, "{r:?}");
        assert_eq!(r.sass, "IADD3 ×8");
        // ptxas removed the chain (rcp(rcp(x)) = x): no figure.
        let removed = ChainTimings {
            targets: &["MUFU.RCP"],
            latency_counts: Some((loop_counts(&[], 0), loop_counts(&[], 0))),
            ..t
        };
        let r = read(&removed, &|_| None);
        assert_eq!(r.latency_cycles, None);
        assert!(r.method.contains("replaced"), "{}", r.method);
    }

    #[test]
    fn no_sass_means_no_figure() {
        let t = ChainTimings {
            targets: &["POPC"],
            latency_counts: None,
            throughput_counts: None,
            iterations: 10,
            latency_spans: &[(100, 200)],
            throughput_spans: &[],
            throughput_threads: 1024,
        };
        let r = read(&t, &|_| None);
        assert_eq!(r.latency_cycles, None);
        assert!(r.method.starts_with("not measured"));
    }

    #[test]
    fn loops_that_are_not_one_loop_at_two_lengths_are_refused() {
        let short = counts(&[("FFMA", 16), ("LEA", 2)]);
        let long = counts(&[("FFMA", 32), ("LEA", 1)]);
        assert_eq!(added_instructions(&short, &long), None);
        assert_eq!(
            added_instructions(&short, &counts(&[("FFMA", 32), ("LEA", 2)])),
            Some(counts(&[("FFMA", 16)]))
        );
    }
}

//! The pure reading of a DPX run: the cost of one call from two chain lengths (the difference
//! of the two timings over the difference of their calls, so the loop and the clock reads
//! cancel), the rate per SM of the throughput kernels, the SASS instructions one call compiles
//! to (the difference of the two kernels' instruction counts over the difference of their
//! calls), and whether two functions issue to one pipe (the rate of their 1:1 mix against
//! what a shared pipe and two separate pipes predict).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::measure::SmSpan;
use crate::analysis::stats::Summary;

/// Each SM's blocks and span from a throughput launch's stamps (`stamps[2 b]`, `[2 b + 1]` =
/// block b's start and end) and its blocks' SMs; indexed by SM, `sms` long at least. `None`
/// where a block ends before it starts.
pub fn sm_spans(stamps: &[i64], smids: &[u32], sms: u32) -> Option<Vec<SmSpan>> {
    let mut bounds: Vec<Option<(i64, i64, u32)>> = vec![None; sms as usize];
    for (block, &sm) in smids.iter().enumerate() {
        let (start, end) = (*stamps.get(2 * block)?, *stamps.get(2 * block + 1)?);
        if end <= start {
            return None;
        }
        let sm = sm as usize;
        if sm >= bounds.len() {
            bounds.resize(sm + 1, None);
        }
        bounds[sm] = Some(match bounds[sm] {
            Some((s, e, n)) => (s.min(start), e.max(end), n + 1),
            None => (start, end, 1),
        });
    }
    Some(
        bounds
            .into_iter()
            .map(|b| {
                b.map_or(SmSpan::default(), |(start, end, blocks)| SmSpan {
                    blocks,
                    cycles: end - start,
                })
            })
            .collect(),
    )
}

/// Cycles per call from per-repeat (short, long) chain cycles: (long − short) over the calls
/// the long chain adds (`added_calls`); the summary over the repeats. `None` without a repeat
/// whose long chain took longer.
pub fn per_call(cycles: &[[i64; 2]], added_calls: u64) -> Option<Summary> {
    let values: Vec<f64> = cycles
        .iter()
        .filter(|[short, long]| long > short)
        .map(|[short, long]| (long - short) as f64 / added_calls as f64)
        .collect();
    Summary::of(&values)
}

/// Calls per clock on each SM from per-repeat (short, long) spans: the calls the long kernel
/// adds on that SM (its blocks × `added_calls_per_block`) over the cycles it adds; per SM the
/// median over the repeats where both launches put the same blocks there. Indexed by SM.
pub fn rate_per_sm(spans: &[[Vec<SmSpan>; 2]], added_calls_per_block: u64) -> Vec<Option<f64>> {
    let sms = spans
        .iter()
        .flat_map(|[s, l]| [s.len(), l.len()])
        .max()
        .unwrap_or(0);
    (0..sms)
        .map(|sm| {
            let rates: Vec<f64> = spans
                .iter()
                .filter_map(|[short, long]| {
                    let (s, l) = (short.get(sm)?, long.get(sm)?);
                    (s.blocks > 0 && s.blocks == l.blocks && l.cycles > s.cycles).then(|| {
                        f64::from(l.blocks) * added_calls_per_block as f64
                            / (l.cycles - s.cycles) as f64
                    })
                })
                .collect();
            crate::analysis::stats::median(&rates)
        })
        .collect()
}

/// The SASS of one call: per opcode, (count in the long kernel − count in the short) over the
/// calls the long kernel adds per thread; opcodes whose count does not change are left out.
pub fn sass_per_call(
    short: &BTreeMap<String, usize>,
    long: &BTreeMap<String, usize>,
    added_calls: u64,
) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for op in short.keys().chain(long.keys()) {
        let (s, l) = (
            short.get(op).copied().unwrap_or(0) as f64,
            long.get(op).copied().unwrap_or(0) as f64,
        );
        if l != s {
            out.insert(op.clone(), (l - s) / added_calls as f64);
        }
    }
    out
}

/// One call's SASS in words: "VIADDMNMX ×1", "ISETP.GE.AND ×1 + SEL ×1", "VIMNMX3.RELU ×0.5";
/// "none (the chain was folded away)" where no opcode grows with the chain.
pub fn sass_words(per_call: &BTreeMap<String, f64>) -> String {
    if per_call.is_empty() {
        return "none (the chain was folded away)".into();
    }
    per_call
        .iter()
        .map(|(op, n)| format!("{op} ×{}", round3(*n)))
        .collect::<Vec<_>>()
        .join(" + ")
}

fn round3(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// What the 1:1 mix of A and B says of their pipes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Pipes {
    /// The mix runs at about the rate one pipe serving both would give.
    Shared,
    /// The mix runs at about the rate of two pipes, each serving its half.
    Separate,
    /// The two predictions are too close to tell apart, or the mix is near neither.
    NotIdentified,
}

/// The mix's reading: the rates alone and mixed (calls per clock per SM), the two predictions
/// and the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PipeReading {
    pub rate_a: f64,
    pub rate_b: f64,
    pub rate_mix: f64,
    /// One pipe: a pair of calls takes 1/rate_a + 1/rate_b, so 2 / (1/rate_a + 1/rate_b).
    pub shared_prediction: f64,
    /// Two pipes: each takes its half at its own rate, so 2 · min(rate_a, rate_b) (an
    /// upper bound: the warp schedulers' issue may cap it lower).
    pub separate_prediction: f64,
    pub pipes: Pipes,
}

/// The two predictions must differ by this factor at least to be told apart, and the mix
/// must lie nearer one of them (in log terms) by at least a third of their distance.
const DISTINCT: f64 = 1.2;
const MARGIN: f64 = 1.0 / 3.0;

/// Compares the mix's rate with the predictions; `None` where a rate is not positive.
pub fn pipes(rate_a: f64, rate_b: f64, rate_mix: f64) -> Option<PipeReading> {
    if !(rate_a > 0.0 && rate_b > 0.0 && rate_mix > 0.0) {
        return None;
    }
    let shared = 2.0 / (1.0 / rate_a + 1.0 / rate_b);
    let separate = 2.0 * rate_a.min(rate_b);
    let distance = (separate / shared).ln();
    let pipes = if separate / shared < DISTINCT {
        Pipes::NotIdentified
    } else {
        // Where the mix lies between the two, 0 at shared and 1 at separate.
        let at = (rate_mix / shared).ln() / distance;
        if at < 0.5 - MARGIN / 2.0 {
            Pipes::Shared
        } else if at > 0.5 + MARGIN / 2.0 {
            Pipes::Separate
        } else {
            Pipes::NotIdentified
        }
    };
    Some(PipeReading {
        rate_a,
        rate_b,
        rate_mix,
        shared_prediction: shared,
        separate_prediction: separate,
        pipes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_gather_each_sms_blocks() {
        // Blocks 0 and 2 on SM 1, block 1 on SM 0; SM 2 got none.
        let stamps = [100, 500, 10, 90, 150, 700];
        let spans = sm_spans(&stamps, &[1, 0, 1], 3).unwrap();
        assert_eq!(spans[0], SmSpan { blocks: 1, cycles: 80 });
        assert_eq!(spans[1], SmSpan { blocks: 2, cycles: 600 });
        assert_eq!(spans[2], SmSpan::default());
        assert!(sm_spans(&[5, 4], &[0], 1).is_none());
        // An SM number past the count widens the list.
        assert_eq!(sm_spans(&[0, 1], &[4], 2).unwrap().len(), 5);
    }

    #[test]
    fn the_call_cost_cancels_what_both_lengths_share() {
        // A loop of 64 trips: 500 cycles outside it and 4 per call; 32 and 128 calls a trip.
        let cycles = |calls: i64| 500 + 4 * 64 * calls;
        let repeats = [[cycles(32), cycles(128)], [cycles(32) + 7, cycles(128)]];
        let s = per_call(&repeats, 96 * 64).unwrap();
        assert_eq!(s.n, 2);
        assert!((s.max - 4.0).abs() < 1e-12);
        assert!(s.min < 4.0 && s.min > 3.99);
        assert!(per_call(&[[10, 10]], 96).is_none());
    }

    #[test]
    fn the_rate_per_sm_is_the_added_calls_over_the_added_cycles() {
        let span = |blocks, cycles| SmSpan { blocks, cycles };
        // SM 0: 8 blocks of 1024 added calls each over 128 more cycles: 64 a clock. SM 1: the
        // block counts differ in the first repeat, so only the second counts (32 a clock).
        let spans = vec![
            [vec![span(8, 1000), span(7, 900)], vec![span(8, 1128), span(8, 1200)]],
            [vec![span(8, 1000), span(8, 1000)], vec![span(8, 1128), span(8, 1256)]],
        ];
        let rates = rate_per_sm(&spans, 1024);
        assert_eq!(rates, vec![Some(64.0), Some(32.0)]);
        let none = vec![[vec![span(0, 0)], vec![span(0, 0)]]];
        assert_eq!(rate_per_sm(&none, 1024), vec![None]);
    }

    #[test]
    fn the_sass_of_a_call_is_what_grows_with_the_chain() {
        let counts = |pairs: &[(&str, usize)]| -> BTreeMap<String, usize> {
            pairs.iter().map(|(op, n)| (op.to_string(), *n)).collect()
        };
        let short = counts(&[("VIADDMNMX", 32), ("BRA", 2), ("EXIT", 1)]);
        let long = counts(&[("VIADDMNMX", 128), ("BRA", 2), ("EXIT", 1)]);
        let per = sass_per_call(&short, &long, 96);
        assert_eq!(per.len(), 1);
        assert_eq!(sass_words(&per), "VIADDMNMX ×1");
        // Two dependent two-input calls fused into one three-input instruction.
        let fused = sass_per_call(
            &counts(&[("VIMNMX3.RELU", 16)]),
            &counts(&[("VIMNMX3.RELU", 64)]),
            96,
        );
        assert_eq!(sass_words(&fused), "VIMNMX3.RELU ×0.5");
        let multi = sass_per_call(
            &counts(&[("ISETP.GE.AND", 32), ("SEL", 32)]),
            &counts(&[("ISETP.GE.AND", 128), ("SEL", 128)]),
            96,
        );
        assert_eq!(sass_words(&multi), "ISETP.GE.AND ×1 + SEL ×1");
        assert_eq!(
            sass_words(&sass_per_call(&short, &short, 96)),
            "none (the chain was folded away)"
        );
    }

    #[test]
    fn a_mix_at_the_sum_is_two_pipes_and_at_the_harmonic_one() {
        // A and B at 64 calls a clock each: one pipe gives 64 mixed, two give 128.
        let shared = pipes(64.0, 64.0, 63.0).unwrap();
        assert_eq!(shared.pipes, Pipes::Shared);
        assert!((shared.shared_prediction - 64.0).abs() < 1e-12);
        assert!((shared.separate_prediction - 128.0).abs() < 1e-12);
        assert_eq!(pipes(64.0, 64.0, 120.0).unwrap().pipes, Pipes::Separate);
        // Halfway (in log terms) is neither.
        assert_eq!(pipes(64.0, 64.0, 90.5).unwrap().pipes, Pipes::NotIdentified);
        // A slow A hides B's pipe: 10 and 64 a clock give 17.3 shared and 20 separate, too
        // close to tell; 16 and 64 give 25.6 and 32, just far enough apart.
        assert_eq!(pipes(10.0, 64.0, 20.0).unwrap().pipes, Pipes::NotIdentified);
        assert_eq!(pipes(16.0, 64.0, 32.0).unwrap().pipes, Pipes::Separate);
        assert!(pipes(0.0, 64.0, 32.0).is_none());
    }
}

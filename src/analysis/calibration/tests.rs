use super::*;

/// An answer on basis "fit" to case 0 of seed 1, stated at `confidence` (raw and mapped
/// alike), with `size` as its stated size.
fn fit_answer(confidence: f64, right: bool, size: Option<u64>) -> Outcome {
    Outcome {
        case: draw(1, 0),
        reading: "ascending",
        confidence: Some(confidence),
        raw_confidence: Some(confidence),
        basis: "fit",
        stated_size_bytes: size,
        stated_line_bytes: None,
        stated_fetch_bytes: None,
        stated_ways: None,
        right,
        capacity: None,
    }
}

#[test]
fn the_map_is_the_share_right_made_monotone() {
    let outcome = |raw: f64, right: bool| fit_answer(raw, right, None);
    // Raw 0.95: 8 right of 8; raw 0.55: 1 of 4; raw 0.35: 3 of 4 (a violator, pooled).
    let mut outcomes: Vec<Outcome> = (0..8).map(|_| outcome(0.95, true)).collect();
    outcomes.extend((0..4).map(|i| outcome(0.55, i == 0)));
    outcomes.extend((0..4).map(|i| outcome(0.35, i < 3)));
    let table = fit_map(&outcomes);
    assert_eq!(table.len(), 1);
    let values = table[0].1;
    assert!((values[9] - 9.0 / 10.0).abs() < 1e-12, "{values:?}");
    // (3 + 1 + 1) / (4 + 4 + 2): the two middle bins pooled, one added answer each way.
    assert!((values[3] - 0.5).abs() < 1e-12, "{values:?}");
    assert!((values[5] - 0.5).abs() < 1e-12, "{values:?}");
    assert!(values.windows(2).all(|w| w[0] <= w[1]), "{values:?}");
    assert!(map_as_rust(&table).contains("(\"fit\", [0.500,"));
}

#[test]
fn cases_repeat_and_vary() {
    assert_eq!(draw(1, 7), draw(1, 7));
    let kinds: std::collections::BTreeSet<&str> = (0..64).map(|i| draw(3, i).replacement).collect();
    assert_eq!(kinds.len(), REPLACEMENTS.len());
    for i in 0..64 {
        let c = draw(3, i);
        assert_eq!(c.size_bytes % (c.line_bytes * c.ways), 0, "{c:?}");
    }
}

#[test]
fn bins_count_answers_by_their_confidence() {
    let size = draw(1, 0).size_bytes;
    let outcome = |confidence: f64, right: bool| fit_answer(confidence, right, Some(size));
    let bins = reliability(&[
        outcome(0.95, true),
        outcome(1.0, false),
        outcome(0.05, false),
    ]);
    assert_eq!(bins[9].answers, 2);
    assert_eq!(bins[9].share_right, Some(0.5));
    assert_eq!(bins[0].answers, 1);
    assert_eq!(bins[5].answers, 0);
    assert_eq!(bins[5].share_right, None);
}

/// The tests that take many seconds unoptimised: the README's `cargo test` skips them,
/// `.ci/run` runs them as a step of their own.
mod slow {
    use super::*;

    /// The study at a size CI affords (`GPUBENCH_CALIBRATION_CASES` for more; `gpubench
    /// calibrate` runs it at full size and draws the diagram), with a seed other than the
    /// table's: answers are right about as often as their confidence says, and, read from
    /// both directions, no stated line or way count with confidence 0.5 or more is wrong
    /// on a tree-PLRU cache, a prefetching one or a coarse sweep (at full size 6 of 1796
    /// prefetching and 79 of 3986 tree-PLRU answers were: `docs/calibration.md`).
    #[test]
    #[ignore = "slow: `.ci/run` runs it (cargo test -- --ignored slow::)"]
    fn confidence_is_calibrated_on_caches_outside_the_fitted_family() {
        let cases = std::env::var("GPUBENCH_CALIBRATION_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(40);
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        let outcomes = study(29, 0, cases, threads);
        let bins = reliability(&outcomes);
        for o in &outcomes {
            if std::env::var_os("GPUBENCH_CALIBRATION_DEBUG").is_some() && !o.right {
                eprintln!(
                    "WRONG {:?} conf {:?} size {:?} line {:?} ways {:?}",
                    o.case, o.confidence, o.stated_size_bytes, o.stated_line_bytes, o.stated_ways
                );
            }
        }
        for bin in &bins {
            if let (Some(mean), Some(share)) = (bin.mean_confidence, bin.share_right)
                && bin.answers >= 10
            {
                // Binomial spread of the share over n answers, plus the 0.1 the issue allows.
                let allowed = 0.1 + 2.0 * (mean * (1.0 - mean) / bin.answers as f64).sqrt();
                assert!(
                    (share - mean).abs() <= allowed,
                    "{bin:?}: {} of {} answers",
                    (share * bin.answers as f64).round(),
                    bin.answers
                );
            }
        }
        for o in outcomes.iter().filter(|o| o.reading == "both directions") {
            let outside =
                (o.case.replacement == "tree-plru" || o.case.coarse || o.case.next_line_prefetch)
                    && o.case.replacement != "random"
                    && !o.case.hashed_index;
            if outside && o.confidence.is_some_and(|c| c >= 0.5) {
                assert!(
                    o.stated_line_bytes.is_none_or(|b| b == o.case.line_bytes)
                        && o.stated_ways.is_none_or(|w| w == o.case.ways),
                    "{o:?}"
                );
            }
        }
    }
}

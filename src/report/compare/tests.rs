use super::*;

fn figure(quantity: &str, value: f64, interval: Option<(f64, f64)>) -> Figure {
    let uncertainty = if interval.is_some() { "95% CI" } else { "" };
    Figure {
        low: interval.map(|i| i.0),
        high: interval.map(|i| i.1),
        domain: if interval.is_some() {
            crate::report::figures::Domain::Fitted
        } else {
            crate::report::figures::Domain::Measured
        },
        ..Figure::sample("S", quantity, Some(value), "cycles", uncertainty)
    }
}

fn verdict(quantity: &str, text: &str) -> Figure {
    Figure {
        value: None,
        unit: String::new(),
        text: Some(text.into()),
        ..figure(quantity, 0.0, None)
    }
}

fn summary(figures: Vec<Figure>) -> Summary {
    Summary {
        caption: "c".into(),
        ..Summary::of(figures)
    }
}

#[test]
fn numbers_differ_past_the_tolerance_and_only_with_disjoint_intervals() {
    let t = Tolerances::default();
    // Within 5 %: the same, interval or not.
    assert_eq!(
        differs(&figure("l", 280.0, None), &figure("l", 290.0, None), &t),
        None
    );
    // Past 5 % with no interval: flagged, saying by how much.
    let flag = differs(&figure("l", 280.0, None), &figure("l", 300.0, None), &t).unwrap();
    assert!(flag.starts_with("moved 6.7 % (over 5 %)"), "{flag}");
    // Past 5 %, but overlapping intervals: the runs agree within what they state.
    let wide = |v: f64| figure("c", v, Some((v - 10.0, v + 10.0)));
    assert_eq!(differs(&wide(100.0), &wide(110.0), &t), None);
    let flag = differs(&wide(100.0), &wide(130.0), &t).unwrap();
    assert!(flag.ends_with("intervals disjoint"), "{flag}");
    // Disjoint intervals a hair apart (min-max of one machine): within the tolerance.
    let narrow = |v: f64| figure("b", v, Some((v - 0.1, v + 0.1)));
    assert_eq!(differs(&narrow(100.0), &narrow(101.0), &t), None);
    // The unit's own tolerance: sizes read from fits may move 10 %.
    let bytes = |v: f64| Figure {
        unit: "bytes".into(),
        ..figure("size", v, None)
    };
    assert_eq!(differs(&bytes(100.0), &bytes(108.0), &t), None);
    assert!(differs(&bytes(100.0), &bytes(120.0), &t).is_some());
}

#[test]
fn figures_that_state_a_low_confidence_are_not_flagged() {
    let t = Tolerances::default();
    // As read back from a run's files, whose words carry the standing.
    let inferred = |v: f64, c: f64| {
        Figure {
            uncertainty: format!("confidence {c:.2}"),
            ..figure("size", v, None)
        }
        .read_back()
    };
    assert_eq!(
        differs(&inferred(100.0, 0.12), &inferred(200.0, 1.0), &t),
        None
    );
    assert!(differs(&inferred(100.0, 0.5), &inferred(200.0, 1.0), &t).is_some());
}

#[test]
fn a_sign_belongs_to_its_number_but_a_dash_between_two_does_not() {
    assert_eq!(
        words("+2.3 cycles (points past it -0.4 to 8.6 above)"),
        words("+10.4 cycles (points past it 8.1 to 12.9 above)")
    );
    assert_eq!(words("lanes 16-31 exited"), "lanes #-# exited");
    assert_ne!(words("lanes 16-31"), words("lanes 16 31"));
}

#[test]
fn verdicts_are_compared_by_their_words() {
    let t = Tolerances::default();
    let a = verdict("L7", "hung: no result within 5.1 s; the host killed it");
    let b = verdict("L7", "hung: no result within 1.6 s; the host killed it");
    let c = verdict("L7", "completed: every lane ran");
    assert_eq!(differs(&a, &b, &t), None);
    assert_eq!(differs(&a, &c, &t).as_deref(), Some("different verdict"));
    assert_eq!(
        words("groups [18, 18, 16] differ by 2824.5 cycles, after 3."),
        "groups [#, #, #] differ by # cycles, after #."
    );
    assert_eq!(
        differs(&a, &figure("L7", 1.0, None), &t).as_deref(),
        Some("present in one form only")
    );
}

#[test]
fn tolerances_are_set_per_unit_or_for_all() {
    let mut t = Tolerances::default();
    t.set("cycles=2").unwrap();
    assert_eq!(t.of("cycles"), 0.02);
    assert_eq!(t.of("bytes"), 0.10);
    assert_eq!(t.of("GB/s"), 0.05);
    t.set("1%").unwrap();
    assert_eq!((t.of("cycles"), t.of("bytes")), (0.01, 0.01));
    for bad in ["", "x", "-1", "cycles=", "nan", "5000"] {
        assert!(t.set(bad).is_err(), "{bad}");
    }
    assert_eq!(Tolerances::default().describe(), "5 % (bytes 10 %)");
}

/// What a run calls unresolved is never odd in a fleet, as it is never flagged in a pair: a
/// geometry "not identifiable" in words that differ, a way count stated at 0.3.
#[test]
fn a_fleet_never_calls_an_unresolved_row_odd() {
    let runs: Vec<String> = (0..4).map(|i| format!("gpu{i}")).collect();
    let summaries: Vec<Summary> = (0..4)
        .map(|i| {
            let ties = if i == 2 {
                "line (B): 64 or 128"
            } else {
                "line (B): 256"
            };
            summary(vec![
                verdict("level 1 geometry not identifiable from this sweep", ties).read_back(),
                Figure {
                    uncertainty: "confidence 0.30".into(),
                    ..figure("level 1 ways", if i == 2 { 16.0 } else { 4.0 }, None)
                }
                .read_back(),
            ])
        })
        .collect();
    let c = compare(&runs, &summaries, &Tolerances::default(), Some(3.5));
    assert!(c.odd_ones_out.is_empty(), "{:?}", c.odd_ones_out);
    assert!(
        c.rows
            .iter()
            .all(|r| r.fleet.as_ref().unwrap().odd.is_empty())
    );
}

#[test]
fn the_fleet_names_the_perturbed_gpu_and_only_it() {
    // Eight GPUs with a little noise; GPU 5 runs 20 % slower and its verdict differs.
    let runs: Vec<String> = (0..8).map(|i| format!("gpu{i}")).collect();
    let summaries: Vec<Summary> = (0..8)
        .map(|i| {
            let noise = [0.0, 0.3, -0.2, 0.1, -0.4, 0.0, 0.2, -0.1][i];
            let latency = if i == 5 { 336.0 } else { 280.0 + noise };
            let words = if i == 5 {
                "hung: after 3 s"
            } else {
                "completed: in 0.1 s"
            };
            summary(vec![
                figure("latency", latency, None),
                figure("clock", 1980.0 + noise, None),
                verdict("listing", words),
            ])
        })
        .collect();
    let c = compare(&runs, &summaries, &Tolerances::default(), Some(3.5));
    assert_eq!(c.odd_ones_out.len(), 1, "{:?}", c.odd_ones_out);
    assert_eq!(c.odd_ones_out[0].run, "gpu5");
    assert_eq!(c.odd_ones_out[0].figures.len(), 2);
    let latency = c.rows[0].fleet.as_ref().unwrap();
    assert_eq!(latency.median, Some(280.05));
    assert!(latency.odd[0].1.unwrap() > 100.0);
    let md = render(&c, Format::Markdown).unwrap();
    assert!(md.contains("## Odd ones out"), "{md}");
    assert!(
        md.contains("| gpu5 | 2 | S: latency | 336 cycles | 280.1 cycles |"),
        "{md}"
    );
    // Unperturbed, the same fleet has no odd one.
    let calm: Vec<Summary> = summaries
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if i == 5 {
                summaries[0].clone()
            } else {
                s.clone()
            }
        })
        .collect();
    let c = compare(&runs, &calm, &Tolerances::default(), Some(3.5));
    assert!(c.odd_ones_out.is_empty(), "{:?}", c.odd_ones_out);
    assert!(
        render(&c, Format::Markdown)
            .unwrap()
            .contains("No run is odd")
    );
}

#[test]
fn every_format_carries_every_run() {
    let runs = vec!["h100".to_string(), "h200".to_string()];
    let summaries = vec![
        summary(vec![figure("cost", 13.0, Some((12.9, 13.1)))]),
        summary(vec![figure("cost", 20.0, Some((19.9, 20.1)))]),
    ];
    let c = compare(&runs, &summaries, &Tolerances::default(), None);
    assert_eq!(c.flagged(), 1);
    let md = render(&c, Format::Markdown).unwrap();
    assert!(md.contains("| S: cost | 13 cycles (95% CI: 12.90 to 13.10) | 20 cycles (95% CI: 19.90 to 20.10) | moved 35.0 % (over 5 %), intervals disjoint |"), "{md}");
    let tex = render(&c, Format::Latex).unwrap();
    assert!(
        tex.starts_with("\\begin{longtable}{llll}") && tex.ends_with("\\end{longtable}\n"),
        "{tex}"
    );
    let csv = render(&c, Format::Csv).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(
        csv.lines()
            .nth(2)
            .unwrap()
            .starts_with("S,cost,cycles,h200,20,19.9,20.1,,\"moved"),
        "{csv}"
    );
    let json: serde_json::Value = serde_json::from_str(&render(&c, Format::Json).unwrap()).unwrap();
    assert_eq!(json["runs"][1], "h200");
    assert_eq!(json["rows"][0]["cells"][1]["value"], 20.0);
}

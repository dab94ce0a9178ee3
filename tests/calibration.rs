//! The committed calibration studies (`results/calibration/`) against the code: the table in
//! `analysis::confidence_map` is the one the committed seed-1 study makes, the committed
//! held-out study (seed 29) states what that table says, and at its size every bin of the
//! reliability diagram that holds 200 answers or more is within 0.1 of its share right.

use std::path::Path;

use gpubench::analysis::calibration::{map_as_rust, reliability_of};
use gpubench::analysis::confidence_map::{TABLE, calibrated};
use gpubench::report::calibration::answers;

fn study(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("results/calibration")
        .join(name)
}

#[test]
fn the_table_in_the_code_is_the_committed_studys() {
    let table: Vec<(String, [f64; 12])> = TABLE.iter().map(|(b, v)| (b.to_string(), *v)).collect();
    assert_eq!(
        map_as_rust(&table),
        std::fs::read_to_string(study("table-seed1").join("confidence_map.rs.txt")).unwrap()
    );
}

#[test]
fn the_held_out_study_is_calibrated_under_todays_table() {
    let answers = answers(&study("study-seed29")).unwrap();
    assert!(answers.len() >= 40_000, "{} answers", answers.len());
    for a in &answers {
        assert_eq!(a.confidence.is_some(), a.raw_confidence.is_some());
        let (Some(stated), Some(raw)) = (a.confidence, a.raw_confidence) else {
            continue;
        };
        // Stated by the table the code has now, or the diagram is of another build's table.
        assert!(
            (stated - calibrated(&a.basis, raw)).abs() < 1e-9,
            "{} at raw {raw}: stated {stated}, the table says {}",
            a.basis,
            calibrated(&a.basis, raw)
        );
    }
    let bins = reliability_of(answers.iter().map(|a| (a.confidence, a.right)));
    let stated: usize = bins.iter().map(|b| b.answers).sum();
    let mut sparse = 0;
    for (k, bin) in bins.iter().enumerate() {
        match (bin.mean_confidence, bin.share_right) {
            (Some(mean), Some(share)) if bin.answers >= 200 => {
                assert!(
                    (mean - share).abs() <= 0.1,
                    "bin {k}: {share} right at {mean}"
                );
            }
            _ => sparse += bin.answers,
        }
    }
    // The table leaves some tenths almost empty (no basis is right 0-10 % or 20-30 % of the
    // time); those bins together hold next to none of the answers.
    assert!(
        sparse * 1000 < stated,
        "{sparse} of {stated} in bins under 200"
    );
}

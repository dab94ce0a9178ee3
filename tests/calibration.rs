//! The committed calibration studies (`results/calibration/`) against the code: the table in
//! `analysis::confidence_map` is the one the committed seed-1 study makes, the committed
//! held-out study (seed 29) states what that table says, and at its size every bin of the
//! reliability diagram that holds 200 answers or more is within 0.1 of its share right.

use std::io::Read;
use std::path::Path;

use gpubench::analysis::calibration::map_as_rust;
use gpubench::analysis::confidence_map::{TABLE, calibrated};

fn study(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("results/calibration")
        .join(name)
}

#[derive(serde::Deserialize)]
struct Answer {
    confidence: Option<f64>,
    raw_confidence: Option<f64>,
    basis: String,
    right: bool,
}

fn answers(dir: &Path) -> Vec<Answer> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(dir.join("outcomes.csv.gz")).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .collect::<Result<_, _>>()
        .unwrap()
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
    let answers = answers(&study("study-seed29"));
    assert!(answers.len() >= 40_000, "{} answers", answers.len());
    let mut bins = [(0_usize, 0.0_f64, 0_usize); 10];
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
        let bin = &mut bins[((stated * 10.0) as usize).min(9)];
        bin.0 += 1;
        bin.1 += stated;
        bin.2 += usize::from(a.right);
    }
    let stated: usize = bins.iter().map(|b| b.0).sum();
    let mut sparse = 0;
    for (k, (n, sum, right)) in bins.iter().enumerate() {
        if *n >= 200 {
            let (mean, share) = (sum / *n as f64, *right as f64 / *n as f64);
            assert!(
                (mean - share).abs() <= 0.1,
                "bin {k}: {share} right at {mean}"
            );
        } else {
            sparse += n;
        }
    }
    // The table leaves some tenths almost empty (no basis is right 0-10 % or 20-30 % of the
    // time); those bins together hold next to none of the answers.
    assert!(
        sparse * 1000 < stated,
        "{sparse} of {stated} in bins under 200"
    );
}

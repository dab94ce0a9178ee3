//! Generated hostile input for every reader `analyze`, `report` and `compare` use: random bytes,
//! CSVs with extreme, non-finite, negative and duplicated numbers, wrong and missing columns.
//! Each must be read or refused with an error — never a panic — and in bounded time.

use std::io::Write;

use gpubench::analysis::cache_inference;
use gpubench::input;
use gpubench::suites::cache::measure as cache;
use gpubench::suites::divergence;
use gpubench::suites::divergence::model as divergence_model;
use proptest::prelude::*;

/// Numbers as a hostile file would hold them.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u64..1 << 40).prop_map(|v| v.to_string()),
        (-1e6f64..1e6).prop_map(|v| v.to_string()),
        Just("inf".to_string()),
        Just("-inf".to_string()),
        Just("NaN".to_string()),
        Just("1.5e308".to_string()),
        Just("-1.5e308".to_string()),
        Just("".to_string()),
        Just("x".to_string()),
        Just("18446744073709551616".to_string()),
    ]
}

fn csv(header: &'static str, columns: usize, rows: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::collection::vec(number(), columns), 0..rows).prop_map(move |rows| {
        let mut text = format!("{header}\n");
        for row in rows {
            text += &row.join(",");
            text.push('\n');
        }
        text
    })
}

fn through_the_file_reader(name: &str, text: &str) -> Result<String, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    input::read_text(&path).map_err(|e| e.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_are_read_or_refused(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        let dir = tempfile::tempdir().unwrap();
        for name in ["x.csv", "x.csv.gz", "x.json"] {
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).unwrap();
            let _ = input::read_text(&path);
        }
    }

    #[test]
    fn hostile_chase_curves_are_analysed_or_refused(
        text in csv("footprint_bytes,stride_bytes,cycles", 3, 60)
    ) {
        if let Ok(text) = through_the_file_reader("chase.csv", &text)
            && let Ok(points) = cache::saved::parse(&text)
        {
            let started = std::time::Instant::now();
            let _ = cache_inference::infer(&points);
            prop_assert!(started.elapsed().as_secs() < 20);
        }
    }

    #[test]
    fn hostile_divergence_summaries_are_analysed_or_refused(
        rows in prop::collection::vec(
            (prop_oneof![Just("single"), Just("double"), Just("triple")], number(), number()),
            0..80,
        ),
        max_bound in -10i32..5000,
    ) {
        let mut text = String::from("kernel,m,cycles\n");
        for (kernel, m, cycles) in &rows {
            text += &format!("{kernel},{m},{cycles}\n");
        }
        if let Ok(text) = through_the_file_reader("summary.csv", &text)
            && let Ok(levels) = divergence::saved::parse(&text, max_bound)
        {
            let _ = divergence_model::analyze(&levels.single, &levels.double);
        }
    }

    #[test]
    fn well_formed_but_extreme_divergence_rows_are_analysed_or_refused(
        cycles in prop::collection::vec(number(), 32),
        max_bound in 30i32..40,
    ) {
        let mut text = String::from("kernel,m,cycles\n");
        for (m, c) in cycles.iter().enumerate() {
            text += &format!("single,{m},{c}\n");
        }
        if let Ok(text) = through_the_file_reader("summary.csv", &text)
            && let Ok(levels) = divergence::saved::parse(&text, max_bound)
        {
            let started = std::time::Instant::now();
            let _ = divergence_model::analyze(&levels.single, &levels.double);
            prop_assert!(started.elapsed().as_secs() < 20);
        }
    }
}

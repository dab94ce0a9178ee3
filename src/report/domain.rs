//! The domain of every figure read back: what values a quantity can take, from its unit and
//! from what its uncertainty says it is. `report`, `compare` (and its fleet mode), the summary
//! `all` writes and everything that reads `summary.json` take figures through [`check`], so a
//! damaged or hand-edited file (a latency of −5 cycles, a confidence of 1.4, a median outside
//! its own min–max) is refused in one sentence instead of being drawn or summarised.
//!
//! A figure's [`Domain`], which the suite sets where it makes the figure, is one of:
//! - **measured** (a median, a minimum, a plateau, a rate, a count, a size a level was read
//!   at): never negative; a size or a count of blocks, warps, registers, or a count with no
//!   unit (ways, sets), is a whole number, and a count, a size or a clock more than zero (an
//!   interval's low end may be zero: a capacity interval widened down to nothing); a
//!   fraction lies in [0, 1] and a per-cent share in [0, 100];
//! - **a relative error** in per cent: as measured, but it may exceed 100 %;
//! - **fitted** (an estimate with a 95 % CI, a fit): a slope or a difference, which may be
//!   negative or fractional, so only finiteness and its interval are checked.
//!
//! For all three, a stated confidence lies in [0, 1] and an interval holds its value
//! (low ≤ value ≤ high).

use super::figures::{Domain, Figure};

/// Units whose measured values are whole numbers.
const WHOLE_UNITS: [&str; 6] = [
    "bytes",
    "blocks",
    "clusters",
    "registers",
    "registers/warp",
    "warps",
];

/// Units whose measured values are more than zero: a count with no unit (ways, sets,
/// partitions), a size, a clock.
const POSITIVE_UNITS: [&str; 3] = ["", "bytes", "MHz"];

/// How far a value may sit outside its interval before it is refused: the rounding of a
/// number written with a few decimals.
const INTERVAL_SLACK: f64 = 1e-9;

/// Whether `figure` is a fitted coefficient (a slope, an intercept, a difference of fits).
pub fn fitted(figure: &Figure) -> bool {
    figure.domain == Domain::Fitted
}

/// `None` where `figure` lies in its domain, else one sentence that names the field, the value
/// and why (the caller puts the file in front).
pub fn violation(figure: &Figure) -> Option<String> {
    violation_in(figure, super::formats::CURRENT)
}

/// The most characters of a figure's words gpubench writes in one field (the longest, a
/// verdict's text, runs to about 600): a figure text of 100 MB was copied into every output.
pub const MAX_FIGURE_TEXT: usize = 4096;

/// The most values per SM a figure holds (GPUs have up to some 150 SMs).
pub const MAX_PER_SM: usize = 1024;

/// Where a figure's words or its per-SM values are longer than gpubench writes, why (naming
/// the field, not repeating it).
fn oversized(figure: &Figure) -> Option<String> {
    let texts = [
        ("section", Some(&figure.section)),
        ("quantity", Some(&figure.quantity)),
        ("unit", Some(&figure.unit)),
        ("uncertainty", Some(&figure.uncertainty)),
        ("source", Some(&figure.source)),
        ("text", figure.text.as_ref()),
    ];
    let named = || {
        let quantity: String = figure.quantity.chars().take(60).collect();
        format!("a figure ({quantity:?}…)")
    };
    for (field, text) in texts {
        let Some(text) = text else { continue };
        let length = text.chars().count();
        if length > MAX_FIGURE_TEXT {
            return Some(format!(
                "the {field} of {} is {length} characters long, more than the {MAX_FIGURE_TEXT} gpubench writes",
                named()
            ));
        }
    }
    let per_sm = figure.per_sm.as_ref().map_or(0, Vec::len);
    (per_sm > MAX_PER_SM).then(|| {
        format!(
            "per_sm of {} holds {per_sm} values, more than the {MAX_PER_SM} SMs gpubench reads",
            named()
        )
    })
}

/// [`violation`] for a figure of a run directory of `format`, held to what that format wrote
/// ([`super::formats`]).
pub fn violation_in(figure: &Figure, format: u32) -> Option<String> {
    if let Some(why) = oversized(figure) {
        return Some(why);
    }
    let what = format!("\"{}: {}\"", figure.section, figure.quantity);
    let fields = [
        ("value", figure.value),
        ("low", figure.low),
        ("high", figure.high),
    ];
    for (field, number) in fields {
        let Some(x) = number else { continue };
        if !x.is_finite() {
            return Some(format!("{field} of {what} is {x}, not a finite number"));
        }
        // As in a CSV (crate::input): a JSON file's 1e308 is no number gpubench writes.
        if x.abs() > crate::input::MAX_MAGNITUDE {
            return Some(format!(
                "{field} of {what} is {x}, beyond any value gpubench writes ({:e})",
                crate::input::MAX_MAGNITUDE
            ));
        }
        if fitted(figure)
            || super::formats::signed_percent_written(format, &figure.section, &figure.quantity)
        {
            continue;
        }
        if x < 0.0 {
            return Some(format!(
                "{field} of {what} is {x} {}, but a measured {} cannot be negative",
                figure.unit,
                if figure.unit.is_empty() {
                    "count"
                } else {
                    "quantity"
                }
            ));
        }
        if figure.unit == "fraction" && x > 1.0 {
            return Some(format!(
                "{field} of {what} is {x}, but a fraction lies between 0 and 1"
            ));
        }
        if figure.unit == "%" && x > 100.0 && figure.domain != Domain::RelativeError {
            return Some(format!(
                "{field} of {what} is {x} %, but a share lies between 0 and 100 %"
            ));
        }
        if WHOLE_UNITS.contains(&figure.unit.as_str()) && x.fract() != 0.0 {
            return Some(format!(
                "{field} of {what} is {x} {}, but it counts whole {}",
                figure.unit, figure.unit
            ));
        }
        if figure.unit.is_empty() && x.fract() != 0.0 {
            return Some(format!(
                "{field} of {what} is {x}, but a count (ways, sets, partitions) is whole"
            ));
        }
        // An interval's low end may be zero: a capacity's widened interval clamps there when
        // its rise is wide (a TLB's reach, on an H200 in 2 of 24 runs), a true if empty bound.
        if POSITIVE_UNITS.contains(&figure.unit.as_str()) && x == 0.0 && field != "low" {
            return Some(format!(
                "{field} of {what} is 0{}, but a measured {} is more than zero",
                if figure.unit.is_empty() {
                    String::new()
                } else {
                    format!(" {}", figure.unit)
                },
                match figure.unit.as_str() {
                    "" => "count",
                    "bytes" => "size",
                    _ => "clock",
                }
            ));
        }
    }
    if let (Some(low), Some(high)) = (figure.low, figure.high) {
        let slack = INTERVAL_SLACK * low.abs().max(high.abs()).max(1.0);
        if low > high + slack {
            return Some(format!(
                "the interval of {what} runs from {low} down to {high}: its low end is above its high end"
            ));
        }
        if let Some(value) = figure.value
            && (value < low - slack || value > high + slack)
        {
            return Some(format!(
                "value of {what} is {value}, outside its own interval {low} to {high} ({})",
                figure.uncertainty
            ));
        }
    }
    if let Some(confidence) = figure.confidence.map(|c| c.value)
        && !(0.0..=1.0).contains(&confidence)
    {
        return Some(format!(
            "confidence of {what} is {confidence}, but a confidence lies between 0 and 1"
        ));
    }
    None
}

/// Refuses the first figure of `figures` outside its domain: `Err` with one sentence naming
/// `file` (where the figures were read), the field and the value.
/// `format` is the run-directory format the figures were written in ([`super::formats`]).
pub fn check(figures: &[Figure], file: &str, format: u32) -> Result<(), String> {
    match figures.iter().find_map(|f| violation_in(f, format)) {
        Some(why) => Err(refusal(file, &why)),
        None => Ok(()),
    }
}

/// The sentence that refuses a value of `file` outside its domain (`why`, from [`violation`]).
pub fn refusal(file: &str, why: &str) -> String {
    format!(
        "{file}: {why}; the file is damaged or was edited, so it is not summarised (run the suite again, or restore the file)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn figure(value: f64, unit: &str, uncertainty: &str, interval: Option<(f64, f64)>) -> Figure {
        Figure {
            key: "pipeline/int32 add: latency".into(),
            low: interval.map(|i| i.0),
            high: interval.map(|i| i.1),
            source: "pipeline/pipeline.json".into(),
            // As the suites make an estimate with its CI (`Rows::estimate`).
            domain: if uncertainty == "95% CI" {
                Domain::Fitted
            } else {
                Domain::Measured
            },
            ..Figure::sample(
                "Pipeline",
                "int32 add: latency",
                Some(value),
                unit,
                uncertainty,
            )
        }
        // As a file of format 2 gives it back: the confidence its words state.
        .read_back()
    }

    #[test]
    fn words_or_per_sm_values_longer_than_gpubench_writes_are_refused_by_field() {
        let mut long = figure(4.0, "cycles", "median", None);
        long.text = Some("y".repeat(MAX_FIGURE_TEXT + 1));
        let why = violation(&long).unwrap();
        assert!(
            why.starts_with("the text of a figure (\"int32 add: latency\"…)"),
            "{why}"
        );
        assert!(why.len() < 200, "{why}");
        long.text = Some("y".repeat(MAX_FIGURE_TEXT));
        assert_eq!(violation(&long), None);
        long.per_sm = Some(vec![Some(1.0); MAX_PER_SM + 1]);
        assert!(violation(&long).unwrap().contains("per_sm of a figure"));
    }

    #[test]
    fn the_issues_negative_latency_is_refused_in_one_sentence_naming_file_field_and_value() {
        let bad = figure(-5.0, "cycles", "", None);
        let why = check(&[bad], "results/x/pipeline/pipeline.json", 2).unwrap_err();
        assert!(
            why.starts_with("results/x/pipeline/pipeline.json: value of"),
            "{why}"
        );
        assert!(why.contains("-5 cycles"), "{why}");
        assert_eq!(why.matches(". ").count(), 0, "one sentence: {why}");
    }

    #[test]
    fn each_rule_refuses_what_it_names_and_passes_the_rest() {
        let cases = [
            (figure(0.5, "fraction", "", None), true),
            (figure(1.5, "fraction", "", None), false),
            (figure(32768.0, "bytes", "confidence 0.84", None), true),
            (figure(32768.5, "bytes", "confidence 0.84", None), false),
            (figure(32768.0, "bytes", "confidence 1.40", None), false),
            (
                figure(8.0, "", "uncalibrated confidence -0.2 (steps)", None),
                false,
            ),
            (figure(3.0, "cycles", "min-max", Some((2.0, 3.0))), true),
            (figure(4.0, "cycles", "min-max", Some((2.0, 3.0))), false),
            (figure(3.0, "cycles", "min-max", Some((3.5, 2.0))), false),
            (figure(-1.0, "cycles", "min-max", Some((-2.0, 0.0))), false),
            // A fitted slope may be negative or fractional, but not outside its own CI.
            (figure(-0.01, "cycles", "95% CI", Some((-0.05, 0.03))), true),
            (
                figure(2.5e7 + 0.25, "bytes", "95% CI", Some((2.4e7, 2.6e7))),
                true,
            ),
            (figure(-0.5, "cycles", "95% CI", Some((0.0, 1.0))), false),
            (figure(f64::INFINITY, "GB/s", "", None), false),
            (figure(1e308, "bytes", "", None), false),
            // A share over 100 % (active slots 170 %) is refused, a relative error is not.
            (figure(170.0, "%", "", None), false),
            (figure(99.5, "%", "", None), true),
            // A count with no unit is whole and more than zero (ways 2.5, sets 0); so are a
            // size and a clock more than zero (0 bytes, 0 MHz).
            (figure(2.5, "", "confidence 0.99", None), false),
            (figure(0.0, "", "confidence 0.99", None), false),
            (figure(4.0, "", "confidence 0.99", None), true),
            (figure(0.0, "bytes", "", None), false),
            // A size's interval may start at zero (a capacity interval clamped there), its
            // value may not.
            (
                figure(4096.0, "bytes", "capacity", Some((0.0, 8192.0))),
                true,
            ),
            (figure(0.0, "bytes", "capacity", Some((0.0, 8192.0))), false),
            (figure(0.0, "MHz", "", None), false),
            (figure(1980.0, "MHz", "", None), true),
        ];
        for (f, ok) in cases {
            assert_eq!(violation(&f).is_none(), ok, "{f:?}: {:?}", violation(&f));
        }
        // The domain is the figure's, not its words': a quantity named an error but made as a
        // share is held to 100 %, one made as a relative error is not.
        let mut error = figure(170.0, "%", "", None);
        error.quantity = "double loop predicted from the single: max error".into();
        assert!(violation(&error).is_some());
        error.domain = Domain::RelativeError;
        assert!(violation(&error).is_none(), "{:?}", violation(&error));
        assert!(violation(&figure(-1.0, "%", "", None)).is_some());
        let mut negative_error = figure(-1.0, "%", "", None);
        negative_error.domain = Domain::RelativeError;
        assert!(violation(&negative_error).is_some());
    }

    proptest! {
        /// Any measured figure pushed below zero, any interval turned inside out and any
        /// stated confidence past one is refused; the same figure within its domain passes.
        #[test]
        fn out_of_domain_values_are_refused(
            value in 0.0..1e6_f64,
            spread in 0.0..1e3_f64,
            below in 1e-6..1e6_f64,
            over in 1e-6..10.0_f64,
            unit in prop::sample::select(vec!["cycles", "ns", "GB/s", "ops/clock", "%", ""]),
        ) {
            // Within the unit's domain: a share up to 100 %, a count whole and at least one.
            let (value, spread) = match unit {
                "%" => (value / 1e4, (spread / 10.0).min(100.0 - value / 1e4)),
                "" => (value.floor() + 1.0, spread.floor()),
                _ => (value, spread),
            };
            let least = if unit.is_empty() { 1.0 } else { 0.0 };
            let low = value - spread.min(value - least);
            let good = figure(value, unit, "min-max", Some((low, value + spread)));
            prop_assert!(violation(&good).is_none(), "{:?}", violation(&good));
            let negative = figure(-below, unit, "", None);
            prop_assert!(violation(&negative).is_some());
            let outside = figure(value + spread + below, unit, "min-max", Some((value, value + spread)));
            prop_assert!(violation(&outside).is_some());
            let confident = figure(value, unit, &format!("confidence {}", 1.0 + over), None);
            prop_assert!(violation(&confident).is_some());
        }
    }
}

//! Divergence data saved earlier, for `gpubench analyze divergence FILE.csv`: a CSV with
//! columns `kernel` (single or double), `m` and `cycles` (or `median_cycles`, so a run's
//! `summary.csv` works as it is), one row per sample or per level; other columns are ignored.
//! Rows of one kernel and level are reduced to their median. The lane bounds come from a
//! `bounds` column (32 space-separated numbers) where there is one, else from the staircase
//! pattern (Table I) with the given maximum bound.

use std::collections::BTreeMap;
use std::path::Path;

use crate::suites::divergence::model::Level;
use crate::analysis::stats;
use crate::error::UsageError;

use super::measure::patterns::{Pattern, WARP_LANES};

#[derive(Debug, Clone, PartialEq)]
pub struct SavedLevels {
    pub single: Vec<Level>,
    pub double: Vec<Level>,
    /// Where the lane bounds came from, for the report.
    pub bounds_source: String,
}

/// The cycles of one kernel and level, and the lane bounds given for it, if any.
type Group = (Vec<f64>, Option<[i32; WARP_LANES]>);

fn column(headers: &csv::StringRecord, names: &[&str]) -> Option<usize> {
    headers.iter().position(|h| names.contains(&h.trim()))
}

pub fn load(path: &Path, max_bound: i32) -> Result<SavedLevels, UsageError> {
    let text = crate::input::read_text(path).map_err(|e| {
        UsageError::new(format!(
            "{e}; pass a CSV file with columns kernel, m, cycles"
        ))
    })?;
    parse(&text, max_bound)
        .map_err(|message| UsageError::new(format!("{}: {message}", path.display())))
}

pub fn parse(text: &str, max_bound: i32) -> Result<SavedLevels, String> {
    if !(1..=super::measure::MAX_BOUND).contains(&max_bound) {
        return Err(format!(
            "--max-bound must be between 1 and {}, not {max_bound}",
            super::measure::MAX_BOUND
        ));
    }
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| format!("unreadable CSV header ({e})"))?
        .clone();
    let missing =
        |name: &str| format!("no '{name}' column; the file needs columns kernel, m, cycles");
    let kernel_at = column(&headers, &["kernel"]).ok_or_else(|| missing("kernel"))?;
    let m_at = column(&headers, &["m"]).ok_or_else(|| missing("m"))?;
    let cycles_at =
        column(&headers, &["cycles", "median_cycles"]).ok_or_else(|| missing("cycles"))?;
    let bounds_at = column(&headers, &["bounds"]);

    let mut groups: BTreeMap<(String, u32), Group> = BTreeMap::new();
    for (index, record) in reader.records().enumerate() {
        let line = index + 2;
        let record = record.map_err(|e| format!("line {line}: {e}"))?;
        let field = |at: usize| record.get(at).unwrap_or("").trim();
        let kernel = field(kernel_at);
        if kernel != "single" && kernel != "double" {
            return Err(format!(
                "line {line}: kernel '{kernel}' is neither single nor double"
            ));
        }
        let m: u32 = field(m_at)
            .parse()
            .map_err(|_| format!("line {line}: m '{}' is not a whole number", field(m_at)))?;
        let cycles: f64 = field(cycles_at)
            .parse()
            .ok()
            .filter(|c: &f64| c.is_finite() && *c >= 0.0)
            .ok_or_else(|| {
                format!(
                    "line {line}: cycles '{}' is not a number of cycles (finite, not negative)",
                    field(cycles_at)
                )
            })?;
        let bounds = match bounds_at.map(field).filter(|b| !b.is_empty()) {
            Some(text) => Some(parse_bounds(text).map_err(|e| format!("line {line}: {e}"))?),
            None => None,
        };
        let entry = groups.entry((kernel.to_string(), m)).or_default();
        entry.0.push(cycles);
        if entry.1.is_none() {
            entry.1 = bounds;
        }
    }
    if groups.is_empty() {
        return Err("no data rows".to_string());
    }
    let staircase = Pattern::Staircase.rows(max_bound, 0);
    let mut assumed = false;
    let mut levels = SavedLevels {
        single: Vec::new(),
        double: Vec::new(),
        bounds_source: String::new(),
    };
    for ((kernel, m), (values, bounds)) in groups {
        let bounds = match bounds {
            Some(bounds) => bounds,
            None => {
                if !assumed {
                    Pattern::Staircase
                        .validate(max_bound)
                        .map_err(|e| format!("the file has no bounds column, so {e}"))?;
                }
                assumed = true;
                staircase
                    .get(m as usize)
                    .map(|row| row.bounds)
                    .ok_or_else(|| format!("m = {m} has no staircase row (0..=31) and the file gives no bounds column"))?
            }
        };
        let level = Level {
            m,
            bounds,
            cycles: stats::median(&values).expect("every group has a row"),
        };
        if kernel == "single" {
            levels.single.push(level);
        } else {
            levels.double.push(level);
        }
    }
    levels.bounds_source = if assumed {
        format!(
            "staircase pattern with max bound {max_bound} (assumed: the file has no bounds column)"
        )
    } else {
        "the file's bounds column".to_string()
    };
    Ok(levels)
}

fn parse_bounds(text: &str) -> Result<[i32; WARP_LANES], String> {
    let values: Vec<i32> = text
        .split_whitespace()
        .map(|v| {
            v.parse::<i32>()
                .map_err(|_| format!("bound '{v}' is not a whole number"))
        })
        .collect::<Result<_, _>>()?;
    if let Some(bad) = values
        .iter()
        .find(|b| !(0..=super::measure::MAX_BOUND).contains(*b))
    {
        return Err(format!(
            "bound {bad} is outside 0..={}, the bounds gpubench runs",
            super::measure::MAX_BOUND
        ));
    }
    values
        .try_into()
        .map_err(|v: Vec<i32>| format!("bounds has {} values; a warp has 32 lanes", v.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_sample_rows_reduce_to_medians_with_staircase_bounds() {
        let text = "kernel,m,sample,cycles\nsingle,0,0,100\nsingle,0,1,104\nsingle,0,2,101\nsingle,3,0,140\ndouble,1,0,900\n";
        let levels = parse(text, 32).unwrap();
        assert_eq!(levels.single.len(), 2);
        assert_eq!(levels.single[0].cycles, 101.0);
        assert_eq!(levels.single[1].bounds[31], 29);
        assert_eq!(levels.double[0].m, 1);
        assert!(levels.bounds_source.contains("assumed"));
    }

    #[test]
    fn a_summary_file_with_bounds_is_read_as_it_is() {
        let bounds = ["7"; 32].join(" ");
        let text =
            format!("kernel,pattern,m,n,median_cycles,bounds\nsingle,list,0,256,55.5,{bounds}\n");
        let levels = parse(&text, 32).unwrap();
        assert_eq!(levels.single[0].bounds, [7; 32]);
        assert_eq!(levels.single[0].cycles, 55.5);
        assert_eq!(levels.bounds_source, "the file's bounds column");
    }

    #[test]
    fn impossible_cycles_bounds_and_max_bounds_are_refused() {
        let negative = parse("kernel,m,cycles\nsingle,0,-13\n", 32).unwrap_err();
        assert!(negative.contains("not negative"), "{negative}");
        for max_bound in [0, 1, 31, -5, 5000] {
            assert!(
                parse("kernel,m,cycles\nsingle,0,10\n", max_bound).is_err(),
                "{max_bound}"
            );
        }
        let huge = ["1000000"; 32].join(" ");
        let error =
            parse(&format!("kernel,m,cycles,bounds\nsingle,0,10,{huge}\n"), 32).unwrap_err();
        assert!(error.contains("outside"), "{error}");
        let below = ["-1"; 32].join(" ");
        assert!(
            parse(
                &format!("kernel,m,cycles,bounds\nsingle,0,10,{below}\n"),
                32
            )
            .is_err()
        );
        // A file that gives its bounds needs no staircase, so a small --max-bound is fine.
        let seven = ["7"; 32].join(" ");
        assert!(parse(&format!("kernel,m,cycles,bounds\nsingle,0,10,{seven}\n"), 8).is_ok());
    }

    #[test]
    fn bad_files_name_the_line_and_the_fix() {
        assert!(
            parse("kernel,m\nsingle,0\n", 32)
                .unwrap_err()
                .contains("'cycles'")
        );
        assert!(
            parse("kernel,m,cycles\ntriple,0,1\n", 32)
                .unwrap_err()
                .contains("line 2")
        );
        assert!(
            parse("kernel,m,cycles\nsingle,x,1\n", 32)
                .unwrap_err()
                .contains("whole number")
        );
        assert!(
            parse("kernel,m,cycles\nsingle,40,1\n", 32)
                .unwrap_err()
                .contains("bounds column")
        );
        assert!(
            parse("kernel,m,cycles\n", 32)
                .unwrap_err()
                .contains("no data")
        );
    }
}

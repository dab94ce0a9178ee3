//! A chase curve saved as CSV: columns `footprint_bytes`, `stride_bytes` and `cycles` (cycles
//! per load), one row per point; other columns are ignored.

use std::path::Path;

use crate::analysis::cache_inference::ChasePoint;
use crate::error::UsageError;

/// The most points a chase curve read back may hold: some 14 times the densest sweep gpubench
/// runs (160 points per doubling over 30 doublings). A curve of ten million points cost 33 s
/// of inference before it was bounded (#71); one this long is refused at its first point past.
pub const MAX_CURVE_POINTS: usize = 1 << 16;

/// The most rows a chase file read back may hold: 16 curves of [`MAX_CURVE_POINTS`] (a sweep
/// times a handful of strides).
pub const MAX_CHASE_ROWS: usize = 16 * MAX_CURVE_POINTS;

/// A chase curve handed to `analyze cache`: read as a run's chase is read, every row once
/// ([`crate::input::read_csv_of_distinct_rows`]), so a file of one row repeated is refused at
/// its second copy, and one of more than [`MAX_CHASE_ROWS`] rows at the first past.
pub fn load(path: &Path) -> Result<Vec<ChasePoint>, UsageError> {
    load_with(path, |path| {
        crate::input::read_csv_of_distinct_rows(path, MAX_CHASE_ROWS)
    })
}

/// [`load`] for a run directory's own chase: a row cut off mid-line is refused
/// ([`crate::input::read_saved_text`]).
pub fn load_saved(path: &Path) -> Result<Vec<ChasePoint>, UsageError> {
    load_with(path, crate::input::read_saved_text)
}

fn load_with(
    path: &Path,
    read: fn(&Path) -> Result<String, UsageError>,
) -> Result<Vec<ChasePoint>, UsageError> {
    let text = read(path).map_err(|e| {
        UsageError::new(format!(
            "{e}; pass a CSV file with columns footprint_bytes, stride_bytes, cycles"
        ))
    })?;
    parse(&text).map_err(|message| UsageError::new(format!("{}: {message}", path.display())))
}

pub fn parse(text: &str) -> Result<Vec<ChasePoint>, String> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| format!("unreadable CSV header ({e})"))?
        .clone();
    let column = |name: &str| {
        headers.iter().position(|h| h.trim() == name).ok_or_else(|| {
            format!("no '{name}' column; the file needs columns footprint_bytes, stride_bytes, cycles")
        })
    };
    let (footprint_at, stride_at, cycles_at) = (
        column("footprint_bytes")?,
        column("stride_bytes")?,
        column("cycles")?,
    );
    let mut points = Vec::new();
    let mut per_stride = std::collections::HashMap::<String, usize>::new();
    for (index, record) in reader.records().enumerate() {
        let line = index + 2;
        let record = record.map_err(|e| format!("line {line}: {e}"))?;
        if index >= MAX_CHASE_ROWS {
            return Err(format!(
                "line {line}: more than {MAX_CHASE_ROWS} points, more than any sweep gpubench runs"
            ));
        }
        let field = |at: usize| record.get(at).unwrap_or("").trim();
        let curve = per_stride.entry(field(stride_at).to_string()).or_default();
        *curve += 1;
        if *curve > MAX_CURVE_POINTS {
            return Err(format!(
                "line {line}: the curve at stride {} holds more than {MAX_CURVE_POINTS} points, more than any sweep gpubench runs",
                field(stride_at)
            ));
        }
        let whole = |at: usize, name: &str| {
            field(at)
                .parse::<u64>()
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| {
                    format!(
                        "line {line}: {name} '{}' is not a positive whole number",
                        field(at)
                    )
                })
        };
        let cycles = field(cycles_at)
            .parse::<f64>()
            .ok()
            .filter(|c| c.is_finite() && *c >= 0.0)
            .ok_or_else(|| {
                format!(
                    "line {line}: cycles '{}' is not a number of cycles (finite, not negative)",
                    field(cycles_at)
                )
            })?;
        points.push(ChasePoint {
            footprint_bytes: whole(footprint_at, "footprint_bytes")?,
            stride_bytes: whole(stride_at, "stride_bytes")?,
            cycles,
        });
    }
    if points.len() < 3 {
        return Err(format!(
            "{} data rows; a curve needs at least 3",
            points.len()
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for p in &points {
        if !seen.insert((p.footprint_bytes, p.stride_bytes)) {
            return Err(format!(
                "footprint {} B at stride {} B appears twice; keep one row per footprint and stride",
                p.footprint_bytes, p.stride_bytes
            ));
        }
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_points_and_ignores_other_columns() {
        let text =
            "footprint_bytes,stride_bytes,cycles,samples\n64,8,10.5,3\n128,8,10.5,3\n256,8,40,3\n";
        let points = parse(text).unwrap();
        assert_eq!(points.len(), 3);
        assert_eq!(
            points[2],
            ChasePoint {
                footprint_bytes: 256,
                stride_bytes: 8,
                cycles: 40.0
            }
        );
    }

    #[test]
    fn a_curve_longer_than_any_sweep_is_refused_at_its_first_point_past() {
        let mut text = String::from("footprint_bytes,stride_bytes,cycles\n");
        for i in 1..=MAX_CURVE_POINTS + 5 {
            text += &format!("{},8,10\n", i * 8);
        }
        let error = parse(&text).unwrap_err();
        assert!(
            error.starts_with(&format!("line {}: the curve at stride 8", MAX_CURVE_POINTS + 2)),
            "{error}"
        );
        // Another stride's points are its own curve's.
        let mut text = String::from("footprint_bytes,stride_bytes,cycles\n");
        for i in 1..=MAX_CURVE_POINTS {
            text += &format!("{},8,10\n{},16,10\n", i * 8, i * 16);
        }
        assert_eq!(parse(&text).unwrap().len(), 2 * MAX_CURVE_POINTS);
    }

    #[test]
    fn bad_rows_name_the_line() {
        assert!(
            parse("footprint_bytes,cycles\n1,2\n")
                .unwrap_err()
                .contains("stride_bytes")
        );
        let text = "footprint_bytes,stride_bytes,cycles\n64,8,1\n0,8,1\n64,8,1\n";
        assert!(parse(text).unwrap_err().contains("line 3"));
        assert!(
            parse("footprint_bytes,stride_bytes,cycles\n64,8,1\n")
                .unwrap_err()
                .contains("at least 3")
        );
    }

    /// Negative cycles and a footprint given twice are refused with the line or the footprint
    /// named, never read into a level.
    #[test]
    fn negative_cycles_and_duplicates_are_refused() {
        let text = "footprint_bytes,stride_bytes,cycles\n64,8,-40.5\n128,8,1\n256,8,1\n";
        assert!(parse(text).unwrap_err().contains("line 2"));
        let text = "footprint_bytes,stride_bytes,cycles\n64,8,1\n128,8,1\n64,8,2\n";
        assert!(parse(text).unwrap_err().contains("appears twice"));
    }
}

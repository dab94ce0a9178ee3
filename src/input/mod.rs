//! Reading the files users hand gpubench: saved runs for `report` and `compare`, CSVs for
//! `analyze`. One reader for all of them: only regular files (a FIFO or a device would block or
//! never end), plain or gzip-compressed by name (every member of a multi-member `.gz`, as pigz
//! and `cat a.gz b.gz` write), at most [`MAX_INPUT_BYTES`] after unpacking, UTF-8, and, for
//! CSVs, only numbers gpubench could have written: finite and within [`MAX_MAGNITUDE`] (an `inf`
//! or a 1e308 sends the figures' axis code into a loop that never ends).

use std::io::Read;
use std::path::Path;

use crate::error::UsageError;

pub mod columns;

/// The most bytes gpubench reads from one file, after unpacking.
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// The largest magnitude of a number in a CSV gpubench reads: above every 64-bit counter it
/// writes (%globaltimer stamps are near 1.8e18 ns), far below where the axis code breaks.
pub const MAX_MAGNITUDE: f64 = 1e20;

/// `path` as text (see the module's rules), or one sentence saying why not.
pub fn read_text(path: &Path) -> Result<String, UsageError> {
    read_text_within(path, MAX_INPUT_BYTES)
}

/// A file of a run directory: [`read_text`], and where it is a CSV, its last row ends its
/// line. Every CSV gpubench writes ends each row; one whose last row does not was cut off
/// mid-row, and would be read as a shorter curve whose last point may carry a wrong number.
/// (A CSV handed to `analyze` may be written by hand and is not held to this.)
pub fn read_saved_text(path: &Path) -> Result<String, UsageError> {
    let text = read_text(path)?;
    let name = path.to_string_lossy();
    let csv = name.ends_with(".csv") || name.ends_with(".csv.gz");
    if csv && !text.is_empty() && !text.ends_with('\n') {
        return Err(UsageError::new(format!(
            "{}: its last row has no line end, so the file was cut off mid-row; the run directory is damaged",
            path.display()
        )));
    }
    if csv && let Some((first, again)) = repeated_row(&text) {
        return Err(UsageError::new(format!(
            "{}: line {again} repeats line {first}; gpubench writes each row once, so the file is damaged or was edited",
            path.display()
        )));
    }
    Ok(text)
}

/// The first row of a CSV below its header that repeats an earlier one, as the line numbers of
/// both (from 1, the header's line 1). Every CSV gpubench writes names its point in each row (a
/// size, a stride, an SM, a sample index), so a row written twice is damage, as chase.csv's own
/// reader says of a footprint and stride that appear twice.
fn repeated_row(text: &str) -> Option<(usize, usize)> {
    let mut seen = std::collections::HashMap::new();
    for (index, line) in text.lines().enumerate().skip(1) {
        let row = line.trim_end_matches('\r');
        if row.trim().is_empty() {
            continue;
        }
        if let Some(first) = seen.insert(row, index + 1) {
            return Some((first, index + 1));
        }
    }
    None
}

/// [`read_text`] with a byte limit of `limit`.
pub fn read_text_within(path: &Path, limit: u64) -> Result<String, UsageError> {
    let refuse = |why: String| UsageError::new(format!("{}: {why}", path.display()));
    let metadata = std::fs::metadata(path).map_err(|e| refuse(format!("cannot read it ({e})")))?;
    if !metadata.is_file() {
        return Err(refuse(
            "not a regular file (gpubench reads only regular files)".to_string(),
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| refuse(format!("cannot open it ({e})")))?;
    let compressed = path.extension().is_some_and(|e| e == "gz");
    let reader: Box<dyn Read> = if compressed {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut bytes = Vec::new();
    reader
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| refuse(format!("cannot read it ({e})")))?;
    if bytes.len() as u64 > limit {
        return Err(refuse(format!(
            "larger than the {limit} bytes gpubench reads from one file{}",
            if compressed { " once unpacked" } else { "" }
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| refuse("not UTF-8 text".to_string()))?;
    let name = path.to_string_lossy();
    if name.ends_with(".csv") || name.ends_with(".csv.gz") {
        check_numbers(&text).map_err(refuse)?;
    } else if name.ends_with(".json") || name.ends_with(".json.gz") {
        check_json_numbers(&text).map_err(refuse)?;
    }
    Ok(text)
}

/// Every JSON file directly in `dir` (plain or gzip-compressed) read as [`read_text`] reads it:
/// the numbers of a run directory's JSON files are held to their keys' domains whether or not
/// the command at hand reads that file (`compare` reads only the saved figures; a suite's
/// JSON written for people is read by nothing), so a damaged run is refused by every command.
pub fn check_json_in(dir: &Path) -> Result<(), UsageError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| UsageError::new(format!("{}: cannot list it ({e})", dir.display())))?;
    let mut paths: Vec<std::path::PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.to_string_lossy();
            name.ends_with(".json") || name.ends_with(".json.gz")
        })
        .collect();
    paths.sort();
    for path in paths {
        read_text(&path)?;
    }
    Ok(())
}

/// Every number of a JSON file is within [`MAX_MAGNITUDE`] and within the domain its key names
/// ([`columns::json_domain`]); a number in an array is held to its array's key. The refusal
/// names the number by its JSON pointer. Text that does not parse is the typed readers' to
/// report.
fn check_json_numbers(text: &str) -> Result<(), String> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return Ok(());
    };
    let mut pending = vec![(String::new(), "", &value)];
    while let Some((at, key, value)) = pending.pop() {
        match value {
            serde_json::Value::Number(number) => {
                let x = number.as_f64().unwrap_or(f64::INFINITY);
                let why = if !written_by_gpubench(x) {
                    Some("gpubench writes numbers of at most 1e20 in magnitude")
                } else {
                    columns::json_violation(key, x)
                };
                if let Some(why) = why {
                    return Err(format!(
                        "{at} holds {number}, outside its domain ({why}): the file was damaged or edited"
                    ));
                }
            }
            serde_json::Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    pending.push((format!("{at}/{i}"), key, item));
                }
            }
            serde_json::Value::Object(map) => {
                dram_peak_agrees(map).map_err(|why| format!("{at}/{why}"))?;
                for (name, item) in map {
                    // As a JSON pointer (RFC 6901) names it.
                    let step = name.replace('~', "~0").replace('/', "~1");
                    pending.push((format!("{at}/{step}"), name.as_str(), item));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Where an object holds the DRAM's peak beside the memory clock and bus width it is made of
/// (the bandwidth suite's file), the peak is what they give: 2 x clock x width / 8 (as
/// `gpu::launch::bandwidth` computes it). A peak of 1 B/s beside an H100's bus printed
/// "theoretical peak 0.00 GB/s" next to "92.7 % of theoretical peak".
fn dram_peak_agrees(map: &serde_json::Map<String, serde_json::Value>) -> Result<(), String> {
    let number = |key: &str| map.get(key).and_then(serde_json::Value::as_f64);
    let (Some(clock), Some(bits), Some(peak)) = (
        number("memory_clock_mhz"),
        number("memory_bus_bits"),
        number("dram_peak_bytes_per_second"),
    ) else {
        return Ok(());
    };
    if [clock, bits, peak]
        .iter()
        .any(|x| !(*x > 0.0 && written_by_gpubench(*x)))
    {
        // Refused by their own domains, in their own words.
        return Ok(());
    }
    let given = 2.0 * clock * 1e6 * bits / 8.0;
    if (peak - given).abs() > 1e-6 * given.abs().max(1.0) {
        return Err(format!(
            "dram_peak_bytes_per_second holds {}, but its memory clock ({clock} MHz) and bus ({bits} bits) give {given} (2 x clock x width / 8): the file was damaged or edited",
            map["dram_peak_bytes_per_second"]
        ));
    }
    Ok(())
}

/// Whether `value` is a number gpubench could have written: finite and within
/// [`MAX_MAGNITUDE`].
fn written_by_gpubench(value: f64) -> bool {
    value.is_finite() && value.abs() <= MAX_MAGNITUDE
}

/// Every field of a CSV that reads as a number is finite and within [`MAX_MAGNITUDE`], and
/// below the header, within its column's domain ([`columns`]).
fn check_numbers(text: &str) -> Result<(), String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut header: Option<csv::StringRecord> = None;
    for (index, record) in reader.records().enumerate() {
        let Ok(record) = record else {
            // Malformed rows are the typed readers' to report, with their column names.
            continue;
        };
        for (column, field) in record.iter().enumerate() {
            let Ok(value) = field.trim().parse::<f64>() else {
                continue;
            };
            if !written_by_gpubench(value) {
                return Err(format!(
                    "line {} holds {field:?}, which gpubench never writes (numbers are finite and at most {MAX_MAGNITUDE:e} in magnitude)",
                    index + 1
                ));
            }
            if let Some(name) = header.as_ref().and_then(|h| h.get(column))
                && let Some(why) = columns::violation(name.trim(), value)
            {
                return Err(format!(
                    "line {} holds {field:?} in column {name}, outside its domain ({why}): the file was damaged or edited",
                    index + 1
                ));
            }
        }
        if header.is_none() {
            header = Some(record);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn gzip(text: &str) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(text.as_bytes()).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn every_member_of_a_multi_member_gzip_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut both = gzip("a,b\n1,2\n");
        both.extend(gzip("3,4\n"));
        let path = write(dir.path(), "x.csv.gz", &both);
        assert_eq!(read_text(&path).unwrap(), "a,b\n1,2\n3,4\n");
        let mut garbage = gzip("a,b\n1,2\n");
        garbage.extend(b"trailing garbage");
        let path = write(dir.path(), "y.csv.gz", &garbage);
        assert!(read_text(&path).is_err());
    }

    #[test]
    fn a_saved_csv_row_written_twice_is_refused_naming_both_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "tensor.csv", b"a,b\n1,2\n3,4\n1,2\n");
        let error = read_saved_text(&path).unwrap_err().to_string();
        assert!(
            error.contains("tensor.csv: line 4 repeats line 2"),
            "{error}"
        );
        // A CSV handed to `analyze` is not a run's and may hold what it likes.
        assert!(read_text(&path).is_ok());
        let path = write(dir.path(), "ok.csv", b"a,b\n1,2\n1,3\n\n");
        assert!(read_saved_text(&path).is_ok());
    }

    #[test]
    fn non_finite_and_absurd_numbers_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["inf", "-inf", "NaN", "1.5e308", "-2e30", "1e21"] {
            let path = write(dir.path(), "x.csv", format!("a,b\n1,{bad}\n").as_bytes());
            let error = read_text(&path).unwrap_err().to_string();
            assert!(error.contains("line 2"), "{bad}: {error}");
        }
        let path = write(
            dir.path(),
            "ok.csv",
            b"a,b,name\n18446744073709551615,2.5e12,sinf\n",
        );
        assert!(read_text(&path).is_ok());
        // A JSON's numbers: any key at most 1e20, and within the kind its key names.
        for (bad, field) in [
            ("{\"a\": 1e308}", "/a holds"),
            (
                "{\"x\": {\"latency_cycles\": -5}}",
                "/x/latency_cycles holds -5",
            ),
            ("{\"ways\": [4, 2.5]}", "/ways/1 holds 2.5"),
            ("{\"confidence\": 1.5}", "/confidence holds 1.5"),
        ] {
            let path = write(dir.path(), "x.json", bad.as_bytes());
            let error = read_text(&path).unwrap_err().to_string();
            assert!(
                error.contains(field) && error.contains("x.json"),
                "{bad}: {error}"
            );
        }
        let path = write(
            dir.path(),
            "ok.json",
            b"{\"slope\": -3, \"fit\": {\"low\": -0.4}, \"ways\": [4], \"name\": \"-1\"}",
        );
        assert!(read_text(&path).is_ok());
        // Text that does not parse is the typed readers' to report, with their types.
        let path = write(dir.path(), "cut.json", b"{\"a\": ");
        assert!(read_text(&path).is_ok());
    }

    #[test]
    fn only_regular_files_within_the_limit_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fit.json");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path and nothing else.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let error = read_text(&fifo).unwrap_err().to_string();
        assert!(error.contains("not a regular file"), "{error}");
        assert!(read_text(dir.path()).is_err());
        let big = write(dir.path(), "big.csv.gz", &gzip(&"0,0\n".repeat(1000)));
        let error = read_text_within(&big, 100).unwrap_err().to_string();
        assert!(error.contains("once unpacked"), "{error}");
        assert!(read_text_within(&big, 4000).is_ok());
    }
}

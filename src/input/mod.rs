//! Reading the files users hand gpubench: saved runs for `report` and `compare`, CSVs for
//! `analyze`. One reader for all of them: only regular files (a FIFO or a device would block or
//! never end), plain or gzip-compressed by name (every member of a multi-member `.gz`, as pigz
//! and `cat a.gz b.gz` write), at most [`MAX_INPUT_BYTES`] after unpacking, UTF-8, and, for
//! CSVs, only numbers gpubench could have written: finite and within [`MAX_MAGNITUDE`] (an `inf`
//! or a 1e308 sends the figures' axis code into a loop that never ends).

use std::io::Read;
use std::path::Path;

use crate::error::{UsageError, bail_usage};

pub mod columns;

/// The most bytes gpubench reads from one file, after unpacking: some 25 times its largest
/// file at default settings (a divergence run's `samples.csv`, 19 MB), and within what a
/// refusal may cost (issue #71: under 1 GB of memory, in seconds). A suite refuses settings
/// whose files would pass it (`divergence --samples`), so no finished run is unreadable.
pub const MAX_INPUT_BYTES: u64 = 512 << 20;

/// The most bytes gpubench reads from one JSON file: its largest (a machine model, a summary)
/// are some 250 KB; a larger one (a gzip bomb among a run's files) is refused after this many.
pub const MAX_JSON_BYTES: u64 = 64 << 20;

/// The largest magnitude of a number in a CSV gpubench reads: above every 64-bit counter it
/// writes (%globaltimer stamps are near 1.8e18 ns), far below where the axis code breaks.
pub const MAX_MAGNITUDE: f64 = 1e20;

/// `path` as text (see the module's rules), or one sentence saying why not.
pub fn read_text(path: &Path) -> Result<String, UsageError> {
    read_text_within(path, MAX_INPUT_BYTES)
}

/// A CSV whose rows each name their point ([`read_text`], and no row below the header twice),
/// read line by line so that a file of one row repeated is refused at its second copy however
/// long it is (#71: a 2 MB `chase.csv.gz` of one row cost 28 s and 1.8 GB before the typed
/// reader said "appears twice").
///
/// At most `most` rows below the header are read: a file longer than any of its kind gpubench
/// writes is refused at the first row past (a ten-million-row chase cost 9 s before).
pub fn read_csv_of_distinct_rows(path: &Path, most: usize) -> Result<String, UsageError> {
    read(path, MAX_INPUT_BYTES, Rows::Distinct { most })
}

/// A file of a run directory: [`read_text`], and where it is a CSV, its last row ends its
/// line. Every CSV gpubench writes ends each row; one whose last row does not was cut off
/// mid-row, and would be read as a shorter curve whose last point may carry a wrong number.
/// (A CSV handed to `analyze` may be written by hand and is not held to this.)
pub fn read_saved_text(path: &Path) -> Result<String, UsageError> {
    let name = path.to_string_lossy();
    let csv = name.ends_with(".csv") || name.ends_with(".csv.gz");
    let text = read(
        path,
        MAX_INPUT_BYTES,
        if csv {
            Rows::Distinct { most: usize::MAX }
        } else {
            Rows::Any
        },
    )?;
    if csv && !text.is_empty() && !text.ends_with('\n') {
        bail_usage!(
            "{}: its last row has no line end, so the file was cut off mid-row; the run directory is damaged",
            path.display()
        );
    }
    Ok(text)
}

/// What a reader holds a CSV's rows to as it reads them.
#[derive(Clone, Copy)]
enum Rows {
    Any,
    /// No row below the header twice. Every CSV gpubench writes names its point in each row
    /// (a size, a stride, an SM, a sample index), so a row written twice is damage, as
    /// chase.csv's own reader says of a footprint and stride that appear twice. At most
    /// `most` of them.
    Distinct {
        most: usize,
    },
}

/// The rows read so far, by their hashes (8 bytes a row however long it is); a repeated hash
/// is confirmed against the text before it is called a repeat.
struct SeenRows {
    hashes: std::collections::HashSet<u64>,
    hasher: std::hash::RandomState,
    line: usize,
}

impl SeenRows {
    fn new() -> Self {
        SeenRows {
            hashes: std::collections::HashSet::new(),
            hasher: std::hash::RandomState::new(),
            line: 0,
        }
    }

    /// Takes the next line of `text` (which ends with it); the line numbers (from 1, the
    /// header's 1) of an earlier row it repeats and of itself, where it does.
    fn take(&mut self, text: &[u8], line: &[u8]) -> Option<(usize, usize)> {
        use std::hash::BuildHasher;
        self.line += 1;
        let row = trim_line(line);
        if self.line == 1 || row.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let hash = self.hasher.hash_one(row);
        if self.hashes.insert(hash) {
            return None;
        }
        // The same hash: find the earlier row it belongs to (a true repeat, almost always).
        let earlier = &text[..text.len() - line.len()];
        let first = earlier
            .split(|&b| b == b'\n')
            .enumerate()
            .skip(1)
            .find(|(_, l)| trim_line(l) == row)
            .map(|(i, _)| i + 1)?;
        Some((first, self.line))
    }
}

/// A line without its line end (`\n` or `\r\n`).
fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// [`read_text`] with a byte limit of `limit` (JSON files are held to [`MAX_JSON_BYTES`] as
/// well).
pub fn read_text_within(path: &Path, limit: u64) -> Result<String, UsageError> {
    read(path, limit, Rows::Any)
}

/// The one reader: `path` as text within `limit` bytes (unpacked), its CSV rows held to
/// `rows` as they are read.
fn read(path: &Path, limit: u64, rows: Rows) -> Result<String, UsageError> {
    use std::io::BufRead;
    let refuse = |why: String| UsageError::new(format!("{}: {why}", path.display()));
    let name = path.to_string_lossy();
    let json = name.ends_with(".json") || name.ends_with(".json.gz");
    let csv = name.ends_with(".csv") || name.ends_with(".csv.gz");
    let limit = if json {
        limit.min(MAX_JSON_BYTES)
    } else {
        limit
    };
    let metadata = std::fs::metadata(path).map_err(|e| refuse(format!("cannot read it ({e})")))?;
    if !metadata.is_file() {
        return Err(refuse(
            "not a regular file (gpubench reads only regular files)".to_string(),
        ));
    }
    let compressed = path.extension().is_some_and(|e| e == "gz");
    let too_large = || {
        refuse(format!(
            "larger than the {limit} bytes gpubench reads from one file{}",
            if compressed { " once unpacked" } else { "" }
        ))
    };
    // A plain file's size is known before a byte is read.
    if !compressed && metadata.len() > limit {
        return Err(too_large());
    }
    let file = std::fs::File::open(path).map_err(|e| refuse(format!("cannot open it ({e})")))?;
    let reader: Box<dyn Read> = if compressed {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut reader = std::io::BufReader::new(reader.take(limit + 1));
    let mut bytes = Vec::new();
    let (mut seen, most) = match rows {
        Rows::Distinct { most } if csv => (Some(SeenRows::new()), most),
        _ => (None, usize::MAX),
    };
    loop {
        let start = bytes.len();
        let read = reader
            .read_until(b'\n', &mut bytes)
            .map_err(|e| refuse(format!("cannot read it ({e})")))?;
        if read == 0 {
            break;
        }
        if bytes.len() as u64 > limit {
            return Err(too_large());
        }
        if let Some(seen) = seen.as_mut() {
            if let Some((first, again)) = seen.take(&bytes, &bytes[start..]) {
                return Err(refuse(format!(
                    "line {again} repeats line {first}; gpubench writes each row once, so the file is damaged or was edited"
                )));
            }
            if seen.line > most.saturating_add(1) {
                return Err(refuse(format!(
                    "line {}: more than {most} rows, more than any such file gpubench writes",
                    seen.line
                )));
            }
        }
    }
    let text = String::from_utf8(bytes).map_err(|_| refuse("not UTF-8 text".to_string()))?;
    if csv {
        check_numbers(&text).map_err(refuse)?;
    } else if json {
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

/// The longest text gpubench writes in a JSON file, some 50 times its longest (a method's
/// description, 1,283 characters): a 100 MB figure text was copied into every output (#71).
const MAX_TEXT_BYTES: usize = 64 << 10;

/// Every number of a JSON file is within [`MAX_MAGNITUDE`] and within the domain its key names
/// ([`columns::json_domain`]); a number in an array is held to its array's key. Every text is
/// at most [`MAX_TEXT_BYTES`] (the typed readers hold their fields to less: a device's words
/// to 256 characters, a figure's to 4,096). The refusal names the value by its JSON pointer. Text that does not parse is the typed
/// readers' to report.
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
            serde_json::Value::String(words) if words.len() > MAX_TEXT_BYTES => {
                return Err(format!(
                    "{at} holds {} bytes of text, more than the {MAX_TEXT_BYTES} gpubench writes in one: the file was damaged or edited",
                    words.len()
                ));
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
        // Text past what gpubench writes (a 100 MB figure text was copied into every output).
        let bad = format!(
            "{{\"device\": {{\"name\": \"{}\"}}}}",
            "H".repeat(MAX_TEXT_BYTES + 1)
        );
        let path = write(dir.path(), "x.json", bad.as_bytes());
        let error = read_text(&path).unwrap_err().to_string();
        assert!(error.contains("/device/name holds 65537 bytes"), "{error}");
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

    /// #71 item 5: what a refusal costs is bounded by the work, not the file. A file of one
    /// row repeated past the size limit is refused at its second copy (had it been read to
    /// the end, the refusal would be its size); a plain file over the limit is refused by its
    /// size alone (a sparse file of 513 MiB: nothing is read); a JSON file is held to
    /// [`MAX_JSON_BYTES`], whatever the command's limit.
    #[test]
    fn a_refusal_reads_no_further_than_the_damage() {
        let dir = tempfile::tempdir().unwrap();
        let limit = 1 << 20;
        let rows = "4096,32,32.1\n".repeat(1 << 17);
        let bomb = write(
            dir.path(),
            "chase.csv.gz",
            &gzip(&format!("footprint_bytes,stride_bytes,cycles\n{rows}")),
        );
        let error = read(&bomb, limit, Rows::Distinct { most: usize::MAX })
            .unwrap_err()
            .to_string();
        assert!(error.contains("line 3 repeats line 2"), "{error}");
        // A CSV handed to `analyze divergence` may repeat a row: it is read to its limit.
        let error = read(&bomb, limit, Rows::Any).unwrap_err().to_string();
        assert!(error.contains("larger than"), "{error}");
        for read in [read_saved_text, |p: &Path| read_csv_of_distinct_rows(p, 10)] {
            let error = read(&bomb).unwrap_err().to_string();
            assert!(error.contains("line 3 repeats line 2"), "{error}");
        }
        // A file longer than any of its kind is refused at its first row past.
        let rows: String = (1..=100).map(|i| format!("{},8,1\n", i * 8)).collect();
        let long = write(dir.path(), "long.csv", format!("a,b,c\n{rows}").as_bytes());
        let error = read_csv_of_distinct_rows(&long, 10)
            .unwrap_err()
            .to_string();
        assert!(error.contains("line 12: more than 10 rows"), "{error}");
        assert!(read_csv_of_distinct_rows(&long, 100).is_ok());

        let sparse = dir.path().join("samples.csv");
        std::fs::File::create(&sparse)
            .unwrap()
            .set_len(MAX_INPUT_BYTES + 1)
            .unwrap();
        let error = read_text(&sparse).unwrap_err().to_string();
        assert!(error.contains("larger than the 536870912 bytes"), "{error}");

        let json = dir.path().join("unused.json");
        std::fs::File::create(&json)
            .unwrap()
            .set_len(MAX_JSON_BYTES + 1)
            .unwrap();
        let error = read_text(&json).unwrap_err().to_string();
        assert!(error.contains("larger than the 67108864 bytes"), "{error}");
    }
}

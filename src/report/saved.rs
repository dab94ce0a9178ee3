//! Reading a run directory's own files back, for `gpubench report`: each loader reads the CSV
//! its suite's writer produced (plain, or gzip-compressed as committed results are) into the
//! same types the live run handed to the analysis and the plots.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::de::DeserializeOwned;

use crate::error::{UsageError, bail_usage};
use crate::input::{read_saved_text, read_text};

/// `dir/name`, or `dir/name.gz` where only the compressed copy exists. Anything by that name
/// counts (a FIFO or a directory too), so that reading it says what is wrong with it instead
/// of the file being skipped as absent.
pub fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    let plain = dir.join(name);
    let compressed = dir.join(format!("{name}.gz"));
    // symlink_metadata: a link that leads nowhere (or round in a loop) is found, not absent.
    [plain, compressed]
        .into_iter()
        .find(|p| std::fs::symlink_metadata(p).is_ok())
}

/// [`find`], or the sentence that a run directory lacks the file: damaged input.
fn find_or_refuse(dir: &Path, name: &str) -> Result<PathBuf, UsageError> {
    find(dir, name).ok_or_else(|| UsageError::new(format!("{} has no {name}", dir.display())))
}

/// `dir/name` (or its .gz) read as `T`.
pub fn read_json<T: DeserializeOwned>(dir: &Path, name: &str) -> Result<T> {
    let path = find_or_refuse(dir, name)?;
    let text = read_text(&path)?;
    serde_json::from_str(&text).with_context(|| format!("{} is not as expected", path.display()))
}

/// `dir/name` read as `T`, or `None` when there is no such file.
pub fn read_json_optional<T: DeserializeOwned>(dir: &Path, name: &str) -> Result<Option<T>> {
    match find(dir, name) {
        Some(_) => read_json(dir, name).map(Some),
        None => Ok(None),
    }
}

pub fn read_csv<T: DeserializeOwned>(dir: &Path, name: &str) -> Result<Vec<T>> {
    let path = find_or_refuse(dir, name)?;
    let text = read_saved_text(&path)?;
    let rows = csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .collect::<Result<Vec<T>, _>>()
        .with_context(|| format!("unreadable row in {}", path.display()))?;
    if rows.is_empty() {
        // Every suite writes at least one row; a figure drawn from none would be blank.
        bail_usage!(
            "{} has no rows; the run that wrote it is damaged",
            path.display()
        );
    }
    Ok(rows)
}

/// The SASS of a module's kernels as a suite's JSON file records it: how it was made ("written
/// to FILE", or why none was), for which target (empty in files written before the field), and
/// every opcode of each kernel but the padding with its static count, where the toolkit was
/// there. The harness makes it as the run's disassembly is joined (`keep_instructions`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KernelInstructions {
    pub status: String,
    #[serde(default)]
    pub arch: String,
    pub instructions: std::collections::BTreeMap<String, std::collections::BTreeMap<String, usize>>,
}

/// The SASS a suite's JSON file records of the kernels it timed: how it was made ("written to
/// FILE", or why none was) and what each kernel holds of interest to the suite (`K`: its
/// atomics, its MMA instructions).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct KernelsSass<K> {
    pub kernels: Vec<K>,
    pub status: String,
}

//! A run directory: always new, never overwritten, every file written atomically (a temporary
//! file in the same directory, then a rename), so a crash leaves whole files or none.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::error::{UsageError, bail_usage};

/// Where a run goes without `--output`: a directory of the working directory that gpubench's
/// own clone ignores (`.gitignore`), never inside a run or among a clone's committed results.
pub const DEFAULT_PARENT: &str = "gpubench-runs";

/// `<UTC time>` as run directories' names start: `20261128T071500Z`.
fn stamp(now: SystemTime) -> String {
    humantime::format_rfc3339_seconds(now)
        .to_string()
        .chars()
        .filter(|c| !matches!(c, '-' | ':'))
        .collect()
}

/// A path for a new output of `kind` (`report-html`) under [`DEFAULT_PARENT`]: `<UTC
/// time>-<kind>`, numbered where that exists. Not created: the command that writes it checks
/// and makes it as it would a `--output`.
pub fn default_path(kind: &str) -> PathBuf {
    let stamp = stamp(SystemTime::now());
    let parent = Path::new(DEFAULT_PARENT);
    (1..)
        .map(|attempt| match attempt {
            1 => parent.join(format!("{stamp}-{kind}")),
            n => parent.join(format!("{stamp}-{kind}-{n}")),
        })
        .find(|path| fs::symlink_metadata(path).is_err())
        .expect("the attempt counter is unbounded")
}

#[derive(Debug, Clone)]
pub struct RunDir {
    path: PathBuf,
}

/// Checks an explicit `--output` before any work: it must not exist yet (not even as a dangling
/// symlink), and whatever of its parents exists must be a directory.
pub fn check_new(output: &Path) -> Result<(), UsageError> {
    if let Ok(existing) = fs::symlink_metadata(output) {
        let what = if existing.file_type().is_symlink() {
            " (as a symlink)"
        } else {
            ""
        };
        bail_usage!(
            "{} already exists{what} and gpubench never overwrites a run; choose a new --output directory",
            output.display()
        );
    }
    check_parents(output)
}

/// Refuses an `--output` below a path that exists but is no directory: whatever of its
/// parents exists must be a directory.
pub fn check_parents(output: &Path) -> Result<(), UsageError> {
    match output
        .ancestors()
        .skip(1)
        .find(|a| !a.as_os_str().is_empty() && a.exists() && !a.is_dir())
    {
        Some(file) => Err(UsageError::new(format!(
            "{} is a file, so --output {} cannot be created inside it; choose a path in a directory",
            file.display(),
            output.display()
        ))),
        None => Ok(()),
    }
}

impl RunDir {
    /// Creates `output`, or a new `<parent>/<UTC time>-<suite>[-N]` when none is given.
    pub fn create(output: Option<&Path>, suite: &str) -> Result<RunDir> {
        match output {
            Some(path) => {
                check_new(path)?;
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    fs::create_dir_all(parent)
                        .with_context(|| format!("cannot create {}", parent.display()))?;
                }
                if let Err(e) = fs::create_dir(path) {
                    // Another gpubench made it between the check and here: refused as such.
                    if e.kind() == std::io::ErrorKind::AlreadyExists {
                        check_new(path)?;
                    }
                    return Err(e).with_context(|| {
                        format!("cannot create run directory {}", path.display())
                    });
                }
                Ok(RunDir {
                    path: path.to_path_buf(),
                })
            }
            None => Self::create_unique(Path::new(DEFAULT_PARENT), suite, SystemTime::now()),
        }
    }

    fn create_unique(parent: &Path, suite: &str, now: SystemTime) -> Result<RunDir> {
        fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
        let stamp = stamp(now);
        for attempt in 1.. {
            let name = if attempt == 1 {
                format!("{stamp}-{suite}")
            } else {
                format!("{stamp}-{suite}-{attempt}")
            };
            let path = parent.join(name);
            // create_dir fails on an existing directory, so two runs can never share one.
            match fs::create_dir(&path) {
                Ok(()) => return Ok(RunDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot create {}", path.display()));
                }
            }
        }
        unreachable!("the attempt counter is unbounded")
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<()> {
        write_atomically(&self.path.join(name), bytes)
    }

    /// Lets `produce` write a file at a temporary path (plot backends want a path, and pick
    /// the format from its extension, so the name keeps it), then renames it into place.
    pub fn write_with(&self, name: &str, produce: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
        let temporary = self.path.join(format!(".partial-{name}"));
        // A failed producer (a full disk under a figure) leaves no half file behind.
        if let Err(error) = produce(&temporary) {
            let _ = fs::remove_file(&temporary);
            return Err(error.context(format!("cannot write {}", self.path.join(name).display())));
        }
        fs::rename(&temporary, self.path.join(name))
            .with_context(|| format!("cannot write {}", self.path.join(name).display()))
    }

    /// A figure named `stem`, in the format the process draws figures in
    /// ([`crate::report::plot::style`]), drawn by `draw` at the path it is given.
    pub fn write_plot(&self, stem: &str, draw: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
        let format = crate::report::plot::style().format;
        self.write_with(&format!("{stem}.{}", format.extension()), draw)
    }

    pub fn write_json<T: Serialize + ?Sized>(&self, name: &str, value: &T) -> Result<()> {
        let mut text = serde_json::to_vec_pretty(value).context("serialising JSON")?;
        text.push(b'\n');
        self.write(name, &text)
    }

    pub fn write_csv<T: Serialize>(
        &self,
        name: &str,
        rows: impl IntoIterator<Item = T>,
    ) -> Result<()> {
        self.write(name, &csv_bytes(rows)?)
    }
}

/// What a command said last, where it failed: the last line starting "Error: " (every failed
/// command's sentence does), without those words; else the last fatal report of GPGPU-Sim
/// (a line holding "ERROR **"); else the last non-empty line.
pub fn last_log_line(log: &Path) -> Option<String> {
    let text = fs::read_to_string(log).ok()?;
    // gpubench's own sentence, where a library printed more after it (GPGPU-Sim's "exit
    // detected", from its exit handler); else what made the simulator stop, which its
    // deadlock report follows with the cores, partitions and a line on gdb before it aborts;
    // else the last line.
    let lines = || text.lines().rev().map(str::trim);
    lines()
        .find_map(|l| l.strip_prefix("Error: "))
        .or_else(|| lines().find(|l| l.contains("ERROR **")))
        .or_else(|| lines().find(|l| !l.is_empty()))
        .map(str::to_string)
}

/// Removes what writers killed in mid-write left in `dir`: the temporary files of
/// [`RunDir::write_with`] (`.partial-NAME`) and of [`write_atomically`] (`.NAME.partial`), so
/// nothing half-written stays beside the finished files. Returns the names removed.
pub fn remove_partial_files(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed: Vec<String> = entries
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let partial = name.starts_with(".partial-")
                || (name.starts_with('.') && name.ends_with(".partial"));
            (partial && fs::remove_file(entry.path()).is_ok()).then_some(name)
        })
        .collect();
    removed.sort();
    removed
}

pub fn csv_bytes<T: Serialize>(rows: impl IntoIterator<Item = T>) -> Result<Vec<u8>> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in rows {
        writer.serialize(row).context("serialising a CSV row")?;
    }
    writer.into_inner().context("finishing CSV")
}

/// Moves the finished directory `staging` to `output`, which must still not exist: where
/// another gpubench finished there first, `staging` is removed and the run refused as
/// [`check_new`] refuses it.
pub fn publish(staging: &Path, output: &Path) -> Result<()> {
    if let Err(error) = rename_without_replacing(staging, output) {
        let _ = fs::remove_dir_all(staging);
        check_new(output)?;
        return Err(error)
            .with_context(|| format!("cannot move the finished run to {}", output.display()));
    }
    Ok(())
}

/// `rename`, failing with `AlreadyExists` where `to` exists (an empty directory included),
/// atomically where the kernel and the file system offer it.
pub fn rename_without_replacing(from: &Path, to: &Path) -> std::io::Result<()> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = |p: &Path| {
            std::ffi::CString::new(p.as_os_str().as_bytes())
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
        };
        let (from_c, to_c) = (c(from)?, c(to)?);
        // SAFETY: both paths are NUL-terminated strings that outlive the call.
        let moved = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                from_c.as_ptr(),
                libc::AT_FDCWD,
                to_c.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        };
        if moved == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        // A file system without RENAME_NOREPLACE says EINVAL: check, then rename, below.
        if error.raw_os_error() != Some(libc::EINVAL) && error.raw_os_error() != Some(libc::ENOSYS)
        {
            return Err(error);
        }
    }
    if fs::symlink_metadata(to).is_ok() {
        return Err(std::io::ErrorKind::AlreadyExists.into());
    }
    fs::rename(from, to)
}

pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let file_name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?;
    let temporary = path.with_file_name(format!(".{}.partial", file_name.to_string_lossy()));
    let mut file = fs::File::create(&temporary)
        .with_context(|| format!("cannot write {}", temporary.display()))?;
    if let Err(error) = file.write_all(bytes).and_then(|()| file.sync_all()) {
        drop(file);
        let _ = fs::remove_file(&temporary);
        return Err(error).with_context(|| format!("cannot write {}", path.display()));
    }
    fs::rename(&temporary, path).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_gives_the_commands_sentence_over_what_a_library_printed_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("tensor.log");
        fs::write(
            &log,
            "GPGPU-Sim: detected inactive GPU simulation thread\nError: the tensor suite needs wgmma\nGPGPU-Sim: *** exit detected ***\n\n",
        )
        .unwrap();
        assert_eq!(
            last_log_line(&log).as_deref(),
            Some("the tensor suite needs wgmma")
        );
        // GPGPU-Sim's deadlock report, as it ends a log before abort(): the line that says why.
        fs::write(
            &log,
            "writing to x\nGPGPU-Sim uArch: ERROR ** deadlock detected: last writeback core 0 @ gpu_sim_cycle 5266\nGPGPU-Sim uArch: DEADLOCK  0(1)\n\nRe-run the simulator in gdb and use debug routines in .gdbinit to debug this\n",
        )
        .unwrap();
        assert_eq!(
            last_log_line(&log).as_deref(),
            Some(
                "GPGPU-Sim uArch: ERROR ** deadlock detected: last writeback core 0 @ gpu_sim_cycle 5266"
            )
        );
        fs::write(&log, "writing to x\nthread 'main' stopped\n  \n").unwrap();
        assert_eq!(
            last_log_line(&log).as_deref(),
            Some("thread 'main' stopped")
        );
    }

    #[test]
    fn a_failed_figure_leaves_no_partial_file() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create(Some(&dir.path().join("run")), "test").unwrap();
        let error = run
            .write_plot("x", |path| {
                fs::write(path, b"half")?;
                anyhow::bail!("No space left on device")
            })
            .unwrap_err();
        assert!(format!("{error:#}").contains("cannot write"), "{error:#}");
        let left: Vec<_> = fs::read_dir(run.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn a_dangling_symlink_or_a_file_on_the_way_is_refused_in_one_sentence() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path().join("missing"), &link).unwrap();
        let error = check_new(&link).unwrap_err().to_string();
        assert!(error.contains("as a symlink"), "{error}");
        let file = dir.path().join("afile");
        fs::write(&file, b"x").unwrap();
        let error = check_new(&file.join("sub/run")).unwrap_err().to_string();
        assert!(error.contains("is a file"), "{error}");
        assert!(check_new(&dir.path().join("new/run")).is_ok());
    }
    use std::time::Duration;

    #[test]
    fn default_directories_are_never_reused() {
        let root = tempfile::tempdir().unwrap();
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let first = RunDir::create_unique(root.path(), "divergence", now).unwrap();
        let second = RunDir::create_unique(root.path(), "divergence", now).unwrap();
        assert_ne!(first.path(), second.path());
        assert!(first.path().ends_with("20231114T221320Z-divergence"));
        assert!(second.path().ends_with("20231114T221320Z-divergence-2"));
    }

    #[test]
    fn an_existing_output_is_refused_and_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let existing = root.path().join("run");
        fs::create_dir(&existing).unwrap();
        fs::write(existing.join("samples.csv"), "keep me").unwrap();
        let error = RunDir::create(Some(&existing), "divergence").unwrap_err();
        assert!(error.to_string().contains("never overwrites"));
        assert_eq!(
            fs::read_to_string(existing.join("samples.csv")).unwrap(),
            "keep me"
        );
    }

    #[test]
    fn writes_replace_whole_files_and_leave_no_temporaries() {
        let root = tempfile::tempdir().unwrap();
        let run = RunDir::create(Some(&root.path().join("new/run")), "x").unwrap();
        run.write("a.txt", b"first").unwrap();
        run.write("a.txt", b"second").unwrap();
        assert_eq!(
            fs::read_to_string(run.path().join("a.txt")).unwrap(),
            "second"
        );
        let names: Vec<_> = fs::read_dir(run.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.txt")]);
    }
}

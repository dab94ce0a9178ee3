//! `gpubench export DIR`: the run's machine model as JSON (`report::export`), from the same
//! summary `report` makes (every suite's figures derived again from its own files, the run's
//! own repeat confirming them), to standard output or a new file; `--schema` prints the schema.

use std::io::Write as _;

use anyhow::{Context, Result};

use crate::cli::{ExportArgs, ExportFormat};
use crate::error::{UsageError, bail_usage};
use crate::report::export::{self, Gpu, Quantity};
use crate::report::metadata::SavedMetadata;
use crate::report::summary;

pub fn run(args: &ExportArgs) -> Result<()> {
    let text = if args.schema {
        export::schema()
    } else {
        let Some(dir) = &args.dir else {
            bail_usage!("pass a run directory to export, or --schema");
        };
        if !dir.is_dir() {
            bail_usage!(
                "{} is not a directory; pass a run directory written by gpubench",
                dir.display()
            );
        }
        match args.format {
            ExportFormat::Json | ExportFormat::Prometheus if args.base.is_some() => {
                bail_usage!(
                    "--base is a gpgpusim.config for --format accel-sim; the JSON model and the Prometheus export take none"
                );
            }
            ExportFormat::Prometheus => prometheus(dir, args.repeat_of.as_deref())?,
            ExportFormat::Json => json(dir, args.repeat_of.as_deref())?,
            ExportFormat::AccelSim => {
                let base = args.base.as_deref().map(read_base).transpose()?;
                crate::report::accel_sim::config(
                    &machine_model(dir, args.repeat_of.as_deref())?,
                    base.as_ref(),
                )
            }
        }
    };
    match &args.output {
        None => std::io::stdout()
            .write_all(text.as_bytes())
            .context("writing to standard output"),
        Some(path) => write_new(path, text.as_bytes()),
    }
}

/// `bytes` into a new file at `path`, whole or not at all: written into a hidden sibling
/// (`.NAME.partial-PID`, as `report` stages its directory) and moved into place without
/// replacing anything, so a full disk, a kill or a file made meanwhile at `path` leaves no
/// half-written model under the name asked for. As `report` does, the directories `path` lies
/// in are made where missing, and removed again where the file is not written or the process
/// is interrupted.
fn write_new(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    crate::report::run_dir::check_parents(path)?;
    let exists = || {
        anyhow::Error::from(UsageError::new(format!(
            "{} already exists; gpubench never overwrites a file, pass a new --output",
            path.display()
        )))
    };
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(exists());
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| UsageError::new(format!("{} names no file", path.display())))?;
    let made = super::report::missing_parents(path);
    let staging = path.with_file_name(super::report::staging_name(&name, std::process::id()));
    let undo = |staging_too: bool| {
        if staging_too {
            let _ = std::fs::remove_file(&staging);
        }
        for dir in &made {
            let _ = std::fs::remove_dir(dir);
        }
    };
    if let Some(deepest) = made.first() {
        std::fs::create_dir_all(deepest).map_err(|e| {
            undo(false);
            anyhow::Error::new(e).context(format!("cannot create {}", deepest.display()))
        })?;
    }
    super::report::remove_on_interrupt(staging.clone(), made.clone());
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&staging)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()));
    if let Err(e) = written {
        undo(true);
        return Err(anyhow::Error::new(e).context(format!("writing {}", path.display())));
    }
    crate::report::run_dir::rename_without_replacing(&staging, path).map_err(|e| {
        undo(true);
        match e.kind() {
            std::io::ErrorKind::AlreadyExists => exists(),
            _ => anyhow::Error::new(e).context(format!("writing {}", path.display())),
        }
    })
}

fn json(dir: &std::path::Path, repeat: Option<&std::path::Path>) -> Result<String> {
    let model = machine_model(dir, repeat)?;
    let mut text = serde_json::to_string_pretty(&model).context("serialising the machine model")?;
    text.push('\n');
    Ok(text)
}

fn machine_model(
    dir: &std::path::Path,
    repeat: Option<&std::path::Path>,
) -> Result<export::MachineModel> {
    if let Some(repeat) = repeat.filter(|r| !r.is_dir()) {
        bail_usage!(
            "--repeat-of {} is not a directory; pass a second run of the same GPU",
            repeat.display()
        );
    }
    let summary = super::report::tables_from_files(dir, repeat)?;
    model_of(dir, summary)
}

/// The metadata of `dir`'s complete suites, in directory order; refused in one sentence where
/// there is none.
fn complete_suites(dir: &std::path::Path) -> Result<Vec<SavedMetadata>> {
    let complete: Vec<SavedMetadata> = summary::suite_dirs(dir)?
        .into_iter()
        .filter_map(|(_, path)| SavedMetadata::read(&path).ok().filter(|m| m.complete()))
        .collect();
    if complete.is_empty() {
        bail_usage!("{} holds no complete suite to export", dir.display());
    }
    Ok(complete)
}

/// The machine model of `summary`, made of `dir`'s files, with the driver's facts of `dir`.
fn model_of(dir: &std::path::Path, summary: summary::Summary) -> Result<export::MachineModel> {
    let complete = complete_suites(dir)?;
    let d = &complete[0].device;
    // The driver's figures the typed metadata view does not carry, read from the first
    // complete suite's metadata.json and the bandwidth suite's bandwidth.json.
    let suites = summary::suite_dirs(dir)?;
    let raw = |suite: Option<&str>, file: &str| -> serde_json::Value {
        suites
            .iter()
            .find(|(_, path)| {
                SavedMetadata::read(path)
                    .is_ok_and(|m| m.complete() && suite.is_none_or(|s| m.suite == s))
            })
            .and_then(|(_, path)| crate::report::saved::read_json(path, file).ok())
            .unwrap_or_default()
    };
    let device = &raw(None, "metadata.json")["device"];
    let bandwidth = raw(Some("bandwidth"), "bandwidth.json");
    let gpu = Gpu {
        registers_per_multiprocessor: device["registers_per_multiprocessor"].as_u64(),
        registers_per_block: device["registers_per_block"].as_u64(),
        shared_memory_per_multiprocessor_bytes: device["shared_memory_per_multiprocessor_bytes"]
            .as_u64(),
        shared_memory_per_block_optin_bytes: device["shared_memory_per_block_optin_bytes"].as_u64(),
        l2_cache_bytes: device["l2_cache_bytes"].as_u64(),
        memory_clock_mhz: bandwidth["memory_clock_mhz"].as_f64(),
        memory_bus_bits: bandwidth["memory_bus_bits"].as_u64(),
        name: d.name.clone(),
        compute_capability: d.compute_capability.clone(),
        multiprocessors: d.multiprocessors,
        driver_version: d.driver_version.clone(),
        cuda_version: d.driver_cuda_version.clone(),
        sm_clock: summary
            .figures
            .iter()
            .find(|f| f.key == crate::report::keys::SM_CLOCK)
            .map(Quantity::of),
    };
    Ok(export::model(&summary, gpu))
}

/// The Prometheus exposition of `dir`: one GPU's run (confirmed by `repeat` or its own
/// `repeat/`, as the machine model is), or each GPU's of a `--device all` directory.
fn prometheus(dir: &std::path::Path, repeat: Option<&std::path::Path>) -> Result<String> {
    use crate::report::prometheus;
    let Some(gpus) = crate::report::devices::gpu_runs(dir)? else {
        let summary = super::report::tables_from_files(dir, repeat)?;
        let labels = run_labels(dir)?;
        return Ok(prometheus::exposition(&[(labels, summary)]));
    };
    if repeat.is_some() {
        bail_usage!(
            "{} holds several GPUs' runs, each confirmed by its own repeat/; --repeat-of takes a second run of one GPU",
            dir.display()
        );
    }
    let mut runs = Vec::new();
    for gpu in gpus.iter().filter(|g| g.path.is_dir()) {
        let summary = super::report::tables_from_files(&gpu.path, None)?;
        runs.push((run_labels(&gpu.path)?, summary));
    }
    if runs.is_empty() {
        bail_usage!(
            "{} lists no GPU run directory that exists, so there is nothing to export",
            dir.display()
        );
    }
    Ok(prometheus::exposition(&runs))
}

/// What tells `dir`'s run apart from another GPU's, from its complete suites' metadata: the
/// first one's GPU, driver and build, and the earliest start.
fn run_labels(dir: &std::path::Path) -> Result<crate::report::prometheus::RunLabels> {
    let complete = complete_suites(dir)?;
    let first = &complete[0];
    let started = complete
        .iter()
        .filter_map(|m| humantime::parse_rfc3339_weak(&m.started_utc).ok())
        .min()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs_f64());
    let uuid = first
        .nvml
        .identity
        .as_ref()
        .and_then(|i| i.uuid.clone())
        .unwrap_or_default();
    Ok(crate::report::prometheus::RunLabels {
        gpu_uuid: uuid,
        gpu: first.device.name.clone(),
        driver: first.device.driver_version.clone().unwrap_or_default(),
        gpubench_version: first.build.gpubench_version.clone(),
        commit: first.build.git_commit.clone(),
        format: first.format,
        started_unix_seconds: started,
    })
}

/// The most bytes of a `--base` configuration gpubench reads: GPGPU-Sim's tested configurations
/// are some 10 KiB.
const MAX_BASE_BYTES: u64 = 4 << 20;

/// The base configuration `--base` names, read as a run's files are
/// ([`crate::input::read_text_within`]: a regular file, plain or gzip, UTF-8, at most
/// [`MAX_BASE_BYTES`]); one sentence where it cannot be read or sets no GPGPU-Sim option.
fn read_base(path: &std::path::Path) -> Result<crate::report::accel_sim::Base> {
    let refuse = |why: String| {
        UsageError::new(format!(
            "--base {why}; pass the gpgpusim.config the options are to follow"
        ))
    };
    let text =
        crate::input::read_text_within(path, MAX_BASE_BYTES).map_err(|e| refuse(e.to_string()))?;
    let base = crate::report::accel_sim::Base::parse(&path.display().to_string(), &text);
    if base.is_empty() {
        return Err(refuse(format!(
            "{}: sets no GPGPU-Sim option (no line of the form \"-option value\"), so it is no gpgpusim.config",
            path.display()
        ))
        .into());
    }
    Ok(base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{compare, curated, roofline, summary::Summary};

    /// What the test puts before every figure's words.
    const MARK: &str = "REWORDED ";

    fn reworded(summary: &Summary) -> Summary {
        let mut summary = summary.clone();
        for f in &mut summary.figures {
            f.section = format!("{MARK}{}", f.section);
            f.quantity = format!("{MARK}{}", f.quantity);
        }
        summary
    }

    /// #72: a figure's words are for the reader; the core finds figures by key. Every figure of
    /// the committed runs reworded (a prefix on its section and quantity), the curated tables,
    /// the roofline's ceilings, the machine model, the Accel-Sim export and `compare`'s flags
    /// come out the same but for that prefix.
    #[test]
    fn reworded_figures_give_the_same_tables_ceilings_model_export_and_flags() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
        let runs = [
            ("h100/all", Some("h100/all-repeat")),
            ("h200/all", None),
            ("h200x2/gpu0-f64c03ac", Some("h200x2/gpu0-f64c03ac/repeat")),
        ];
        let mut rooflines = 0;
        for (run, repeat) in runs {
            let dir = root.join(run);
            let repeat = repeat.map(|r| root.join(r));
            let said = super::super::report::tables_from_files(&dir, repeat.as_deref()).unwrap();
            let other = reworded(&said);
            let unmarked = |text: String| text.replace(MARK, "");
            let tables = |s: &Summary| {
                let t = curated::tables(s);
                curated::render_markdown(&t) + &curated::render_latex(&t)
            };
            assert!(
                tables(&other).contains(MARK),
                "{run}: no reworded row shown"
            );
            assert_eq!(unmarked(tables(&other)), tables(&said), "{run}");
            let ceilings = roofline::of_figures(&said.figures);
            rooflines += usize::from(ceilings.is_some());
            assert_eq!(roofline::of_figures(&other.figures), ceilings, "{run}");
            let model = model_of(&dir, said.clone()).unwrap();
            let model_other = model_of(&dir, other.clone()).unwrap();
            let json = |m: &export::MachineModel| serde_json::to_string_pretty(m).unwrap();
            assert_eq!(unmarked(json(&model_other)), json(&model), "{run}");
            let config = crate::report::accel_sim::config(&model, None);
            assert!(config.contains("-gpgpu_l1_latency"), "{run}: {config}");
            assert_eq!(
                unmarked(crate::report::accel_sim::config(&model_other, None)),
                config,
                "{run}"
            );
            if let Some(repeat) = &repeat {
                let second = crate::report::summary::summarise_from_files(
                    repeat,
                    super::super::registry::derive_figures,
                )
                .unwrap();
                let names = [run.to_string(), repeat.display().to_string()];
                let flags = |a: &Summary, b: &Summary| {
                    let c = compare::compare(
                        &names,
                        &[a.clone(), b.clone()],
                        &compare::Tolerances::default(),
                        None,
                    );
                    serde_json::to_string_pretty(&c).unwrap()
                };
                let first = crate::report::summary::summarise_from_files(
                    &dir,
                    super::super::registry::derive_figures,
                )
                .unwrap();
                let said_flags = flags(&first, &second);
                assert!(
                    said_flags.contains("\"flag\": \""),
                    "{run}: nothing flagged"
                );
                assert_eq!(
                    unmarked(flags(&reworded(&first), &reworded(&second))),
                    said_flags,
                    "{run}"
                );
            }
        }
        // The two-GPU run has no flops suite, so no roofline.
        assert_eq!(rooflines, 2);
    }
}

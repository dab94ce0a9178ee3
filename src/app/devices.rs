//! `--device all` or `--device 0,2,3` on `all` and on every suite: the same command once per
//! GPU, each in a child process of this binary with `--device N --output DIR/gpuN-UUID`, side
//! by side (or one after another with `--serial`), each child's output in `gpuN-UUID.log`, and
//! `devices.json` recording which GPU ran where and how it ended. `compare` reads such a
//! directory as its GPUs' runs.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result};

use crate::error::{MeasurementFailed, UsageError};
use crate::gpu::DeviceIdentity;
use crate::report::devices::{self, DevicesManifest, GpuRun};
use crate::report::metadata::utc_now;
use crate::report::run_dir::RunDir;

/// A command to run on several GPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct FanOut {
    /// The subcommand and its arguments, without `--device`, `--output` and `--serial`.
    pub command: Vec<OsString>,
    /// Device indices; `None` for every device.
    pub devices: Option<Vec<usize>>,
    pub output: Option<PathBuf>,
    pub serial: bool,
}

impl FanOut {
    /// Whether the command asks for figures as a web page (`--format html`).
    pub fn asks_for_html(&self) -> bool {
        self.command.iter().any(|a| a == "--format=html")
            || self
                .command
                .windows(2)
                .any(|w| w[0] == "--format" && w[1] == "html")
    }

    /// The arguments (after the program name) of the child that runs on `device`.
    pub fn child_args(&self, device: usize, output: &std::path::Path) -> Vec<OsString> {
        let mut args = self.command.clone();
        args.push("--device".into());
        args.push(device.to_string().into());
        args.push("--output".into());
        args.push(output.into());
        args
    }
}

/// Commands that take `--device` and write a run directory.
fn fans_out(subcommand: &OsStr) -> bool {
    subcommand == "all"
        || subcommand
            .to_str()
            .is_some_and(|name| crate::app::registry::find(name).is_some())
}

/// Whether `args` (after the program name) ask for several GPUs: `Some` with the request (or
/// what is wrong with it), `None` for a single-device command, which clap then parses.
pub fn request(args: &[OsString]) -> Option<Result<FanOut, UsageError>> {
    let subcommand = args.first()?;
    if !fans_out(subcommand) {
        return None;
    }
    let mut command = vec![subcommand.clone()];
    let mut selection = None;
    let mut output = None;
    let mut serial = false;
    let mut rest = args[1..].iter();
    while let Some(arg) = rest.next() {
        let text = arg.to_string_lossy();
        let (flag, inline) = match text.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag.to_string(), Some(value)),
            _ => (text.to_string(), None),
        };
        let mut value = || inline.map(OsString::from).or_else(|| rest.next().cloned());
        match flag.as_str() {
            "--device" => selection = Some(value()),
            "--output" => output = Some(value()),
            "--serial" if inline.is_none() => serial = true,
            "--" => {
                command.push(arg.clone());
                command.extend(rest.by_ref().cloned());
            }
            _ => command.push(arg.clone()),
        }
    }
    let selection = selection??;
    let selection = selection.to_string_lossy();
    if selection.parse::<usize>().is_ok() {
        return (serial).then(|| {
            Err(UsageError::new(
                "--serial runs several GPUs one after another; pass it with --device all or a list such as 0,1",
            ))
        });
    }
    let devices = if selection == "all" {
        None
    } else {
        let parsed: Option<Vec<usize>> = selection
            .split(',')
            .map(|d| d.trim().parse().ok())
            .collect();
        match parsed {
            Some(list) if !list.is_empty() => Some(list),
            _ => {
                return Some(Err(UsageError::new(format!(
                    "--device takes an index, a comma-separated list of indices (0,2,3) or all, not {selection:?}"
                ))));
            }
        }
    };
    let output = match output {
        Some(Some(path)) => Some(PathBuf::from(path)),
        Some(None) => return Some(Err(UsageError::new("--output needs a directory"))),
        None => None,
    };
    Some(Ok(FanOut {
        command,
        devices,
        output,
        serial,
    }))
}

/// The devices `selection` names among `available`, in the order given, each once.
pub fn select(
    available: &[DeviceIdentity],
    selection: Option<&[usize]>,
) -> Result<Vec<DeviceIdentity>, UsageError> {
    let Some(indices) = selection else {
        return Ok(available.to_vec());
    };
    let mut chosen: Vec<DeviceIdentity> = Vec::new();
    for &index in indices {
        let Some(device) = available.iter().find(|d| d.index == index) else {
            return Err(UsageError::new(format!(
                "there is no CUDA device {index}: this machine has {}, numbered from 0; pass --device with some of them, or all",
                available.len()
            )));
        };
        if chosen.iter().any(|d| d.index == index) {
            return Err(UsageError::new(format!(
                "--device names device {index} twice; name each GPU once"
            )));
        }
        chosen.push(device.clone());
    }
    Ok(chosen)
}

pub fn run(fan: FanOut) -> Result<()> {
    // The arguments are checked once, as device 0's child would get them, before anything
    // starts: a typo is one clap message, not one per GPU.
    let mut probe = vec![OsString::from("gpubench")];
    probe.extend(fan.child_args(0, std::path::Path::new("unused")));
    if let Err(error) = <crate::cli::Opts as clap::Parser>::try_parse_from(&probe) {
        let text = error.to_string();
        let first = text.lines().next().unwrap_or_default();
        return Err(UsageError::new(format!(
            "{}; see gpubench {} --help",
            first.trim_start_matches("error: "),
            fan.command[0].to_string_lossy()
        ))
        .into());
    }
    let devices = select(&crate::gpu::devices()?, fan.devices.as_deref())?;
    let subcommand = fan.command[0].to_string_lossy().into_owned();
    let run = RunDir::create(fan.output.as_deref(), &format!("{subcommand}-gpus"))?;
    eprintln!(
        "writing to {} ({} GPUs{})",
        run.path().display(),
        devices.len(),
        if fan.serial {
            ", one after another"
        } else {
            ", side by side"
        }
    );
    let me = std::env::current_exe().context("finding gpubench's own path")?;
    let mut manifest = DevicesManifest {
        command: fan
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        parallel: !fan.serial,
        started_utc: utc_now(),
        finished_utc: None,
        gpus: devices
            .iter()
            .map(|device| {
                let dir = devices::dir_name(device);
                GpuRun {
                    device: device.clone(),
                    log: format!("{dir}.log"),
                    dir,
                    status: "waiting".into(),
                    seconds: None,
                    failures: Vec::new(),
                }
            })
            .collect(),
    };
    run.write_json(devices::FILE, &manifest)?;
    let start = |gpu: &GpuRun| -> Result<Child> {
        let log = std::fs::File::create(run.path().join(&gpu.log))
            .with_context(|| format!("creating {}", gpu.log))?;
        let err = log.try_clone().context("sharing the log file")?;
        Command::new(&me)
            .args(fan.child_args(gpu.device.index, &run.path().join(&gpu.dir)))
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .with_context(|| format!("starting gpubench on device {}", gpu.device.index))
    };
    let mut running: Vec<(usize, Child, Instant)> = Vec::new();
    let mut failed = 0;
    let mut next = 0;
    while next < manifest.gpus.len() || !running.is_empty() {
        while next < manifest.gpus.len() && (!fan.serial || running.is_empty()) {
            running.push((next, start(&manifest.gpus[next])?, Instant::now()));
            manifest.gpus[next].status = "running".into();
            next += 1;
            run.write_json(devices::FILE, &manifest)?;
        }
        let mut finished = None;
        for (slot, (_, child, _)) in running.iter_mut().enumerate() {
            if let Some(status) = child.try_wait()? {
                finished = Some((slot, status));
                break;
            }
        }
        let Some((slot, status)) = finished else {
            std::thread::sleep(std::time::Duration::from_millis(100));
            continue;
        };
        let (i, _, started) = running.remove(slot);
        let gpu = &mut manifest.gpus[i];
        gpu.seconds = Some(started.elapsed().as_secs_f64());
        gpu.status = if status.success() {
            "complete".into()
        } else {
            failed += 1;
            match status.code() {
                Some(code) if code == crate::error::Exit::GpuLost as i32 => {
                    "failed: GPU lost (exit 5)".into()
                }
                Some(code) => format!("failed (exit {code})"),
                None => "failed (killed by a signal)".into(),
            }
        };
        if !status.success() {
            gpu.failures = crate::report::devices::failures_of(run.path(), gpu);
        }
        eprintln!(
            "device {} ({}, {}): {} in {:.1} s; log {}",
            gpu.device.index,
            gpu.device.name,
            gpu.device.uuid,
            gpu.status,
            gpu.seconds.unwrap_or(0.0),
            run.path().join(&gpu.log).display()
        );
        for failure in &gpu.failures {
            eprintln!("  {failure}");
        }
        run.write_json(devices::FILE, &manifest)?;
    }
    manifest.finished_utc = Some(utc_now());
    run.write_json(devices::FILE, &manifest)?;
    if subcommand == "all" {
        // The GPUs side by side at the top: a failure here loses no GPU's run, so it is said
        // and the fan-out's own outcome stands.
        if let Err(error) = super::fleet::write_for_fan_out(&run, fan.asks_for_html()) {
            eprintln!("the GPUs' comparison was not written: {error:#}");
        }
    }
    if failed > 0 {
        eprintln!(
            "Error: {failed} of {} GPUs did not complete; their logs say why",
            manifest.gpus.len()
        );
        return Err(MeasurementFailed.into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn a_fan_out_knows_when_it_was_asked_for_a_page() {
        for (line, html) in [
            ("all --device all --format html", true),
            ("all --device all --format=html", true),
            ("all --device all --format svg", false),
            ("all --device all", false),
        ] {
            let fan = request(&args(line)).unwrap().unwrap();
            assert_eq!(fan.asks_for_html(), html, "{line}");
        }
    }

    #[test]
    fn several_devices_fan_out_and_one_does_not() {
        for single in [
            "all --quick --device 0",
            "report x --device all",
            "all --quick",
        ] {
            assert!(request(&args(single)).is_none(), "{single}");
        }
        let fan = request(&args("all --quick --device all --output out --serial"))
            .unwrap()
            .unwrap();
        assert_eq!(fan.command, args("all --quick"));
        assert_eq!((fan.devices, fan.serial), (None, true));
        assert_eq!(fan.output, Some(PathBuf::from("out")));
        let fan = request(&args("cache --space l2 --device=0,2"))
            .unwrap()
            .unwrap();
        assert_eq!(fan.devices, Some(vec![0, 2]));
        assert_eq!(
            fan.child_args(2, std::path::Path::new("o/gpu2")),
            args("cache --space l2 --device 2 --output o/gpu2")
        );
        for bad in [
            "all --device 0,x",
            "all --device ,",
            "divergence --device 1 --serial",
        ] {
            assert!(request(&args(bad)).unwrap().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_selection_names_existing_devices_once() {
        let gpu = |index| DeviceIdentity {
            index,
            name: "H200".into(),
            uuid: format!("GPU-{index}"),
        };
        let available = vec![gpu(0), gpu(1)];
        assert_eq!(select(&available, None).unwrap(), available);
        assert_eq!(select(&available, Some(&[1])).unwrap(), vec![gpu(1)]);
        assert!(select(&available, Some(&[2])).is_err());
        assert!(select(&available, Some(&[0, 0])).is_err());
    }
}

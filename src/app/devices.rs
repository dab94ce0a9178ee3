//! `--device all` or `--device 0,2,3` on `all` and on every suite: the same command once per
//! GPU, each in a child process of this binary with `--device N --output DIR/gpuN-UUID`, side
//! by side (or one after another with `--serial`), each child's output in `gpuN-UUID.log`, and
//! `devices.json` recording which GPU ran where and how it ended. `compare` reads such a
//! directory as its GPUs' runs. clap parses `--device` (`cli::DeviceSelection`) and
//! `--serial` like any flag; a child's command line is the parsed settings with its device
//! and directory, turned back into flags through clap's description of them (`cli::flags`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result};

use clap::{ArgMatches, Args, FromArgMatches};
use serde_json::Value;

use crate::cli::flags::{defaults, flags};
use crate::cli::{AllArgs, DeviceSelection, PlotArgs, PlotFormat, SerialArgs};
use crate::error::{MeasurementFailed, UsageError, bail_usage};
use crate::gpu::DeviceIdentity;
use crate::harness::Suite;
use crate::report::devices::{self, DevicesManifest, GpuRun};
use crate::report::metadata::utc_now;
use crate::report::run_dir::RunDir;

/// The arguments of the child that runs on one device (its index and its run directory).
type ChildArgs = Box<dyn Fn(usize, &Path) -> Result<Vec<String>>>;

/// A command to run on several GPUs.
pub struct FanOut {
    /// What devices.json records: the subcommand and its flags, without `--device`,
    /// `--output` and `--serial`.
    pub command: Vec<String>,
    /// The child's arguments for one device: the command's settings, as clap parsed them,
    /// with that device and directory, turned back into flags.
    child_args: ChildArgs,
    /// Device indices; `None` for every device.
    pub devices: Option<Vec<usize>>,
    pub output: Option<PathBuf>,
    pub serial: bool,
    /// Whether the command asks for figures as a web page (`--format html`).
    pub html: bool,
}

/// The fan-out a `--device` selection asks for: `None` for one device (where `--serial`, which
/// orders several, is refused).
fn several(
    selection: &DeviceSelection,
    serial: bool,
) -> Result<Option<Option<Vec<usize>>>, UsageError> {
    match selection.several() {
        Some(devices) => Ok(Some(devices.map(<[usize]>::to_vec))),
        None if serial => Err(UsageError::new(
            "--serial runs several GPUs one after another; pass it with --device all or a list such as 0,1",
        )),
        None => Ok(None),
    }
}

/// `settings` (a command's, serialized) with one device and run directory, for its child.
fn for_child(settings: &Value, device: usize, dir: &Path) -> Result<Value> {
    let mut settings = settings.clone();
    settings["device"] = serde_json::to_value(DeviceSelection::One(device))?;
    settings["output"] = serde_json::to_value(dir)?;
    Ok(settings)
}

/// `settings` as devices.json records the command: the default device, no directory.
fn for_record(settings: &Value) -> Result<Value> {
    let mut settings = settings.clone();
    settings["device"] = serde_json::to_value(DeviceSelection::One(0))?;
    settings["output"] = Value::Null;
    Ok(settings)
}

/// A suite's subcommand whose `--device` names several GPUs; `None` for one.
pub fn of_suite(suite: &'static dyn Suite, matches: &ArgMatches) -> Result<Option<FanOut>> {
    let settings = suite.settings_of(matches)?;
    let selection: DeviceSelection = serde_json::from_value(settings["device"].clone())?;
    let serial = SerialArgs::from_arg_matches(matches)?.serial;
    let Some(devices) = several(&selection, serial)? else {
        return Ok(None);
    };
    let plots = PlotArgs::from_arg_matches(matches)?;
    let mut plot_flags = plots.to_flags()?;
    plot_flags.extend(crate::cli::ConditionArgs::from_arg_matches(matches)?.to_flags()?);
    let mut command = vec![suite.name().to_string()];
    command.extend(suite.flags(&for_record(&settings)?)?);
    command.extend(plot_flags.iter().cloned());
    let output = serde_json::from_value(settings["output"].clone())?;
    Ok(Some(FanOut {
        command,
        child_args: Box::new(move |device, dir| {
            let mut args = vec![suite.name().to_string()];
            args.extend(suite.flags(&for_child(&settings, device, dir)?)?);
            args.extend(plot_flags.iter().cloned());
            Ok(args)
        }),
        devices,
        output,
        serial,
        html: plots.format == PlotFormat::Html,
    }))
}

/// `gpubench all` whose `--device` names several GPUs; `None` for one.
pub fn of_all(args: &AllArgs) -> Result<Option<FanOut>> {
    let Some(devices) = several(&args.device, args.fan_out.serial)? else {
        return Ok(None);
    };
    let mut settings = serde_json::to_value(args)?;
    settings["serial"] = Value::Bool(false);
    let all_flags = |settings: &Value| -> Result<Vec<String>> {
        let mut args = vec!["all".to_string()];
        args.extend(flags(
            &AllArgs::augment_args(clap::Command::new("all")),
            settings,
            &serde_json::to_value(defaults::<AllArgs>())?,
        )?);
        Ok(args)
    };
    Ok(Some(FanOut {
        command: all_flags(&for_record(&settings)?)?,
        child_args: Box::new(move |device, dir| all_flags(&for_child(&settings, device, dir)?)),
        devices,
        output: args.output.clone(),
        serial: args.fan_out.serial,
        html: args.plots.format == PlotFormat::Html,
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
            bail_usage!(
                "there is no CUDA device {index}: this machine has {}, numbered from 0; pass --device with some of them, or all",
                available.len()
            );
        };
        if chosen.iter().any(|d| d.index == index) {
            bail_usage!("--device names device {index} twice; name each GPU once");
        }
        chosen.push(device.clone());
    }
    Ok(chosen)
}

pub fn run(fan: FanOut) -> Result<()> {
    // The children's arguments are checked once, as device 0's child would get them, before
    // anything starts: they are clap's own parse of the command turned back into flags.
    let mut probe = vec!["gpubench".to_string()];
    probe.extend((fan.child_args)(0, Path::new("unused"))?);
    if let Err(error) = <crate::cli::Opts as clap::Parser>::try_parse_from(&probe) {
        anyhow::bail!(
            "gpubench built a child command line clap refuses ({error}); please report it"
        );
    }
    let devices = select(&crate::gpu::devices()?, fan.devices.as_deref())?;
    let subcommand = fan.command[0].clone();
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
        command: fan.command.clone(),
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
            .args((fan.child_args)(
                gpu.device.index,
                &run.path().join(&gpu.dir),
            )?)
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
        if let Err(error) = super::fleet::write_for_fan_out(&run, fan.html) {
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

    use clap::Parser;

    fn parse(line: &str) -> crate::cli::Command {
        crate::app::registry::hand_to_cli();
        crate::cli::Opts::try_parse_from(std::iter::once("gpubench").chain(line.split_whitespace()))
            .unwrap()
            .command
    }

    fn fan_out(line: &str) -> Result<Option<FanOut>> {
        match parse(line) {
            crate::cli::Command::All(args) => of_all(&args),
            crate::cli::Command::Suite(suite) => {
                of_suite(crate::app::registry::require(&suite.name)?, &suite.matches)
            }
            _ => Ok(None),
        }
    }

    #[test]
    fn several_devices_fan_out_from_clap_and_one_does_not() {
        for single in [
            "all --quick --device 0",
            "all --quick",
            "divergence --device 1",
        ] {
            assert!(fan_out(single).unwrap().is_none(), "{single}");
        }
        let fan = fan_out("all --quick --device all --output out --serial --format html")
            .unwrap()
            .unwrap();
        // The flags come in the order of the settings' fields (serde_json's map: by name).
        assert_eq!(fan.command, ["all", "--format", "html", "--quick"]);
        assert_eq!(
            (fan.devices.clone(), fan.serial, fan.html),
            (None, true, true)
        );
        assert_eq!(fan.output, Some(PathBuf::from("out")));
        let child = (fan.child_args)(1, Path::new("out/gpu1")).unwrap();
        assert_eq!(
            child,
            [
                "all", "--device", "1", "--format", "html", "--output", "out/gpu1", "--quick"
            ]
        );
        let fan = fan_out("cache --space l2 --device=0,2").unwrap().unwrap();
        assert_eq!(fan.devices, Some(vec![0, 2]));
        assert!(!fan.html);
        let child = (fan.child_args)(2, Path::new("o/gpu2")).unwrap();
        // Whatever order the settings list their flags in, the child parses to device 2 and
        // the directory, with the space asked for.
        for pair in [["--space", "l2"], ["--device", "2"], ["--output", "o/gpu2"]] {
            assert!(child.windows(2).any(|w| w == pair), "{child:?}");
        }
        assert!(fan_out("divergence --device 1 --serial").is_err());
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

//! `--device`, typed: one CUDA device, every device (`all`) or a list (`0,2,3`). clap parses it
//! for `all` and every suite; where it names more than one GPU, `app::devices` runs the command
//! once per GPU in a child process, each child given one index. [`Target`] is a suite's
//! `--device` with its `--output`.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::error::UsageError;

/// The GPUs a command runs on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum DeviceSelection {
    One(usize),
    All,
    /// Two or more indices, in the order given.
    List(Vec<usize>),
}

impl FromStr for DeviceSelection {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text == "all" {
            return Ok(DeviceSelection::All);
        }
        let refuse = || {
            format!(
                "--device takes an index, a comma-separated list of indices (0,2,3) or all, not {text:?}"
            )
        };
        let indices: Vec<usize> = text
            .split(',')
            .map(|d| d.trim().parse().map_err(|_| refuse()))
            .collect::<Result<_, _>>()?;
        match indices[..] {
            [one] if !text.contains(',') => Ok(DeviceSelection::One(one)),
            _ => Ok(DeviceSelection::List(indices)),
        }
    }
}

impl fmt::Display for DeviceSelection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSelection::One(index) => write!(f, "{index}"),
            DeviceSelection::All => write!(f, "all"),
            DeviceSelection::List(indices) => {
                let list: Vec<String> = indices.iter().map(usize::to_string).collect();
                write!(f, "{}", list.join(","))
            }
        }
    }
}

impl From<DeviceSelection> for String {
    fn from(selection: DeviceSelection) -> String {
        selection.to_string()
    }
}

impl TryFrom<String> for DeviceSelection {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        text.parse()
    }
}

impl DeviceSelection {
    /// The one device a measurement opens; a selection of several is refused (only `all` and
    /// the suites' subcommands fan out, before any suite measures).
    pub fn index(&self) -> Result<usize, UsageError> {
        match self {
            DeviceSelection::One(index) => Ok(*index),
            several => Err(UsageError::new(format!(
                "--device {several} names several GPUs, which only gpubench all and the suites' subcommands run (one child process per GPU)"
            ))),
        }
    }

    /// Where the selection names several GPUs: `Some(None)` for every device, `Some(list)`
    /// for a list; `None` for one device.
    pub fn several(&self) -> Option<Option<&[usize]>> {
        match self {
            DeviceSelection::One(_) => None,
            DeviceSelection::All => Some(None),
            DeviceSelection::List(indices) => Some(Some(indices)),
        }
    }
}

/// The fan-out's own flag, which every suite's subcommand and `all` take beside `--device`.
#[derive(Debug, Clone, Copy, Default, Args, Serialize, Deserialize)]
pub struct SerialArgs {
    /// With several GPUs (--device all or a list): run them one after another instead of side
    /// by side.
    #[arg(long)]
    pub serial: bool,
}

/// Where a suite measures and writes: the `--device` and `--output` every suite's subcommand
/// takes (flattened into its settings type, whose JSON keeps both keys at the top level).
/// `--output`'s help names the suite's default directory (`harness::Suite::command`).
#[derive(Debug, Clone, Args, Serialize, Deserialize)]
pub struct Target {
    /// CUDA device index; `all`, or a list such as 0,2,3, runs once per GPU in child processes,
    /// side by side (`--serial`: one after another), under one directory with devices.json.
    #[arg(long, default_value = "0")]
    pub device: DeviceSelection,
    /// New run directory (default: gpubench-runs/<UTC time>-<suite>); must not exist.
    #[arg(long)]
    pub output: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_reads_and_writes_as_the_flag_takes_it() {
        for (text, selection) in [
            ("0", DeviceSelection::One(0)),
            ("3", DeviceSelection::One(3)),
            ("all", DeviceSelection::All),
            ("0,2", DeviceSelection::List(vec![0, 2])),
            (" 1, 3 ", DeviceSelection::List(vec![1, 3])),
        ] {
            let parsed: DeviceSelection = text.parse().unwrap();
            assert_eq!(parsed, selection, "{text}");
            let again: DeviceSelection = parsed.to_string().parse().unwrap();
            assert_eq!(again, selection);
            let json = serde_json::to_value(&selection).unwrap();
            assert_eq!(
                serde_json::from_value::<DeviceSelection>(json).unwrap(),
                selection
            );
        }
        assert_eq!("4,".parse::<DeviceSelection>().ok(), None);
        for bad in ["0,x", ",", "", "-1", "every"] {
            let error = bad.parse::<DeviceSelection>().unwrap_err();
            assert!(error.contains("comma-separated list"), "{bad}: {error}");
        }
        assert_eq!(DeviceSelection::One(2).index().unwrap(), 2);
        assert!(DeviceSelection::All.index().is_err());
        assert_eq!(DeviceSelection::One(0).several(), None);
        assert_eq!(DeviceSelection::All.several(), Some(None));
    }
}

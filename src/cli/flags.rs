//! A settings type's round trip through clap: [`defaults`] (what clap gives with no flag) and
//! [`flags`] (the flags that give a serialized value back, read off clap's own description of
//! the type), so that no flag name is written anywhere but the type that declares it.

use anyhow::{Context, Result, bail};
use clap::{ArgAction, Args, FromArgMatches};
use serde_json::Value;

/// The settings clap gives a suite's settings type `A` with no flag at all: its defaults.
pub fn defaults<A: Args + FromArgMatches>() -> A {
    let matches = A::augment_args(clap::Command::new("defaults"))
        .try_get_matches_from(["defaults"])
        .expect("every setting of a suite has a default");
    A::from_arg_matches(&matches).expect("clap's defaults make the settings type")
}

/// The flags of `command` that give `settings` (the serialized settings of its type, whose
/// defaults serialize to `defaults`) back through clap: one per field that differs from its
/// default, named as clap names the field's argument.
pub fn flags(command: &clap::Command, settings: &Value, defaults: &Value) -> Result<Vec<String>> {
    let (Some(settings), Some(defaults)) = (settings.as_object(), defaults.as_object()) else {
        bail!("a suite's settings are not a map of fields");
    };
    let mut flags = Vec::new();
    for (field, value) in settings {
        if defaults.get(field) == Some(value) {
            continue;
        }
        let arg = command
            .get_arguments()
            .find(|a| a.get_id().as_str() == field)
            .with_context(|| {
                format!("the setting '{field}' is no flag of {}", command.get_name())
            })?;
        let long = arg
            .get_long()
            .with_context(|| format!("the setting '{field}' has no long flag"))?;
        let flag = format!("--{long}");
        match value {
            Value::Bool(true) if matches!(arg.get_action(), ArgAction::SetTrue) => flags.push(flag),
            Value::Array(items) => {
                let items: Vec<String> = items.iter().map(scalar).collect::<Result<_>>()?;
                match arg.get_value_delimiter() {
                    Some(delimiter) => {
                        flags.push(flag);
                        flags.push(items.join(&delimiter.to_string()));
                    }
                    None => {
                        for item in items {
                            flags.push(flag.clone());
                            flags.push(item);
                        }
                    }
                }
            }
            Value::Number(_) | Value::String(_) => {
                flags.push(flag);
                flags.push(scalar(value)?);
            }
            _ => bail!("the setting '{field}' = {value} cannot be given as {flag}"),
        }
    }
    Ok(flags)
}

fn scalar(value: &Value) -> Result<String> {
    match value {
        Value::Number(n) => Ok(n.to_string()),
        Value::String(s) => Ok(s.clone()),
        _ => bail!("{value} is not one value of a flag"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    /// Every kind of field a suite's settings hold.
    #[derive(Debug, Args, Serialize, Deserialize, PartialEq)]
    struct Settings {
        #[arg(long, default_value_t = 3)]
        count: u32,
        #[arg(long, default_value_t = 1.5)]
        seconds: f64,
        #[arg(long)]
        limit: Option<u64>,
        #[arg(long)]
        quiet: bool,
        #[arg(long, value_delimiter = ',', default_value = "1,2")]
        sizes: Vec<u64>,
        #[arg(long)]
        extra: Vec<String>,
        #[arg(long, default_value = "a b")]
        name: String,
    }

    fn command() -> clap::Command {
        Settings::augment_args(clap::Command::new("x"))
    }

    fn round_trip(settings: &Settings) -> (Vec<String>, Settings) {
        let defaults = serde_json::to_value(defaults::<Settings>()).unwrap();
        let flags = flags(
            &command(),
            &serde_json::to_value(settings).unwrap(),
            &defaults,
        )
        .unwrap();
        let matches = command()
            .try_get_matches_from(std::iter::once("x".to_string()).chain(flags.iter().cloned()))
            .unwrap();
        (flags, Settings::from_arg_matches(&matches).unwrap())
    }

    #[test]
    fn the_defaults_need_no_flag_and_every_change_comes_back() {
        let defaults = defaults::<Settings>();
        assert_eq!(defaults.count, 3);
        assert_eq!(defaults.sizes, [1, 2]);
        let (flags, back) = round_trip(&defaults);
        assert!(flags.is_empty(), "{flags:?}");
        assert_eq!(back, defaults);
        let changed = Settings {
            count: 7,
            seconds: 0.25,
            limit: Some(9),
            quiet: true,
            sizes: vec![4, 8, 16],
            extra: vec!["p".into(), "q r".into()],
            name: "c,d".into(),
        };
        let (flags, back) = round_trip(&changed);
        assert_eq!(back, changed, "{flags:?}");
        // A list without a delimiter repeats its flag; one with a delimiter is one value.
        assert_eq!(flags.iter().filter(|f| *f == "--extra").count(), 2);
        assert!(
            flags
                .windows(2)
                .any(|w| w[0] == "--sizes" && w[1] == "4,8,16")
        );
    }

    #[test]
    fn settings_no_flag_gives_back_are_refused() {
        let defaults = serde_json::to_value(defaults::<Settings>()).unwrap();
        // A field clap does not know, and an optional setting back to none, which no flag says.
        let mut unknown = defaults.clone();
        unknown["nowhere"] = serde_json::json!(1);
        assert!(flags(&command(), &unknown, &defaults).is_err());
        let mut with_limit = defaults.clone();
        with_limit["limit"] = serde_json::json!(5);
        assert!(flags(&command(), &defaults, &with_limit).is_err());
        assert!(flags(&command(), &serde_json::json!([1]), &defaults).is_err());
    }
}

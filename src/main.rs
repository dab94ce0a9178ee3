use std::process::ExitCode;

use clap::Parser;

use gpubench::cli::Opts;
use gpubench::error::Exit;

fn main() -> ExitCode {
    // Like any Unix filter: a reader that goes away (`gpubench … | head -1`) ends gpubench
    // quietly through SIGPIPE, instead of a failed print surfacing as an internal bug.
    // SAFETY: restores the default disposition of one signal before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        // A file that outgrows the file-size limit (ulimit -f) fails its write (EFBIG), which
        // gpubench reports in a sentence like a full disk, instead of killing the process
        // mid-write. Ignored, it stays ignored in the suites `all` starts.
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    // SAFETY: no other thread exists yet.
    unsafe { gpubench::gpu::connections::one_unless_set() };
    std::panic::set_hook(Box::new(|info| {
        let message = panic_message(info.payload());
        // println! panics when stdout cannot be written (a full disk, /dev/full): that is the
        // environment's fault, said in one sentence, not a bug of gpubench.
        if let Some(why) = message.strip_prefix("failed printing to stdout: ") {
            eprintln!("Error: cannot write to standard output ({why}); free space or redirect it");
        } else if let Some(symbol) = missing_driver_symbol(message) {
            eprintln!(
                "Error: the CUDA driver library (libcuda.so) has no {symbol}, which gpubench needs; install an NVIDIA driver that supports CUDA 13.0 (nvidia-smi shows the installed one)"
            );
        } else {
            eprintln!(
                "Error: gpubench hit an internal bug ({info}); please report it with the command line"
            );
        }
    }));
    gpubench::app::registry::hand_to_cli();
    // A worker of `gpubench all` runs the suites it is given one after another, in one
    // context (harness::worker); any other process runs its own command line once.
    // SAFETY: no other thread exists yet.
    let Some(mut worker) = (unsafe { gpubench::harness::worker::Worker::from_env() }) else {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        return run_command(&args).into();
    };
    let exit = serve(&mut worker);
    worker.end();
    exit.into()
}

/// Runs the worker's jobs until it is told to stop (success) or one fails (its exit code).
fn serve(worker: &mut gpubench::harness::worker::Worker) -> Exit {
    loop {
        let args = match worker.next_job() {
            Ok(Some(args)) => args,
            Ok(None) => return Exit::Success,
            Err(error) => {
                eprintln!("Error: {error:#}");
                return Exit::Failure;
            }
        };
        let exit = run_command(&args);
        match worker.finished(exit as i32) {
            Ok(true) => {}
            Ok(false) => return exit,
            Err(error) => {
                eprintln!("Error: {error:#}");
                return Exit::Failure;
            }
        }
    }
}

/// Parses and runs one command line; its exit code.
fn run_command(args: &[std::ffi::OsString]) -> Exit {
    // Several GPUs (`--device all`, `--device 0,2`) are clap's to parse too: app::run hands
    // such a command to app::devices, which runs one child per GPU.
    let work: Box<dyn FnOnce() -> anyhow::Result<()>> = match Opts::try_parse_from(args) {
        Ok(opts) => Box::new(move || gpubench::app::run(opts)),
        Err(error) => {
            print_usage_error(&error, args);
            return if error.use_stderr() {
                Exit::Usage
            } else {
                Exit::Success
            };
        }
    };
    // Nothing is shared across the boundary: a panic ends the command after its message.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
        Ok(Ok(())) => Exit::Success,
        Ok(Err(error)) => {
            eprintln!("Error: {error:#}");
            Exit::for_error(&error)
        }
        // cudarc loads driver functions lazily and panics on a missing one: a driver too old or
        // broken for gpubench, reported like any other unusable driver.
        Err(payload) if missing_driver_symbol(panic_message(payload.as_ref())).is_some() => {
            Exit::NoUsableGpu
        }
        Err(_) => Exit::Failure,
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("")
}

/// The driver function named by cudarc's "Missing symbol NAME: …" panic.
fn missing_driver_symbol(message: &str) -> Option<&str> {
    message
        .strip_prefix("Missing symbol ")?
        .split(':')
        .next()
        .filter(|name| name.starts_with("cu"))
}

/// clap's refusal of a command line: its whole message (the missing arguments, "did you mean",
/// the valid values, the usage line), led by "Error:" as gpubench's other refusals are, and
/// ending with the help of the (sub)command it was refused in; help and version as clap prints
/// them.
fn print_usage_error(error: &clap::Error, args: &[std::ffi::OsString]) {
    use clap::error::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = error.print();
        return;
    }
    eprintln!("{}", usage_error_text(error, args));
}

/// What [`print_usage_error`] prints of a refusal that is not help or version.
fn usage_error_text(error: &clap::Error, args: &[std::ffi::OsString]) -> String {
    let text = error.render().to_string();
    let body: Vec<&str> = text
        .trim_end()
        .lines()
        .filter(|line| !line.starts_with("For more information, try"))
        .collect();
    let body = body.join("\n");
    let body = body.trim_end().trim_start_matches("error: ");
    format!("Error: {body}\n\nsee {} --help", command_path(args))
}

/// The (sub)command a command line names: `gpubench analyze cache` for `gpubench analyze cache
/// --nope`, `gpubench` where the first word is no subcommand.
fn command_path(args: &[std::ffi::OsString]) -> String {
    use clap::CommandFactory;
    let mut command = Opts::command();
    let mut path = vec!["gpubench".to_string()];
    for arg in args.iter().skip(1) {
        let arg = arg.to_string_lossy();
        if arg.starts_with('-') {
            continue;
        }
        match command.find_subcommand(arg.as_ref()) {
            Some(sub) => {
                path.push(sub.get_name().to_string());
                command = sub.clone();
            }
            None => break,
        }
    }
    path.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(line: &[&str]) -> String {
        gpubench::app::registry::hand_to_cli();
        let args: Vec<std::ffi::OsString> = line.iter().map(Into::into).collect();
        let error = Opts::try_parse_from(&args).expect_err("refused");
        usage_error_text(&error, &args)
    }

    /// Every command and subcommand, with its path (`gpubench analyze cache`).
    fn every_command() -> Vec<(String, clap::Command)> {
        use clap::CommandFactory;
        gpubench::app::registry::hand_to_cli();
        let mut all = Vec::new();
        let mut pending = vec![("gpubench".to_string(), Opts::command())];
        while let Some((path, command)) = pending.pop() {
            for sub in command.get_subcommands() {
                if sub.get_name() != "help" {
                    pending.push((format!("{path} {}", sub.get_name()), sub.clone()));
                }
            }
            all.push((path, command));
        }
        all
    }

    #[test]
    fn every_help_has_an_example_whose_committed_files_exist_and_the_top_one_the_exit_codes() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let commands = every_command();
        assert!(commands.len() > 25, "{}", commands.len());
        for (path, mut command) in commands {
            let help = command.render_long_help().to_string();
            assert!(
                help.contains("\nExample"),
                "{path} --help has no example:\n{help}"
            );
            // An example that reads a committed run reads one that is there.
            for word in help
                .split_whitespace()
                .filter(|w| w.starts_with("results/"))
            {
                assert!(
                    root.join(word).exists(),
                    "{path} --help: {word} is not committed"
                );
            }
        }
        let (_, mut top) = every_command()
            .into_iter()
            .find(|(path, _)| path == "gpubench")
            .unwrap();
        let help = top.render_long_help().to_string();
        assert!(help.contains("Exit codes:"), "{help}");
        for (at, (code, _)) in gpubench::error::EXIT_CODES.iter().enumerate() {
            assert_eq!(*code as usize, at);
            assert!(help.contains(&format!("\n  {at}  ")), "{at}: {help}");
        }
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        assert!(
            readme.contains("Exit codes: 0 success, 1 unforeseen, 2 bad usage"),
            "the README's exit codes"
        );
    }

    #[test]
    fn a_refusal_keeps_what_clap_says_and_points_to_the_help_it_was_refused_in() {
        let missing = refusal(&["gpubench", "report"]);
        assert!(
            missing.starts_with("Error: the following required arguments were not provided:"),
            "{missing}"
        );
        assert!(missing.contains("<DIR>"), "{missing}");
        assert!(missing.ends_with("see gpubench report --help"), "{missing}");
        let typo = refusal(&["gpubench", "reprot"]);
        assert!(typo.contains("'report'"), "{typo}");
        assert!(typo.ends_with("see gpubench --help"), "{typo}");
        let space = refusal(&["gpubench", "cache", "--space", "l3"]);
        assert!(
            space.contains("global") && space.contains("texture"),
            "{space}"
        );
        let nested = refusal(&["gpubench", "analyze", "cache", "--nope"]);
        assert!(
            nested.ends_with("see gpubench analyze cache --help"),
            "{nested}"
        );
        assert!(!nested.contains("For more information"), "{nested}");
    }
}

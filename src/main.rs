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
    }
    std::panic::set_hook(Box::new(|info| {
        // println! panics when stdout cannot be written (a full disk, /dev/full): that is the
        // environment's fault, said in one sentence, not a bug of gpubench.
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if let Some(why) = message.strip_prefix("failed printing to stdout: ") {
            eprintln!("Error: cannot write to standard output ({why}); free space or redirect it");
        } else {
            eprintln!(
                "Error: gpubench hit an internal bug ({info}); please report it with the command line"
            );
        }
    }));
    let opts = match Opts::try_parse() {
        Ok(opts) => opts,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() {
                Exit::Usage
            } else {
                Exit::Success
            }
            .into();
        }
    };
    // Nothing is shared across the boundary: a panic ends the process after its message.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| gpubench::app::run(opts))) {
        Ok(Ok(())) => Exit::Success.into(),
        Ok(Err(error)) => {
            eprintln!("Error: {error:#}");
            Exit::for_error(&error).into()
        }
        Err(_) => Exit::Failure.into(),
    }
}

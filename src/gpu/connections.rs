//! How many hardware work queues ("connections") the driver gives each context: the
//! environment variable [`ENV`], eight where it is unset. Every gpubench process launches on
//! one stream, so it never uses a second queue, while setting the queues up and tearing them
//! down is most of what a context costs. Measured on an H100 (driver 580, a process retaining
//! and releasing the primary context, four runs each): retaining took 0.05-0.08 s with one
//! queue against 0.10-0.18 s with eight, releasing 0.02-0.05 s against 0.06-0.08 s. `gpubench
//! all` creates and destroys 22 of them in turn, one suite's after the other's, so gpubench
//! asks for one queue unless the environment already names a count; every run records the
//! count in its metadata.

use std::ffi::OsStr;

/// The driver's environment variable for the queues per context.
pub const ENV: &str = "CUDA_DEVICE_MAX_CONNECTIONS";

/// The driver's count where [`ENV`] is unset.
const DRIVER_DEFAULT: &str = "8";

/// What gpubench sets [`ENV`] to, given its value in the environment: one queue, unless the
/// user chose a count.
fn wanted(existing: Option<&OsStr>) -> Option<&'static str> {
    match existing {
        Some(_) => None,
        None => Some("1"),
    }
}

/// Asks the driver for one queue per context, unless the environment names a count.
///
/// # Safety
///
/// No other thread of the process may exist (it writes the environment).
pub unsafe fn one_unless_set() {
    if let Some(value) = wanted(std::env::var_os(ENV).as_deref()) {
        // SAFETY: the caller guarantees no other thread reads the environment meanwhile.
        unsafe { std::env::set_var(ENV, value) };
    }
}

/// The queues per context this process's contexts get, as the driver reads [`ENV`].
pub fn current() -> String {
    std::env::var(ENV).unwrap_or_else(|_| DRIVER_DEFAULT.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_queue_is_asked_for_unless_the_user_chose_a_count() {
        assert_eq!(wanted(None), Some("1"));
        assert_eq!(wanted(Some(OsStr::new("8"))), None);
        assert_eq!(wanted(Some(OsStr::new("32"))), None);
    }
}

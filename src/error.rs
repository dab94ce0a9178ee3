//! Domain errors and the exit code each one maps to.
//!
//! Exit codes: 0 success, 1 anything unforeseen (I/O writing results, say), 2 bad usage or
//! damaged input (a file that does not parse, or a value outside its domain),
//! 3 no usable GPU, 4 the measurement failed on a usable GPU, 5 the GPU was lost during the
//! run (the driver says it is unavailable or gone), 6 the device cannot run the suite (its
//! units start with a later architecture, the driver answers CUDA_ERROR_NOT_SUPPORTED, or the
//! simulated device's PTX parser refuses its kernels): `gpubench all` records such a suite as
//! skipped, with the reason, not as failed; 7 another process is using the GPU (refused
//! before measuring, unless `--allow-shared`: see src/gpu/conditions.rs).

use std::process::ExitCode;

/// Input the user can fix: the message says what to pass instead.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl UsageError {
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

/// Returns early with a [`UsageError`] whose sentence `format!` writes (as `anyhow::bail!`),
/// from a function whose error type a `UsageError` converts into.
macro_rules! bail_usage {
    ($($message:tt)+) => {
        return Err($crate::error::UsageError::new(format!($($message)+)).into())
    };
}
pub(crate) use bail_usage;

/// The device cannot run what was asked, for a reason no setting changes: the message says
/// what it lacks. A skip, not a failure (exit 6).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Unsupported(pub String);

/// Another process holds the GPU when a run starts: every figure would be wrong, so nothing is
/// measured (exit 7). The message names the process and how to measure anyway.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SharedGpu(pub String);

/// Marks an error raised while a suite was measuring on a working GPU (a chase that ended at
/// the wrong index, a timeout, a result that could not be written), so it exits with 4.
#[derive(Debug, thiserror::Error)]
#[error("the measurement failed")]
pub struct MeasurementFailed;

#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error(
        "no CUDA driver found (libcuda.so); install the NVIDIA driver or run on a machine with a GPU (report, compare, analyze, export, emulate and calibrate need none)"
    )]
    NoDriver,
    #[error(
        "the CUDA driver could not start ({0}); check that an NVIDIA GPU is visible (nvidia-smi)"
    )]
    DriverInit(String),
    #[error("the CUDA driver sees no GPU; run on a machine with an NVIDIA GPU")]
    NoDevice,
    #[error(
        "there is no CUDA device {requested}: this machine has {count}, numbered from 0; pass --device with one of them"
    )]
    DeviceOutOfRange { requested: usize, count: usize },
    #[error(
        "the driver (CUDA {driver_cuda}) cannot load PTX built by nvcc {nvcc}; rebuild with an nvcc no newer than the driver (set NVCC, or unset it to use the pinned 13.0 toolchain) or update the driver"
    )]
    PtxTooNew { nvcc: String, driver_cuda: String },
    #[error(
        "the CUDA driver cannot load gpubench's kernels (cuda/{module}.cu: {detail}); gpubench needs a GPU of compute capability 7.5 or newer and a driver that supports CUDA 13.0 (nvidia-smi shows both)"
    )]
    PtxRejected { module: String, detail: String },
    #[error(
        "the simulated device cannot run gpubench's cuda/{module}.cu ({detail}); `gpubench all` records the suites that need it as skipped"
    )]
    SimulatorRefused { module: String, detail: String },
    #[error("the device does not support {action} ({detail})")]
    NotSupported { action: String, detail: String },
    #[error("CUDA failed while {action}: {detail}")]
    Driver { action: String, detail: String },
    #[error(
        "the GPU was lost while {action} ({detail}); check it with nvidia-smi before running on it again"
    )]
    Lost { action: String, detail: String },
    #[error(
        "kernel {kernel} did not finish within {seconds:.1} s; the GPU may be hung or busy, and this process must exit to release it"
    )]
    Timeout { kernel: String, seconds: f64 },
    #[error(
        "the process that started this one ended before giving it the GPU; run the suite again on its own"
    )]
    LeaseAbandoned,
}

impl GpuError {
    /// A driver call or a launcher's own check failed while `action`, for `detail`.
    pub fn driver(action: impl Into<String>, detail: impl Into<String>) -> GpuError {
        GpuError::Driver {
            action: action.into(),
            detail: detail.into(),
        }
    }

    /// Errors that mean this machine has no GPU gpubench can use, as opposed to a measurement
    /// that went wrong on a working one.
    pub fn is_unusable_gpu(&self) -> bool {
        matches!(
            self,
            GpuError::NoDriver
                | GpuError::DriverInit(_)
                | GpuError::NoDevice
                | GpuError::DeviceOutOfRange { .. }
                | GpuError::PtxTooNew { .. }
                | GpuError::PtxRejected { .. }
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success = 0,
    Failure = 1,
    Usage = 2,
    NoUsableGpu = 3,
    MeasurementFailed = 4,
    GpuLost = 5,
    Unsupported = 6,
    SharedGpu = 7,
}

/// Every exit code and what it says, in order: `gpubench --help` lists them.
pub const EXIT_CODES: [(Exit, &str); 8] = [
    (Exit::Success, "success"),
    (
        Exit::Failure,
        "an unforeseen failure (a bug: please report it)",
    ),
    (
        Exit::Usage,
        "bad usage, or a damaged or newer-format file (the sentence says which)",
    ),
    (
        Exit::NoUsableGpu,
        "no usable GPU: no CUDA driver or no device (report, compare, export, analyze, emulate and calibrate need none)",
    ),
    (Exit::MeasurementFailed, "a measurement failed"),
    (Exit::GpuLost, "the GPU was lost"),
    (Exit::Unsupported, "the device cannot run the suite"),
    (
        Exit::SharedGpu,
        "another process uses the GPU (--allow-shared measures anyway, every figure unresolved)",
    ),
];

/// The exit codes as `gpubench --help` ends with them.
pub fn exit_codes_help() -> String {
    let mut text = String::from("Exit codes:");
    for (code, says) in EXIT_CODES {
        text.push_str(&format!("\n  {}  {says}", code as i32));
    }
    text
}

impl Exit {
    /// Picks the exit code from the first domain error in the chain.
    pub fn for_error(error: &anyhow::Error) -> Exit {
        // A lost GPU outranks the measurement that met it: `all` stops using that GPU.
        if error
            .chain()
            .any(|c| matches!(c.downcast_ref::<GpuError>(), Some(GpuError::Lost { .. })))
        {
            return Exit::GpuLost;
        }
        // What the device cannot run is a skip wherever it was met, a measurement included.
        if error.chain().any(|c| {
            c.downcast_ref::<Unsupported>().is_some()
                || matches!(
                    c.downcast_ref::<GpuError>(),
                    Some(GpuError::SimulatorRefused { .. } | GpuError::NotSupported { .. })
                )
        }) {
            return Exit::Unsupported;
        }
        if error
            .chain()
            .any(|c| c.downcast_ref::<SharedGpu>().is_some())
        {
            return Exit::SharedGpu;
        }
        // A context is found by downcasting the error itself, not by walking its chain.
        if error.downcast_ref::<MeasurementFailed>().is_some() {
            return Exit::MeasurementFailed;
        }
        for cause in error.chain() {
            if cause.downcast_ref::<UsageError>().is_some() || is_damaged_input(cause) {
                return Exit::Usage;
            }
            if let Some(gpu) = cause.downcast_ref::<GpuError>() {
                return if gpu.is_unusable_gpu() {
                    Exit::NoUsableGpu
                } else {
                    Exit::MeasurementFailed
                };
            }
        }
        Exit::Failure
    }
}

/// A file that could not be parsed (JSON or CSV of the wrong shape, a cut-off row, bytes
/// that are not text): damaged input, which exits as bad usage does, the same code as a value
/// outside its domain. A reader's or writer's I/O failure is not.
fn is_damaged_input(cause: &(dyn std::error::Error + 'static)) -> bool {
    if let Some(json) = cause.downcast_ref::<serde_json::Error>() {
        return !json.is_io();
    }
    if let Some(csv) = cause.downcast_ref::<csv::Error>() {
        return !csv.is_io_error();
    }
    false
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn exit_code_follows_the_domain_error_under_context() {
        let usage: anyhow::Result<()> = Err(UsageError::new("bad").into());
        let usage = usage.context("while parsing").unwrap_err();
        assert_eq!(Exit::for_error(&usage), Exit::Usage);

        let no_gpu = anyhow::Error::from(GpuError::NoDriver).context("opening the GPU");
        assert_eq!(Exit::for_error(&no_gpu), Exit::NoUsableGpu);

        let timeout = anyhow::Error::from(GpuError::Timeout {
            kernel: "k".into(),
            seconds: 1.0,
        });
        assert_eq!(Exit::for_error(&timeout), Exit::MeasurementFailed);

        let lost: anyhow::Result<()> = Err(GpuError::Lost {
            action: "launching k".into(),
            detail: "CUDA_ERROR_DEVICE_UNAVAILABLE".into(),
        }
        .into());
        let lost = lost.context(MeasurementFailed).unwrap_err();
        assert_eq!(Exit::for_error(&lost), Exit::GpuLost);

        let shared = anyhow::Error::from(SharedGpu("device 0 is in use by PID 7".into()))
            .context("checking the GPU");
        assert_eq!(Exit::for_error(&shared), Exit::SharedGpu);

        let io = anyhow::Error::from(std::io::Error::other("disk full"));
        assert_eq!(Exit::for_error(&io), Exit::Failure);

        // A file that does not parse is damaged input (2), however it is wrapped.
        let json = serde_json::from_str::<Vec<u32>>("[1, 2").unwrap_err();
        let json = anyhow::Error::from(json).context("bandwidth.json is not as expected");
        assert_eq!(Exit::for_error(&json), Exit::Usage);
        let row = csv::Reader::from_reader("a,b\n1,x\n".as_bytes())
            .deserialize::<(u32, u32)>()
            .next()
            .unwrap()
            .unwrap_err();
        let row = anyhow::Error::from(row).context("unreadable row in points.csv");
        assert_eq!(Exit::for_error(&row), Exit::Usage);
        // Writing JSON to a writer that fails is not damaged input.
        struct Full;
        impl std::io::Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk full"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let write = serde_json::to_writer(Full, &[1, 2]).unwrap_err();
        assert_eq!(Exit::for_error(&anyhow::Error::from(write)), Exit::Failure);

        let wrong_index =
            anyhow::anyhow!("the chase ended at index 3, not 0").context(MeasurementFailed);
        assert_eq!(Exit::for_error(&wrong_index), Exit::MeasurementFailed);
        assert!(format!("{wrong_index:#}").starts_with("the measurement failed: the chase"));

        // What the device cannot run is a skip (6), even met inside a measurement.
        let older = anyhow::Error::from(Unsupported("needs Hopper".into())).context("tma");
        assert_eq!(Exit::for_error(&older), Exit::Unsupported);
        let refused: anyhow::Result<()> = Err(GpuError::SimulatorRefused {
            module: "pipeline".into(),
            detail: "GPGPU-Sim's PTX parser stopped by signal 6".into(),
        }
        .into());
        let refused = refused.context(MeasurementFailed).unwrap_err();
        assert_eq!(Exit::for_error(&refused), Exit::Unsupported);
        let texture = anyhow::Error::from(GpuError::NotSupported {
            action: "creating a texture object".into(),
            detail: "CUDA_ERROR_NOT_SUPPORTED: GPGPU-Sim models no texture objects".into(),
        })
        .context(MeasurementFailed);
        assert_eq!(Exit::for_error(&texture), Exit::Unsupported);
        // A real driver's rejection of the PTX is still an unusable GPU.
        let rejected = anyhow::Error::from(GpuError::PtxRejected {
            module: "pipeline".into(),
            detail: "CUDA_ERROR_INVALID_PTX".into(),
        });
        assert_eq!(Exit::for_error(&rejected), Exit::NoUsableGpu);
    }
}

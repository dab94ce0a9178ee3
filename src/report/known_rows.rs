//! Summary rows the core's own tables look up by name: the roofline takes its compute
//! ceilings, and the curated tables their arithmetic rows, from the rows a suite writes with
//! these sections and quantities. The names live here, in the core, so that the tables never
//! name the suite that writes the rows; the suite writes its rows with them.

/// The quantity of the SM clock the clock suite measured (`gpubench clock`): the clock the
/// tables turn cycles into nanoseconds with, and the export states.
pub const SM_CLOCK: &str = "SM clock (measured)";

/// The section of the CUDA-core arithmetic rows (`gpubench flops`).
pub const FLOPS_SECTION: &str = "Arithmetic peak (CUDA cores)";

/// The quantity of a CUDA-core instruction's rate over the chip.
pub fn flops_chip_rate_quantity(name: &str) -> String {
    format!("{name} over all SMs, per second of wall time")
}

/// The section of the tensor-core rows (`gpubench tensor`).
pub const TENSOR_SECTION: &str = "Tensor cores";

/// The quantity of a tensor-core kernel's rate over the chip ("wgmma m64n256k16 FP16→FP32 at
/// the measured clock").
pub fn tensor_chip_rate_quantity(kernel: &str) -> String {
    format!("{kernel} at the measured clock")
}

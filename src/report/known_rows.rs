//! Summary rows the core's own tables look up by name: the roofline takes its compute and
//! bandwidth ceilings, and the curated tables their arithmetic and bandwidth rows, from the rows a suite writes with
//! these sections and quantities. The names live here, in the core, so that the tables never
//! name the suite that writes the rows; the suite writes its rows with them.

use super::figures::Figure;

/// The quantity of the SM clock the clock suite measured (`gpubench clock`): the clock the
/// tables turn cycles into nanoseconds with, and the export states.
pub const SM_CLOCK: &str = "SM clock (measured)";

/// The last word of a cache level's capacity row, read without a model ("global: level 1
/// capacity", `gpubench cache`): the curated memory table's size column.
pub const CACHE_CAPACITY: &str = "capacity";

/// The section of the bandwidth rows (`gpubench bandwidth`).
pub const BANDWIDTH_SECTION: &str = "Bandwidth";

/// Whether `figure` is the headline bandwidth (GB/s) of `operation` at `level` ("l2",
/// "shared-line read"), whichever search it came from: the quantity is "<level> <operation>
/// (<search>)".
pub fn is_bandwidth_rate_of(figure: &Figure, level: &str, operation: &str) -> bool {
    figure.section == BANDWIDTH_SECTION
        && figure.unit == "GB/s"
        && figure
            .quantity
            .strip_prefix(&format!("{level} {operation} ("))
            .is_some_and(|rest| rest.ends_with(')'))
}

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

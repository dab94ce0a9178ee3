//! What each column gpubench writes to a CSV may hold, by the column's name: a file read back
//! (by `report`, `compare` or `analyze`) whose number lies outside its column's domain was
//! damaged or edited, and is refused before it is drawn or summarised. Measured quantities
//! (cycles, bytes, rates, times) are not negative, fractions and confidences lie in [0, 1],
//! counts and byte sizes are whole; only a difference of two measurements may be negative.

/// What a column's numbers may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domain {
    /// A difference of two measurements (a cost over a load, an overhead): any finite number.
    Signed,
    /// A measured quantity: cycles, rates, times.
    NotNegative,
    /// A count or a size in bytes: a whole number, not negative.
    Whole,
    /// A fraction, a share or a confidence: within [0, 1].
    Fraction,
    /// A fact of a device that has it at all, as the driver reports it in a 32-bit `int`
    /// (`cuDeviceGetAttribute`): a count of its units or a size, a whole number from 1 to
    /// 2^31 - 1 (SMs, registers, shared memory, L2, the memory bus's width).
    DeviceCount,
    /// A device's clock in MHz, which the driver (in kHz) and NVML (in MHz) report in 32-bit
    /// integers: above zero and at most 2^31 - 1.
    DeviceRate,
    /// A device's size or peak that no 32-bit integer holds (its memory in bytes, the DRAM
    /// peak in bytes per second): above zero.
    Positive,
}

/// The largest value of the driver's and NVML's 32-bit integers that [`Domain::DeviceCount`]
/// and [`Domain::DeviceRate`] hold.
const DRIVER_INT_MAX: f64 = 2_147_483_647.0;

/// The device's counts and sizes the driver reports, in `metadata.json`'s `device` and the
/// bandwidth suite's file: a GPU without any of them is no GPU (issue #71: "0 SMs" reached
/// the caption, `-gpgpu_n_clusters 0` the simulator options).
const JSON_DEVICE_COUNTS: [&str; 9] = [
    "multiprocessors",
    "registers_per_multiprocessor",
    "registers_per_block",
    "shared_memory_per_multiprocessor_bytes",
    "shared_memory_per_block_bytes",
    "shared_memory_per_block_optin_bytes",
    "l2_cache_bytes",
    "warp_size",
    "memory_bus_bits",
];

/// The device's clocks.
const JSON_DEVICE_RATES: [&str; 3] = ["nominal_sm_clock_mhz", "memory_clock_mhz", "sm_clock_mhz"];

/// The device's memory and the DRAM peak its clock and bus give.
const JSON_DEVICE_SIZES: [&str; 2] = ["global_memory_bytes", "dram_peak_bytes_per_second"];

/// Differences of two measurements, which a fast path can make slightly negative.
const SIGNED: [&str; 3] = ["over_load_cycles", "tma_over_load_cycles", "overhead"];

/// Columns that count things (lanes, threads, repeats, …).
const COUNTS: [&str; 31] = [
    "active",
    "addresses",
    "block",
    "blocks",
    "blocks_per_sm",
    "cap",
    "clause",
    "cluster",
    "clusters",
    "dynamic_count",
    "hits",
    "idle_extrinsic",
    "idle_intrinsic",
    "instances",
    "iteration",
    "iterations",
    "lane",
    "m",
    "max_active_clusters",
    "n",
    "passes",
    "registers_per_thread",
    "repeats",
    "sample",
    "slots",
    "smid",
    "stride_elements",
    "thread",
    "threads",
    "warp",
    "warps",
];

/// Columns holding a fraction or a confidence besides those named `f_*` and `*_fraction`.
const FRACTIONS: [&str; 7] = [
    "confidence",
    // A least-squares fit's with an intercept (analysis::linear_fit): below 0 it dropped the
    // divergence headline silently (#71).
    "r_squared",
    "raw_confidence",
    "mean_confidence",
    "share_right",
    "ncu_warp_efficiency",
    "divergent_fraction",
];

/// Whether `name` is a fraction's or a confidence's by the names CSV columns and JSON keys
/// share.
fn named_fraction(name: &str) -> bool {
    FRACTIONS.contains(&name) || name.starts_with("f_") || name.ends_with("_fraction")
}

/// The domain of the column named `name`.
pub fn domain(name: &str) -> Domain {
    if SIGNED.contains(&name) {
        Domain::Signed
    } else if named_fraction(name) {
        Domain::Fraction
    } else if COUNTS.contains(&name) || name.ends_with("_bytes") {
        Domain::Whole
    } else {
        Domain::NotNegative
    }
}

/// Why `value` cannot be in column `name`, if it cannot.
pub fn violation(name: &str, value: f64) -> Option<&'static str> {
    why_not(domain(name), value)
}

/// Why `value` lies outside `domain`, if it does.
fn why_not(domain: Domain, value: f64) -> Option<&'static str> {
    match domain {
        Domain::Signed => None,
        Domain::NotNegative => (value < 0.0).then_some("a measured quantity is not negative"),
        Domain::Whole => (value < 0.0 || value.fract() != 0.0)
            .then_some("a count or a size in bytes is a whole number, not negative"),
        Domain::Fraction => (!(0.0..=1.0).contains(&value))
            .then_some("a fraction or a confidence lies within 0 to 1"),
        Domain::DeviceCount => (!(1.0..=DRIVER_INT_MAX).contains(&value) || value.fract() != 0.0)
            .then_some("a GPU's count of units or size is a whole number above zero that the driver's 32-bit int holds"),
        Domain::DeviceRate => (!(value > 0.0 && value <= DRIVER_INT_MAX))
            .then_some("a GPU's clock is above zero and held by the driver's 32-bit int"),
        Domain::Positive => (value <= 0.0).then_some("a GPU's memory size or DRAM peak is above zero"),
    }
}

/// Keys of a run's JSON files that hold a difference, a fitted coefficient or an interval
/// bound (which a near-zero quantity's noise takes below zero), so any finite number.
const JSON_SIGNED: [&str; 15] = [
    "value",
    "values",
    "low",
    "high",
    "estimate",
    "delta",
    "ci95_low",
    "ci95_high",
    "offset_cycles",
    "overhead",
    "over_load_cycles",
    "tma_over_load_cycles",
    "over_l2_load_cycles",
    // The Bayesian information criterion of a least-squares fit, n ln(RSS / n) + k ln n:
    // below zero where the residuals are small.
    "bic",
    // What an unsettled figure saw, held as `value` is.
    "seen",
];

/// Keys of a run's JSON files that count things (or index, order, seed or size them): a whole
/// number, not negative.
const JSON_COUNTS: [&str; 109] = [
    "ways",
    "sets",
    "partitions",
    "multiprocessors",
    "repeats",
    "samples",
    "warps",
    "threads",
    "blocks",
    "blocks_per_sm",
    "clusters",
    "cluster",
    "entries",
    "points",
    "launches",
    "iterations",
    "instances",
    "answers",
    "right",
    "cases",
    "smid",
    "sm",
    "accumulators_per_thread",
    "anchor_m",
    "bandwidth_bytes_per_pass",
    "bandwidth_sizes",
    "block_threads",
    "bytes",
    "candidates",
    "caps",
    "clause_order",
    "coarse_points_per_doubling",
    "compiled_by_the_driver",
    "count",
    "divergences",
    "dynamic_extrinsic",
    "dynamic_intrinsic",
    "ecc_volatile_corrected",
    "ecc_volatile_uncorrected",
    "elements_at_reach",
    "fine_points",
    "first_clause",
    "first_lane",
    "flop_per_lane",
    "flop_per_mma",
    "fmas_per_accumulator_per_trip",
    "groups",
    "id",
    "idle_extrinsic",
    "idle_intrinsic",
    "instruction_latency_chain_lengths",
    "instruction_repeats",
    "instruction_throughput_chain_lengths",
    "largest_block_registers",
    "level",
    "line_values",
    "m",
    "max_active_clusters",
    "max_bound",
    "mma_chains_per_warp",
    "mma_unroll",
    "mma_warps_per_block",
    "mmas",
    "models_compared",
    "n",
    "ncu_launches",
    "order",
    "ordinal",
    "pairs",
    "points_per_doubling",
    "prebuilt_by_all",
    "preferred_shared_carveout_percent",
    "preheat",
    "process",
    "register_file_per_block",
    "register_limited_thread_quantum",
    "ring_stride_words",
    "ring_words",
    "saturation_warps_95_percent",
    "seed",
    "set_values",
    "shared_bytes_per_block",
    "shared_ring_stride_words",
    "shared_ring_words",
    "single_loop_levels",
    "slots",
    "spills",
    "stack_models_tried",
    "stages",
    "static_extrinsic",
    "static_intrinsic",
    "steps",
    "stream_bytes_per_configuration",
    "stream_stages",
    "stream_tensor_words",
    "strides",
    "threads_per_block",
    "timed_region_instructions",
    "unit_registers_per_thread",
    "unit_registers_per_warp",
    "unroll",
    "waits",
    "warm_steps",
    "way_values",
    "wgmma_unroll",
    "wgmma_warpgroups_per_block",
    "wgmma_widths",
    "work",
    // NVML reports a GPU's temperature in an unsigned int of degrees Celsius.
    "temperature_c",
];

/// Keys of a run's JSON files that hold a measured quantity or a statistic of one (an order
/// statistic or moment of `analysis::stats::Summary`, a rate, a spread, a mean occupancy):
/// not negative.
const JSON_MEASURED: [&str; 12] = [
    "min",
    "median",
    "mean",
    "max",
    "stdev",
    // The slots suite's count of active lane slots, and that count's share of all slots.
    "active",
    "occupancy",
    "remote",
    "cycles_per_step",
    "bytes_per_clock_per_block",
    "max_abs_error_percent",
    "sm_mhz_during",
];

/// Keys of a run's JSON files that hold a share besides those the fraction rules name: the
/// slots suite's idle shares and the branch suite's warp overlap.
const JSON_FRACTIONS: [&str; 4] = ["extrinsic", "intrinsic", "untagged", "warp_overlap"];

/// Whether `name` is a SASS opcode (`LDG.E.128`, `HFMA2.MMA`), the key of a tally of the
/// instructions a timed loop's SASS holds: a count.
fn sass_opcode(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '.' || c == '_')
}

/// Endings of a JSON key that name a measured quantity's unit (cycles, bytes, time, clock,
/// power, rate): not negative. A new field is checked by being named for its unit.
const JSON_MEASURED_ENDINGS: [&str; 14] = [
    "_cycles",
    "_bytes",
    "_seconds",
    "_ms",
    "_ns",
    "_us",
    "mhz",
    "_watts",
    "_per_second",
    "_per_s",
    "_kib",
    "tflops",
    "_per_clock",
    "_per_sm",
];

/// The domain of the numbers under key `name` in a JSON file of a run directory. Unlike a
/// CSV column, a JSON key whose name declares no kind (a field of a peer's or a tool's record,
/// a fitted parameter) is only held to [`super::MAX_MAGNITUDE`]: [`Domain::Signed`].
pub fn json_domain(name: &str) -> Domain {
    json_domain_declared(name).unwrap_or(Domain::Signed)
}

/// The domain a rule above declares for JSON key `name`, or `None` where no rule names it (it
/// is then held to [`Domain::Signed`]: finite and within the magnitude gpubench writes).
/// `tests/domain.rs` fails on a key of a committed run that no rule names and its list of keys
/// held only to their magnitude does not hold, so a key added without a domain is noticed.
pub fn json_domain_declared(name: &str) -> Option<Domain> {
    // A range's bounds (`cycles_per_step_min`, `m_max`) are held as the quantity is.
    if let Some(quantity) = name
        .strip_suffix("_min")
        .or_else(|| name.strip_suffix("_max"))
    {
        return json_domain_declared(quantity);
    }
    Some(if JSON_DEVICE_COUNTS.contains(&name) {
        Domain::DeviceCount
    } else if JSON_DEVICE_RATES.contains(&name) {
        Domain::DeviceRate
    } else if JSON_DEVICE_SIZES.contains(&name) {
        Domain::Positive
    } else if JSON_SIGNED.contains(&name) || name.contains("slope") || name.contains("intercept") {
        Domain::Signed
    } else if named_fraction(name)
        || JSON_FRACTIONS.contains(&name)
        || name.ends_with("_confidence")
        || name.ends_with("_share")
        || name.ends_with("coverage")
    {
        Domain::Fraction
    } else if JSON_COUNTS.contains(&name) || name.ends_with("_count") || sass_opcode(name) {
        Domain::Whole
    } else if JSON_MEASURED.contains(&name)
        || name.ends_with("_spread")
        || JSON_MEASURED_ENDINGS.iter().any(|e| name.ends_with(e))
        || name == "seconds"
        // A rate over its theoretical peak: not negative (a measured rate may pass the peak a
        // little, 1.0008 in the committed H100 run).
        || name.ends_with("_of_peak")
        || name.starts_with("latency")
        || name.starts_with("throughput")
    {
        Domain::NotNegative
    } else {
        return None;
    })
}

/// Why `value` cannot be under JSON key `name`, if it cannot.
pub fn json_violation(name: &str, value: f64) -> Option<&'static str> {
    why_not(json_domain(name), value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_column_refuses_what_it_cannot_hold() {
        assert_eq!(violation("cycles", 31.5), None);
        assert!(violation("cycles", -0.5).is_some());
        assert!(violation("latency_cycles", -5.0).is_some());
        assert_eq!(violation("over_load_cycles", -0.007), None);
        assert_eq!(violation("footprint_bytes", 4096.0), None);
        assert!(violation("footprint_bytes", 4096.5).is_some());
        assert!(violation("lane", -1.0).is_some());
        assert_eq!(violation("taken_fraction", 1.0), None);
        assert!(violation("taken_fraction", 1.01).is_some());
        assert!(violation("f_active", -0.1).is_some());
        assert!(violation("confidence", 1.5).is_some());
        assert_eq!(domain("median_bytes_per_second"), Domain::NotNegative);
        // A device's facts are above zero (issue #71).
        for key in [
            "multiprocessors",
            "registers_per_multiprocessor",
            "memory_bus_bits",
        ] {
            assert!(json_violation(key, 0.0).is_some(), "{key}");
            assert!(json_violation(key, -65536.0).is_some(), "{key}");
            assert!(json_violation(key, 1.5).is_some(), "{key}");
            assert_eq!(json_violation(key, 132.0), None, "{key}");
        }
        assert!(json_violation("memory_clock_mhz", 0.0).is_some());
        assert_eq!(json_violation("memory_clock_mhz", 2619.0), None);
        assert!(json_violation("r_squared", -0.2).is_some());
        assert!(violation("r_squared", 1.2).is_some());
        assert!(json_violation("fraction_of_peak", -0.5).is_some());
        assert_eq!(json_violation("fraction_of_peak", 1.0008), None);
        // A suite's wall time in all.json (issue #71: "seconds: -777" was printed).
        assert!(json_violation("seconds", -777.0).is_some());
        assert_eq!(json_violation("seconds", 0.4), None);
        assert_eq!(domain("bytes_per_launch"), Domain::NotNegative);
    }

    #[test]
    fn a_json_key_is_held_to_the_kind_its_name_declares_and_no_more() {
        assert!(json_violation("latency_cycles", -1.0).is_some());
        assert!(json_violation("sm_clock_mhz", -1.0).is_some());
        assert!(json_violation("capacity_bytes", -1.0).is_some());
        // An interpolated size need not be whole; a count must.
        assert_eq!(json_violation("capacity_bytes", 3.25e7 + 0.5), None);
        assert!(json_violation("ways", 2.5).is_some());
        assert!(json_violation("held_out_coverage", 1.2).is_some());
        assert!(json_violation("size_confidence", -0.1).is_some());
        // Differences, fitted coefficients and interval bounds may be negative.
        for signed in [
            "offset_cycles",
            "slope_cycles",
            "ci95_low",
            "value",
            "intercept",
        ] {
            assert_eq!(json_violation(signed, -3.0), None, "{signed}");
        }
        // A key that names no kind (a tool's record) is held to nothing here.
        assert_eq!(
            json_domain("local:default:gpu0_dram_read_fraction_ref"),
            Domain::Signed
        );
    }
}

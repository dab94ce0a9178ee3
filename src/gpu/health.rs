//! Which GPU a run measured and in what state, through NVML (`libnvidia-ml.so.1`, loaded at
//! run time by nvml-wrapper): identity (UUID, serial, board part number, PCI bus id, VBIOS),
//! settings (persistence and ECC mode, power limits, application and maximum clocks) and a
//! health sample (temperature, power draw, clocks, performance state, current clock-limit
//! reasons, ECC error counts, and NVML's cumulative time spent limited by power, temperature
//! and the board) taken before and after each run. Clocks are read, never set. Where NVML is
//! missing the record says why and the run goes on.

use serde::{Deserialize, Serialize};

use nvml_wrapper::Nvml;
use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{
    Clock, EccCounter, MemoryError, PerformancePolicy, TemperatureSensor,
};

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Clocks {
    pub sm_mhz: u32,
    pub memory_mhz: u32,
}

/// What tells two GPUs of one model apart, and how they are set up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GpuIdentity {
    pub name: Option<String>,
    pub uuid: Option<String>,
    pub serial: Option<String>,
    pub board_part_number: Option<String>,
    pub pci_bus_id: Option<String>,
    pub vbios_version: Option<String>,
    pub persistence_mode: Option<bool>,
    pub ecc_enabled: Option<bool>,
    pub power_limit_watts: Option<f64>,
    pub enforced_power_limit_watts: Option<f64>,
    pub application_clocks: Option<Clocks>,
    pub default_application_clocks: Option<Clocks>,
    pub max_clocks: Option<Clocks>,
}

/// NVML's cumulative time (ns) the clocks were held down, per cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LimitedTime {
    pub power_ns: Option<u64>,
    pub thermal_ns: Option<u64>,
    pub board_limit_ns: Option<u64>,
    pub reliability_ns: Option<u64>,
}

/// The GPU's state at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HealthSample {
    pub utc: String,
    pub temperature_c: Option<u32>,
    pub power_draw_watts: Option<f64>,
    pub clocks: Option<Clocks>,
    pub performance_state: Option<String>,
    /// NVML's current clock-limit reasons ("gpu idle", "sw power cap", …).
    pub clock_limit_reasons: Option<Vec<String>>,
    pub ecc_volatile_corrected: Option<u64>,
    pub ecc_volatile_uncorrected: Option<u64>,
    pub limited: LimitedTime,
}

/// `metadata.json`'s `nvml` record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NvmlRecord {
    pub identity: Option<GpuIdentity>,
    pub before: Option<HealthSample>,
    pub after: Option<HealthSample>,
    /// Why there is no record, where NVML could not be used.
    pub unavailable: Option<String>,
    /// Set when the clocks were held down by power, temperature or the board during the run
    /// (up to its first part judged apart, where it has one).
    pub throttled: Option<String>,
    /// Parts of the run judged by themselves: from each part's first sample on, the suite
    /// measured only what it wrote to that part's files (the tensor suite's sustained run,
    /// which holds the GPU until its clocks settle), so the clocks held down then say nothing
    /// of the figures measured before it. Empty for most suites.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<NvmlPart>,
}

/// A part of a suite's run that NVML's throttling check judges by itself
/// ([`NvmlRecord::parts`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NvmlPart {
    /// The files of the suite's run directory whose figures this part measured.
    pub files: Vec<String>,
    /// NVML's reading as the part began (the end of the part before it).
    pub before: Option<HealthSample>,
    /// Set when the clocks were held down during the part (from `before` to the next part's,
    /// or to the run's `after`).
    pub throttled: Option<String>,
}

impl NvmlRecord {
    /// Judges the run's throttling now that it ended at `after`: the run up to its first
    /// part, then each part up to the next (or to `after`). Where the run has no sample from
    /// its start, nothing is judged.
    pub fn judge(&mut self, after: &HealthSample) {
        let Some(before) = &self.before else {
            return;
        };
        // Each stretch ends where the next begins: the parts' first samples, then `after`.
        let ends: Vec<HealthSample> = self
            .parts
            .iter()
            .map(|p| p.before.clone().unwrap_or_else(|| after.clone()))
            .chain([after.clone()])
            .collect();
        self.throttled = throttling(before, &ends[0]);
        for (part, end) in self.parts.iter_mut().zip(&ends[1..]) {
            part.throttled = part.before.as_ref().and_then(|b| throttling(b, end));
        }
    }
}

/// An NVML session on the device with CUDA UUID `uuid`.
pub struct Health {
    nvml: Nvml,
    uuid: String,
}

impl Health {
    /// NVML for the GPU whose UUID CUDA reports, or why not.
    pub fn open(uuid: &str) -> Result<Health, String> {
        let nvml = Nvml::init().map_err(|e| format!("NVML could not start ({e})"))?;
        nvml.device_by_uuid(uuid)
            .map_err(|e| format!("NVML does not know the device {uuid} ({e})"))?;
        Ok(Health {
            nvml,
            uuid: uuid.to_string(),
        })
    }

    fn device(&self) -> Option<nvml_wrapper::Device<'_>> {
        self.nvml.device_by_uuid(self.uuid.as_str()).ok()
    }

    pub fn identity(&self) -> GpuIdentity {
        let Some(d) = self.device() else {
            return GpuIdentity::default();
        };
        let clocks = |sm: Option<u32>, memory: Option<u32>| {
            Some(Clocks {
                sm_mhz: sm?,
                memory_mhz: memory?,
            })
        };
        GpuIdentity {
            name: d.name().ok(),
            uuid: d.uuid().ok(),
            serial: d.serial().ok(),
            board_part_number: d.board_part_number().ok(),
            pci_bus_id: d.pci_info().ok().map(|p| p.bus_id),
            vbios_version: d.vbios_version().ok(),
            persistence_mode: d.is_in_persistent_mode().ok(),
            ecc_enabled: d.is_ecc_enabled().ok().map(|e| e.currently_enabled),
            power_limit_watts: d.power_management_limit().ok().map(milliwatts),
            enforced_power_limit_watts: d.enforced_power_limit().ok().map(milliwatts),
            application_clocks: clocks(
                d.applications_clock(Clock::SM).ok(),
                d.applications_clock(Clock::Memory).ok(),
            ),
            default_application_clocks: clocks(
                d.default_applications_clock(Clock::SM).ok(),
                d.default_applications_clock(Clock::Memory).ok(),
            ),
            max_clocks: clocks(
                d.max_clock_info(Clock::SM).ok(),
                d.max_clock_info(Clock::Memory).ok(),
            ),
        }
    }

    pub fn sample(&self) -> HealthSample {
        let utc = utc_now();
        let Some(d) = self.device() else {
            return HealthSample {
                utc,
                ..HealthSample::default()
            };
        };
        let limited = |policy| d.violation_status(policy).ok().map(|v| v.violation_time);
        HealthSample {
            utc,
            temperature_c: d.temperature(TemperatureSensor::Gpu).ok(),
            power_draw_watts: d.power_usage().ok().map(milliwatts),
            clocks: match (d.clock_info(Clock::SM), d.clock_info(Clock::Memory)) {
                (Ok(sm_mhz), Ok(memory_mhz)) => Some(Clocks { sm_mhz, memory_mhz }),
                _ => None,
            },
            performance_state: d.performance_state().ok().map(|p| format!("{p:?}")),
            clock_limit_reasons: d.current_throttle_reasons().ok().map(reason_names),
            ecc_volatile_corrected: d
                .total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile)
                .ok(),
            ecc_volatile_uncorrected: d
                .total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile)
                .ok(),
            limited: LimitedTime {
                power_ns: limited(PerformancePolicy::Power),
                thermal_ns: limited(PerformancePolicy::Thermal),
                board_limit_ns: limited(PerformancePolicy::BoardLimit),
                reliability_ns: limited(PerformancePolicy::Reliability),
            },
        }
    }
}

/// NVML on the device whose UUID CUDA gave (or why not), and a record holding the device's
/// identity and a first sample, or why there is none.
pub fn start(uuid: Result<String, String>) -> (NvmlRecord, Option<Health>) {
    match uuid.and_then(|uuid| Health::open(&uuid)) {
        Ok(health) => (
            NvmlRecord {
                identity: Some(health.identity()),
                before: Some(health.sample()),
                ..NvmlRecord::default()
            },
            Some(health),
        ),
        Err(why) => (
            NvmlRecord {
                unavailable: Some(why),
                ..NvmlRecord::default()
            },
            None,
        ),
    }
}

fn milliwatts(mw: u32) -> f64 {
    f64::from(mw) / 1000.0
}

fn reason_names(reasons: ThrottleReasons) -> Vec<String> {
    [
        (ThrottleReasons::GPU_IDLE, "gpu idle"),
        (
            ThrottleReasons::APPLICATIONS_CLOCKS_SETTING,
            "applications clocks setting",
        ),
        (ThrottleReasons::SW_POWER_CAP, "sw power cap"),
        (ThrottleReasons::HW_SLOWDOWN, "hw slowdown"),
        (ThrottleReasons::SYNC_BOOST, "sync boost"),
        (ThrottleReasons::SW_THERMAL_SLOWDOWN, "sw thermal slowdown"),
        (ThrottleReasons::HW_THERMAL_SLOWDOWN, "hw thermal slowdown"),
        (
            ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN,
            "hw power brake slowdown",
        ),
        (
            ThrottleReasons::DISPLAY_CLOCK_SETTING,
            "display clock setting",
        ),
    ]
    .into_iter()
    .filter(|(flag, _)| reasons.contains(*flag))
    .map(|(_, name)| name.to_string())
    .collect()
}

/// Reasons that mean the clocks were held below what the card would otherwise run at while
/// it worked (idle and a user's clock settings are not a limit on the measurement).
const LIMITING: [&str; 6] = [
    "sw power cap",
    "hw slowdown",
    "sw thermal slowdown",
    "hw thermal slowdown",
    "hw power brake slowdown",
    "sync boost",
];

/// Whether the run between `before` and `after` was throttled: NVML's cumulative limited time
/// grew, or a limiting reason was active at either sample. `None` when neither shows it.
pub fn throttling(before: &HealthSample, after: &HealthSample) -> Option<String> {
    let grew = |b: Option<u64>, a: Option<u64>| match (b, a) {
        (Some(b), Some(a)) if a > b => Some(a - b),
        _ => None,
    };
    let mut parts: Vec<String> = [
        (
            "power",
            grew(before.limited.power_ns, after.limited.power_ns),
        ),
        (
            "thermal",
            grew(before.limited.thermal_ns, after.limited.thermal_ns),
        ),
        (
            "board limit",
            grew(before.limited.board_limit_ns, after.limited.board_limit_ns),
        ),
        (
            "reliability",
            grew(before.limited.reliability_ns, after.limited.reliability_ns),
        ),
    ]
    .into_iter()
    .filter_map(|(cause, ns)| Some(format!("{cause} {:.1} ms", ns? as f64 / 1e6)))
    .collect();
    for (when, sample) in [("before", before), ("after", after)] {
        let active: Vec<&String> = sample
            .clock_limit_reasons
            .iter()
            .flatten()
            .filter(|r| LIMITING.contains(&r.as_str()))
            .collect();
        if !active.is_empty() {
            parts.push(format!(
                "{} {when} the run",
                active
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    (!parts.is_empty()).then(|| {
        format!(
            "the clocks were held down during the run (NVML: {}); its figures may read low",
            parts.join("; ")
        )
    })
}

/// Now, as RFC 3339 to the second in UTC: the time stamps of runs and health records.
pub fn utc_now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(power_ns: u64, reasons: &[&str]) -> HealthSample {
        HealthSample {
            clock_limit_reasons: Some(reasons.iter().map(|r| r.to_string()).collect()),
            limited: LimitedTime {
                power_ns: Some(power_ns),
                thermal_ns: Some(7),
                ..LimitedTime::default()
            },
            ..HealthSample::default()
        }
    }

    #[test]
    fn throttling_is_limited_time_that_grew_or_a_limiting_reason() {
        assert_eq!(
            throttling(&sample(5, &["gpu idle"]), &sample(5, &["gpu idle"])),
            None
        );
        let grew = throttling(&sample(5, &[]), &sample(2_500_005, &[])).unwrap();
        assert!(grew.contains("power 2.5 ms"), "{grew}");
        let capped =
            throttling(&sample(5, &[]), &sample(5, &["sw power cap", "gpu idle"])).unwrap();
        assert!(capped.contains("sw power cap after the run"), "{capped}");
        assert!(!capped.contains("gpu idle"), "{capped}");
    }

    /// A part judged apart (the sustained tensor run) takes the power cap it reaches with it:
    /// the run before it stays unthrottled, and each stretch ends where the next begins.
    #[test]
    fn a_part_judged_apart_is_throttled_by_itself() {
        let mut record = NvmlRecord {
            before: Some(sample(5, &["gpu idle"])),
            parts: vec![NvmlPart {
                files: vec!["sustained.csv".into()],
                before: Some(sample(5, &["gpu idle"])),
                throttled: None,
            }],
            ..NvmlRecord::default()
        };
        record.judge(&sample(9_000_005, &["sw power cap"]));
        assert_eq!(record.throttled, None);
        let part = record.parts[0].throttled.as_deref().unwrap();
        assert!(part.contains("power 9.0 ms"), "{part}");
        // Held down before the part began: the run is marked, the part by its own stretch.
        record.parts[0].before = Some(sample(4_000_005, &[]));
        record.judge(&sample(4_000_005, &["gpu idle"]));
        assert!(
            record
                .throttled
                .as_deref()
                .unwrap()
                .contains("power 4.0 ms")
        );
        assert_eq!(record.parts[0].throttled, None);
        // Without parts the whole run is one stretch, as before.
        let mut whole = NvmlRecord {
            before: Some(sample(5, &[])),
            ..NvmlRecord::default()
        };
        whole.judge(&sample(2_500_005, &[]));
        assert!(whole.throttled.is_some());
        let text = serde_json::to_string(&whole).unwrap();
        assert!(!text.contains("parts"), "{text}");
    }

    #[test]
    fn records_from_older_runs_read_back_empty() {
        let record: NvmlRecord = serde_json::from_str("{}").unwrap();
        assert_eq!(record, NvmlRecord::default());
    }
}

//! Cost of thread divergence in loops, after Białas & Strzelecki, section II (Listings 1–2,
//! Table I).
//!
//! Method: one warp runs a loop whose trip count is set per lane (the single loop, or two
//! nested loops with the same bound). Every lane reads clock64 just before and after the
//! timed loop, which is repeated `unroll` times and preceded by `preheat` untimed runs of
//! the same loop; all `samples` repetitions happen inside ONE launch per divergence level,
//! so no sample pays for a launch. Every lane stores its own count. The timer's
//! back-to-back overhead is measured in the same kernel and subtracted (median of the run).
//!
//! Outputs (see `report`): `samples.csv`, `summary.csv`, `fit.json`,
//! `divergence.png` and `metadata.json` in a new run directory.

pub use crate::analysis::divergence_patterns as patterns;

use std::fmt;
use std::time::{Duration, Instant};

use anyhow::Result;

use self::patterns::PatternRow;
use super::split::SplitLevel;
use crate::gpu::Gpu;
use super::launch::{self, LoopTimings};
pub use super::settings::DivergenceConfig;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopKernel {
    Single,
    Double,
}

impl LoopKernel {
    pub fn name(self) -> &'static str {
        match self {
            LoopKernel::Single => "single",
            LoopKernel::Double => "double",
        }
    }

    pub fn entry(self) -> &'static str {
        match self {
            LoopKernel::Single => "divergence_single",
            LoopKernel::Double => "divergence_double",
        }
    }

    /// Loop-body executions of the longest lane in one sample.
    fn iterations(self, max_bound: i32, repeats: u32) -> f64 {
        let bound = f64::from(max_bound.max(0));
        let per_run = match self {
            LoopKernel::Single => bound,
            LoopKernel::Double => bound * bound,
        };
        per_run * f64::from(repeats)
    }
}

impl fmt::Display for LoopKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Upper limits that keep one launch short and its buffers small; far above the paper's.
pub const MAX_SAMPLES: u32 = 100_000;
pub const MAX_BOUND: i32 = 4096;
pub const MAX_REPEATS: u32 = 1_000;

impl DivergenceConfig {
    /// A generous host-side limit for one launch: 10 s plus 200 cycles per loop iteration of
    /// the longest lane at 100 MHz, far slower than any GPU runs this loop.
    pub fn launch_deadline(&self, kernel: LoopKernel) -> Duration {
        let iterations =
            kernel.iterations(self.max_bound, self.preheat + self.unroll) * f64::from(self.samples);
        Duration::from_secs(10) + Duration::from_secs_f64(iterations * 200.0 / 100e6)
    }
}

/// Where samples come from: the GPU, or a model in tests.
pub trait LoopSampler {
    fn sample(
        &mut self,
        kernel: LoopKernel,
        bounds: &[i32; patterns::WARP_LANES],
        config: &DivergenceConfig,
    ) -> Result<LoopTimings>;

    /// The push/pop split kernel's stamps (`samples × 32 × stride`) and the stride.
    fn sample_split(
        &mut self,
        bounds: &[i32; patterns::WARP_LANES],
        config: &DivergenceConfig,
    ) -> Result<(Vec<i64>, usize)>;
}

pub struct GpuLoopSampler<'a> {
    pub gpu: &'a mut Gpu,
    /// Host time from each launch to its completion, copies included.
    pub busy: Duration,
}

impl<'a> GpuLoopSampler<'a> {
    pub fn new(gpu: &'a mut Gpu) -> Self {
        GpuLoopSampler {
            gpu,
            busy: Duration::ZERO,
        }
    }
}

impl LoopSampler for GpuLoopSampler<'_> {
    fn sample(
        &mut self,
        kernel: LoopKernel,
        bounds: &[i32; patterns::WARP_LANES],
        config: &DivergenceConfig,
    ) -> Result<LoopTimings> {
        let started = Instant::now();
        let timings = launch::divergence_loop(
            self.gpu,
            kernel.entry(),
            bounds,
            config.samples,
            config.preheat,
            config.unroll,
            config.launch_deadline(kernel),
        )?;
        self.busy += started.elapsed();
        Ok(timings)
    }

    fn sample_split(
        &mut self,
        bounds: &[i32; patterns::WARP_LANES],
        config: &DivergenceConfig,
    ) -> Result<(Vec<i64>, usize)> {
        let started = Instant::now();
        let stamps = launch::divergence_split(
            self.gpu,
            bounds,
            config.samples,
            config.preheat,
            config.launch_deadline(LoopKernel::Single),
        )?;
        self.busy += started.elapsed();
        Ok(stamps)
    }
}

/// One divergence level of one kernel, as measured.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelMeasurement {
    pub kernel: LoopKernel,
    pub row: PatternRow,
    pub timings: LoopTimings,
}

/// Runs every level of every chosen kernel, calling `on_kernel_done` with all measurements
/// so far after each kernel, so a caller can write them before the next kernel starts.
pub fn measure(
    config: &DivergenceConfig,
    sampler: &mut dyn LoopSampler,
    mut on_kernel_done: impl FnMut(&[LevelMeasurement]) -> Result<()>,
) -> Result<Vec<LevelMeasurement>> {
    let rows = config.pattern.rows(config.max_bound, config.seed);
    let mut measured = Vec::with_capacity(rows.len() * config.kernels.len());
    for &kernel in &config.kernels {
        for row in &rows {
            let timings = sampler.sample(kernel, &row.bounds, config)?;
            let expected = config.samples as usize * patterns::WARP_LANES;
            anyhow::ensure!(
                timings.cycles.len() == expected && timings.overhead.len() == expected,
                "the {kernel} kernel returned {} timings where {expected} were expected",
                timings.cycles.len()
            );
            // clock64 read around a loop always moves on a GPU that ran it; a zero is a kernel
            // that did not run (a GPU or driver fault), not a free loop.
            anyhow::ensure!(
                timings.cycles.iter().all(|&c| c > 0),
                "the {kernel} kernel's clock did not advance around its loop at M = {} (a timing of {} cycles): the kernel did not run as written; check the GPU with nvidia-smi and run the suite again",
                row.m,
                timings.cycles.iter().min().copied().unwrap_or_default()
            );
            measured.push(LevelMeasurement {
                kernel,
                row: row.clone(),
                timings,
            });
        }
        on_kernel_done(&measured)?;
    }
    Ok(measured)
}

/// The push/pop split kernel at every level of the pattern (section IV-A).
pub fn measure_split(
    config: &DivergenceConfig,
    sampler: &mut dyn LoopSampler,
) -> Result<Vec<SplitLevel>> {
    config
        .pattern
        .rows(config.max_bound, config.seed)
        .into_iter()
        .map(|row| {
            let (stamps, stride) = sampler.sample_split(&row.bounds, config)?;
            anyhow::ensure!(
                stamps.len() == config.samples as usize * patterns::WARP_LANES * stride,
                "the split kernel returned {} stamps where {} were expected",
                stamps.len(),
                config.samples as usize * patterns::WARP_LANES * stride
            );
            Ok(SplitLevel {
                m: row.m,
                bounds: row.bounds,
                stamps,
                stride,
            })
        })
        .collect()
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A stand-in warp: a loop iteration costs `per_iteration` cycles, every divergence event
    /// `per_divergence`, and the clock read `overhead`.
    pub struct ModelSampler {
        pub per_iteration: i64,
        pub per_divergence: i64,
        pub overhead: i64,
        pub launches: usize,
    }

    impl ModelSampler {
        pub fn new(per_iteration: i64, per_divergence: i64, overhead: i64) -> ModelSampler {
            ModelSampler {
                per_iteration,
                per_divergence,
                overhead,
                launches: 0,
            }
        }
    }

    /// The default settings but `samples`.
    pub fn with_samples(samples: u32) -> DivergenceConfig {
        DivergenceConfig {
            samples,
            ..DivergenceConfig::default()
        }
    }

    impl LoopSampler for ModelSampler {
        fn sample(
            &mut self,
            kernel: LoopKernel,
            bounds: &[i32; patterns::WARP_LANES],
            config: &DivergenceConfig,
        ) -> Result<LoopTimings> {
            self.launches += 1;
            let longest = *bounds.iter().max().unwrap();
            let mut distinct = bounds.to_vec();
            distinct.sort_unstable();
            distinct.dedup();
            let events = distinct.len() as i64 - 1;
            let trips = kernel.iterations(longest, config.unroll) as i64;
            let cycles = trips * self.per_iteration + events * self.per_divergence + self.overhead;
            let cells = config.samples as usize * patterns::WARP_LANES;
            Ok(LoopTimings {
                cycles: vec![cycles; cells],
                overhead: vec![self.overhead; cells],
            })
        }

        /// Each iteration costs `per_iteration`; every divergent branch `per_divergence`,
        /// charged to the reconvergence.
        fn sample_split(
            &mut self,
            bounds: &[i32; patterns::WARP_LANES],
            config: &DivergenceConfig,
        ) -> Result<(Vec<i64>, usize)> {
            let longest = *bounds.iter().max().unwrap();
            let stride = longest as usize + 2;
            let mut distinct = bounds.to_vec();
            distinct.sort_unstable();
            distinct.dedup();
            let events = distinct.len() as i64 - 1;
            let mut stamps = Vec::new();
            for _ in 0..config.samples {
                for &bound in bounds {
                    let mut row = vec![0_i64; stride];
                    for i in 0..bound as usize {
                        row[1 + i] = (i as i64 + 1) * self.per_iteration;
                    }
                    row[stride - 1] =
                        i64::from(longest) * self.per_iteration + events * self.per_divergence;
                    stamps.extend(row);
                }
            }
            Ok((stamps, stride))
        }
    }

    #[test]
    fn one_launch_per_level_and_kernel_with_progress_after_each_kernel() {
        let config = with_samples(4);
        let mut sampler = ModelSampler::new(10, 30, 2);
        let mut progress = Vec::new();
        let measured = measure(&config, &mut sampler, |so_far| {
            progress.push(so_far.len());
            Ok(())
        })
        .unwrap();
        assert_eq!(sampler.launches, 64);
        assert_eq!(progress, vec![32, 64]);
        assert_eq!(measured[31].row.m, 31);
        assert_eq!(measured[31].timings.cycles[0], 320 + 31 * 30 + 2);
    }

    /// A GPU whose kernels do not run leaves the timings at zero: refused, not fitted.
    #[test]
    fn a_clock_that_did_not_move_is_refused() {
        let config = with_samples(2);
        let mut sampler = ModelSampler::new(0, 0, 0);
        let error = measure(&config, &mut sampler, |_| Ok(())).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("clock did not advance around its loop at M = 0"),
            "{error}"
        );
        assert_eq!(sampler.launches, 1);
    }

    #[test]
    fn invalid_settings_are_refused_before_anything_runs() {
        let base = DivergenceConfig::default();
        for (config, needle) in [
            (
                DivergenceConfig {
                    samples: 0,
                    ..base.clone()
                },
                "--samples",
            ),
            (
                DivergenceConfig {
                    unroll: 0,
                    ..base.clone()
                },
                "--unroll",
            ),
            // #71: a run whose samples.csv its own readers would refuse is refused before
            // the GPU is touched (both kernels' rows at 3,600 samples pass 512 MiB).
            (
                DivergenceConfig {
                    samples: 3_600,
                    kernels: vec![LoopKernel::Single, LoopKernel::Double],
                    ..base.clone()
                },
                "larger than the 512 MiB gpubench reads back",
            ),
            (
                DivergenceConfig {
                    max_bound: 0,
                    ..base.clone()
                },
                "--max-bound",
            ),
            (
                DivergenceConfig {
                    max_bound: 16,
                    ..base.clone()
                },
                "--max-bound 32",
            ),
            (
                DivergenceConfig {
                    kernels: vec![],
                    ..base.clone()
                },
                "--kernel",
            ),
        ] {
            let message = config.validate().unwrap_err().to_string();
            assert!(message.contains(needle), "{message}");
        }
        assert!(base.validate().is_ok());
    }
}

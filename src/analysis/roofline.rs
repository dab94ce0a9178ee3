//! The empirical roofline (Williams, Waterman & Patterson, "Roofline", CACM 2009; measured
//! rather than read off a data sheet, as LBNL's Empirical Roofline Toolkit does): a kernel of
//! arithmetic intensity I (FLOP per byte moved from one memory level) can reach at most
//! min(P, B · I), where P is a compute ceiling and B that level's bandwidth. The ridge point
//! P / B is the intensity above which the kernel can be compute-bound.

use serde::Serialize;

/// One ceiling: a compute rate in FLOP/s or a bandwidth in bytes/s.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ceiling {
    pub name: String,
    pub per_second: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Roofline {
    pub compute: Vec<Ceiling>,
    pub memory: Vec<Ceiling>,
}

/// Where a compute ceiling meets a memory ceiling.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ridge {
    pub compute: String,
    pub memory: String,
    pub flop_per_byte: f64,
}

impl Roofline {
    /// A roofline of the ceilings that are positive and finite; `None` without at least one of
    /// each kind.
    pub fn new(compute: Vec<Ceiling>, memory: Vec<Ceiling>) -> Option<Roofline> {
        let usable = |c: &Ceiling| c.per_second.is_finite() && c.per_second > 0.0;
        let compute: Vec<Ceiling> = compute.into_iter().filter(usable).collect();
        let memory: Vec<Ceiling> = memory.into_iter().filter(usable).collect();
        (!compute.is_empty() && !memory.is_empty()).then_some(Roofline { compute, memory })
    }

    /// The highest rate a kernel of `flop_per_byte` reaches under `compute` and `memory`.
    pub fn attainable(compute: &Ceiling, memory: &Ceiling, flop_per_byte: f64) -> f64 {
        compute.per_second.min(memory.per_second * flop_per_byte)
    }

    /// Every compute ceiling's ridge point against every memory ceiling.
    pub fn ridges(&self) -> Vec<Ridge> {
        self.compute
            .iter()
            .flat_map(|c| {
                self.memory.iter().map(|m| Ridge {
                    compute: c.name.clone(),
                    memory: m.name.clone(),
                    flop_per_byte: c.per_second / m.per_second,
                })
            })
            .collect()
    }

    /// The intensities a drawing should span: a quarter of the lowest ridge point to four
    /// times the highest.
    pub fn intensity_span(&self) -> (f64, f64) {
        let ridges: Vec<f64> = self.ridges().iter().map(|r| r.flop_per_byte).collect();
        let low = ridges.iter().copied().fold(f64::INFINITY, f64::min);
        let high = ridges.iter().copied().fold(0.0, f64::max);
        (low / 4.0, high * 4.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ceiling(name: &str, per_second: f64) -> Ceiling {
        Ceiling {
            name: name.into(),
            per_second,
        }
    }

    #[test]
    fn the_ridge_is_where_the_slope_meets_the_roof() {
        let roofline = Roofline::new(
            vec![ceiling("fp32", 60e12), ceiling("fp64", 30e12)],
            vec![ceiling("dram", 3e12), ceiling("l2", 7.5e12)],
        )
        .unwrap();
        let ridges = roofline.ridges();
        assert_eq!(ridges.len(), 4);
        for ridge in &ridges {
            let c = roofline
                .compute
                .iter()
                .find(|c| c.name == ridge.compute)
                .unwrap();
            let m = roofline
                .memory
                .iter()
                .find(|m| m.name == ridge.memory)
                .unwrap();
            // At the ridge both bounds are equal; below it memory bounds, above it compute.
            let at = Roofline::attainable(c, m, ridge.flop_per_byte);
            assert!((at - c.per_second).abs() < 1e-6 * c.per_second);
            assert!((at - m.per_second * ridge.flop_per_byte).abs() < 1e-6 * at);
            let below = Roofline::attainable(c, m, ridge.flop_per_byte / 2.0);
            assert!((below - c.per_second / 2.0).abs() < 1e-6 * c.per_second);
            assert_eq!(
                Roofline::attainable(c, m, ridge.flop_per_byte * 8.0),
                c.per_second
            );
        }
        assert_eq!(ridges[0].flop_per_byte, 20.0);
        let (low, high) = roofline.intensity_span();
        assert_eq!((low, high), (1.0, 80.0));
    }

    #[test]
    fn without_a_ceiling_of_each_kind_there_is_no_roofline() {
        assert!(Roofline::new(vec![ceiling("fp32", 1e12)], vec![]).is_none());
        assert!(
            Roofline::new(vec![ceiling("fp32", f64::NAN)], vec![ceiling("dram", 1e12)]).is_none()
        );
        let kept = Roofline::new(
            vec![ceiling("fp32", 1e12), ceiling("broken", 0.0)],
            vec![ceiling("dram", 1e12)],
        )
        .unwrap();
        assert_eq!(kept.compute.len(), 1);
    }
}

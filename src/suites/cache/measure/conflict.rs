//! The conflict experiment (`analysis::conflict`): for each stride S, the largest number N of
//! addresses S bytes apart whose cyclic chase still hits the first level. N is found by
//! doubling until a chase misses, then bisection, so each stride costs about 2 log2 N chases.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::suites::cache::analysis::conflict::ConflictPoint;

/// One chase of the experiment, as `conflict.csv` holds it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ConflictRow {
    pub stride_bytes: u64,
    pub addresses: u64,
    pub cycles: f64,
    pub hits: bool,
}

/// The points of the experiment from its rows: per stride the largest N that hit (0 if none
/// did), marked `at_least` where every N tried hit.
pub fn points_from_rows(rows: &[ConflictRow]) -> Vec<ConflictPoint> {
    let mut strides: Vec<u64> = rows.iter().map(|r| r.stride_bytes).collect();
    strides.sort_unstable();
    strides.dedup();
    strides
        .into_iter()
        .map(|stride| {
            let of_stride = rows.iter().filter(|r| r.stride_bytes == stride);
            ConflictPoint {
                stride_bytes: stride,
                max_hitting: of_stride
                    .clone()
                    .filter(|r| r.hits)
                    .map(|r| r.addresses)
                    .max()
                    .unwrap_or(0),
                at_least: of_stride.clone().all(|r| r.hits),
            }
        })
        .collect()
}

/// The largest N in 1..=`most` with `hits(N)`, assuming hits are monotone in N (more
/// addresses never hit more); 0 when even one address misses.
pub fn largest_hitting(most: u64, mut hits: impl FnMut(u64) -> Result<bool>) -> Result<u64> {
    if most == 0 || !hits(1)? {
        return Ok(0);
    }
    let (mut good, mut bad) = (1, None);
    while bad.is_none() && good < most {
        let next = (good * 2).min(most);
        if hits(next)? {
            good = next;
        } else {
            bad = Some(next);
        }
    }
    let Some(mut bad) = bad else {
        return Ok(good);
    };
    while bad - good > 1 {
        let middle = (good + bad) / 2;
        if hits(middle)? {
            good = middle;
        } else {
            bad = middle;
        }
    }
    Ok(good)
}

/// One stride's result and every (N, cycles per load) chase tried for it.
pub type StrideResult = (ConflictPoint, Vec<(u64, f64)>);

/// One [`ConflictPoint`] per stride: `cycles(N, S)` is the chase's cycles per load; a chase
/// hits below `hit_below` cycles; N goes up to `most(S)`.
pub fn experiment(
    strides: &[u64],
    hit_below: f64,
    most: impl Fn(u64) -> u64,
    mut cycles: impl FnMut(u64, u64) -> Result<f64>,
) -> Result<Vec<StrideResult>> {
    let mut out = Vec::new();
    for &stride in strides {
        let mut tried = Vec::new();
        let max_hitting = largest_hitting(most(stride), |n| {
            let y = cycles(n, stride)?;
            tried.push((n, y));
            Ok(y < hit_below)
        })?;
        tried.sort_by_key(|t| t.0);
        out.push((
            ConflictPoint {
                stride_bytes: stride,
                max_hitting,
                at_least: max_hitting == most(stride),
            },
            tried,
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_largest_hitting_count() {
        for limit in [0_u64, 1, 2, 3, 7, 64, 1000] {
            let mut calls = 0;
            let found = largest_hitting(5000, |n| {
                calls += 1;
                Ok(n <= limit)
            })
            .unwrap();
            assert_eq!(found, limit);
            assert!(calls <= 2 * 13 + 2, "{calls} calls for {limit}");
        }
        assert_eq!(largest_hitting(10, |_| Ok(true)).unwrap(), 10);
    }
}

#[cfg(test)]
mod h100_tests {
    use super::*;
    use crate::suites::cache::analysis::conflict::analyse;

    fn rows(space: &str) -> Vec<ConflictRow> {
        let path = format!(
            "{}/results/h100/cache/{space}/conflict.csv",
            env!("CARGO_MANIFEST_DIR")
        );
        csv::Reader::from_path(&path)
            .unwrap()
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    /// The committed H100 runs: the constant L1 reads as 4 ways of 512 B (8 sets of 64 B);
    /// the L1 of global loads holds about as many lines at every stride from its 128-byte line
    /// on, so it gets no way count.
    #[test]
    fn reads_the_committed_h100_conflict_experiments() {
        let constant = analyse(&points_from_rows(&rows("constant")), Some(64), None);
        assert_eq!(
            (constant.ways, constant.way_bytes, constant.sets),
            (Some(4), Some(512), Some(8)),
            "{constant:?}"
        );
        // With the 128-byte line, or the 32-byte sector the stride sweep reads as the run does.
        for line in [128, 32] {
            let global = analyse(&points_from_rows(&rows("global")), Some(line), None);
            assert_eq!(global.ways, None, "{global:?}");
            assert!(global.verdict.contains("no "), "{global:?}");
        }
    }
}

//! Per-lane loop bounds for the divergence kernels.
//!
//! Each pattern yields rows `(m, bounds[32])`:
//! - `staircase` — Table I of Białas & Strzelecki: at level M the last M lanes stop one
//!   iteration earlier each (lane 31 at max−M … lane 32−M at max−1), the rest run `max`.
//!   M = 0..=31; level M has M distinct shorter bounds, so M divergent branch events.
//! - `random` — the same bound multiset as `staircase` at each M, dealt to lanes in a seeded
//!   random order: does it matter *which* lanes diverge?
//! - `half` — lanes 16–31 stop M iterations early, lanes 0–15 run `max`: one divergence
//!   event whose divergent stretch grows with M (M = 0..=31).
//! - `list:b0,…,b31` — one row with the given bounds; m = number of distinct bounds − 1,
//!   which equals the number of divergence events for a loop whose longest lane sets the trip.

use std::fmt;
use std::str::FromStr;

use rand::seq::SliceRandom;
use rand::{SeedableRng, rngs::StdRng};

use crate::error::{UsageError, bail_usage};

pub const WARP_LANES: usize = 32;
/// Levels 0..=31: a warp has at most 31 lanes that can stop before the longest one.
pub const LEVELS: u32 = 32;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pattern {
    Staircase,
    Random,
    Half,
    List(Vec<i32>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternRow {
    pub m: u32,
    pub bounds: [i32; WARP_LANES],
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Staircase => write!(f, "staircase"),
            Pattern::Random => write!(f, "random"),
            Pattern::Half => write!(f, "half"),
            Pattern::List(bounds) => {
                let text: Vec<String> = bounds.iter().map(i32::to_string).collect();
                write!(f, "list:{}", text.join(","))
            }
        }
    }
}

impl FromStr for Pattern {
    type Err = UsageError;

    fn from_str(text: &str) -> Result<Pattern, UsageError> {
        match text {
            "staircase" => Ok(Pattern::Staircase),
            "random" => Ok(Pattern::Random),
            "half" => Ok(Pattern::Half),
            _ => {
                let Some(list) = text.strip_prefix("list:") else {
                    bail_usage!(
                        "unknown pattern '{text}'; use staircase, random, half or list:<32 comma-separated bounds>"
                    );
                };
                let bounds = list
                    .split(',')
                    .map(|item| item.trim().parse::<i32>())
                    .collect::<Result<Vec<i32>, _>>()
                    .map_err(|_| {
                        UsageError::new(format!(
                            "pattern list '{list}' holds something that is not a whole number; give 32 comma-separated loop bounds"
                        ))
                    })?;
                if bounds.len() != WARP_LANES {
                    bail_usage!(
                        "pattern list has {} bounds but a warp has 32 lanes; give exactly 32 comma-separated bounds",
                        bounds.len()
                    );
                }
                if let Some(bad) = bounds.iter().find(|b| **b < 0) {
                    bail_usage!(
                        "pattern list holds the negative bound {bad}; loop bounds must be 0 or more"
                    );
                }
                Ok(Pattern::List(bounds))
            }
        }
    }
}

impl Pattern {
    /// Checks the pattern against `--max-bound` before anything runs.
    pub fn validate(&self, max_bound: i32) -> Result<(), UsageError> {
        match self {
            Pattern::Staircase | Pattern::Random | Pattern::Half if max_bound < LEVELS as i32 => {
                Err(UsageError::new(format!(
                    "--max-bound {max_bound} is too small for the {self} pattern: level M = 31 needs bounds down to max − 31, so pass --max-bound 32 or more"
                )))
            }
            Pattern::List(bounds) if bounds.iter().any(|b| *b > max_bound) => {
                Err(UsageError::new(format!(
                    "pattern list holds a bound above --max-bound {max_bound}; raise --max-bound or lower the bound"
                )))
            }
            _ => Ok(()),
        }
    }

    pub fn rows(&self, max_bound: i32, seed: u64) -> Vec<PatternRow> {
        match self {
            Pattern::Staircase => (0..LEVELS)
                .map(|m| PatternRow {
                    m,
                    bounds: staircase(max_bound, m),
                })
                .collect(),
            Pattern::Random => {
                let mut rng = StdRng::seed_from_u64(seed);
                (0..LEVELS)
                    .map(|m| {
                        let mut bounds = staircase(max_bound, m);
                        bounds.shuffle(&mut rng);
                        PatternRow { m, bounds }
                    })
                    .collect()
            }
            Pattern::Half => (0..LEVELS)
                .map(|m| {
                    let mut bounds = [max_bound; WARP_LANES];
                    for bound in &mut bounds[WARP_LANES / 2..] {
                        *bound = max_bound - m as i32;
                    }
                    PatternRow { m, bounds }
                })
                .collect(),
            Pattern::List(list) => {
                let mut bounds = [0; WARP_LANES];
                bounds.copy_from_slice(list);
                vec![PatternRow {
                    m: distinct_bounds(&bounds) - 1,
                    bounds,
                }]
            }
        }
    }
}

/// Table I row M: lane t runs `max − max(0, t + M − 31)` iterations.
fn staircase(max_bound: i32, m: u32) -> [i32; WARP_LANES] {
    std::array::from_fn(|lane| max_bound - (lane as i32 + m as i32 - 31).max(0))
}

fn distinct_bounds(bounds: &[i32]) -> u32 {
    let mut sorted = bounds.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    sorted.len() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pattern: &Pattern, m: u32) -> [i32; WARP_LANES] {
        pattern.rows(32, 1)[m as usize].bounds
    }

    /// Table I of the paper, row by row for the rows it prints.
    #[test]
    fn staircase_matches_table_one() {
        let stair = Pattern::Staircase;
        assert_eq!(row(&stair, 0), [32; 32]);
        let mut one = [32; 32];
        one[31] = 31;
        assert_eq!(row(&stair, 1), one);
        let mut two = [32; 32];
        two[30] = 31;
        two[31] = 30;
        assert_eq!(row(&stair, 2), two);
        let table_28: Vec<i32> = [32, 32, 32, 32].into_iter().chain((4..=31).rev()).collect();
        assert_eq!(row(&stair, 28).to_vec(), table_28);
        let table_29: Vec<i32> = [32, 32, 32].into_iter().chain((3..=31).rev()).collect();
        assert_eq!(row(&stair, 29).to_vec(), table_29);
        let table_30: Vec<i32> = [32, 32].into_iter().chain((2..=31).rev()).collect();
        assert_eq!(row(&stair, 30).to_vec(), table_30);
        let table_31: Vec<i32> = (1..=32).rev().collect();
        assert_eq!(row(&stair, 31).to_vec(), table_31);
    }

    #[test]
    fn every_level_has_m_divergence_events() {
        for pattern in [Pattern::Staircase, Pattern::Random] {
            for row in pattern.rows(40, 7) {
                assert_eq!(
                    distinct_bounds(&row.bounds) - 1,
                    row.m,
                    "{pattern} M={}",
                    row.m
                );
                assert_eq!(*row.bounds.iter().max().unwrap(), 40);
            }
        }
    }

    #[test]
    fn random_deals_the_staircase_bounds_and_depends_on_the_seed() {
        let a = Pattern::Random.rows(32, 1);
        let b = Pattern::Random.rows(32, 2);
        assert_eq!(a, Pattern::Random.rows(32, 1));
        assert_ne!(a, b);
        for (m, row) in a.iter().enumerate() {
            let mut dealt = row.bounds;
            let mut stair = staircase(32, m as u32);
            dealt.sort_unstable();
            stair.sort_unstable();
            assert_eq!(dealt, stair);
        }
    }

    #[test]
    fn half_shortens_the_upper_half() {
        let rows = Pattern::Half.rows(32, 0);
        assert_eq!(rows[5].bounds[..16], [32; 16]);
        assert_eq!(rows[5].bounds[16..], [27; 16]);
        assert_eq!(rows[31].bounds[31], 1);
    }

    #[test]
    fn lists_parse_and_count_distinct_bounds() {
        let text = format!("list:{}", ["5"; 30].join(",") + ",3,1");
        let pattern: Pattern = text.parse().unwrap();
        assert_eq!(pattern.to_string(), text);
        let rows = pattern.rows(32, 0);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].m, 2);
    }

    #[test]
    fn bad_patterns_say_what_to_do() {
        let short = "list:1,2".parse::<Pattern>().unwrap_err().to_string();
        assert!(short.contains("exactly 32"), "{short}");
        let word = "list:a,b".parse::<Pattern>().unwrap_err().to_string();
        assert!(word.contains("whole number"), "{word}");
        let unknown = "zigzag".parse::<Pattern>().unwrap_err().to_string();
        assert!(unknown.contains("staircase, random, half"), "{unknown}");
        let negative = format!("list:-1{}", ",1".repeat(31));
        assert!(negative.parse::<Pattern>().is_err());
        assert!(Pattern::Staircase.validate(31).is_err());
        assert!(Pattern::Staircase.validate(32).is_ok());
        let list: Pattern = format!("list:{}", ["40"; 32].join(",")).parse().unwrap();
        assert!(list.validate(32).is_err());
    }
}

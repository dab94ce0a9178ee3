//! Does the confidence hold on a family of caches the table was not made from? Each family of
//! the study (a replacement policy, or a departure from a plain cache: a hashed index, a
//! next-line prefetcher, a victim buffer, sectored lines) is held out in turn: the table is made
//! from every other family's answers (`fit_map_of`), the held-out family's answers are stated
//! through it, and their reliability diagram says how far the stated confidence is from the
//! share right. A real GPU's cache is such a family: the study's own mixture is no guide to
//! how often an unseen one is right. The same split measures how often the capacity interval
//! holds the true capacity on each family.

use serde::Serialize;

use super::{Bin, fit_map_of, reliability_of};
use crate::analysis::confidence_map::bin;

/// A bin of a held-out family counts towards its worst gap once it has this many answers.
pub const MIN_BIN_ANSWERS: usize = 200;

/// One answer of the study, as the split needs it.
#[derive(Debug, Clone)]
pub struct Item<'a> {
    /// The families the case belongs to ([`groups`]).
    pub groups: Vec<String>,
    pub basis: &'a str,
    pub raw_confidence: Option<f64>,
    pub right: bool,
    /// Whether the capacity interval held the true capacity (`None`: none was stated).
    pub covered: Option<bool>,
}

/// The families of a case: its replacement policy, and each departure from a plain cache (or
/// "no quirk").
pub fn groups(
    replacement: &str,
    hashed_index: bool,
    next_line_prefetch: bool,
    victim_lines: u64,
    sectored: bool,
    miss_cost_by_line: bool,
) -> Vec<String> {
    let mut groups = vec![format!("replacement {replacement}")];
    for (quirk, name) in [
        (hashed_index, "hashed index"),
        (next_line_prefetch, "next-line prefetch"),
        (victim_lines > 0, "victim buffer"),
        (sectored, "sectored lines"),
        (miss_cost_by_line, "miss cost by line"),
    ] {
        if quirk {
            groups.push(name.into());
        }
    }
    if groups.len() == 1 {
        groups.push("no quirk".into());
    }
    groups
}

impl super::Outcome {
    /// The outcome as the split reads it.
    pub fn item(&self) -> Item<'static> {
        let c = &self.case;
        Item {
            groups: groups(
                c.replacement,
                c.hashed_index,
                c.next_line_prefetch,
                c.victim_lines,
                c.sector_bytes.is_some(),
                c.miss_spread_cycles > 0.0,
            ),
            basis: self.basis,
            raw_confidence: self.raw_confidence,
            right: self.right,
            covered: self.capacity_covered(),
        }
    }
}

/// One family held out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Family {
    pub family: String,
    /// Its answers with a stated confidence, through the table made without it.
    pub bins: Vec<Bin>,
    /// The largest distance between a bin's mean stated confidence and its share right, over
    /// bins with at least [`MIN_BIN_ANSWERS`] answers (`None`: no such bin).
    pub worst_gap: Option<f64>,
    /// The same per basis the answers were read on, where a bin of that basis has enough
    /// answers.
    pub basis_gaps: Vec<(String, f64)>,
    /// Capacity intervals stated, and how many held the true capacity.
    pub capacity_intervals: usize,
    pub capacity_covered: usize,
}

impl Family {
    /// How many of its answers stated a confidence.
    pub fn answers(&self) -> usize {
        self.bins.iter().map(|b| b.answers).sum()
    }

    pub fn coverage(&self) -> Option<f64> {
        (self.capacity_intervals > 0)
            .then(|| self.capacity_covered as f64 / self.capacity_intervals as f64)
    }
}

/// Every family of `items` held out in turn, in name order.
pub fn held_out(items: &[Item]) -> Vec<Family> {
    let mut names: Vec<&str> = items
        .iter()
        .flat_map(|i| i.groups.iter().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let inside = |i: &&Item| i.groups.iter().any(|g| g == name);
            let table = fit_map_of(
                items
                    .iter()
                    .filter(|i| !inside(i))
                    .map(|i| (i.basis, i.raw_confidence, i.right)),
            );
            let stated = |i: &Item| {
                i.raw_confidence.map(|raw| {
                    table
                        .iter()
                        .find(|(basis, _)| basis == i.basis)
                        .map_or(raw, |(_, values)| values[bin(raw)])
                })
            };
            let held: Vec<&Item> = items.iter().filter(inside).collect();
            let diagram =
                |held: &[&Item]| reliability_of(held.iter().map(|i| (stated(i), i.right)));
            let bins = diagram(&held);
            let worst_gap = worst_gap_of(&bins);
            let mut bases: Vec<&str> = held.iter().map(|i| i.basis).collect();
            bases.sort_unstable();
            bases.dedup();
            let basis_gaps = bases
                .into_iter()
                .filter_map(|basis| {
                    let on: Vec<&Item> =
                        held.iter().copied().filter(|i| i.basis == basis).collect();
                    Some((basis.to_string(), worst_gap_of(&diagram(&on))?))
                })
                .collect();
            let intervals: Vec<bool> = held.iter().filter_map(|i| i.covered).collect();
            Family {
                family: name.to_string(),
                bins,
                worst_gap,
                basis_gaps,
                capacity_intervals: intervals.len(),
                capacity_covered: intervals.iter().filter(|&&c| c).count(),
            }
        })
        .collect()
}

/// The largest distance between a bin's mean stated confidence and its share right, over bins
/// with at least [`MIN_BIN_ANSWERS`] answers.
fn worst_gap_of(bins: &[Bin]) -> Option<f64> {
    bins.iter()
        .filter(|b| b.answers >= MIN_BIN_ANSWERS)
        .filter_map(|b| Some((b.mean_confidence? - b.share_right?).abs()))
        .reduce(f64::max)
}

/// Per basis, the largest gap any held-out family showed on it: how far a confidence stated on
/// that basis may be from the share right on a family of caches the table was not made from.
pub fn gaps_by_basis(families: &[Family]) -> Vec<(String, f64)> {
    let mut gaps: std::collections::BTreeMap<&str, f64> = std::collections::BTreeMap::new();
    for (basis, gap) in families.iter().flat_map(|f| &f.basis_gaps) {
        let worst = gaps.entry(basis).or_insert(0.0);
        *worst = worst.max(*gap);
    }
    gaps.into_iter().map(|(b, g)| (b.to_string(), g)).collect()
}

/// [`gaps_by_basis`] as the Rust text of `confidence_map::HELD_OUT_GAP`.
pub fn gaps_as_rust(gaps: &[(String, f64)]) -> String {
    let mut text = String::from("pub const HELD_OUT_GAP: &[(&str, f64)] = &[\n");
    for (basis, gap) in gaps {
        text += &format!("    (\"{basis}\", {gap:.3}),\n");
    }
    text + "];\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(groups: &[&str], raw: f64, right: bool, covered: bool) -> Item<'static> {
        Item {
            groups: groups.iter().map(|g| g.to_string()).collect(),
            basis: "fit",
            raw_confidence: Some(raw),
            right,
            covered: Some(covered),
        }
    }

    /// Two families read alike at raw 0.95, but one is right 9 times in 10 and the other never:
    /// held out, each is stated the other's share, so the gaps are about 0.9 both ways; a
    /// family of 200 answers or more in a bin counts, a smaller one does not.
    #[test]
    fn a_family_unlike_the_rest_shows_its_gap_when_held_out() {
        let mut items = Vec::new();
        for k in 0..400 {
            items.push(item(
                &["replacement lru", "no quirk"],
                0.95,
                k % 10 != 0,
                true,
            ));
            items.push(item(
                &["replacement random", "no quirk"],
                0.95,
                false,
                k % 4 != 0,
            ));
        }
        for _ in 0..50 {
            items.push(item(
                &["replacement srrip", "hashed index"],
                0.95,
                true,
                true,
            ));
        }
        let families = held_out(&items);
        let names: Vec<&str> = families.iter().map(|f| f.family.as_str()).collect();
        assert_eq!(
            names,
            [
                "hashed index",
                "no quirk",
                "replacement lru",
                "replacement random",
                "replacement srrip"
            ]
        );
        let lru = &families[2];
        assert_eq!(lru.answers(), 400);
        // Stated (0 + 50 + 1) / (400 + 50 + 2) from random and srrip; right 0.9.
        let gap = lru.worst_gap.unwrap();
        assert!((gap - (0.9 - 51.0 / 452.0)).abs() < 1e-9, "{gap}");
        let random = &families[3];
        assert!(random.worst_gap.unwrap() > 0.8);
        assert_eq!(random.coverage(), Some(0.75));
        assert_eq!(families[4].worst_gap, None, "50 answers are too few");
        assert_eq!(families[4].coverage(), Some(1.0));
        // Every answer was read on one basis: its gap is the worst family's.
        let gaps = gaps_by_basis(&families);
        assert_eq!(gaps.len(), 1);
        let worst = families.iter().filter_map(|f| f.worst_gap).reduce(f64::max);
        assert_eq!(Some(gaps[0].1), worst);
        assert!(gaps_as_rust(&gaps).starts_with("pub const HELD_OUT_GAP"));
    }

    #[test]
    fn a_plain_case_is_its_policy_and_no_quirk() {
        assert_eq!(
            groups("lru", false, false, 0, false, false),
            ["replacement lru", "no quirk"]
        );
        assert_eq!(
            groups("fifo", true, false, 4, false, true),
            [
                "replacement fifo",
                "hashed index",
                "victim buffer",
                "miss cost by line"
            ]
        );
    }
}

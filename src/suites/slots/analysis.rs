//! Lane-slot accounting (Gupta & Datta, sections IV–V): every lane of a warp, at every basic
//! block the warp executes, is one slot — active, or idle because an extrinsic or an intrinsic
//! branch deactivated it (the last branch to do so). Pure: it reads the counters the tagged
//! kernels accumulate (cuda/slot_tags.cuh) and, for known answers, runs the paper's
//! thread-status stack over a small control-flow graph ([`StatusStack`]).

use serde::Serialize;

pub const MAX_BRANCHES: usize = 16;
const BRANCH_FIELDS: usize = 6;
const TOTALS: usize = MAX_BRANCHES * BRANCH_FIELDS;
pub const COUNTERS: usize = TOTALS + 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Extrinsic,
    Intrinsic,
}

impl Kind {
    pub fn short(self) -> &'static str {
        match self {
            Kind::Extrinsic => "ext",
            Kind::Intrinsic => "int",
        }
    }
}

/// One tagged branch, summed over every warp that executed it (the paper's Fig. 6 row).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct BranchRow {
    pub id: usize,
    pub kind: Kind,
    /// Warp-level executions.
    pub dynamic_count: u64,
    /// Lanes active when a warp reached the branch, summed.
    pub instances: u64,
    /// Of those lanes, the fraction that took it (its condition was true).
    pub taken_fraction: f64,
    /// Mean active lanes per path run after the branch (a divergent execution runs two).
    pub occupancy: f64,
    /// Fraction of executions whose active lanes disagreed.
    pub divergent_fraction: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SlotTotals {
    pub slots: u64,
    pub active: u64,
    pub idle_extrinsic: u64,
    pub idle_intrinsic: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct SlotFractions {
    pub active: f64,
    pub extrinsic: f64,
    pub intrinsic: f64,
    /// Idle for no tagged reason (exited lanes outside any tagged branch, untagged branches).
    pub untagged: f64,
}

impl SlotTotals {
    pub fn fractions(&self) -> Option<SlotFractions> {
        if self.slots == 0 {
            return None;
        }
        let of = |x: u64| x as f64 / self.slots as f64;
        let tagged = self.active + self.idle_extrinsic + self.idle_intrinsic;
        Some(SlotFractions {
            active: of(self.active),
            extrinsic: of(self.idle_extrinsic),
            intrinsic: of(self.idle_intrinsic),
            untagged: of(self.slots.saturating_sub(tagged)),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Counted {
    pub branches: Vec<BranchRow>,
    pub totals: SlotTotals,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CounterError {
    #[error("{0} counters, not {COUNTERS}")]
    Length(usize),
    #[error("branch {0} has kind code {1}, not 1 (extrinsic) or 2 (intrinsic)")]
    Kind(usize, u64),
    #[error("slot totals do not add up: {0:?}")]
    Totals(SlotTotals),
    #[error("branch {0}: {1} lanes taken of {2} instances")]
    Taken(usize, u64, u64),
}

/// Reads the counter buffer of one workload; branches never executed are left out, as in the
/// paper's branch target buffer.
pub fn read_counters(counters: &[u64]) -> Result<Counted, CounterError> {
    if counters.len() != COUNTERS {
        return Err(CounterError::Length(counters.len()));
    }
    let mut branches = Vec::new();
    for id in 0..MAX_BRANCHES {
        let f = &counters[id * BRANCH_FIELDS..(id + 1) * BRANCH_FIELDS];
        let (dynamic, instances, taken, paths, kind, divergent) =
            (f[0], f[1], f[2], f[3], f[4], f[5]);
        if dynamic == 0 {
            continue;
        }
        let kind = match kind {
            1 => Kind::Extrinsic,
            2 => Kind::Intrinsic,
            other => return Err(CounterError::Kind(id, other)),
        };
        if taken > instances {
            return Err(CounterError::Taken(id, taken, instances));
        }
        branches.push(BranchRow {
            id,
            kind,
            dynamic_count: dynamic,
            instances,
            taken_fraction: taken as f64 / instances.max(1) as f64,
            occupancy: instances as f64 / paths.max(1) as f64,
            divergent_fraction: divergent as f64 / dynamic as f64,
        });
    }
    let t = &counters[TOTALS..];
    let totals = SlotTotals {
        slots: t[0],
        active: t[1],
        idle_extrinsic: t[2],
        idle_intrinsic: t[3],
    };
    if totals.active + totals.idle_extrinsic + totals.idle_intrinsic > totals.slots {
        return Err(CounterError::Totals(totals));
    }
    Ok(Counted { branches, totals })
}

/// Static (tagged sites executed) and dynamic (warp executions) branch counts of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct KindCounts {
    pub static_extrinsic: usize,
    pub static_intrinsic: usize,
    pub dynamic_extrinsic: u64,
    pub dynamic_intrinsic: u64,
}

pub fn kind_counts(branches: &[BranchRow]) -> KindCounts {
    let of = |kind: Kind| branches.iter().filter(move |b| b.kind == kind);
    KindCounts {
        static_extrinsic: of(Kind::Extrinsic).count(),
        static_intrinsic: of(Kind::Intrinsic).count(),
        dynamic_extrinsic: of(Kind::Extrinsic).map(|b| b.dynamic_count).sum(),
        dynamic_intrinsic: of(Kind::Intrinsic).map(|b| b.dynamic_count).sum(),
    }
}

/// A basic block of a control-flow graph for [`StatusStack`]: `length` slots per lane, then
/// its terminator.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub length: u64,
    pub end: End,
}

#[derive(Debug, Clone, PartialEq)]
pub enum End {
    Jump(usize),
    /// Lanes in `taking` (a lane mask) go to `taken`, the others to `not_taken`; both paths
    /// meet again at `reconverge` (the immediate post-dominator).
    Branch {
        kind: Kind,
        taking: u32,
        taken: usize,
        not_taken: usize,
        reconverge: usize,
    },
    Exit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Active,
    Idle(Kind),
}

struct Entry {
    pc: usize,
    reconverge: Option<usize>,
    status: Vec<Status>,
}

/// The paper's thread-status tables (Tables II–III): a reconvergence stack whose entries carry
/// each lane's status; a divergent branch turns the lanes that go the other way idle with the
/// branch's kind for the path's duration.
pub struct StatusStack;

impl StatusStack {
    /// Runs `blocks` from block 0 with `lanes` active lanes; returns the slot totals.
    pub fn run(blocks: &[Block], lanes: usize) -> SlotTotals {
        let mut totals = SlotTotals {
            slots: 0,
            active: 0,
            idle_extrinsic: 0,
            idle_intrinsic: 0,
        };
        let mut stack = vec![Entry {
            pc: 0,
            reconverge: None,
            status: vec![Status::Active; lanes],
        }];
        let mut steps = 0;
        while let Some(top) = stack.last_mut() {
            steps += 1;
            assert!(steps < 100_000, "the control-flow graph does not terminate");
            if Some(top.pc) == top.reconverge {
                stack.pop();
                continue;
            }
            let block = &blocks[top.pc];
            totals.slots += block.length * lanes as u64;
            for status in &top.status {
                match status {
                    Status::Active => totals.active += block.length,
                    Status::Idle(Kind::Extrinsic) => totals.idle_extrinsic += block.length,
                    Status::Idle(Kind::Intrinsic) => totals.idle_intrinsic += block.length,
                }
            }
            match &block.end {
                End::Exit => {
                    stack.pop();
                }
                End::Jump(next) => top.pc = *next,
                End::Branch {
                    kind,
                    taking,
                    taken,
                    not_taken,
                    reconverge,
                } => {
                    let active: Vec<usize> = (0..lanes)
                        .filter(|&l| top.status[l] == Status::Active)
                        .collect();
                    let takes = |l: usize| taking & (1 << l) != 0;
                    let all = active.iter().all(|&l| takes(l));
                    let none = active.iter().all(|&l| !takes(l));
                    if all || none {
                        top.pc = if all { *taken } else { *not_taken };
                        continue;
                    }
                    let side = |goes: bool| -> Vec<Status> {
                        top.status
                            .iter()
                            .enumerate()
                            .map(|(l, &s)| match s {
                                Status::Active if takes(l) != goes => Status::Idle(*kind),
                                other => other,
                            })
                            .collect()
                    };
                    let (taken_status, other_status) = (side(true), side(false));
                    top.pc = *reconverge;
                    stack.push(Entry {
                        pc: *not_taken,
                        reconverge: Some(*reconverge),
                        status: other_status,
                    });
                    stack.push(Entry {
                        pc: *taken,
                        reconverge: Some(*reconverge),
                        status: taken_status,
                    });
                }
            }
        }
        totals
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The paper's Fig. 3: A branches (extrinsic) lane 1 to B, lanes 2–4 to C; C branches
    /// (intrinsic) lanes 2–3 to D, lane 4 to E; D and E meet at F; B and F at G.
    fn figure_3() -> Vec<Block> {
        let (a, b, c, d, e, f, g) = (0, 1, 2, 3, 4, 5, 6);
        let block = |end| Block { length: 1, end };
        let mut blocks = vec![block(End::Exit); 7];
        blocks[a].end = End::Branch {
            kind: Kind::Extrinsic,
            taking: 0b0001,
            taken: b,
            not_taken: c,
            reconverge: g,
        };
        blocks[b].end = End::Jump(g);
        blocks[c].end = End::Branch {
            kind: Kind::Intrinsic,
            taking: 0b0110,
            taken: d,
            not_taken: e,
            reconverge: f,
        };
        blocks[d].end = End::Jump(f);
        blocks[e].end = End::Jump(f);
        blocks[f].end = End::Jump(g);
        blocks
    }

    #[test]
    fn the_papers_example_wastes_seven_slots_extrinsically_and_three_intrinsically() {
        let totals = StatusStack::run(&figure_3(), 4);
        assert_eq!(
            totals,
            SlotTotals {
                slots: 28,
                active: 18,
                idle_extrinsic: 7,
                idle_intrinsic: 3
            }
        );
        let f = totals.fractions().unwrap();
        assert!((f.active - 18.0 / 28.0).abs() < 1e-12);
        assert!((f.extrinsic - 7.0 / 28.0).abs() < 1e-12);
        assert!((f.intrinsic - 3.0 / 28.0).abs() < 1e-12);
        assert_eq!(f.untagged, 0.0);
    }

    fn counters_with(branches: &[(usize, [u64; 6])], totals: [u64; 4]) -> Vec<u64> {
        let mut c = vec![0; COUNTERS];
        for (id, fields) in branches {
            c[id * BRANCH_FIELDS..(id + 1) * BRANCH_FIELDS].copy_from_slice(fields);
        }
        c[TOTALS..].copy_from_slice(&totals);
        c
    }

    #[test]
    fn counters_become_the_branch_table() {
        // Branch 1 (extrinsic, the tid == 0 of a dot product): 8 warps of 32, one lane taken
        // in one warp (divergent, two paths), none in the seven others.
        // Branch 2 (intrinsic): 257 uniform executions by one lane.
        let c = counters_with(
            &[(1, [8, 256, 1, 9, 1, 1]), (2, [257, 257, 256, 257, 2, 0])],
            [8192, 256, 7936, 0],
        );
        let counted = read_counters(&c).unwrap();
        assert_eq!(counted.branches.len(), 2);
        let ext = &counted.branches[0];
        assert_eq!(
            (ext.id, ext.kind, ext.dynamic_count),
            (1, Kind::Extrinsic, 8)
        );
        assert_eq!(ext.taken_fraction, 1.0 / 256.0);
        assert_eq!(ext.occupancy, 256.0 / 9.0);
        assert_eq!(ext.divergent_fraction, 1.0 / 8.0);
        let counts = kind_counts(&counted.branches);
        assert_eq!(
            counts,
            KindCounts {
                static_extrinsic: 1,
                static_intrinsic: 1,
                dynamic_extrinsic: 8,
                dynamic_intrinsic: 257
            }
        );
        let f = counted.totals.fractions().unwrap();
        assert!((f.extrinsic - 7936.0 / 8192.0).abs() < 1e-12);
    }

    #[test]
    fn inconsistent_counters_are_refused() {
        assert_eq!(read_counters(&[0; 3]), Err(CounterError::Length(3)));
        let bad_kind = counters_with(&[(0, [1, 32, 0, 1, 7, 0])], [0; 4]);
        assert_eq!(read_counters(&bad_kind), Err(CounterError::Kind(0, 7)));
        let bad_totals = counters_with(&[], [32, 30, 3, 0]);
        assert!(matches!(
            read_counters(&bad_totals),
            Err(CounterError::Totals(_))
        ));
        let bad_taken = counters_with(&[(0, [1, 4, 5, 1, 1, 0])], [0; 4]);
        assert_eq!(read_counters(&bad_taken), Err(CounterError::Taken(0, 5, 4)));
    }

    /// A random if/else diamond chain: block 0 branches, both sides meet at the join, then the
    /// next diamond; `diamonds` of them, kinds and lane choices from the strategy.
    fn diamonds(choices: &[(bool, u32, u64, u64)]) -> Vec<Block> {
        let mut blocks = Vec::new();
        for (i, &(extrinsic, taking, left, right)) in choices.iter().enumerate() {
            let base = 4 * i;
            let kind = if extrinsic {
                Kind::Extrinsic
            } else {
                Kind::Intrinsic
            };
            blocks.push(Block {
                length: 1,
                end: End::Branch {
                    kind,
                    taking,
                    taken: base + 1,
                    not_taken: base + 2,
                    reconverge: base + 3,
                },
            });
            blocks.push(Block {
                length: left,
                end: End::Jump(base + 3),
            });
            blocks.push(Block {
                length: right,
                end: End::Jump(base + 3),
            });
            blocks.push(Block {
                length: 1,
                end: End::Jump(base + 4),
            });
        }
        blocks.push(Block {
            length: 1,
            end: End::Exit,
        });
        blocks
    }

    proptest! {
        /// Sequential diamonds: every lane is active in exactly one side of each divergent
        /// diamond and idle with its kind in the other, so the totals have a closed form.
        #[test]
        fn diamond_chains_match_the_closed_form(
            choices in proptest::collection::vec((any::<bool>(), any::<u32>(), 1_u64..5, 1_u64..5), 1..6),
        ) {
            let totals = StatusStack::run(&diamonds(&choices), 32);
            // The branch block, the join and the final exit block run with all 32 lanes.
            let mut slots = 32 * (2 * choices.len() as u64 + 1);
            let (mut active, mut ext, mut int) = (slots, 0, 0);
            for &(extrinsic, taking, left, right) in &choices {
                let taken = u64::from(taking.count_ones());
                let (idle, run) = match taken {
                    0 => (0, right),
                    32 => (0, left),
                    _ => ((32 - taken) * left + taken * right, left + right),
                };
                slots += 32 * run;
                active += 32 * run - idle;
                if extrinsic { ext += idle } else { int += idle }
            }
            prop_assert_eq!(totals.active, active);
            prop_assert_eq!(totals.slots, slots);
            prop_assert_eq!(totals.idle_extrinsic, ext);
            prop_assert_eq!(totals.idle_intrinsic, int);
            prop_assert_eq!(totals.active + totals.idle_extrinsic + totals.idle_intrinsic, totals.slots);
        }
    }
}

use super::*;
use crate::analysis::divergence_patterns::Pattern;
use proptest::prelude::*;

fn staircase(m: u32) -> [i32; WARP_LANES] {
    Pattern::Staircase.rows(32, 0)[m as usize].bounds
}

/// Section IV: for the single loop with M divergent lanes, M + 1 pushes and pops and a
/// maximum depth of M + 1; one more executed instruction (the NOP.S) per divergent lane.
#[test]
fn single_loop_matches_the_papers_walk_through() {
    let base = run(&single_loop(), &staircase(0), StackShape::UNBOUNDED, false).unwrap();
    for m in 0..32 {
        let counts = run(&single_loop(), &staircase(m), StackShape::UNBOUNDED, false)
            .unwrap()
            .counts;
        let m = m as usize;
        assert_eq!(counts.pushes(), m + 1, "M={m}");
        assert_eq!(counts.pops, m + 1, "M={m}");
        assert_eq!(counts.max_depth, m + 1, "M={m}");
        assert_eq!(counts.div_pushes, m);
        assert_eq!(counts.instructions, base.counts.instructions + m);
        assert_eq!((counts.spills, counts.refills), (0, 0));
    }
}

/// With the Kepler stack (16 entries, spilled 4 at a time) the first spill comes at
/// M = 16 and one more every four lanes: the jumps of the paper's Fig. 1.
#[test]
fn kepler_stack_spills_every_four_lanes_past_fifteen() {
    let kepler = StackShape {
        depth: Some(16),
        chunk: 4,
    };
    let spills: Vec<usize> = (0..32)
        .map(|m| {
            run(&single_loop(), &staircase(m), kepler, false)
                .unwrap()
                .counts
                .spills
        })
        .collect();
    let expected: Vec<usize> = (0..32_usize)
        .map(|m| (m + 1).saturating_sub(16).div_ceil(4))
        .collect();
    assert_eq!(spills, expected);
    let at_31 = run(&single_loop(), &staircase(31), kepler, false)
        .unwrap()
        .counts;
    assert_eq!(
        at_31.refills, at_31.spills,
        "every spilled chunk comes back"
    );
}

/// Double loop: one divergent exit per shorter bound in the outer loop, and in the inner
/// loop of outer iteration i one per distinct shorter bound still active.
#[test]
fn double_loop_divergence_events() {
    for m in 0..32_usize {
        let counts = run(
            &double_loop(),
            &staircase(m as u32),
            StackShape::UNBOUNDED,
            false,
        )
        .unwrap()
        .counts;
        let inner: usize = (0..32).map(|i: usize| m.min(31 - i)).sum();
        assert_eq!(counts.div_pushes, m + inner, "M={m}");
        assert_eq!(counts.sync_pushes, 1 + 32);
        assert_eq!(counts.pops, counts.pushes());
    }
}

#[test]
fn the_trace_shows_masks_and_depths() {
    let result = run(&single_loop(), &staircase(2), StackShape::UNBOUNDED, true).unwrap();
    let pushes: Vec<&Step> = result
        .steps
        .iter()
        .filter(|s| s.event == "push-div")
        .collect();
    assert_eq!(pushes.len(), 2);
    // The first divergent branch runs on all lanes and leaves lane 31 waiting on the
    // stack; the second runs without lane 31 and leaves lane 30.
    assert_eq!(pushes[0].active_mask, FULL_MASK);
    assert_eq!(pushes[1].active_mask, FULL_MASK >> 1);
    let pops: Vec<&Step> = result.steps.iter().filter(|s| s.event == "pop").collect();
    assert_eq!(
        pops.iter().map(|s| s.active_mask).collect::<Vec<_>>(),
        [1 << 30, 1 << 31, FULL_MASK]
    );
    assert_eq!(result.steps.last().unwrap().active_mask, FULL_MASK);
    assert_eq!(result.steps.iter().map(|s| s.depth).max(), Some(3));
}

#[test]
fn lanes_with_nothing_to_do_diverge_at_the_entry() {
    let mut bounds = [4; WARP_LANES];
    bounds[0] = 0;
    let counts = run(&single_loop(), &bounds, StackShape::UNBOUNDED, false)
        .unwrap()
        .counts;
    assert_eq!(counts.div_pushes, 1);
    assert_eq!(counts.pops, 2);
}

#[test]
fn a_zero_depth_stack_is_refused() {
    let shape = StackShape {
        depth: Some(0),
        chunk: 1,
    };
    assert_eq!(
        run(&single_loop(), &staircase(3), shape, false),
        Err(EmulatorError::ZeroDepth)
    );
}

proptest! {
    /// Any bounds, any finite stack: pushes balance pops, refills balance spills, and the
    /// stack's total depth never depends on where entries live.
    #[test]
    fn finite_stacks_only_move_entries(
        bounds in prop::array::uniform32(0i32..12),
        depth in 1usize..10,
        chunk in 1usize..6,
        nested in any::<bool>(),
    ) {
        let program = if nested { double_loop() } else { single_loop() };
        let finite = run(&program, &bounds, StackShape { depth: Some(depth), chunk }, false).unwrap();
        let unbounded = run(&program, &bounds, StackShape::UNBOUNDED, false).unwrap();
        prop_assert_eq!(finite.counts.pushes(), finite.counts.pops);
        prop_assert_eq!(finite.counts.spills >= finite.counts.refills, true);
        prop_assert_eq!(finite.counts.div_pushes, unbounded.counts.div_pushes);
        prop_assert_eq!(finite.counts.instructions, unbounded.counts.instructions);
        prop_assert_eq!(finite.counts.max_depth, unbounded.counts.max_depth);
        if unbounded.counts.max_depth <= depth {
            prop_assert_eq!(finite.counts.spills, 0);
        }
        let shape = StackShape { depth: Some(depth), chunk };
        prop_assert_eq!(
            spills_for(&unbounded.stack_ops, shape),
            (finite.counts.spills, finite.counts.refills)
        );
    }
}

//! Which path of a divergent branch runs first (Wong et al., section IV-C, Listing 3): from
//! every lane's start and end stamps in a 32-way if / else-if chain whose clause k belongs to
//! lane c[k].

use serde::Serialize;

pub const WARP_LANES: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PathInterval {
    pub thread: usize,
    pub warp: usize,
    pub lane: usize,
    /// The clause the lane took (its index in c).
    pub clause: usize,
    pub start_cycles: i64,
    pub end_cycles: i64,
}

pub fn intervals(order: &[i32; WARP_LANES], stamps: &[i64]) -> Vec<PathInterval> {
    stamps
        .chunks(2)
        .enumerate()
        .filter(|(_, pair)| pair[0] >= 0 && pair[1] >= 0)
        .filter_map(|(thread, pair)| {
            let lane = thread % WARP_LANES;
            let clause = order.iter().position(|&c| c as usize == lane)?;
            Some(PathInterval {
                thread,
                warp: thread / WARP_LANES,
                lane,
                clause,
                start_cycles: pair[0],
                end_cycles: pair[1],
            })
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct OrderReport {
    pub first_lane: usize,
    pub first_clause: usize,
    /// Clauses of warp 0 in the order they started.
    pub clause_order: Vec<usize>,
    /// No two paths of one warp ran at the same time.
    pub serialized: bool,
    pub verdict: String,
}

pub fn order_report(paths: &[PathInterval]) -> Option<OrderReport> {
    let mut warp0: Vec<&PathInterval> = paths.iter().filter(|p| p.warp == 0).collect();
    warp0.sort_by_key(|p| (p.start_cycles, p.clause));
    let first = warp0.first()?;
    let clause_order: Vec<usize> = warp0.iter().map(|p| p.clause).collect();
    let serialized = warp0
        .windows(2)
        .all(|w| w[1].start_cycles >= w[0].end_cycles);
    let n = clause_order.len();
    let descending = clause_order
        .iter()
        .enumerate()
        .all(|(i, &c)| c == n - 1 - i);
    let ascending = clause_order.iter().enumerate().all(|(i, &c)| c == i);
    let exact = if descending || ascending {
        String::new()
    } else {
        format!(" (clause order {clause_order:?})")
    };
    let verdict = if first.clause == n - 1 {
        format!(
            "the last else-if clause ran first: the taken (else) path runs first and the fall-through waits, as on GT200{exact}"
        )
    } else if first.clause == 0 {
        format!(
            "the first clause ran first: the then path runs before the else chain, unlike GT200{exact}"
        )
    } else {
        format!("clause {} ran first{exact}", first.clause)
    };
    Some(OrderReport {
        first_lane: first.lane,
        first_clause: first.clause,
        clause_order,
        serialized,
        verdict,
    })
}

/// How much of the shorter of two warps' busy spans overlaps the other's (0 = one after the
/// other, 1 = fully concurrent); `None` without two warps.
pub fn warp_overlap(paths: &[PathInterval]) -> Option<f64> {
    let span = |warp: usize| {
        let mine: Vec<&PathInterval> = paths.iter().filter(|p| p.warp == warp).collect();
        let start = mine.iter().map(|p| p.start_cycles).min()?;
        let end = mine.iter().map(|p| p.end_cycles).max()?;
        Some((start, end))
    };
    let (a, b) = (span(0)?, span(1)?);
    let overlap = (a.1.min(b.1) - a.0.max(b.0)).max(0) as f64;
    let shorter = (a.1 - a.0).min(b.1 - b.0).max(1) as f64;
    Some(overlap / shorter)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Paths of one warp run back to back in `run_order` (clause indices), 100 cycles each.
    fn stamps(
        order: &[i32; WARP_LANES],
        run_order: &[usize],
        warps: usize,
        offset: i64,
    ) -> Vec<i64> {
        let mut out = vec![-1_i64; warps * WARP_LANES * 2];
        for warp in 0..warps {
            for (slot, &clause) in run_order.iter().enumerate() {
                let thread = warp * WARP_LANES + order[clause] as usize;
                let start = warp as i64 * offset + slot as i64 * 110;
                out[thread * 2] = start;
                out[thread * 2 + 1] = start + 100;
            }
        }
        out
    }

    #[test]
    fn the_last_clause_first_is_the_gt200_order() {
        let ascending: [i32; WARP_LANES] = std::array::from_fn(|i| i as i32);
        let last_first: Vec<usize> = (0..32).rev().collect();
        let report = order_report(&intervals(
            &ascending,
            &stamps(&ascending, &last_first, 1, 0),
        ))
        .unwrap();
        assert_eq!((report.first_lane, report.first_clause), (31, 31));
        assert!(report.serialized);
        assert!(report.verdict.contains("as on GT200"));
        // The lane ids do not matter, only the clause positions.
        let descending: [i32; WARP_LANES] = std::array::from_fn(|i| 31 - i as i32);
        let report = order_report(&intervals(
            &descending,
            &stamps(&descending, &last_first, 1, 0),
        ))
        .unwrap();
        assert_eq!((report.first_lane, report.first_clause), (0, 31));
        let in_order: Vec<usize> = (0..32).collect();
        let report =
            order_report(&intervals(&ascending, &stamps(&ascending, &in_order, 1, 0))).unwrap();
        assert!(report.verdict.contains("unlike GT200"));
    }

    #[test]
    fn overlapping_and_sequential_warps() {
        let order: [i32; WARP_LANES] = std::array::from_fn(|i| i as i32);
        let run: Vec<usize> = (0..32).collect();
        let together = intervals(&order, &stamps(&order, &run, 2, 50));
        assert!(warp_overlap(&together).unwrap() > 0.9);
        let apart = intervals(&order, &stamps(&order, &run, 2, 10_000));
        assert_eq!(warp_overlap(&apart), Some(0.0));
        assert_eq!(
            warp_overlap(&intervals(&order, &stamps(&order, &run, 1, 0))),
            None
        );
    }
}

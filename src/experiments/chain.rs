//! The chains a pointer chase follows (Wong et al., Listings 1–2): one element every stride,
//! each holding the next one's word index, visited in address order, at random, or backwards.
//! The cache suite chases them; the atomics and TMA suites build their L2-resident chains with
//! them too.

/// The order a chain visits its elements in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Address order, one element per stride (Wong et al.).
    Stride,
    /// A seeded random order of the same elements, starting at element 0.
    Random(u64),
    /// Address order backwards, from element 0 to the last and down: the line after each
    /// miss is the one just loaded, so a next-line prefetcher brings in nothing the walk
    /// needs (`analysis::cache_inference::infer_paired`).
    Descending,
}

/// A chain over `footprint_bytes` with one element every `stride_bytes` (both multiples of
/// 4), visited in `order`; k = stride / 4 words, n = footprint / stride elements; words between
/// elements are 0. Returns the words and the visiting order (element numbers, starting at 0).
pub fn chain(footprint_bytes: u64, stride_bytes: u64, order: Order) -> (Vec<u32>, Vec<usize>) {
    let words = (footprint_bytes / 4) as usize;
    let k = (stride_bytes / 4).max(1) as usize;
    let (next, visit) = successors((words / k).max(1), order);
    let mut chain = vec![0_u32; words.max(1)];
    for (element, &after) in next.iter().enumerate() {
        chain[element * k] = (after as usize * k) as u32;
    }
    (chain, visit)
}

/// The chain of [`chain`] in compact form, for a device to expand: element e's successor is
/// `next[e]` (an element number; [`chain`] puts `next[e] * k` in word `e * k`). Returns it and
/// the visiting order, both of `elements` entries.
pub fn successors(elements: usize, order: Order) -> (Vec<u32>, Vec<usize>) {
    use rand::seq::SliceRandom;
    use rand::{SeedableRng, rngs::StdRng};
    let n = elements.max(1);
    let mut visit: Vec<usize> = (0..n).collect();
    match order {
        Order::Random(seed) => visit[1..].shuffle(&mut StdRng::seed_from_u64(seed)),
        Order::Descending => visit[1..].reverse(),
        Order::Stride => {}
    }
    let mut next = vec![0_u32; n];
    for i in 0..n {
        next[visit[i]] = visit[(i + 1) % n] as u32;
    }
    (next, visit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compact_chain_expands_to_the_words_and_is_one_cycle() {
        let (words, visit) = chain(4096, 128, Order::Random(0x7a11));
        let (next, same_visit) = successors(4096 / 128, Order::Random(0x7a11));
        assert_eq!(visit, same_visit);
        for (element, &after) in next.iter().enumerate() {
            assert_eq!(words[element * 32], after * 32);
            assert!(
                words[element * 32 + 1..(element + 1) * 32]
                    .iter()
                    .all(|&w| w == 0)
            );
        }
        // Following the successors from element 0 visits every element once, in `visit`'s order.
        let mut at = 0_usize;
        for &expected in &visit {
            assert_eq!(at, expected);
            at = next[at] as usize;
        }
        assert_eq!(at, 0);
    }
}

//! Sets under the replacement policies that keep bits instead of an order: tree pseudo-LRU
//! ([`PlruSet`]), and those with a few bits per way ([`BitsSet`]): the bit pseudo-LRU (one "recently used" bit a way, also called MRU-bit or NRU) and static
//! re-reference interval prediction (SRRIP, two bits a way, Jaleel et al., ISCA 2010). Both are
//! reported for real caches where LRU order is too dear to keep; neither is in the fitted
//! families (`analysis::miss_fraction`), so the calibration study uses them to ask whether a
//! confidence holds on a policy it was not made from.

/// One set under tree pseudo-LRU: `ways` slots and `ways − 1` tree bits (heap order; a bit
/// false sends the victim search left).
#[derive(Debug, Clone)]
pub struct PlruSet {
    slots: Vec<Option<u64>>,
    bits: Vec<bool>,
}

impl PlruSet {
    pub fn new(ways: usize) -> PlruSet {
        PlruSet {
            slots: vec![None; ways],
            bits: vec![false; ways.saturating_sub(1)],
        }
    }

    /// Points every bit on the path to `slot` away from it.
    fn touch(&mut self, slot: usize) {
        let ways = self.slots.len();
        let (mut node, mut low, mut high) = (0, 0, ways);
        while high - low > 1 {
            let middle = (low + high) / 2;
            let right = slot >= middle;
            self.bits[node] = !right;
            node = 2 * node + 1 + usize::from(right);
            (low, high) = if right { (middle, high) } else { (low, middle) };
        }
    }

    /// Looks `line` up; on a miss fills it into an empty slot or the slot the bits lead to,
    /// returning the line it evicted.
    pub fn access(&mut self, line: u64) -> (bool, Option<u64>) {
        if let Some(slot) = self.slots.iter().position(|&l| l == Some(line)) {
            self.touch(slot);
            return (true, None);
        }
        let slot = match self.slots.iter().position(Option::is_none) {
            Some(empty) => empty,
            None => {
                let (mut node, mut low, mut high) = (0, 0, self.slots.len());
                while high - low > 1 {
                    let middle = (low + high) / 2;
                    let right = self.bits[node];
                    node = 2 * node + 1 + usize::from(right);
                    (low, high) = if right { (middle, high) } else { (low, middle) };
                }
                low
            }
        };
        let evicted = self.slots[slot].replace(line);
        self.touch(slot);
        (false, evicted)
    }
}

/// Which of the bit-keeping policies a [`BitsSet`] follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitsPolicy {
    /// A bit a way set on use; when the last clear bit would be set, every other is cleared.
    /// The victim is the first way whose bit is clear.
    BitPlru,
    /// A 2-bit re-reference prediction a way: a fill predicts "long" (2), a hit "near" (0).
    /// The victim is the first way predicted "distant" (3); while none is, all age by one.
    Srrip,
}

/// One set: `ways` slots and a small counter per slot.
#[derive(Debug, Clone)]
pub struct BitsSet {
    policy: BitsPolicy,
    slots: Vec<Option<u64>>,
    bits: Vec<u8>,
}

const DISTANT: u8 = 3;
const LONG: u8 = 2;

impl BitsSet {
    pub fn new(policy: BitsPolicy, ways: usize) -> BitsSet {
        let fill = match policy {
            BitsPolicy::BitPlru => 0,
            BitsPolicy::Srrip => DISTANT,
        };
        BitsSet {
            policy,
            slots: vec![None; ways],
            bits: vec![fill; ways],
        }
    }

    fn used(&mut self, slot: usize, hit: bool) {
        match self.policy {
            BitsPolicy::BitPlru => {
                self.bits[slot] = 1;
                if self.bits.iter().all(|&b| b == 1) {
                    self.bits.iter_mut().for_each(|b| *b = 0);
                    self.bits[slot] = 1;
                }
            }
            BitsPolicy::Srrip => self.bits[slot] = if hit { 0 } else { LONG },
        }
    }

    fn victim(&mut self) -> usize {
        if let Some(empty) = self.slots.iter().position(Option::is_none) {
            return empty;
        }
        match self.policy {
            BitsPolicy::BitPlru => self.bits.iter().position(|&b| b == 0).unwrap_or(0),
            BitsPolicy::Srrip => loop {
                if let Some(slot) = self.bits.iter().position(|&b| b >= DISTANT) {
                    break slot;
                }
                self.bits.iter_mut().for_each(|b| *b += 1);
            },
        }
    }

    /// Looks `line` up; on a miss fills it, returning the line it evicted.
    pub fn access(&mut self, line: u64) -> (bool, Option<u64>) {
        if let Some(slot) = self.slots.iter().position(|&l| l == Some(line)) {
            self.used(slot, true);
            return (true, None);
        }
        let slot = self.victim();
        let evicted = self.slots[slot].replace(line);
        self.used(slot, false);
        (false, evicted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Filling A B C D into four ways leaves the root pointing left (D, in the right half, was
    /// touched last) and the left node pointing at A (B was touched after it): A goes first,
    /// as under LRU. The fill of its replacement points the root right, where the right node
    /// points away from D: C goes next, where LRU would evict B.
    #[test]
    fn tree_plru_evicts_by_its_bits() {
        let mut set = PlruSet::new(4);
        for line in [10, 11, 12, 13] {
            assert_eq!(set.access(line), (false, None));
        }
        assert_eq!(set.access(14), (false, Some(10)));
        assert_eq!(set.slots, vec![Some(14), Some(11), Some(12), Some(13)]);
        assert_eq!(set.access(15), (false, Some(12)));
        assert_eq!(set.slots, vec![Some(14), Some(11), Some(15), Some(13)]);
        assert!(set.access(11).0 && set.access(13).0);
    }

    /// A B C D fill four ways; the fourth use sets the last clear bit, so the others clear and
    /// only D's stays: A (the first clear) goes first, then B, as LRU would; a hit on C before
    /// the next fill makes B's eviction follow the bits, not the order.
    #[test]
    fn bit_plru_evicts_the_first_way_not_recently_used() {
        let mut set = BitsSet::new(BitsPolicy::BitPlru, 4);
        for line in 10..14 {
            assert_eq!(set.access(line), (false, None));
        }
        assert_eq!(set.bits, vec![0, 0, 0, 1]);
        assert_eq!(set.access(14), (false, Some(10)));
        assert!(set.access(12).0);
        assert_eq!(set.access(15), (false, Some(11)));
        // The use of 15 set the last clear bit, so every other cleared.
        assert_eq!(set.bits, vec![0, 1, 0, 0]);
        assert_eq!(set.access(16), (false, Some(14)));
    }

    /// SRRIP keeps a line that was hit again over one filled after it: the filled line is
    /// predicted "long", the hit one "near", and ageing reaches "distant" on the filled first.
    #[test]
    fn srrip_evicts_what_it_predicts_is_reused_last() {
        let mut set = BitsSet::new(BitsPolicy::Srrip, 2);
        assert_eq!(set.access(1), (false, None));
        assert_eq!(set.access(2), (false, None));
        assert!(set.access(1).0);
        assert_eq!(set.access(3), (false, Some(2)));
        assert_eq!(set.bits, vec![1, LONG]);
        // 1 sits at 1 and 3 at long: ageing brings 3 to distant first, and 1 outlives it again.
        assert_eq!(set.access(4), (false, Some(3)));
    }
}

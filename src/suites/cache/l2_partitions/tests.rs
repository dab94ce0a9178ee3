use super::*;

/// A simulated two-partition L2: SM `s` sits on side `side(s)`; line `j` of region `k` is
/// homed on side `home(k, j)`. After the warming SM's read, a line is on its home side and the
/// warming SM's; a first touch from a side that holds it is fast, else slow; the first touch
/// leaves a copy (`copies`), so the re-read is fast, or not.
struct Model {
    sms: u32,
    lines: usize,
    side: fn(u32) -> bool,
    home: fn(usize, usize) -> bool,
    copies: bool,
    fast: f64,
    slow: f64,
}

/// Deterministic noise in [-1, 1).
fn noise(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

impl Model {
    fn sweep(&self, index: usize, warm: u32, seed: &mut u64) -> Sweep {
        let probes = (0..self.sms)
            .map(|sm| {
                let region = index * self.sms as usize + sm as usize;
                let mut first = Vec::new();
                let mut again = Vec::new();
                for j in 0..self.lines {
                    let home = (self.home)(region, j);
                    let near = home == (self.side)(sm) || (self.side)(warm) == (self.side)(sm);
                    let offset = f64::from(sm % 7) * 4.0;
                    let base = if near { self.fast } else { self.slow };
                    // The region's first line also misses the TLB.
                    let tlb = if j == 0 { 250.0 } else { 0.0 };
                    first.push(base + offset + tlb + 15.0 * noise(seed));
                    let again_base = if near || self.copies {
                        self.fast
                    } else {
                        self.slow
                    };
                    again.push(again_base + offset + 15.0 * noise(seed));
                }
                Probe { sm, first, again }
            })
            .collect();
        Sweep {
            warm_sm: warm,
            probes,
        }
    }

    /// The two sweeps as the experiment runs them: from SM 0, then from the first SM the
    /// first sweep put across.
    fn run(&self) -> (Vec<Sweep>, Option<Partitions>) {
        let mut seed = 7;
        let first = self.sweep(0, 0, &mut seed);
        let across = analyse(std::slice::from_ref(&first))
            .and_then(|p| p.per_sm.iter().find(|r| r.side == Side::Across).map(|r| r.sm))
            .unwrap_or(1);
        let sweeps = vec![first, self.sweep(1, across, &mut seed)];
        let read = analyse(&sweeps);
        (sweeps, read)
    }
}

/// Homes alternate over 4 KiB (32 lines of 128 B) by two address bits XORed, as the H100's do
/// in the probe's regions.
fn xor_home(region: usize, line: usize) -> bool {
    let address = region * 2048 + line;
    ((address >> 5) ^ (address >> 6)) & 1 == 1
}

/// SMs in pairs (a TPC), pairs alternating unevenly.
fn paired_side(sm: u32) -> bool {
    [0, 1, 1, 0, 1, 1, 0, 0, 1, 0][(sm / 2) as usize % 10] == 1
}

const HOPPER_LIKE: Model = Model {
    sms: 40,
    lines: 2048,
    side: paired_side,
    home: xor_home,
    copies: true,
    fast: 285.0,
    slow: 465.0,
};

#[test]
fn two_partitions_their_sms_and_the_home_granularity_are_read() {
    let (_, read) = HOPPER_LIKE.run();
    let read = read.unwrap();
    assert!(read.separated, "{read:?}");
    let [a, b] = read.groups.clone().unwrap();
    let truth: Vec<u32> = (0..40)
        .filter(|&s| paired_side(s) == paired_side(0))
        .collect();
    assert_eq!(a, truth);
    assert_eq!(a.len() + b.len(), 40);
    assert_eq!(read.home_chunk_bytes, Some(4096), "{read:?}");
    let share = read.home_share.unwrap();
    assert!((share - 0.5).abs() < 0.02, "{share}");
    let slow = read.slow_first_touch.unwrap().median;
    assert!((slow - 477.0).abs() < 15.0, "{slow}");
    assert!(read.reread_slow_share.unwrap() < 0.01);
    assert!(
        read.verdict.starts_with("two L2 partitions") && read.verdict.contains("leaves a copy"),
        "{}",
        read.verdict
    );
}

#[test]
fn one_partition_is_said_in_words() {
    let model = Model {
        slow: 285.0,
        ..HOPPER_LIKE
    };
    let (_, read) = model.run();
    let read = read.unwrap();
    assert!(!read.separated);
    assert_eq!(read.groups, None);
    assert_eq!(read.home_chunk_bytes, None);
    assert!(
        read.verdict.starts_with("one L2 latency"),
        "{}",
        read.verdict
    );
}

#[test]
fn without_a_copy_the_re_read_stays_slow_and_no_copy_is_claimed() {
    let model = Model {
        copies: false,
        ..HOPPER_LIKE
    };
    let (_, read) = model.run();
    let read = read.unwrap();
    assert!(read.groups.is_some());
    assert!(read.reread_slow_share.unwrap() > 0.1);
    assert!(!read.verdict.contains("copy"), "{}", read.verdict);
}

#[test]
fn an_sm_the_sweeps_place_on_different_sides_leaves_the_groups_unstated() {
    let (mut sweeps, _) = HOPPER_LIKE.run();
    // SM 5 reads every line fast in the second sweep as well as the first: it cannot sit
    // with both warming SMs, which are on different sides.
    let fast = HOPPER_LIKE.fast;
    for probe in sweeps.iter_mut().flat_map(|s| s.probes.iter_mut()) {
        if probe.sm == 5 {
            probe.first.iter_mut().for_each(|v| *v = fast);
        }
    }
    let read = analyse(&sweeps).unwrap();
    assert_eq!(read.groups, None, "{:?}", read.groups);
    assert!(
        read.verdict.contains("no grouping stated"),
        "{}",
        read.verdict
    );
}

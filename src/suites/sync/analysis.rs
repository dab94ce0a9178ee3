//! Verdicts of the barrier and SIMT-deadlock probes (Wong et al., section IV-D), from the raw
//! values each probe kernel writes (see cuda/sync.cu for the layouts). Pure: the host-side
//! timeout that turns a hang into a verdict lives in the app.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Completed,
    /// A spinning loop's in-kernel watchdog fired.
    DeadlockedWatchdog,
    /// The host killed the probe's process at its deadline.
    Hung,
    CompletedUnexpected,
    Failed,
}

impl Outcome {
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::DeadlockedWatchdog => "deadlocked (caught by the watchdog)",
            Outcome::Hung => "hung (killed by the host)",
            Outcome::CompletedUnexpected => "completed with an unexpected result",
            Outcome::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    pub probe: &'static str,
    pub outcome: Outcome,
    pub observed: String,
    /// What the paper saw on GT200 (pre-Volta SIMT).
    pub pre_volta: &'static str,
    /// Whether this GPU behaved as GT200 did; `None` where the paper has no such probe.
    pub matches_pre_volta: Option<bool>,
}

/// One probe's identity and what the paper reported for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeInfo {
    pub name: &'static str,
    pub pre_volta: &'static str,
    /// The outcome that would match the paper; `None` where the paper has no such probe.
    pub pre_volta_outcome: Option<Outcome>,
}

fn verdict(info: &ProbeInfo, outcome: Outcome, observed: String, matches: Option<bool>) -> Verdict {
    Verdict {
        probe: info.name,
        outcome,
        observed,
        pre_volta: info.pre_volta,
        matches_pre_volta: info
            .pre_volta_outcome
            .map(|expected| matches.unwrap_or(outcome == expected)),
    }
}

pub fn hung(info: &ProbeInfo, seconds: f64) -> Verdict {
    verdict(
        info,
        Outcome::Hung,
        format!("no result within {seconds:.1} s; the host killed the probe's process"),
        None,
    )
}

pub fn failed(info: &ProbeInfo, error: &str) -> Verdict {
    verdict(info, Outcome::Failed, error.to_string(), Some(false))
}

/// Listing 4: out[lane] watchdog flags, out[32 + lane] turns seen, out[64] final turn.
pub fn simt_spin(info: &ProbeInfo, out: &[i64]) -> Verdict {
    let fired = out[..32].iter().filter(|&&f| f == 1).count();
    let counter_at_end = out[64];
    if fired > 0 {
        return verdict(
            info,
            Outcome::DeadlockedWatchdog,
            format!(
                "{fired} of 32 lanes gave up waiting for their turn; the turn reached {counter_at_end}"
            ),
            None,
        );
    }
    let in_order = (0..32).all(|lane| out[32 + lane] == lane as i64);
    if counter_at_end == 32 && in_order {
        verdict(
            info,
            Outcome::Completed,
            "every lane got its turn in lane order and the turn reached 32: divergent lanes made independent progress".into(),
            None,
        )
    } else {
        verdict(
            info,
            Outcome::CompletedUnexpected,
            format!(
                "no watchdog fired, yet the final turn is {counter_at_end} and the turns seen are {:?}",
                &out[32..64]
            ),
            None,
        )
    }
}

/// Listing 5 and its __syncwarp variant: out[16..32] = values the consumers read (100 + i
/// new, -7 old, -1 never stored).
pub fn divergent_barrier(info: &ProbeInfo, out: &[i64]) -> Verdict {
    let read = &out[16..32];
    let fresh = (0..16).filter(|&i| read[i] == 100 + i as i64).count();
    let stale = read.iter().filter(|&&v| v == -7).count();
    let (outcome, observed, matches) = if fresh == 16 {
        (
            Outcome::Completed,
            "all 16 consumers read the producers' values: the barrier held the two divergent halves of the warp together".to_string(),
            Some(false),
        )
    } else if stale == 16 {
        (
            Outcome::Completed,
            "all 16 consumers read the old values: the barrier did not wait for the other half of the warp".to_string(),
            Some(true),
        )
    } else {
        (
            Outcome::CompletedUnexpected,
            format!(
                "{fresh} consumers read new values, {stale} old ones, the rest other values: {read:?}"
            ),
            Some(false),
        )
    };
    verdict(info, outcome, observed, matches)
}

/// __syncwarp() naming exited lanes: out[lane] = 1 for every lane 0-15 that got past it.
pub fn syncwarp_exited(info: &ProbeInfo, out: &[i64]) -> Verdict {
    let passed = out[..16].iter().filter(|&&v| v == 1).count();
    if passed == 16 {
        verdict(
            info,
            Outcome::Completed,
            "all 16 waiting lanes got past __syncwarp(0xffffffff) although lanes 16-31 had exited: exited lanes count as arrived".into(),
            None,
        )
    } else {
        verdict(
            info,
            Outcome::CompletedUnexpected,
            format!("only {passed} of the 16 waiting lanes recorded getting past __syncwarp()"),
            None,
        )
    }
}

/// Listing 6: out[0] warp 0 passed its barrier, out[1] warp 1's watchdog fired, out[2] spin.
pub fn two_warp_spin(info: &ProbeInfo, out: &[i64], mhz: f64) -> Verdict {
    let warp0_passed = out[0] == 1;
    let watchdog = out[1] == 1;
    let spun_ms = out[2] as f64 / (mhz * 1000.0);
    match (watchdog, warp0_passed) {
        (true, true) => verdict(
            info,
            Outcome::DeadlockedWatchdog,
            format!(
                "warp 1 spun {spun_ms:.1} ms until its watchdog fired; once it exited, warp 0 left the barrier (an exited warp counts as arrived)"
            ),
            None,
        ),
        (true, false) => verdict(
            info,
            Outcome::DeadlockedWatchdog,
            format!(
                "warp 1 spun {spun_ms:.1} ms until its watchdog fired, and warp 0 never recorded leaving the barrier"
            ),
            None,
        ),
        (false, _) => verdict(
            info,
            Outcome::CompletedUnexpected,
            format!(
                "warp 1 saw the flag after {spun_ms:.3} ms: warp 0 set it without warp 1 reaching the barrier"
            ),
            Some(false),
        ),
    }
}

/// Listing 7: departure stamps: warp 0 lanes 0-15 (block 1) and 16-31 (block 2) in out[0..32],
/// warp 1 after its first barrier out[32..64], after its second out[64..96].
pub fn barrier_pairing(info: &ProbeInfo, out: &[i64]) -> Verdict {
    let median = |values: &[i64]| {
        let values: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        crate::analysis::stats::median(&values).unwrap_or(f64::NAN)
    };
    let (block1, block2) = (median(&out[0..16]), median(&out[16..32]));
    let (third, fourth) = (median(&out[32..64]), median(&out[64..96]));
    if [block1, block2, third, fourth]
        .iter()
        .any(|v| !v.is_finite() || *v < 0.0)
    {
        return verdict(
            info,
            Outcome::CompletedUnexpected,
            format!("some lanes never stamped their departure: {:?}", out),
            Some(false),
        );
    }
    let partner = |t: f64| {
        if (t - third).abs() <= (t - fourth).abs() {
            3
        } else {
            4
        }
    };
    let (p1, p2) = (partner(block1), partner(block2));
    let observed = format!(
        "block 1 (lanes 0-15) left with warp 1's barrier {p1}, block 2 (lanes 16-31) with barrier {p2}; departures relative to barrier 3: block 1 {:+.0}, block 2 {:+.0}, barrier 4 {:+.0} cycles",
        block1 - third,
        block2 - third,
        fourth - third
    );
    // GT200: block 2 (the taken path) ran first and paired with barrier 3, block 1 with 4.
    verdict(info, Outcome::Completed, observed, Some(p2 == 3 && p1 == 4))
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: ProbeInfo = ProbeInfo {
        name: "test",
        pre_volta: "paper",
        pre_volta_outcome: Some(Outcome::DeadlockedWatchdog),
    };

    #[test]
    fn simt_spin_verdicts() {
        let mut out = vec![0_i64; 65];
        for lane in 0..32 {
            out[32 + lane] = lane as i64;
        }
        out[64] = 32;
        let done = simt_spin(&INFO, &out);
        assert_eq!(done.outcome, Outcome::Completed);
        assert_eq!(done.matches_pre_volta, Some(false));
        out[5] = 1;
        out[64] = 1;
        assert_eq!(simt_spin(&INFO, &out).outcome, Outcome::DeadlockedWatchdog);
        out[5] = 0;
        out[64] = 7;
        assert_eq!(simt_spin(&INFO, &out).outcome, Outcome::CompletedUnexpected);
    }

    #[test]
    fn divergent_barrier_verdicts() {
        let mut out = vec![-7_i64; 32];
        assert_eq!(
            divergent_barrier(&INFO, &out).matches_pre_volta,
            Some(true),
            "stale as on GT200"
        );
        for i in 0..16 {
            out[16 + i] = 100 + i as i64;
        }
        let fresh = divergent_barrier(&INFO, &out);
        assert_eq!(fresh.outcome, Outcome::Completed);
        assert_eq!(fresh.matches_pre_volta, Some(false));
        out[20] = -1;
        assert_eq!(
            divergent_barrier(&INFO, &out).outcome,
            Outcome::CompletedUnexpected
        );
    }

    #[test]
    fn syncwarp_exited_verdicts() {
        let mut out = vec![-1_i64; 32];
        out[..16].fill(1);
        assert_eq!(syncwarp_exited(&INFO, &out).outcome, Outcome::Completed);
        out[3] = -1;
        assert_eq!(
            syncwarp_exited(&INFO, &out).outcome,
            Outcome::CompletedUnexpected
        );
    }

    #[test]
    fn two_warp_spin_verdicts() {
        let caught = two_warp_spin(&INFO, &[1, 1, 200_000_000], 2000.0);
        assert_eq!(caught.outcome, Outcome::DeadlockedWatchdog);
        assert!(caught.observed.contains("100.0 ms"));
        assert_eq!(
            two_warp_spin(&INFO, &[1, 0, 10], 2000.0).outcome,
            Outcome::CompletedUnexpected
        );
    }

    #[test]
    fn barrier_pairing_finds_partners() {
        let mut out = vec![0_i64; 96];
        // GT200-like: block 2 leaves with barrier 3 (t=1000), block 1 with barrier 4 (t=5000).
        out[..16].fill(5_002);
        out[16..32].fill(1_001);
        out[32..64].fill(1_000);
        out[64..96].fill(5_000);
        let gt200 = barrier_pairing(&INFO, &out);
        assert_eq!(gt200.matches_pre_volta, Some(true), "{}", gt200.observed);
        // Thread-counting barrier: both halves leave with barrier 3.
        out[..16].fill(1_003);
        let counting = barrier_pairing(&INFO, &out);
        assert_eq!(counting.matches_pre_volta, Some(false));
        assert!(
            counting
                .observed
                .contains("block 1 (lanes 0-15) left with warp 1's barrier 3")
        );
        out[40] = -1;
        out[41] = -1;
        out[42..64].fill(-1);
        assert_eq!(
            barrier_pairing(&INFO, &out).outcome,
            Outcome::CompletedUnexpected
        );
    }
}

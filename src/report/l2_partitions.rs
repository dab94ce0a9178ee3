//! The summary's rows of the L2 partition experiment (`analysis::l2_partitions`), read from
//! cache.json's `l2_partitions` (runs before it: absent, no rows).

use serde::Deserialize;

use super::figures::Rows;

#[derive(Debug, Deserialize)]
pub struct Spread {
    pub median: f64,
    pub p5: f64,
    pub p95: f64,
}

#[derive(Debug, Deserialize)]
pub struct Partitions {
    pub separated: bool,
    pub slow_first_touch: Option<Spread>,
    pub fast_first_touch: Option<Spread>,
    pub reread: Option<Spread>,
    pub reread_slow_share: Option<f64>,
    pub reread_sm_medians: Option<(f64, f64)>,
    pub groups: Option<[Vec<u32>; 2]>,
    pub home_share: Option<f64>,
    pub home_chunk_bytes: Option<f64>,
    pub verdict: String,
}

const SPREAD: &str = "median over lines, 5-95 %";

fn spread(r: &mut Rows, quantity: &str, value: Option<&Spread>) {
    if let Some(s) = value {
        r.push(
            quantity,
            Some(s.median),
            "cycles",
            Some((s.p5, s.p95, SPREAD)),
        );
    }
}

/// The verdict always; the latencies, the SM groups and the home granularity only where the
/// slow first touches stand apart from the fast ones (and the groups only where both sweeps
/// agree on every SM).
pub fn figures(p: &Partitions, r: &mut Rows) {
    r.text(
        "L2 partitions (first touch from every SM)",
        Some(&p.verdict),
    );
    if !p.separated {
        return;
    }
    spread(
        r,
        "L2 first touch, line homed in the reader's partition",
        p.fast_first_touch.as_ref(),
    );
    spread(
        r,
        "L2 first touch, line homed in the other partition",
        p.slow_first_touch.as_ref(),
    );
    spread(r, "L2 re-read after a first touch", p.reread.as_ref());
    if let Some(share) = p.reread_slow_share {
        r.push(
            "L2 re-reads at the other partition's latency",
            Some(100.0 * share),
            "%",
            None,
        );
    }
    if let Some((low, high)) = p.reread_sm_medians {
        r.push(
            "L2 re-read, per-SM median",
            Some((low + high) / 2.0),
            "cycles",
            Some((low, high, "midpoint of the fastest and slowest SM")),
        );
    }
    if let Some([a, b]) = &p.groups {
        let list = |g: &[u32]| g.iter().map(u32::to_string).collect::<Vec<_>>().join(" ");
        r.text(
            "L2 partitions: SMs of each",
            Some(&format!(
                "{} SMs ({}) and {} SMs ({})",
                a.len(),
                list(a),
                b.len(),
                list(b)
            )),
        );
    }
    r.push(
        "L2 lines homed in each partition alternate every",
        p.home_chunk_bytes,
        "bytes",
        None,
    );
    if let Some(share) = p.home_share {
        r.push(
            "L2 lines homed in the warming SM's partition (first touches from across)",
            Some(100.0 * share),
            "%",
            None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Vec<super::super::figures::Figure> {
        let p: Partitions = serde_json::from_str(json).unwrap();
        let mut r = Rows::new("Memory hierarchy", "cache.json");
        figures(&p, &mut r);
        r.finish()
    }

    #[test]
    fn two_partitions_give_their_latencies_groups_and_granularity() {
        let rows = read(
            r#"{"separated": true, "verdict": "two L2 partitions",
                "fast_first_touch": {"median": 287, "p5": 262, "p95": 319},
                "slow_first_touch": {"median": 464, "p5": 422, "p95": 499},
                "reread": {"median": 288, "p5": 263, "p95": 320},
                "reread_slow_share": 0.0, "reread_sm_medians": [271, 316],
                "groups": [[0, 1], [2, 3]], "home_share": 0.5, "home_chunk_bytes": 4096}"#,
        );
        let find = |q: &str| rows.iter().find(|f| f.quantity.contains(q)).unwrap();
        assert_eq!(find("other partition").value, Some(464.0));
        assert_eq!(find("other partition").low, Some(422.0));
        assert_eq!(find("alternate every").value, Some(4096.0));
        assert_eq!(
            find("SMs of each").text.as_deref(),
            Some("2 SMs (0 1) and 2 SMs (2 3)")
        );
        assert!(rows.iter().all(|f| !f.is_unresolved()));
    }

    #[test]
    fn one_latency_states_only_the_verdict() {
        let rows = read(
            r#"{"separated": false, "verdict": "one L2 latency",
                "fast_first_touch": {"median": 287, "p5": 262, "p95": 319},
                "slow_first_touch": null, "reread": null, "reread_slow_share": null,
                "reread_sm_medians": null, "groups": null, "home_share": null,
                "home_chunk_bytes": null}"#,
        );
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].text.as_deref(), Some("one L2 latency"));
    }
}

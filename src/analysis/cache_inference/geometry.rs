//! A level's geometry from the model fit (`analysis::cache_fit`) of its rise: what the fit
//! identifies is stated, what ties is listed, and a line a next-line prefetcher could explain
//! is stated as the bytes one miss fetches.

use super::*;

/// An address-order chase sees lines of L with a next-line prefetcher as lines of 2L (see
/// `cache_fit::prefetch_twin`): a line the steps or the fit read is stated as the bytes one
/// miss fetches, and the line and set count as not identified, unless half the line would be
/// below the stride or the smallest line tried.
pub(super) fn prefetch_caveat(level: &mut CacheLevel, stride: u64) {
    let Some(line) = level.line_bytes else {
        return;
    };
    if line / 2 < stride.max(cache_fit::SMALLEST_LINE_BYTES) {
        return;
    }
    level.fetch_bytes = Some(line);
    level.line_bytes = None;
    level
        .unidentified
        .retain(|u| !u.starts_with("line") && !u.starts_with("sets"));
    level.unidentified.insert(
        0,
        format!(
            "line (B): {line}, or {} with a next-line prefetcher",
            line / 2
        ),
    );
    if let Some(sets) = level.sets.take() {
        level.unidentified.insert(
            1,
            format!("sets: {sets}, or {} with a next-line prefetcher", 2 * sets),
        );
    }
    if !level.unidentified.iter().any(|u| u == PREFETCH_NOTE) {
        level.unidentified.push(PREFETCH_NOTE.into());
    }
}

pub(super) const VICTIM_NOTE: &str = "one set of N ways can chase like fewer ways in more sets behind a victim buffer of at least as many lines as sets less one: no line misses until all N lines are held, then every line does";

pub(super) const PREFETCH_NOTE: &str = "an address-order chase sees a line of L with a next-line prefetcher as a line of 2L (a descending chase would tell them apart)";

/// What a descending chase beside the ascending one showed about a next-line prefetcher
/// (`descending::prefetch_seen`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Prefetch {
    /// No descending chase: each candidate's prefetching twin ties with it.
    Unknown,
    /// Both chases rise alike: one line per miss, so the twins are ruled out.
    Absent,
    /// The descending chase rises twice as high: each ascending miss fetches two lines.
    Present,
}

/// Fits candidate caches to the rise from `lower` to `upper` (`analysis::cache_fit`, sizes
/// within a quarter of the plateau's edge) and, where the best fits within the noise, takes
/// its geometry and confidence; otherwise the step reading stays, with why.
pub(super) fn fit_geometry(
    level: &mut CacheLevel,
    curve: &[ChasePoint],
    lower: &Plateau,
    upper: &Plateau,
    stride: u64,
    sigma: f64,
    prefetch: Prefetch,
) {
    let Some(edge) = level.size_bytes else {
        return;
    };
    let range = SearchRange {
        min_size_bytes: edge - edge / 4,
        max_size_bytes: (edge + edge / 4).min(curve[upper.first].footprint_bytes),
        stride_bytes: stride,
    };
    let segment = rise_segment(curve, lower, upper, range);
    let Some(fit) = cache_fit::fit(&segment, range, sigma) else {
        level.notes.push(format!(
            "no geometry fitted: no candidate ({} to {} B, lines of 16 to 256 B, 1 to 64 ways, at most 1024 set counts a shape) changes over the rise",
            range.min_size_bytes, range.max_size_bytes
        ));
        return;
    };
    // Under a prefetcher the descending chase revealed, the prefetching candidates place the
    // size where the plain ones (none of which chases like it when the set count is odd) miss
    // it by a few lines.
    let fetching = (prefetch == Prefetch::Present)
        .then(|| cache_fit::fit_prefetching(&segment, fit.best.size_bytes, stride, sigma))
        .flatten()
        .filter(|f| f.fits && f.best.rms_cycles <= fit.best.rms_cycles);
    let fit = fetching.unwrap_or(fit);
    let best = &fit.best;
    let contradicted = misses_on_the_plateau(best, curve, lower, stride, sigma);
    let fits = fit.fits && contradicted.is_none();
    // Under a prefetcher that a descending chase revealed, only the size is stated: the
    // ascending rise is its twin's or, with an odd set count, a plain cache's of half the
    // miss penalty, and the calibration study read neither's ways reliably.
    let size_only = cache_fit::Identified {
        line_bytes: None,
        ways: None,
        sets: None,
        fetch_bytes: None,
        ..fit.without_prefetch.clone()
    };
    let (identified, identified_confidence) = match prefetch {
        Prefetch::Unknown => (&fit.identified, fit.identified_confidence),
        Prefetch::Absent => (&fit.without_prefetch, fit.without_prefetch_confidence),
        Prefetch::Present => (&size_only, fit.size_confidence),
    };
    if fits
        && prefetch != Prefetch::Present
        && !identified.random_replacement
        && identified.line_bytes.is_none()
        && identified.ways.is_none()
        && identified.sets.is_none()
    {
        open_geometry(level, &fit, identified);
    } else if fits {
        fitted_geometry(level, &fit, identified, identified_confidence);
    } else {
        misfit(level, &fit, contradicted);
    }
    level.fit = Some(fit);
}

/// The points the fit reads: the whole rise with the plateaus on both sides (the lower pins
/// the hit latency, the upper the miss penalty and where the rise ends). Of a long plateau (a
/// linear sweep of thousands of points) an even selection suffices: below the smallest size
/// tried every candidate predicts the same hits, so those points only pin the hit latency.
fn rise_segment(
    curve: &[ChasePoint],
    lower: &Plateau,
    upper: &Plateau,
    range: SearchRange,
) -> Vec<ChasePoint> {
    let thin = |points: &[ChasePoint], most: usize| -> Vec<ChasePoint> {
        let step = points.len().div_ceil(most).max(1);
        points.iter().step_by(step).copied().collect()
    };
    let split = (lower.first..=lower.last)
        .find(|&i| curve[i].footprint_bytes >= range.min_size_bytes)
        .unwrap_or(lower.last + 1);
    let upper_from = upper.first.max(split);
    let mut segment = thin(&curve[lower.first..split], 64);
    segment.extend_from_slice(&curve[split..upper_from]);
    segment.extend(thin(&curve[upper_from..=upper.last], 256));
    segment
}

/// A fit within the noise that identifies neither line, ways nor sets: the geometries that
/// tie are listed and the geometry is left open.
fn open_geometry(level: &mut CacheLevel, fit: &GeometryFit, identified: &cache_fit::Identified) {
    let best = &fit.best;
    level.notes.push(format!(
        "the fit cannot choose: geometries within the noise have lines of {} B, {} ways, {} sets (sizes {} to {} B); the best, {} sets x {} ways x {} B, has weight {:.2}; geometry left open",
        list(&identified.line_values),
        list(&identified.way_values),
        list(&identified.set_values),
        identified.size_min_bytes,
        identified.size_max_bytes,
        best.sets,
        best.ways,
        best.line_bytes,
        fit.confidence,
    ));
    level.unidentified = unidentified(identified);
    level.confidence = level.confidence.min(fit.confidence.max(0.1));
    level.basis = "open";
}

/// A fit within the noise: the level takes what it identifies (size, line, ways, sets, the
/// bytes one miss fetches) and its confidence, in place of the steps read one by one.
fn fitted_geometry(
    level: &mut CacheLevel,
    fit: &GeometryFit,
    identified: &cache_fit::Identified,
    identified_confidence: f64,
) {
    let best = &fit.best;
    let disagreement = match (level.line_bytes, level.ways) {
        (Some(line), Some(ways)) if (line, ways) != (best.line_bytes, best.ways) => Some(format!(
            "the steps read one by one gave {ways} ways of {line}-byte lines; the fit is preferred"
        )),
        _ => None,
    };
    // The step reading's reservations are about what the fit now answers.
    level
        .notes
        .retain(|n| !n.contains("steps") && !n.contains("way"));
    level.notes.extend(disagreement);
    level.size_bytes = Some(best.size_bytes);
    level.line_bytes = identified.line_bytes;
    level.ways = identified.ways;
    level.sets = identified.sets;
    // sets × line, which a prefetcher's twin shares: size / ways.
    level.way_bytes = identified.ways.map(|w| best.size_bytes / w.max(1));
    level.fetch_bytes = identified
        .fetch_bytes
        .filter(|_| identified.line_bytes.is_none());
    level.unidentified = unidentified(identified);
    level.confidence = identified_confidence;
    level.basis = "fit";
    level.notes.push(format!(
        "geometry by model fit ({:?}{}): hit {:.1}, miss {:.1} cycles, residual RMS {:.2} cycles at noise {:.2} (likelihood at {:.2}); best {} sets x {} ways x {} B; {}",
        best.policy,
        best.sector_bytes.map_or(String::new(), |s| format!(", {s}-byte sectors")),
        best.hit_cycles,
        best.miss_cycles,
        best.rms_cycles,
        fit.noise_cycles,
        fit.likelihood_sigma_cycles,
        best.sets,
        best.ways,
        best.line_bytes,
        match &fit.runner_up {
            Some(r) => format!(
                "runner-up {} B = {} sets x {} ways x {} B at delta {:.1}",
                r.size_bytes, r.sets, r.ways, r.line_bytes, r.delta
            ),
            None => "no other geometry fits at all".into(),
        }
    ));
}

/// No model within the noise: the closest is reported with what was tried, and only the size
/// (the plateau's end) is stated.
fn misfit(level: &mut CacheLevel, fit: &GeometryFit, contradicted: Option<u64>) {
    let best = &fit.best;
    let tried: Vec<String> = fit
        .tried
        .iter()
        .map(|t| {
            format!(
                "{} ({} candidates, best RMS {:.2})",
                t.family,
                t.candidates,
                t.best_rms_cycles.unwrap_or(f64::NAN)
            )
        })
        .collect();
    level.notes.push(format!(
        "no model fits within the noise ({:.2} cycles): tried {}; the closest, {} sets x {} ways x {} B, leaves {:.2} cycles RMS (hashed set indexing or adaptive replacement would do this)",
        fit.noise_cycles,
        tried.join(", "),
        best.sets,
        best.ways,
        best.line_bytes,
        best.rms_cycles
    ));
    if let Some(footprint) = contradicted {
        level.notes.push(format!(
            "the closest model misses at {footprint} B, where the curve still hits: a victim buffer, or a policy that keeps more lines than the sets' ways, would do this"
        ));
    }
    // No model holds the rise, so neither do the steps read one by one: only the size (the
    // plateau's end) is stated. (The calibration study's misfits that stated the steps'
    // ways were right 138 times in 850; those stating the size alone, 4073 in 4971.)
    for (name, value) in [
        ("line (B)", level.line_bytes.take()),
        ("ways", level.ways.take()),
        ("sets", level.sets.take()),
    ] {
        if let Some(value) = value {
            level.unidentified.push(format!(
                "{name}: {value} by the steps read one by one, not stated: no model fits the rise"
            ));
        }
    }
    level.way_bytes = None;
    level.confidence = level.confidence.min(0.3);
    level.basis = "misfit";
}

/// The first footprint of the plateau where `best` predicts misses the data do not show: its
/// latency there is more than the plateau's tolerance and 3σ over its hit latency, while the
/// point stays on the plateau. A cache that keeps more than its sets' ways hold (a victim buffer
/// behind them) fits such a model within the noise over the rise, yet starts missing only
/// where the buffer overflows: read as the model, its size was the sets' alone.
fn misses_on_the_plateau(
    best: &cache_fit::FittedModel,
    curve: &[ChasePoint],
    lower: &Plateau,
    stride: u64,
    sigma: f64,
) -> Option<u64> {
    let tolerance = lower.tolerance;
    let candidate = best.candidate();
    curve[lower.first..=lower.last]
        .iter()
        .filter(|p| p.footprint_bytes > best.size_bytes && p.cycles <= lower.latency + tolerance)
        .find(|p| {
            let excess = (best.miss_cycles - best.hit_cycles)
                * cache_fit::miss_fraction(&candidate, p.footprint_bytes, stride);
            excess > tolerance + 3.0 * sigma
        })
        .map(|p| p.footprint_bytes)
}

pub(super) fn list(values: &[u64]) -> String {
    let words: Vec<String> = values.iter().map(u64::to_string).collect();
    match words.as_slice() {
        [] => "none".into(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// "ways: 3, 6 or 12" for each parameter the candidates within the noise disagree on.
pub(super) fn unidentified(identified: &cache_fit::Identified) -> Vec<String> {
    [
        ("line (B)", identified.line_bytes, &identified.line_values),
        ("ways", identified.ways, &identified.way_values),
        ("sets", identified.sets, &identified.set_values),
    ]
    .into_iter()
    .filter(|(_, value, _)| value.is_none())
    .map(|(name, _, values)| {
        if identified.random_replacement {
            format!("{name}: not stated: the best model replaces at random, whose smooth rise has no step per set to read it by ({} fit within the noise)", list(values))
        } else {
            format!("{name}: {} fit within the noise", list(values))
        }
    })
    .chain(identified.prefetch_ties.then(|| PREFETCH_NOTE.to_string()))
    .chain(identified.victim_ties.then(|| VICTIM_NOTE.to_string()))
    .collect()
}

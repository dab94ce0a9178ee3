//! Text form of the inferred cache levels, for `gpubench analyze cache`.

use crate::analysis::cache_inference::CacheReport;

fn bytes(value: Option<u64>) -> String {
    value.map_or("-".to_string(), |v| {
        crate::report::summary::format_value(v as f64, "bytes")
    })
}

fn count(value: Option<u64>) -> String {
    value.map_or("-".to_string(), |v| v.to_string())
}

pub fn render_text(report: &CacheReport) -> String {
    let mut text = format!(
        "levels read from the {}-byte stride (jump threshold {:.2} cycles):\n{:<6} {:>10} {:>10} {:>8} {:>10} {:>6} {:>6} {:>10}\n",
        report.stride_bytes,
        report.jump_threshold_cycles,
        "level",
        "latency",
        "size",
        "line",
        "way",
        "ways",
        "sets",
        "confidence"
    );
    for (index, level) in report.levels.iter().enumerate() {
        text += &format!(
            "{:<6} {:>10.1} {:>10} {:>8} {:>10} {:>6} {:>6} {:>10.2}\n",
            index + 1,
            level.latency_cycles,
            if level.size_bytes.is_none() && index + 1 == report.levels.len() {
                // The sweep saw no end of it: memory, or a cache larger than the sweep (the
                // level's note says so); "memory" would misname an L2 the sweep never outgrew.
                "no end seen".to_string()
            } else {
                bytes(level.size_bytes)
            },
            bytes(level.line_bytes),
            bytes(level.way_bytes),
            count(level.ways),
            count(level.sets),
            level.confidence
        );
        if let (Some(rise), Some(size)) = (level.rise, level.size_bytes) {
            let reading = |value: u64, [low, high]: [u64; 2]| {
                format!(
                    "{} ({} to {}: the sweep point before, 2σ of noise)",
                    bytes(Some(value)),
                    bytes(Some(low)),
                    bytes(Some(high))
                )
            };
            text += &format!(
                "       rise: first miss past {}; half of the way to the next level from {}; 90 % from {}\n",
                bytes(Some(size)),
                reading(rise.half_bytes, rise.half_range_bytes),
                reading(rise.ninety_bytes, rise.ninety_range_bytes)
            );
        }
        if let Some(capacity) = level.capacity {
            text += &format!(
                "       capacity: no miss up to {}; {} to {} ({:.0} % of caches of every simulated family had their capacity in such an interval)\n",
                bytes(Some(capacity.hits_up_to_bytes)),
                bytes(Some(capacity.low_bytes)),
                bytes(Some(capacity.high_bytes)),
                100.0 * capacity.coverage
            );
        }
        if let Some(gap) = level.held_out_gap {
            text += &format!(
                "       confidence: {:.2} on the calibration study's mixture; off by up to {gap:.2} on a family of caches held out of it\n",
                level.confidence
            );
        }
        for note in &level.notes {
            text += &format!("       note: {note}\n");
        }
    }
    for note in &report.notes {
        text += &format!("note: {note}\n");
    }
    text
}

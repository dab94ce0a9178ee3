//! Text form of the inferred cache levels, for `gpubench analyze cache`.

use crate::analysis::cache_inference::CacheReport;

fn bytes(value: Option<u64>) -> String {
    match value {
        None => "-".to_string(),
        Some(v) if v >= 1 << 20 && v % (1 << 20) == 0 => format!("{} MiB", v >> 20),
        Some(v) if v >= 1 << 10 && v % (1 << 10) == 0 => format!("{} KiB", v >> 10),
        Some(v) => format!("{v} B"),
    }
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
                "memory".to_string()
            } else {
                bytes(level.size_bytes)
            },
            bytes(level.line_bytes),
            bytes(level.way_bytes),
            count(level.ways),
            count(level.sets),
            level.confidence
        );
        for note in &level.notes {
            text += &format!("       note: {note}\n");
        }
    }
    for note in &report.notes {
        text += &format!("note: {note}\n");
    }
    text
}

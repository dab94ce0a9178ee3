//! The formats of the run directories gpubench writes, and what a reader does with each: one
//! number per format, written as `format` in every `metadata.json` and `all.json`; a reader
//! reads every format up to [`CURRENT`] and refuses a newer one in one sentence naming both.
//! Where an older format wrote a figure whose domain differs from today's, the difference is
//! listed here, so that such a file is read as what its own version wrote, not called
//! damaged. CHANGELOG.md says what changed for a reader at each format.

/// The format this gpubench writes.
pub const CURRENT: u32 = 3;

/// A run directory's format where its files name none: every run directory written before
/// formats were recorded (gpubench 0.1.0, 2026-11-22 to 2026-11-28).
pub const UNRECORDED: u32 = 1;

/// What each format changed for a reader, newest last.
pub const CHANGES: [(u32, &str); 3] = [
    (
        1,
        "no format recorded (gpubench 0.1.0): figures.json from 2026-11-22 on; before commit 2a4b22c the slots suite wrote each workload's tag overhead as a percentage, a difference that may lie below 0 or above 100",
    ),
    (
        2,
        "format recorded in metadata.json and all.json (gpubench 0.2.0); metadata.json's conditions record (other processes, MIG, pending retirements); a figure's typed unresolved status (shared GPU, above its physical ceiling)",
    ),
    (
        3,
        "every figure's status typed in its `unresolved` (an inference's own standing too: low confidence, uncalibrated, not identifiable, did not repeat), figures.json naming its format, summary.json's figures read by their `status`; a figure's `key`",
    ),
];

/// The refusal of a file of format `found`, newer than this gpubench reads; `written_by` is
/// the gpubench version the file names, where it names one.
pub fn too_new(file: &str, found: u32, written_by: Option<&str>) -> Option<String> {
    (found > CURRENT).then(|| {
        let (by, with) = match written_by.filter(|v| !v.is_empty()) {
            Some(version) => (format!(" (written by gpubench {version})"), format!("gpubench {version} or newer")),
            None => (String::new(), "the gpubench that wrote it".to_string()),
        };
        format!(
            "{file} is of run-directory format {found}{by}, newer than this gpubench {} reads (formats {UNRECORDED} to {CURRENT}); read it with {with}",
            env!("CARGO_PKG_VERSION")
        )
    })
}

/// Whether `figure`, of a run directory of `format`, is a percentage its own version wrote as
/// a signed difference (an overhead, not a share: below 0 or above 100 as it fell).
pub fn signed_percent_written(format: u32, section: &str, quantity: &str) -> bool {
    format == UNRECORDED && section == "Lane slots" && quantity.ends_with(": tag overhead")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_format_is_refused_naming_both_and_older_ones_are_read() {
        let said = too_new("run/metadata.json", CURRENT + 1, Some("9.9.9")).unwrap();
        assert!(said.contains(&format!("format {}", CURRENT + 1)), "{said}");
        assert!(said.contains(&format!("formats 1 to {CURRENT}")), "{said}");
        assert!(said.contains("gpubench 9.9.9 or newer"), "{said}");
        for format in UNRECORDED..=CURRENT {
            assert!(too_new("f", format, Some("x")).is_none());
        }
        assert_eq!(CHANGES.last().map(|c| c.0), Some(CURRENT));
        let unnamed = too_new("all.json", CURRENT + 1, None).unwrap();
        assert!(
            unnamed.ends_with("read it with the gpubench that wrote it"),
            "{unnamed}"
        );
    }

    #[test]
    fn only_format_1_wrote_tag_overheads_as_signed_percentages() {
        assert!(signed_percent_written(1, "Lane slots", "dot: tag overhead"));
        assert!(!signed_percent_written(
            CURRENT,
            "Lane slots",
            "dot: tag overhead"
        ));
        assert!(!signed_percent_written(
            1,
            "Lane slots",
            "dot: active lanes"
        ));
    }
}

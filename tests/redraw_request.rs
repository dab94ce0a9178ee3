//! `report`'s redraw reads what a run was asked from `settings.json` (its suite's typed
//! settings) and, for a run made before settings.json existed, from the metadata. Both must
//! draw the same figures: each committed run below is redrawn as committed (no settings.json)
//! and with the settings.json its own command line parses to, and the SVGs must be identical.

mod common;

use std::path::Path;

use assert_cmd::Command;
use gpubench::app::registry;
use gpubench::report::metadata::SavedMetadata;

fn report_svgs(run: &Path, out: &Path) -> Vec<(String, Vec<u8>)> {
    Command::cargo_bin("gpubench")
        .unwrap()
        .args(["report", "--format", "svg", "--output"])
        .arg(out)
        .arg(run)
        .assert()
        .success();
    let mut svgs: Vec<(String, Vec<u8>)> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    svgs.sort();
    svgs
}

#[test]
fn a_redraw_from_settings_json_draws_what_the_metadata_drew() {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100/all");
    for suite_dir in ["branch", "pipeline", "divergence", "cache-constant"] {
        let place = tempfile::tempdir().unwrap();
        let before = place.path().join("before");
        let with = place.path().join("with");
        common::copy_tree(&committed.join(suite_dir), &before);
        common::copy_tree(&committed.join(suite_dir), &with);
        assert!(!before.join("settings.json").exists(), "{suite_dir}");

        let metadata = SavedMetadata::read(&before).unwrap();
        let command: Vec<String> = serde_json::from_value(
            serde_json::from_str::<serde_json::Value>(
                &std::fs::read_to_string(before.join("metadata.json")).unwrap(),
            )
            .unwrap()["command_line"]
                .clone(),
        )
        .unwrap();
        let at = command.iter().position(|a| *a == metadata.suite).unwrap();
        let suite = registry::find(&metadata.suite).unwrap();
        let asked = suite.settings_from_flags(&command[at + 1..]).unwrap();
        std::fs::write(
            with.join("settings.json"),
            serde_json::to_string_pretty(&asked).unwrap(),
        )
        .unwrap();

        let drawn_before = report_svgs(&before, &place.path().join("out-before"));
        let drawn_with = report_svgs(&with, &place.path().join("out-with"));
        assert!(!drawn_before.is_empty(), "{suite_dir} drew nothing");
        let names = |d: &[(String, Vec<u8>)]| d.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(names(&drawn_before), names(&drawn_with), "{suite_dir}");
        for ((name, a), (_, b)) in drawn_before.iter().zip(&drawn_with) {
            assert!(
                a == b,
                "{suite_dir}: {name} differs when drawn from settings.json"
            );
        }
    }
}

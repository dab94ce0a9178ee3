//! The MT4G comparison's table (`scripts/peers_mt4g_table.py`), run without a GPU over the
//! committed sessions: from each run's own files it gives back the committed table, JSON and
//! SASS listing byte for byte, and the latency rows carry the timed windows read from that SASS.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::copy_tree;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every committed MT4G session: a directory under results/ holding mt4g.json.
fn sessions() -> Vec<PathBuf> {
    common::dirs_holding(&root().join("results"), "mt4g.json")
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_table_of_every_committed_mt4g_session_comes_back_byte_for_byte() {
    let found = sessions();
    assert!(found.len() >= 2, "committed MT4G sessions: {found:?}");
    let scratch = tempfile::tempdir().unwrap();
    for (i, run) in found.iter().enumerate() {
        let copy = scratch.path().join(i.to_string());
        copy_tree(run, &copy);
        let table = json(&run.join("mt4g.json"));
        let md = std::fs::read_to_string(run.join("mt4g.md")).unwrap();
        let command = md
            .lines()
            .find_map(|l| l.strip_prefix("Command: scripts/peers-mt4g.sh "))
            .expect("the table names its command");
        let status = Command::new("python3")
            .arg(root().join("scripts/peers_mt4g_table.py"))
            .arg(&copy)
            .arg(table["mt4g_commit"].as_str().unwrap())
            .arg(table["seconds_per_group"].to_string())
            .arg(command)
            .output()
            .expect("python3 runs");
        assert!(
            status.status.success(),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
        for file in ["mt4g.md", "mt4g.json", "mt4g/latency-kernels.sass"] {
            let committed = run.join(file);
            if committed.is_file() {
                assert!(
                    std::fs::read(copy.join(file)).unwrap() == std::fs::read(&committed).unwrap(),
                    "{file} of {} differs from the committed one",
                    run.display()
                );
            }
        }
    }
}

#[test]
fn latency_rows_show_what_mt4gs_kernels_execute_between_their_clock_reads() {
    let with_sass: Vec<_> = sessions()
        .into_iter()
        .filter(|run| run.join("mt4g/latency-kernels.sass").is_file())
        .collect();
    assert!(!with_sass.is_empty(), "no committed session kept its SASS");
    for run in with_sass {
        let table = json(&run.join("mt4g.json"));
        let window = |quantity: &str| -> Vec<String> {
            let row = table["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["quantity"] == quantity)
                .unwrap_or_else(|| panic!("no row {quantity}"));
            row["mt4g_timed_window"]
                .as_array()
                .unwrap_or_else(|| panic!("{quantity} of {} has no window", run.display()))
                .iter()
                .map(|op| op.as_str().unwrap().to_string())
                .collect()
        };
        // Each window opens and closes on a clock read and holds the load of its space.
        for (quantity, load) in [
            ("texture latency", "TLD"),
            ("L2 latency (ld.global.cg)", "LDG"),
            ("constant L1 latency", "ULDC"),
            ("shared-memory load latency (by address)", "LDS"),
        ] {
            let ops = window(quantity);
            assert!(ops.len() >= 3, "{quantity}: {ops:?}");
            for end in [&ops[0], &ops[ops.len() - 1]] {
                assert!(
                    end.ends_with("2R") || end.ends_with("2UR"),
                    "{quantity}: {ops:?}"
                );
            }
            assert!(
                ops.iter().any(|op| op.starts_with(load)),
                "{quantity}: {ops:?} has no {load}"
            );
        }
    }
}

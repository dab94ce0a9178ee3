//! The layers of `src/`, top to bottom: `app` (commands, `all`, the registry) → `cli` →
//! `report` → `experiments` → `gpu` → `analysis`, with `error`, `kernels` and `input` beneath
//! all. A module may name its own folder and any folder below it, never one above: where a
//! lower layer needs what a higher one knows (the CLI's subcommands, the summary's per-suite
//! figures), the higher one hands it down as plain function values. Tests count too.

use std::path::{Path, PathBuf};

const LAYERS: [(&str, u32); 9] = [
    ("app", 6),
    ("cli", 5),
    ("report", 4),
    ("experiments", 3),
    ("gpu", 2),
    ("analysis", 1),
    ("error", 0),
    ("kernels", 0),
    ("input", 0),
];

fn layer(name: &str) -> Option<u32> {
    LAYERS.iter().find(|(n, _)| *n == name).map(|(_, l)| *l)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file of `src/` belongs to (`src/gpu/launch/chase.rs` → `gpu`).
fn owner(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next().unwrap().as_os_str();
    first.to_string_lossy().trim_end_matches(".rs").to_string()
}

/// Every `crate::<module>` a source text names.
fn named_modules(text: &str) -> Vec<String> {
    text.match_indices("crate::")
        .map(|(at, found)| {
            text[at + found.len()..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect::<String>()
        })
        .filter(|name| !name.is_empty())
        .collect()
}

#[test]
fn no_module_names_a_higher_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut upward = Vec::new();
    let mut checked = 0;
    for file in &files {
        let Some(own) = layer(&owner(&src, file)) else {
            continue; // lib.rs and main.rs: the roots.
        };
        checked += 1;
        let text = std::fs::read_to_string(file).unwrap();
        for name in named_modules(&text) {
            if layer(&name).is_some_and(|named| named > own) {
                upward.push(format!("{} names crate::{name}", file.display()));
            }
        }
    }
    upward.sort();
    upward.dedup();
    assert!(
        checked > 100,
        "only {checked} files found under {}",
        src.display()
    );
    assert!(
        upward.is_empty(),
        "upward references:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_scan_sees_an_upward_reference() {
    let names =
        named_modules("use crate::app::registry;\nlet x = crate::analysis::stats::median(&v);");
    assert_eq!(names, ["app", "analysis"]);
    assert!(layer("app") > layer("analysis"));
    assert_eq!(layer("lib"), None);
}

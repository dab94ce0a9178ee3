//! The layers of `src/`, top to bottom: `app` (commands, `all`, the registry) and `suites`
//! (one folder per suite) → `cli` → `report` → `experiments` → `gpu` → `analysis`, with
//! `error`, `kernels` and `input` beneath all. A module may name its own folder and any folder
//! below it, never one above: where a lower layer needs what a higher one knows (the CLI's
//! subcommands, the summary's per-suite figures), the higher one hands it down as plain
//! function values. Of `app`, only the registry names a suite; no suite names another. Tests
//! count too.

use std::path::{Path, PathBuf};

const LAYERS: [(&str, u32); 10] = [
    ("app", 6),
    ("suites", 6),
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

/// The suite each `crate::suites::<name>` of a source text names.
fn named_suites(text: &str) -> Vec<String> {
    text.match_indices("crate::suites::")
        .map(|(at, found)| {
            text[at + found.len()..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect::<String>()
        })
        .filter(|name| !name.is_empty())
        .collect()
}

/// A suite's folder is its own: outside `src/suites/`, only the registry names a suite (one
/// line each), and a suite names no other suite (shared code belongs to the core).
#[test]
fn only_the_registry_names_a_suite_and_no_suite_names_another() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let registry = src.join("app/registry.rs");
    let mut wrong = Vec::new();
    let mut suites_seen = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let relative = file.strip_prefix(&src).unwrap();
        let mut parts = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy());
        let own_suite = match (parts.next().as_deref(), parts.next()) {
            (Some("suites"), Some(name)) if !name.ends_with(".rs") => Some(name.into_owned()),
            _ => None,
        };
        suites_seen += usize::from(own_suite.is_some());
        for named in named_suites(&text) {
            let allowed = match &own_suite {
                Some(own) => *own == named,
                None => *file == registry,
            };
            if !allowed {
                wrong.push(format!("{} names crate::suites::{named}", file.display()));
            }
        }
        // `super::` out of a suite's own folder would reach a sibling suite unseen.
        if own_suite.is_some()
            && relative.components().count() == 3
            && text.contains("super::super::")
        {
            wrong.push(format!(
                "{} reaches out of its folder with super::super::",
                file.display()
            ));
        }
    }
    assert!(suites_seen > 0, "no suite folder under {}", src.display());
    wrong.sort();
    wrong.dedup();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_suite_scan_sees_a_suite_named() {
    assert_eq!(
        named_suites("use crate::suites::regs::Regs; crate::suites::cache2::x"),
        ["regs", "cache2"]
    );
}

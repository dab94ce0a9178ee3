//! The layers of `src/`, top to bottom: `app` (commands, `all`, the registry) → `suites` (one
//! folder per suite) → `harness` (what a suite is, and the skeleton of its run) → `cli` →
//! `report` → `experiments` → `gpu` → `analysis`, with `error`, `kernels` and `input` beneath
//! all. A module may name its own folder and any folder
//! below it, never one above: where a lower layer needs what a higher one knows (the CLI's
//! subcommands, the summary's per-suite figures), the higher one hands it down as plain
//! function values. Of `app`, only the registry names a suite; no suite names another. Tests
//! count too.

use std::path::{Path, PathBuf};

const LAYERS: [(&str, u32); 11] = [
    ("app", 8),
    ("suites", 7),
    ("harness", 6),
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
    names_after(text, "crate::")
}

/// The module name after each `prefix` in `text`.
fn names_after(text: &str, prefix: &str) -> Vec<String> {
    text.match_indices(prefix)
        .map(|(at, found)| {
            text[at + found.len()..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
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
    names_after(text, "crate::suites::")
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

/// A source file's module path (`src/report/summary/mod.rs` → `report::summary`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The files of `src/` each file names through `crate::…` or `super::…` paths (comments left
/// out): a path leads to the file of its longest prefix that is a module.
fn import_graph(
    src: &Path,
) -> std::collections::BTreeMap<PathBuf, std::collections::BTreeSet<PathBuf>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let by_module: std::collections::BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| (module_of(src, f), f.clone()))
        .collect();
    let resolve = |parts: &[String]| {
        (1..=parts.len())
            .rev()
            .find_map(|n| by_module.get(&parts[..n]).cloned())
    };
    let words = |text: &str| -> Vec<String> {
        text.split("::")
            .map(|w| {
                w.chars()
                    .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                    .collect::<String>()
            })
            .collect()
    };
    let mut graph = std::collections::BTreeMap::new();
    for file in &files {
        let text: String = std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let own = module_of(src, file);
        let mut named = std::collections::BTreeSet::new();
        for (at, _) in text.match_indices("crate::") {
            let path: Vec<String> = words(&text[at + 7..])
                .into_iter()
                .take_while(|w| !w.is_empty())
                .collect();
            named.extend(resolve(&path));
        }
        for (at, _) in text.match_indices("super::") {
            // Only the first `super::` of a chain starts a path.
            if text[..at].ends_with("super::") {
                continue;
            }
            let mut rest = &text[at..];
            let mut base = own.clone();
            while let Some(after) = rest.strip_prefix("super::") {
                base.pop();
                rest = after;
            }
            base.extend(words(rest).into_iter().take_while(|w| !w.is_empty()));
            named.extend(resolve(&base));
        }
        named.remove(file);
        graph.insert(file.clone(), named);
    }
    graph
}

/// The circles of files (strongly connected components of more than one file), each sorted.
fn circles(
    graph: &std::collections::BTreeMap<PathBuf, std::collections::BTreeSet<PathBuf>>,
) -> Vec<Vec<PathBuf>> {
    // Kosaraju: finishing order on the graph, then components on the reversed graph.
    fn visit<'a>(
        node: &'a PathBuf,
        edges: &'a std::collections::BTreeMap<PathBuf, std::collections::BTreeSet<PathBuf>>,
        seen: &mut std::collections::BTreeSet<&'a PathBuf>,
        out: &mut Vec<&'a PathBuf>,
    ) {
        if seen.insert(node) {
            for next in edges.get(node).into_iter().flatten() {
                visit(next, edges, seen, out);
            }
            out.push(node);
        }
    }
    let mut order = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for node in graph.keys() {
        visit(node, graph, &mut seen, &mut order);
    }
    let mut reversed: std::collections::BTreeMap<PathBuf, std::collections::BTreeSet<PathBuf>> =
        graph
            .keys()
            .map(|k| (k.clone(), Default::default()))
            .collect();
    for (from, tos) in graph {
        for to in tos {
            reversed.entry(to.clone()).or_default().insert(from.clone());
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut found = Vec::new();
    for node in order.into_iter().rev() {
        let mut component = Vec::new();
        visit(node, &reversed, &mut seen, &mut component);
        if component.len() > 1 {
            let mut component: Vec<PathBuf> = component.into_iter().cloned().collect();
            component.sort();
            found.push(component);
        }
    }
    found.sort();
    found
}

/// No circle of files in `src/` except inside one suite's folder: the core's files, and the
/// suites' among themselves, form a hierarchy.
#[test]
fn no_circle_of_files_but_inside_one_suite() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = import_graph(&src);
    assert!(graph.values().map(|e| e.len()).sum::<usize>() > 300);
    let mut unexpected = Vec::new();
    for circle in circles(&graph) {
        let names: Vec<String> = circle
            .iter()
            .map(|f| f.strip_prefix(&src).unwrap().to_string_lossy().into_owned())
            .collect();
        let folders: std::collections::BTreeSet<Option<String>> = names
            .iter()
            .map(|n| {
                n.strip_prefix("suites/")
                    .and_then(|rest| rest.split_once('/'))
                    .map(|(suite, _)| suite.to_string())
            })
            .collect();
        if folders.len() == 1 && folders.iter().next().unwrap().is_some() {
            continue;
        }
        unexpected.push(names.join(" → "));
    }
    assert!(
        unexpected.is_empty(),
        "circles of files outside one suite's folder:\n{}",
        unexpected.join("\n")
    );
}

#[test]
fn the_circle_finder_finds_a_circle_and_nothing_else() {
    let p = |s: &str| PathBuf::from(s);
    let graph = [
        (p("a"), [p("b")].into_iter().collect()),
        (p("b"), [p("a"), p("c")].into_iter().collect()),
        (p("c"), Default::default()),
    ]
    .into_iter()
    .collect();
    assert_eq!(circles(&graph), vec![vec![p("a"), p("b")]]);
}

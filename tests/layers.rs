//! The layers of `src/`, top to bottom: `app` (commands, `all`, the registry) → `suites` (one
//! folder per suite) → `harness` (what a suite is, and the skeleton of its run) → `cli` →
//! `report` → `experiments` → `gpu` → `analysis`, with `error`, `kernels` and `input` beneath
//! all. A module may name its own folder and any folder
//! below it, never one above: where a lower layer needs what a higher one knows (the CLI's
//! subcommands, the summary's per-suite figures), the higher one hands it down as plain
//! function values. Of `app`, only the registry names a suite; no suite names another. Tests
//! count too. A suite is its folder: no module of the core is used by exactly one suite, read
//! from a use graph of which module files reference which modules (`use` trees, `crate::`,
//! `super::`, `self::` and inline paths, names bound by `use`, globs), not from names.

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

// The use graph: which module files reference which modules. A suite is its folder: what
// serves one suite alone lives in `src/suites/<name>/`, and the core keeps what two or more
// suites, or a suite-agnostic command, use.

type ModulePath = Vec<String>;
type Users = std::collections::BTreeMap<ModulePath, std::collections::BTreeSet<ModulePath>>;

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `text` with its comments (line, block, nested block) and the contents of its string and
/// character literals left out, so only code is read: a path in a comment or a string names
/// nothing.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A character literal ('x', '\n', '\''), or a lifetime ('a), which is code.
            if at(i + 1) == '\\' {
                i += 3;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            } else if at(i + 2) == '\'' {
                i += 3;
                out.push_str("' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else if is_ident(c) {
            let start = i;
            while i < chars.len() && is_ident(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let raw = (word == "r" || word == "br") && (at(i) == '"' || at(i) == '#');
            if raw && (start == 0 || !is_ident(chars[start - 1])) {
                let hashes = chars[i..].iter().take_while(|&&h| h == '#').count();
                i += hashes + 1;
                while i < chars.len()
                    && !(chars[i] == '"' && (1..=hashes).all(|k| at(i + k) == '#'))
                {
                    i += 1;
                }
                i += hashes + 1;
                out.push_str("\"\"");
            } else {
                out.push_str(&word);
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The paths a `use` tree (what stands between `use` and `;`) imports, each with the name it
/// binds: `a::{b, c::{self, d as e}, f::*}` → `a::b` (b), `a::c` (c), `a::c::d` (e), `a::f::*`.
fn use_paths(tree: &str) -> Vec<(Vec<String>, Option<String>)> {
    let tree: String = tree
        .chars()
        .filter(|c| !c.is_whitespace() || *c == ' ')
        .collect();
    let tree = tree.trim().trim_start_matches("::");
    let Some(open) = tree.find('{') else {
        let (path, alias) = match tree.split_once(" as ") {
            Some((path, alias)) => (path, Some(alias.trim().to_string())),
            None => (tree, None),
        };
        let mut segments: Vec<String> = path
            .split("::")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        if segments.last().is_some_and(|s| s == "self") {
            segments.pop();
        }
        let name = alias.or_else(|| segments.last().filter(|s| *s != "*").cloned());
        return vec![(segments, name)];
    };
    let prefix = &tree[..open];
    let body = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&body[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| use_paths(&format!("{prefix}{}", p.trim())))
        .collect()
}

/// Where names resolve in one file: its module, the names its `use`s bind (to the module
/// each leads into), and the modules it glob-imports.
struct Scope<'a> {
    modules: &'a std::collections::BTreeSet<ModulePath>,
    aliases: std::collections::BTreeMap<String, ModulePath>,
    globs: Vec<ModulePath>,
}

impl Scope<'_> {
    /// The module a path written in module `own` leads into (its longest prefix that is a
    /// module of `src/`), or `None` for a path outside the crate (std, a dependency, a local).
    fn resolve(&self, own: &[String], path: &[String]) -> Option<ModulePath> {
        self.absolute(own, path)
            .and_then(|p| self.longest_module(p))
    }

    /// A path written in module `own`, from the crate's root.
    fn absolute(&self, own: &[String], path: &[String]) -> Option<ModulePath> {
        let (first, rest) = path.split_first()?;
        let mut full: ModulePath = match first.as_str() {
            "crate" => Vec::new(),
            "self" => own.to_vec(),
            "super" => {
                let ups = path.iter().take_while(|s| *s == "super").count();
                let mut base = own.to_vec();
                base.truncate(own.len().saturating_sub(ups));
                base.extend(path[ups..].iter().cloned());
                return Some(base);
            }
            name => {
                let child = [own, &[name.to_string()]].concat();
                if let Some(target) = self.aliases.get(name) {
                    target.clone()
                } else if self.modules.contains(&child) {
                    child
                } else if let Some(glob) = self.globs.iter().find(|g| {
                    self.modules
                        .contains(&[g.as_slice(), &[name.to_string()]].concat())
                }) {
                    [glob.as_slice(), &[name.to_string()]].concat()
                } else {
                    return None;
                }
            }
        };
        full.extend(rest.iter().cloned());
        Some(full)
    }

    fn longest_module(&self, path: ModulePath) -> Option<ModulePath> {
        (0..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|p| self.modules.contains(p))
    }
}

/// The inline modules of a code text (`mod tests { … }`): where each starts and ends, and
/// its name.
fn inline_modules(code: &str) -> Vec<(usize, usize, String)> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("mod ") {
        if at > 0 && code[..at].ends_with(is_ident) {
            continue;
        }
        let rest = &code[at + 4..];
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|&c| is_ident(c))
            .collect();
        let after = rest.trim_start()[name.len()..].trim_start();
        if name.is_empty() || !after.starts_with('{') {
            continue;
        }
        let open = code.len() - after.len();
        let mut depth = 0;
        let close = code[open..]
            .char_indices()
            .find(|&(_, c)| {
                depth += match c {
                    '{' => 1,
                    '}' => -1,
                    _ => 0,
                };
                depth == 0
            })
            .map_or(code.len(), |(i, _)| open + i);
        found.push((open, close, name));
    }
    found
}

/// Each path (two segments or more) of a code text, with where it starts.
fn code_paths(code: &str) -> Vec<(usize, Vec<String>)> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        let starts = is_ident(c)
            && !c.is_ascii_digit()
            && (i == 0 || !(is_ident(bytes[i - 1] as char) || code[..i].ends_with("::")));
        if !starts {
            i += 1;
            continue;
        }
        let start = i;
        let mut segments = Vec::new();
        loop {
            let from = i;
            while i < bytes.len() && is_ident(bytes[i] as char) {
                i += 1;
            }
            segments.push(code[from..i].to_string());
            let next = bytes.get(i + 2).map(|&b| b as char);
            if code[i..].starts_with("::")
                && next.is_some_and(|n| is_ident(n) && !n.is_ascii_digit())
            {
                i += 2;
            } else {
                break;
            }
        }
        if segments.len() > 1 {
            found.push((start, segments));
        }
    }
    found
}

/// Every module's users: the module files (`files`: each module's path and source text)
/// that reference it or anything under it, through a `use` (braces, `self`, `as`, globs) or a
/// path in the code (`crate::`, `super::`, `self::`, a name a `use` bound, a child module),
/// leaving out the module itself and those under it.
fn use_graph(files: &[(ModulePath, String)]) -> Users {
    let modules: std::collections::BTreeSet<ModulePath> =
        files.iter().map(|(m, _)| m.clone()).collect();
    let mut users = Users::new();
    for (module, text) in files {
        let code = code_only(text);
        let inline = inline_modules(&code);
        // The module a position of the file is in: the file's, or an inline one inside it.
        let own_at = |at: usize| {
            let mut own = module.clone();
            own.extend(
                inline
                    .iter()
                    .filter(|(open, close, _)| *open < at && at < *close)
                    .map(|(_, _, name)| name.clone()),
            );
            own
        };
        let mut uses = Vec::new();
        for (at, _) in code.match_indices("use ") {
            if at > 0 && code[..at].ends_with(is_ident) {
                continue;
            }
            let tree = &code[at + 4..];
            let tree = &tree[..tree.find(';').unwrap_or(tree.len())];
            uses.extend(use_paths(tree).into_iter().map(|u| (at, u)));
        }
        let mut scope = Scope {
            modules: &modules,
            aliases: Default::default(),
            globs: Vec::new(),
        };
        let mut referenced = Vec::new();
        // Twice: a `use` may start from a name another `use` bound.
        for _ in 0..2 {
            for (at, (path, name)) in &uses {
                let glob = path.last().is_some_and(|s| s == "*");
                let path = &path[..path.len() - usize::from(glob)];
                let own = own_at(*at);
                let Some(target) = scope.resolve(&own, path) else {
                    continue;
                };
                if glob && scope.absolute(&own, path).as_ref() == Some(&target) {
                    scope.globs.push(target.clone());
                }
                if let Some(name) = name {
                    scope.aliases.insert(name.clone(), target.clone());
                }
                referenced.push(target);
            }
        }
        for (at, path) in code_paths(&code) {
            referenced.extend(scope.resolve(&own_at(at), &path));
        }
        for target in referenced {
            for n in 1..=target.len() {
                let prefix = &target[..n];
                if !module.starts_with(prefix) {
                    users
                        .entry(prefix.to_vec())
                        .or_default()
                        .insert(module.clone());
                }
            }
        }
    }
    users
}

/// The core modules (outside `suites` and `app`, below the top level) whose users are one
/// suite and nothing else, each with that suite.
fn used_by_one_suite(modules: &[ModulePath], users: &Users) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for module in modules {
        let core = module.len() >= 2 && module[0] != "suites" && module[0] != "app";
        if !core {
            continue;
        }
        let owners: std::collections::BTreeSet<Option<&String>> = users
            .get(module)
            .into_iter()
            .flatten()
            .map(|user| match user.as_slice() {
                [top, suite, ..] if top == "suites" => Some(suite),
                _ => None,
            })
            .collect();
        if let [Some(suite)] = owners.into_iter().collect::<Vec<_>>().as_slice() {
            found.push((module.join("::"), suite.to_string()));
        }
    }
    found.sort();
    found
}

/// A suite is its folder: no module of the core is used by exactly one suite (what one suite
/// alone uses belongs in `src/suites/<name>/`; a suite-agnostic command's use, or a second
/// suite's, keeps a module in the core). Read from the use graph, not from names.
#[test]
fn no_core_module_is_used_by_exactly_one_suite() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    let files: Vec<(ModulePath, String)> = paths
        .iter()
        .map(|f| (module_of(&src, f), std::fs::read_to_string(f).unwrap()))
        .collect();
    let users = use_graph(&files);
    let edges: usize = users.values().map(|u| u.len()).sum();
    assert!(
        edges > 1000,
        "only {edges} uses found under {}",
        src.display()
    );
    let modules: Vec<ModulePath> = files.iter().map(|(m, _)| m.clone()).collect();
    let found = used_by_one_suite(&modules, &users);
    assert!(
        found.is_empty(),
        "core modules used by one suite alone (move each into src/suites/<suite>/):\n{}",
        found
            .iter()
            .map(|(module, suite)| format!("{module}: used only by suite {suite}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_use_graph_reads_use_trees_and_finds_a_module_one_suite_uses() {
    let m = |s: &str| -> ModulePath { s.split("::").map(String::from).collect() };
    assert_eq!(
        use_paths("super::{stats::{self, Summary}, two_latencies as two, launch::*}"),
        vec![
            (m("super::stats"), Some("stats".into())),
            (m("super::stats::Summary"), Some("Summary".into())),
            (m("super::two_latencies"), Some("two".into())),
            (m("super::launch::*"), None),
        ]
    );
    let files = [
        ("analysis", "pub mod fit; pub mod stats; pub mod sets;"),
        ("analysis::stats", "pub fn mean() {}"),
        ("analysis::sets", "pub fn count() {}"),
        // A core user: `fit` uses `stats` through braces and `super::`.
        (
            "analysis::fit",
            "use super::{stats::{self as s}, };\nfn f() { s::mean(); }",
        ),
        ("gpu", "pub mod launch;"),
        ("gpu::launch", "pub mod dsm;"),
        ("gpu::launch::dsm", "pub fn go() {}"),
        // Suite `a` names `fit` (an alias), `sets` (inline path) and `dsm` through a glob.
        (
            "suites::a::measure",
            "use crate::analysis::fit as f;\nuse crate::gpu::launch::*;\n\
             fn g() { crate::analysis::sets::count(); dsm::go(); }",
        ),
        // Suite `b` names `stats`; `fit` and `sets` only in a comment, a string and a
        // character literal, which name nothing.
        (
            "suites::b",
            "// crate::analysis::fit\nfn h() { let q = '\"'; crate::analysis::stats::mean(); \
             let s = \"crate::analysis::fit\"; let r = r#\"crate::analysis::sets\"#; }",
        ),
        // Inside an inline `mod tests`, `super::` is the file's module.
        (
            "suites::b::inner",
            "mod tests { use super::super::super::a::measure; }",
        ),
    ];
    let files: Vec<(ModulePath, String)> =
        files.iter().map(|(p, t)| (m(p), t.to_string())).collect();
    let users = use_graph(&files);
    assert_eq!(
        users[&m("analysis::stats")],
        [m("analysis::fit"), m("suites::b")].into_iter().collect()
    );
    assert_eq!(
        users[&m("suites::a::measure")],
        [m("suites::b::inner")].into_iter().collect()
    );
    let modules: Vec<ModulePath> = files.iter().map(|(p, _)| p.clone()).collect();
    assert_eq!(
        used_by_one_suite(&modules, &users),
        [
            ("analysis::fit".to_string(), "a".to_string()),
            ("analysis::sets".to_string(), "a".to_string()),
            ("gpu::launch".to_string(), "a".to_string()),
            ("gpu::launch::dsm".to_string(), "a".to_string()),
        ]
    );
}

/// Where a suite's source names how `all` shares the GPU: a line that says "lease" or names a
/// `GPUBENCH_` variable (comments too), or an identifier in its code with a scheduler word as
/// one of its snake-case parts (`turn`, `aside`, `park`, …). English in a suite's own sense
/// stays allowed in prose (the sync suite's lanes wait for their turn; sm-map sets a slow group
/// aside): what is forbidden is the mechanism, named or called.
fn scheduler_words(text: &str) -> Vec<String> {
    const WORDS: [&str; 7] = [
        "lease", "turn", "turns", "aside", "asides", "park", "parked",
    ];
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let lower = line.to_ascii_lowercase();
        if lower.contains("lease") && !lower.contains("release") || line.contains("GPUBENCH_") {
            found.push(format!("line {}: {}", n + 1, line.trim()));
        }
    }
    let code = code_only(text);
    for ident in code.split(|c: char| !is_ident(c)).filter(|w| !w.is_empty()) {
        let lower = ident.to_ascii_lowercase();
        if lower.split('_').any(|part| WORDS.contains(&part)) {
            found.push(format!("identifier {ident}"));
        }
    }
    found
}

/// The scheduler behind one seam: a suite says what it does through `harness::sharing`
/// (a step done, host work off the GPU, a program of its own that measures in its place) and
/// names no mechanism of the scheduler.
#[test]
fn no_suite_names_the_scheduler() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/suites");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 50, "the suites' sources were not found");
    let offences: Vec<String> = files
        .iter()
        .flat_map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            scheduler_words(&text)
                .into_iter()
                .map(move |w| format!("{}: {w}", file.display()))
        })
        .collect();
    assert!(offences.is_empty(), "{}", offences.join("\n"));
}

#[test]
fn the_scheduler_scan_sees_the_mechanism_and_not_the_english() {
    let mechanism = "fn f() { crate::gpu::lease::grant(go); }\n// GPUBENCH_TRACE on\nlet my_turn = 1;\nlet parked_at = 2;";
    assert_eq!(
        scheduler_words(mechanism),
        [
            "line 1: fn f() { crate::gpu::lease::grant(go); }",
            "line 2: // GPUBENCH_TRACE on",
            "identifier lease",
            "identifier my_turn",
            "identifier parked_at",
        ]
    );
    let english = "// the lane whose turn it is; a stray set aside\nlet s = \"waiting for their turn\";\nrelease(buffer);\nlet turnover = returns;";
    assert!(scheduler_words(english).is_empty());
}

//! What an open-source release carries, checked against Cargo.toml: the licence files its
//! `license` names, a `CITATION.cff` and a `CHANGELOG.md` of the same version; and (slow) that
//! `cargo package` makes a crate under crates.io's 10 MB holding every file the build reads.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(name: &str) -> String {
    std::fs::read_to_string(root().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The value of a top-level `key: value` line of a YAML file (CITATION.cff), unquoted.
fn yaml_value(text: &str, key: &str) -> Option<String> {
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{key}:")))
        .map(|v| v.trim().trim_matches('"').to_string())
}

#[test]
fn licence_citation_and_changelog_name_the_crates_version_and_licence() {
    let version = env!("CARGO_PKG_VERSION");
    let citation = read("CITATION.cff");
    assert_eq!(
        yaml_value(&citation, "version").as_deref(),
        Some(version),
        "CITATION.cff's version"
    );
    assert_eq!(
        yaml_value(&citation, "cff-version").as_deref(),
        Some("1.2.0")
    );
    let licence = env!("CARGO_PKG_LICENSE");
    assert_eq!(licence, "MIT OR Apache-2.0");
    assert_eq!(yaml_value(&citation, "license").as_deref(), Some(licence));
    assert!(read("LICENSE-MIT").contains("Permission is hereby granted, free of charge"));
    assert!(read("LICENSE-APACHE").contains("Apache License\n                        Version 2.0"));
    let changelog = read("CHANGELOG.md");
    let newest = changelog
        .lines()
        .find_map(|l| l.strip_prefix("## "))
        .expect("CHANGELOG.md has a version heading");
    assert!(
        newest.starts_with(&format!("{version}:")),
        "CHANGELOG.md's newest entry is {newest:?}, not {version}"
    );
    // The run-directory format a release writes is the one its changelog entry names.
    let format = gpubench::report::formats::CURRENT;
    assert!(
        newest.ends_with(&format!("format {format}")),
        "CHANGELOG.md's {newest:?} does not name format {format}"
    );
}

/// The files a build of the crate reads outside `src/`: each `include_str!`/`include_bytes!`
/// of code that is not a test, resolved from the file that names it.
fn included_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            included_files(&path, out);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // Code after a file's test module is test code: what it includes the crate need not.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for macro_name in ["include_str!(\"", "include_bytes!(\""] {
            for (at, _) in code.match_indices(macro_name) {
                let rest = &code[at + macro_name.len()..];
                let named = &rest[..rest.find('"').unwrap()];
                out.push(path.parent().unwrap().join(named));
            }
        }
    }
}

mod slow {
    use super::*;

    #[test]
    #[ignore = "slow: runs cargo package"]
    fn slow_the_crate_packages_under_ten_mb_with_every_file_its_build_reads() {
        let target = tempfile_dir();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = std::process::Command::new(&cargo)
            .args(["package", "--offline", "--allow-dirty", "--no-verify"])
            .arg("--target-dir")
            .arg(&target)
            .current_dir(root())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let list = std::process::Command::new(&cargo)
            .args(["package", "--offline", "--allow-dirty", "--list"])
            .current_dir(root())
            .output()
            .unwrap();
        let listed = String::from_utf8(list.stdout).unwrap();
        let crate_file = target
            .join("package")
            .join(format!("gpubench-{}.crate", env!("CARGO_PKG_VERSION")));
        let bytes = std::fs::metadata(&crate_file).unwrap().len();
        std::fs::remove_dir_all(&target).ok();
        assert!(bytes < 10_000_000, "the crate is {bytes} bytes");
        let mut needed = vec![
            root().join("build.rs"),
            root().join("cuda/ptx/PROVENANCE"),
            root().join("LICENSE-MIT"),
            root().join("LICENSE-APACHE"),
            root().join("CITATION.cff"),
        ];
        included_files(&root().join("src"), &mut needed);
        assert!(needed.len() > 5, "no include_str!/include_bytes! found");
        for file in needed {
            let file = file.canonicalize().unwrap();
            let relative = file.strip_prefix(root().canonicalize().unwrap()).unwrap();
            let relative = relative.to_string_lossy();
            assert!(
                listed.lines().any(|l| l == relative),
                "the crate leaves out {relative}, which its build reads"
            );
        }
        for source in std::fs::read_dir(root().join("cuda")).unwrap() {
            let name = source.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".cu") || name.ends_with(".cuh") {
                assert!(
                    listed.lines().any(|l| l == format!("cuda/{name}")),
                    "{name}"
                );
            }
        }
    }

    /// A new directory under the system's temporary one.
    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gpubench-package-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}

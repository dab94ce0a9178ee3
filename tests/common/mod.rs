//! Helpers the integration tests share.

use std::path::{Path, PathBuf};

/// A copy of the directory `from` at `to` (which must not exist yet), as `cp -r` makes it.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Every directory under `dir` (itself included) that holds a file named `file`, sorted.
#[allow(dead_code)] // not every test crate that includes this module uses it
pub fn dirs_holding(dir: &Path, file: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, file: &str, found: &mut Vec<PathBuf>) {
        if dir.join(file).is_file() {
            found.push(dir.to_path_buf());
        }
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, file, found);
            }
        }
    }
    let mut found = Vec::new();
    walk(dir, file, &mut found);
    found.sort();
    found
}

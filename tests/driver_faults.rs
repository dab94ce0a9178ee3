//! A broken driver, without a GPU: small stand-ins for `libcuda.so` compiled by the test with
//! the system C compiler and put first on `LD_LIBRARY_PATH`, where cudarc's dynamic loading
//! finds them. Each fault must end in one sentence and exit code 3, never a panic or a hang.

use std::path::{Path, PathBuf};
use std::process::Command as Process;
use std::time::Duration;

use assert_cmd::Command;
use predicates::prelude::*;

const NO_USABLE_GPU: i32 = 3;

/// Compiles `source` into `dir/libcuda.so` (and the `.so.1` name), or `None` where this machine
/// has no C compiler.
fn stub_driver(dir: &Path, source: &str) -> Option<PathBuf> {
    let c = dir.join("stub.c");
    std::fs::write(&c, source).unwrap();
    let library = dir.join("libcuda.so");
    let built = Process::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&library)
        .arg(&c)
        .status()
        .ok()?;
    assert!(built.success(), "the stub driver did not compile");
    std::fs::copy(&library, dir.join("libcuda.so.1")).unwrap();
    Some(dir.to_path_buf())
}

fn info_with(libraries: &Path) -> assert_cmd::assert::Assert {
    let run = tempfile::tempdir().unwrap();
    Command::cargo_bin("gpubench")
        .unwrap()
        .current_dir(run.path())
        .env("LD_LIBRARY_PATH", libraries)
        .args(["divergence", "--output", "out"])
        .timeout(Duration::from_secs(30))
        .assert()
}

fn one_error_line(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.len() == 1 && lines[0].starts_with("Error: ") && !text.contains("internal bug")
}

#[test]
fn a_driver_library_without_cu_init_is_no_usable_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let Some(libraries) = stub_driver(
        dir.path(),
        "int cuDriverGetVersion(int *v) { *v = 13000; return 0; }\n",
    ) else {
        eprintln!("no C compiler on this machine: the driver-fault tests did not run");
        return;
    };
    info_with(&libraries)
        .code(NO_USABLE_GPU)
        .stderr(predicate::function(one_error_line))
        .stderr(predicate::str::contains("has no cuInit"));
}

#[test]
fn a_driver_whose_cu_init_fails_is_no_usable_gpu() {
    let dir = tempfile::tempdir().unwrap();
    // 100 is CUDA_ERROR_NO_DEVICE; cuGetErrorString and cuGetErrorName answer like a driver.
    let source = r#"
static const char *text = "no CUDA-capable device is detected";
static const char *name = "CUDA_ERROR_NO_DEVICE";
int cuInit(unsigned flags) { (void)flags; return 100; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuGetErrorString(int e, const char **s) { (void)e; *s = text; return 0; }
int cuGetErrorName(int e, const char **s) { (void)e; *s = name; return 0; }
"#;
    let Some(libraries) = stub_driver(dir.path(), source) else {
        eprintln!("no C compiler on this machine: the driver-fault tests did not run");
        return;
    };
    info_with(&libraries)
        .code(NO_USABLE_GPU)
        .stderr(predicate::function(one_error_line));
}

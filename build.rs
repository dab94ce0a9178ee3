//! Compiles every `cuda/*.cu` to PTX and embeds it in the binary.
//!
//! nvcc is looked for in this order: `$NVCC`, `$CUDA_HOME/bin/nvcc`, `$CUDA_PATH/bin/nvcc`,
//! `nvcc` on `PATH`, then a toolchain this script provisioned earlier under `target/`.
//! When none exists, the pinned PyPI toolchain (the CUDA 13.0 compiler, whose PTX ISA the
//! 580 drivers load) is installed with pip into `target/cuda-toolchain/`, so a fresh clone
//! builds and tests with no manual step. The PTX target defaults to `compute_75` (the lowest
//! that CUDA 13 accepts; the driver JIT-compiles it for newer GPUs) and can be changed with
//! `GPUBENCH_PTX_ARCH`. A source whose first line reads `// gpubench-arch: compute_90a` is
//! compiled for that target instead (instructions that exist only there, such as wgmma).
//!
//! Generated: `$OUT_DIR/<name>.ptx` for every kernel source and `$OUT_DIR/kernels.rs`, which
//! lists them together with the nvcc version and PTX target, for the run metadata.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, exit};

const DEFAULT_PTX_ARCH: &str = "compute_75";
/// The PyPI packages that make a working nvcc 13.0 (unpinned, nvvm moves to a newer release
/// whose PTX the 580 drivers refuse).
const PINNED_TOOLCHAIN: [&str; 4] = [
    "nvidia-cuda-nvcc==13.0.88",
    "nvidia-cuda-crt==13.0.88",
    "nvidia-cuda-runtime==13.0.96",
    "nvidia-nvvm==13.0.88",
];

fn main() {
    for var in [
        "NVCC",
        "CUDA_HOME",
        "CUDA_PATH",
        "GPUBENCH_PTX_ARCH",
        "PATH",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=cuda");
    println!("cargo:rerun-if-changed=build.rs");

    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let arch = env::var("GPUBENCH_PTX_ARCH").unwrap_or_else(|_| DEFAULT_PTX_ARCH.to_string());
    let nvcc = find_nvcc(&out_dir).unwrap_or_else(|message| fail(&message));
    let nvcc_version = nvcc_version(&nvcc).unwrap_or_else(|message| fail(&message));

    let mut sources: Vec<PathBuf> = fs::read_dir("cuda")
        .unwrap_or_else(|e| fail(&format!("cannot read the cuda/ folder: {e}")))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "cu"))
        .collect();
    sources.sort();

    let mut listing = String::new();
    writeln!(listing, "pub const NVCC_VERSION: &str = {nvcc_version:?};").unwrap();
    writeln!(listing, "pub const PTX_ARCH: &str = {arch:?};").unwrap();
    writeln!(listing, "pub static MODULES: &[EmbeddedPtx] = &[").unwrap();
    for source in &sources {
        println!("cargo:rerun-if-changed={}", source.display());
        let name = source.file_stem().unwrap().to_string_lossy().into_owned();
        let ptx = out_dir.join(format!("{name}.ptx"));
        let own = fs::read_to_string(source).ok().and_then(|text| {
            let first = text.lines().next()?.to_string();
            Some(first.strip_prefix("// gpubench-arch:")?.trim().to_string())
        });
        compile(&nvcc, own.as_deref().unwrap_or(&arch), source, &ptx);
        writeln!(
            listing,
            "    EmbeddedPtx {{ name: {name:?}, ptx: include_str!({:?}) }},",
            ptx.display().to_string()
        )
        .unwrap();
    }
    writeln!(listing, "];").unwrap();
    fs::write(out_dir.join("kernels.rs"), listing).expect("write kernels.rs");

    println!("cargo:rustc-env=GPUBENCH_GIT_COMMIT={}", git_commit());
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    println!("cargo:warning={message}");
    exit(1);
}

fn find_nvcc(out_dir: &Path) -> Result<PathBuf, String> {
    if let Some(explicit) = env::var_os("NVCC") {
        let path = PathBuf::from(explicit);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "NVCC is set to {} but no such file exists; point it at nvcc or unset it",
                path.display()
            ))
        };
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = env::var_os(var) {
            let candidate = PathBuf::from(root).join("bin").join("nvcc");
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    if let Some(on_path) = env::var_os("PATH").and_then(|paths| {
        env::split_paths(&paths)
            .map(|dir| dir.join("nvcc"))
            .find(|candidate| candidate.is_file())
    }) {
        return Ok(on_path);
    }
    let cache = toolchain_cache(out_dir);
    let cached = cache.join("nvidia").join("cu13").join("bin").join("nvcc");
    if cached.is_file() {
        return Ok(cached);
    }
    provision(&cache)?;
    if cached.is_file() {
        Ok(cached)
    } else {
        Err(format!(
            "pip installed the CUDA toolchain but {} is missing; install the CUDA 13.0 toolkit and set NVCC",
            cached.display()
        ))
    }
}

/// `target/cuda-toolchain`, found from OUT_DIR (`target/<profile>/build/<pkg>/out`).
fn toolchain_cache(out_dir: &Path) -> PathBuf {
    let target = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .or_else(|| out_dir.ancestors().nth(4).map(Path::to_path_buf))
        .unwrap_or_else(|| out_dir.to_path_buf());
    target.join("cuda-toolchain")
}

fn provision(cache: &Path) -> Result<(), String> {
    println!(
        "cargo:warning=no nvcc found (NVCC, CUDA_HOME, CUDA_PATH, PATH); installing the pinned CUDA 13.0 compiler from PyPI into {}",
        cache.display()
    );
    // Install beside the cache and rename, so an interrupted install never looks finished.
    let staging = cache.with_extension(format!("partial-{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    let mut last_error = String::from("no Python interpreter found");
    for python in ["python3", "python"] {
        let output = Command::new(python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg("--target")
            .arg(&staging)
            .args(PINNED_TOOLCHAIN)
            .output();
        match output {
            Ok(out) if out.status.success() => {
                if cache.exists() {
                    // Another build finished first; keep its copy.
                    let _ = fs::remove_dir_all(&staging);
                    return Ok(());
                }
                return fs::rename(&staging, cache)
                    .map_err(|e| format!("cannot move the toolchain into place: {e}"));
            }
            Ok(out) => {
                last_error = format!(
                    "`{python} -m pip install` failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                )
            }
            Err(e) => last_error = format!("cannot run {python}: {e}"),
        }
    }
    let _ = fs::remove_dir_all(&staging);
    Err(format!(
        "no nvcc found and the pinned PyPI toolchain could not be installed ({last_error}); install the CUDA 13.0 toolkit (nvcc) or Python 3 with pip and network access to PyPI"
    ))
}

fn nvcc_version(nvcc: &Path) -> Result<String, String> {
    let output = Command::new(nvcc)
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", nvcc.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .find(|line| line.contains("release"))
        .map(|line| line.trim().to_string())
        .ok_or_else(|| {
            format!(
                "{} --version printed no release line; is it nvcc?",
                nvcc.display()
            )
        })
}

fn compile(nvcc: &Path, arch: &str, source: &Path, ptx: &Path) {
    let mut command = Command::new(nvcc);
    command
        .arg("-ptx")
        .arg(format!("-arch={arch}"))
        .arg("-O3")
        .arg(source)
        .arg("-o")
        .arg(ptx);
    let output = command
        .output()
        .unwrap_or_else(|e| fail(&format!("cannot run {}: {e}", nvcc.display())));
    if !output.status.success() {
        fail(&format!(
            "nvcc failed on {}\ncommand: {:?}\n{}",
            source.display(),
            command,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
}

fn git_commit() -> String {
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/index");
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok();
    let Some(head) = head.filter(|out| out.status.success()) else {
        return String::new();
    };
    let mut commit = String::from_utf8_lossy(&head.stdout).trim().to_string();
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .is_ok_and(|out| !out.stdout.is_empty());
    if dirty {
        commit.push_str("-dirty");
    }
    commit
}

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
//! Before installing anything, a build with no nvcc takes the PTX committed in `cuda/ptx/`,
//! when `cuda/ptx/PROVENANCE` records the SHA-256 of exactly today's sources and flags: the
//! pinned nvcc compiles the same sources to the same bytes, so a fresh clone need not fetch
//! the compiler to build and test. Wherever an nvcc is found, the sources are compiled
//! afresh instead; tests (`kernels::tests`) check that the committed PTX belongs to today's
//! sources and equals that compile (`scripts/refresh-ptx.sh` writes it again after a kernel
//! changes).
//!
//! Generated: `$OUT_DIR/<name>.ptx` for every kernel source and `$OUT_DIR/kernels.rs`, which
//! lists them together with the nvcc version and PTX target, for the run metadata.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, exit};

const DEFAULT_PTX_ARCH: &str = "compute_75";
/// Where the PTX of today's sources is committed, and the file that says which sources.
const COMMITTED_PTX: &str = "cuda/ptx";
const PROVENANCE: &str = "cuda/ptx/PROVENANCE";
/// nvcc's options besides the target; part of what the committed PTX was compiled with.
const NVCC_OPTIONS: [&str; 2] = ["-ptx", "-O3"];
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

    let sources = kernel_sources("cu");
    let headers = kernel_sources("cuh");
    let digest = sources_digest(&arch, sources.iter().chain(&headers));
    let committed = read_provenance();
    let matches = committed.as_ref().is_some_and(|c| c.digest == digest);
    let found = find_nvcc(&out_dir, matches).unwrap_or_else(|message| fail(&message));
    let (nvcc_version, origin) = match &found {
        Some(nvcc) => (
            nvcc_version(nvcc).unwrap_or_else(|message| fail(&message)),
            "nvcc",
        ),
        None => (
            committed.as_ref().map(|c| c.nvcc.clone()).unwrap(),
            "committed",
        ),
    };

    let mut listing = String::new();
    writeln!(listing, "pub const NVCC_VERSION: &str = {nvcc_version:?};").unwrap();
    writeln!(listing, "pub const PTX_ARCH: &str = {arch:?};").unwrap();
    writeln!(
        listing,
        "/// `nvcc` when build.rs compiled the kernels, `committed` when it took `cuda/ptx/`."
    )
    .unwrap();
    writeln!(listing, "pub const PTX_ORIGIN: &str = {origin:?};").unwrap();
    writeln!(
        listing,
        "/// Whether `cuda/ptx/PROVENANCE` names today's sources and flags."
    )
    .unwrap();
    writeln!(
        listing,
        "pub const COMMITTED_PTX_IS_CURRENT: bool = {matches};"
    )
    .unwrap();
    writeln!(listing, "pub static MODULES: &[EmbeddedPtx] = &[").unwrap();
    for source in &sources {
        let name = source.file_stem().unwrap().to_string_lossy().into_owned();
        let ptx = out_dir.join(format!("{name}.ptx"));
        match &found {
            Some(nvcc) => {
                let own = fs::read_to_string(source).ok().and_then(|text| {
                    let first = text.lines().next()?.to_string();
                    Some(first.strip_prefix("// gpubench-arch:")?.trim().to_string())
                });
                compile(nvcc, own.as_deref().unwrap_or(&arch), source, &ptx);
            }
            None => {
                let from = Path::new(COMMITTED_PTX).join(format!("{name}.ptx"));
                fs::copy(&from, &ptx).unwrap_or_else(|e| {
                    fail(&format!(
                        "{} names today's sources but {} cannot be read ({e}); run scripts/refresh-ptx.sh where nvcc is",
                        PROVENANCE,
                        from.display()
                    ))
                });
            }
        }
        writeln!(
            listing,
            "    EmbeddedPtx {{ name: {name:?}, ptx: include_str!({:?}) }},",
            ptx.display().to_string()
        )
        .unwrap();
    }
    writeln!(listing, "];").unwrap();
    fs::write(out_dir.join("kernels.rs"), listing).expect("write kernels.rs");
    // What scripts/refresh-ptx.sh copies to cuda/ptx/ beside the PTX it compiled.
    let provenance = format!(
        "# The PTX in this folder, compiled from cuda/ by the nvcc below; build.rs embeds it when\n# no nvcc is found and the digest matches today's sources. Written by scripts/refresh-ptx.sh.\nsources-sha256 {digest}\nnvcc {nvcc_version}\n"
    );
    fs::write(out_dir.join("PROVENANCE"), provenance).expect("write PROVENANCE");

    println!("cargo:rustc-env=GPUBENCH_GIT_COMMIT={}", git_commit());
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    println!("cargo:warning={message}");
    exit(1);
}

/// The files of `cuda/` with extension `ext`, sorted, each watched for changes.
fn kernel_sources(ext: &str) -> Vec<PathBuf> {
    let mut sources: Vec<PathBuf> = fs::read_dir("cuda")
        .unwrap_or_else(|e| fail(&format!("cannot read the cuda/ folder: {e}")))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == ext))
        .collect();
    sources.sort();
    for source in &sources {
        println!("cargo:rerun-if-changed={}", source.display());
    }
    sources
}

/// SHA-256 over every kernel source and header (name and bytes), the PTX target and nvcc's
/// options: what decides the PTX, short of the compiler.
fn sources_digest<'a>(arch: &str, files: impl Iterator<Item = &'a PathBuf>) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    hash.update(format!("arch {arch}\noptions {}\n", NVCC_OPTIONS.join(" ")));
    let mut files: Vec<&PathBuf> = files.collect();
    files.sort();
    for file in files {
        let bytes = fs::read(file)
            .unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", file.display())));
        hash.update(file.file_name().unwrap().to_string_lossy().as_bytes());
        hash.update([0]);
        hash.update(&bytes);
        hash.update([0]);
    }
    hash.finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// What `cuda/ptx/PROVENANCE` says the committed PTX was compiled from, and by what.
struct Provenance {
    digest: String,
    nvcc: String,
}

fn read_provenance() -> Option<Provenance> {
    println!("cargo:rerun-if-changed={PROVENANCE}");
    let text = fs::read_to_string(PROVENANCE).ok()?;
    let field = |key: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(key)?.strip_prefix(' '))
            .map(|value| value.trim().to_string())
    };
    Some(Provenance {
        digest: field("sources-sha256")?,
        nvcc: field("nvcc")?,
    })
}

/// The nvcc to compile with, or `None` to take the committed PTX (only where it is current
/// and no nvcc is at hand; a missing nvcc is installed from PyPI otherwise).
fn find_nvcc(out_dir: &Path, committed_is_current: bool) -> Result<Option<PathBuf>, String> {
    if let Some(explicit) = env::var_os("NVCC") {
        let path = PathBuf::from(explicit);
        return if path.is_file() {
            Ok(Some(path))
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
                return Ok(Some(candidate));
            }
        }
    }
    if let Some(on_path) = env::var_os("PATH").and_then(|paths| {
        env::split_paths(&paths)
            .map(|dir| dir.join("nvcc"))
            .find(|candidate| candidate.is_file())
    }) {
        return Ok(Some(on_path));
    }
    let cache = toolchain_cache(out_dir);
    let cached = cache.join("nvidia").join("cu13").join("bin").join("nvcc");
    if cached.is_file() {
        return Ok(Some(cached));
    }
    if committed_is_current {
        return Ok(None);
    }
    println!(
        "cargo:warning={PROVENANCE} does not name today's kernel sources (run scripts/refresh-ptx.sh where nvcc is)"
    );
    provision(&cache)?;
    if cached.is_file() {
        Ok(Some(cached))
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
        .args(NVCC_OPTIONS)
        .arg(format!("-arch={arch}"))
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

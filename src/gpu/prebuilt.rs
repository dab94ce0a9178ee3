//! Kernel modules compiled ahead by `gpubench all`: while the suites run one after another on
//! the GPU, `all` compiles every embedded module with the toolkit's ptxas for the device on the
//! host's other cores and disassembles it, into a directory it names to its children in
//! [`ENV`]. A suite then loads the cubin instead of asking the driver to compile the PTX, and
//! reads the SASS of that very cubin; a module not (yet) there is compiled as before, and one
//! still being compiled when a suite opens the GPU is waited for off it ([`pending`]: the suite
//! steps aside, so the next one measures meanwhile). The
//! cubin is there as soon as ptxas made it; its SASS (cuobjdump takes about half a second,
//! more than ptxas for most modules) follows, and a reader of the SASS waits for it. Without
//! the toolkit nothing is prebuilt and every suite works as it always did. Beside the modules,
//! on half the workers, `all` compiles the generated kernels a suite will ask for first (the
//! instruction space's coarse grid, [`Generated`], the largest first and without their SASS),
//! which the suite finds by their PTX; those are marked queued from the start, so the suite
//! (which steps aside to wait) waits for them rather than compiling them too.

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use crate::kernels::{EmbeddedPtx, MODULES};

/// The environment variable naming the directory of prebuilt modules.
pub const ENV: &str = "GPUBENCH_PREBUILT";

/// A module's prebuilt cubin (its SASS follows: [`Prebuilt::sass`]).
pub struct Prebuilt {
    pub cubin: Vec<u8>,
    /// "compiled by … and disassembled by …".
    pub tools: String,
    stem: PathBuf,
}

impl Prebuilt {
    /// The cubin's SASS, once `all` has disassembled it (waiting while it does); None where
    /// that failed.
    pub fn sass(&self) -> Option<String> {
        wait_while(&self.stem.with_extension("disassembling"));
        std::fs::read_to_string(self.stem.with_extension("sass")).ok()
    }
}

fn stem(dir: &Path, name: &str, ptx: &str) -> PathBuf {
    // The PTX's hash in the name: a cubin is only ever used for the PTX it was built from.
    dir.join(format!("{name}-{}", &crate::kernels::sha256_hex(ptx)[..16]))
}

/// The prebuilt `module`, where [`ENV`] names a directory holding it.
pub fn find(module: &EmbeddedPtx) -> Option<Prebuilt> {
    find_ptx(module.name, module.ptx)
}

/// The prebuilt cubin of the PTX text `ptx` named `name`, where [`ENV`] names a directory
/// holding it.
pub fn find_ptx(name: &str, ptx: &str) -> Option<Prebuilt> {
    let dir = PathBuf::from(std::env::var_os(ENV)?);
    let stem = stem(&dir, name, ptx);
    // Queued (a generated kernel) or being built right now: its build is nearer its end than a
    // compile of our own would be.
    wait_for_build(&stem);
    Some(Prebuilt {
        cubin: std::fs::read(stem.with_extension("cubin")).ok()?,
        tools: std::fs::read_to_string(stem.with_extension("tools")).ok()?,
        stem,
    })
}

/// The build markers' stem of each embedded module of `modules`, where [`ENV`] is set.
fn module_stems<'a>(modules: &'a [&str]) -> impl Iterator<Item = PathBuf> + 'a {
    let dir = std::env::var_os(ENV);
    modules.iter().filter_map(move |name| {
        Some(stem(
            Path::new(dir.as_ref()?),
            name,
            crate::kernels::module(name)?.ptx,
        ))
    })
}

/// Whether `all` is still compiling (or has queued) one of the embedded `modules`: a suite
/// that loaded it now would wait for it holding the GPU.
pub fn pending(modules: &[&str]) -> bool {
    module_stems(modules).any(|stem| {
        stem.with_extension("queued").exists() || stem.with_extension("building").exists()
    })
}

/// Waits (at most [`BUILD_WAIT`] each) until no module of `modules` is [`pending`].
pub fn wait_for(modules: &[&str]) {
    module_stems(modules).for_each(|stem| wait_for_build(&stem));
}

/// Waits while the build of `stem` is queued or running.
fn wait_for_build(stem: &Path) {
    wait_while(&stem.with_extension("queued"));
    wait_while(&stem.with_extension("building"));
}

/// Whether the prebuilt cubin of the PTX text `ptx` named `name` is there, with nothing left
/// to wait for (no build, queue or disassembly marker; false where [`ENV`] is not set).
pub fn ready_ptx(name: &str, ptx: &str) -> bool {
    let Some(dir) = std::env::var_os(ENV) else {
        return false;
    };
    let stem = stem(Path::new(&dir), name, ptx);
    stem.with_extension("cubin").exists()
        && ["building", "queued", "disassembling"]
            .iter()
            .all(|marker| !stem.with_extension(marker).exists())
}

/// Waits while the marker `file` exists, at most [`BUILD_WAIT`].
fn wait_while(file: &Path) {
    let started = std::time::Instant::now();
    while file.exists() && started.elapsed() < BUILD_WAIT {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// How long a suite waits for a module `all` is compiling before it compiles its own.
const BUILD_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// A kernel a suite generates at run time (PTX for a generic target), named `name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    pub name: &'static str,
    pub ptx: String,
}

/// Writes `bytes` to `path` whole or not at all (a reader never sees half a file).
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    // A write cut short (a full disk, a file-size limit) leaves no half file behind.
    if let Err(error) = std::fs::write(&partial, bytes) {
        let _ = std::fs::remove_file(&partial);
        return Err(error);
    }
    std::fs::rename(partial, path)
}

fn prebuild(dir: &Path, (name, ptx, arch, disassemble): &Compile) -> Result<(), String> {
    let stem = stem(dir, name, ptx);
    let io = |e: std::io::Error| format!("writing into {}: {e}", dir.display());
    // While they exist a suite that needs the module, or its SASS, waits for it rather than
    // compiling it too.
    let building = stem.with_extension("building");
    let disassembling = stem.with_extension("disassembling");
    let written = std::fs::write(&building, b"").and_then(|()| {
        if *disassemble {
            std::fs::write(&disassembling, b"")
        } else {
            Ok(())
        }
    });
    // Waiting for it now means waiting for this build (or for nothing, where that failed).
    let _ = std::fs::remove_file(stem.with_extension("queued"));
    written.map_err(io)?;
    let assembled = super::toolchain::assemble(name, ptx, arch).and_then(|(cubin, tools)| {
        // The cubin last: `find` needs both, so it is the one that makes a module available.
        write_whole(&stem.with_extension("tools"), tools.as_bytes()).map_err(io)?;
        write_whole(&stem.with_extension("cubin"), &cubin.bytes).map_err(io)?;
        Ok(cubin)
    });
    let _ = std::fs::remove_file(&building);
    if !disassemble {
        return assembled.map(drop);
    }
    let disassembled = assembled.and_then(|cubin| {
        let text = cubin
            .disassemble()
            .map_err(|reason| format!("failed: {reason}"))?;
        write_whole(&stem.with_extension("sass"), text.as_bytes()).map_err(io)
    });
    let _ = std::fs::remove_file(&disassembling);
    disassembled
}

/// Something `all` asks to have compiled: an embedded module, by name, or a generated kernel.
pub enum Job {
    Module(String),
    Generated(Generated),
}

/// One compile: (name, PTX, ptxas target, whether to disassemble the cubin too).
type Compile = (String, std::borrow::Cow<'static, str>, String, bool);

/// What to build, in the order of `jobs`: the modules, each once (several suites share one:
/// two workers building one module would race for its files), then every embedded module not
/// named; and apart, the generated kernels, the largest first (a suite waits for all of a
/// batch, so the longest compiles start first), not disassembled (cuobjdump took 0.3-0.5 s a
/// kernel, more than ptxas for all but the largest; their suite checks their code otherwise).
fn build_queues(jobs: Vec<Job>, cc: &str) -> (Vec<Compile>, Vec<Compile>) {
    let generic = format!("sm_{}", cc.replace('.', ""));
    let mut queued: Vec<&'static str> = Vec::new();
    let (mut modules, mut generated) = (Vec::new(), Vec::new());
    let mut module = |m: &'static EmbeddedPtx, modules: &mut Vec<_>| {
        if !queued.contains(&m.name) {
            queued.push(m.name);
            modules.push((
                m.name.to_string(),
                m.ptx.into(),
                super::toolchain::arch(m, cc),
                true,
            ));
        }
    };
    for job in jobs {
        match job {
            Job::Module(name) => {
                if let Some(m) = crate::kernels::module(&name) {
                    module(m, &mut modules);
                }
            }
            Job::Generated(g) => {
                generated.push((g.name.to_string(), g.ptx.into(), generic.clone(), false))
            }
        }
    }
    generated.sort_by_key(|(_, ptx, _, _): &Compile| std::cmp::Reverse(ptx.len()));
    for m in MODULES {
        module(m, &mut modules);
    }
    (modules, generated)
}

/// The file that marks a generated kernel queued in `dir`.
fn queued_marker(dir: &Path, (name, ptx, _, _): &Compile) -> PathBuf {
    stem(dir, name, ptx).with_extension("queued")
}

/// Compiles `jobs` on `workers` threads, into `dir`, for a GPU of compute capability `cc`: the
/// modules in their order (the order the suites will want them), then every embedded module
/// they did not name, on half the threads, and the generated kernels on the other half (a
/// thread whose side is done helps the other). Returns the threads; a module that fails is
/// left to its suite (the reason goes to stderr).
pub fn start(dir: PathBuf, cc: String, jobs: Vec<Job>, workers: usize) -> Vec<JoinHandle<()>> {
    let (modules, generated) = build_queues(jobs, &cc);
    for job in &generated {
        // Best effort: without the marker its suite compiles the kernel itself.
        let _ = std::fs::write(queued_marker(&dir, job), b"");
    }
    let queues = std::sync::Arc::new([
        std::sync::Mutex::new(modules.into_iter()),
        std::sync::Mutex::new(generated.into_iter()),
    ]);
    let take = |queue: &std::sync::Mutex<std::vec::IntoIter<Compile>>| {
        queue.lock().map(|mut q| q.next()).unwrap_or(None)
    };
    (0..workers.max(1))
        .map(|worker| {
            let (queues, dir) = (queues.clone(), dir.clone());
            std::thread::spawn(move || {
                crate::gpu::lease::lower_priority();
                let side = worker % 2;
                while let Some(job) = take(&queues[side]).or_else(|| take(&queues[1 - side])) {
                    match prebuild(&dir, &job) {
                        Ok(()) => {}
                        // Without the toolkit nothing can be built: stop early, and let no
                        // suite wait for a kernel marked queued.
                        Err(reason) if reason.starts_with("skipped") => {
                            while let Some(job) = take(&queues[1]) {
                                let _ = std::fs::remove_file(queued_marker(&dir, &job));
                            }
                            break;
                        }
                        Err(reason) => eprintln!("note: prebuilding {}: {reason}", job.0),
                    }
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_is_queued_once_in_the_order_asked() {
        let job = |name: &str| Job::Module(name.to_string());
        let grid = |ptx: &str| {
            Job::Generated(Generated {
                name: "straight",
                ptx: ptx.into(),
            })
        };
        let jobs = vec![
            job("clock"),
            job("cache"),
            grid("small"),
            job("cache"),
            grid("the largest"),
            job("divergence"),
        ];
        let (modules, generated) = build_queues(jobs, "9.0");
        let names: Vec<&str> = modules.iter().map(|(name, ..)| name.as_str()).collect();
        assert_eq!(names[..3], ["clock", "cache", "divergence"]);
        assert!(modules.iter().all(|(.., disassemble)| *disassemble));
        // The generated kernels: the largest first, for the device, not disassembled.
        let generated: Vec<(&str, &str, &str, bool)> = generated
            .iter()
            .map(|(name, ptx, arch, disassemble)| {
                (name.as_str(), &ptx[..], arch.as_str(), *disassemble)
            })
            .collect();
        assert_eq!(
            generated,
            [
                ("straight", "the largest", "sm_90", false),
                ("straight", "small", "sm_90", false)
            ]
        );
        assert_eq!(names.len(), MODULES.len());
        for module in MODULES {
            assert_eq!(names.iter().filter(|&&n| n == module.name).count(), 1);
        }
    }

    /// After 50 ms, writes `bytes` to `stem`'s `file` and removes its `marker`, as a worker
    /// of `all` would.
    fn finish_later(
        stem: &Path,
        file: &'static str,
        bytes: &'static [u8],
        marker: &'static str,
    ) -> std::thread::JoinHandle<()> {
        let stem = stem.to_path_buf();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            write_whole(&stem.with_extension(file), bytes).unwrap();
            std::fs::remove_file(stem.with_extension(marker)).unwrap();
        })
    }

    #[test]
    fn a_module_is_found_once_its_cubin_is_there_for_its_ptx_and_its_sass_follows() {
        let dir = tempfile::tempdir().unwrap();
        let module = crate::kernels::module("clock").unwrap();
        let stem = stem(dir.path(), module.name, module.ptx);
        // SAFETY (of the test's environment): no other test reads this variable.
        unsafe { std::env::set_var(ENV, dir.path()) };
        assert!(find(module).is_none());
        write_whole(&stem.with_extension("tools"), b"compiled by ptxas").unwrap();
        assert!(find(module).is_none(), "no cubin yet");
        write_whole(&stem.with_extension("cubin"), b"\x7fELF").unwrap();
        let found = find(module).unwrap();
        assert_eq!(found.cubin, b"\x7fELF");
        assert_eq!(found.sass(), None, "no SASS, and none being made");
        assert!(
            ready_ptx(module.name, module.ptx),
            "nothing more being made"
        );
        // SASS being made is waited for.
        std::fs::write(stem.with_extension("disassembling"), b"").unwrap();
        let disassembler = finish_later(&stem, "sass", b"Function : x", "disassembling");
        assert!(!ready_ptx(module.name, module.ptx), "SASS being made");
        assert_eq!(found.sass().as_deref(), Some("Function : x"));
        disassembler.join().unwrap();
        assert!(ready_ptx(module.name, module.ptx));
        // One being built is waited for.
        let other = super::stem(dir.path(), "other", "PTX of another");
        write_whole(&other.with_extension("tools"), b"t").unwrap();
        std::fs::write(other.with_extension("building"), b"").unwrap();
        let builder = finish_later(&other, "cubin", b"built", "building");
        assert_eq!(find_ptx("other", "PTX of another").unwrap().cubin, b"built");
        builder.join().unwrap();
        // So is a generated kernel queued and not yet begun.
        let queued = super::stem(dir.path(), "straight", "PTX queued");
        write_whole(&queued.with_extension("tools"), b"t").unwrap();
        std::fs::write(queued.with_extension("queued"), b"").unwrap();
        let builder = finish_later(&queued, "cubin", b"queued, built", "queued");
        assert_eq!(
            find_ptx("straight", "PTX queued").unwrap().cubin,
            b"queued, built"
        );
        builder.join().unwrap();
        // Another module's PTX has another name.
        assert!(find(crate::kernels::module("shared").unwrap()).is_none());
        unsafe { std::env::remove_var(ENV) };
    }
}

//! Kernel modules compiled ahead by `gpubench all`: while the suites run one after another on
//! the GPU, `all` compiles every embedded module with the toolkit's ptxas for the device on the
//! host's other cores and disassembles it, into a directory it names to its children in
//! [`ENV`]. A suite then loads the cubin instead of asking the driver to compile the PTX, and
//! reads the SASS of that very cubin; a module not (yet) there is compiled as before. Without
//! the toolkit nothing is prebuilt and every suite works as it always did.

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use crate::kernels::{EmbeddedPtx, MODULES};

/// The environment variable naming the directory of prebuilt modules.
pub const ENV: &str = "GPUBENCH_PREBUILT";

/// A module's prebuilt cubin and SASS.
pub struct Prebuilt {
    pub cubin: Vec<u8>,
    pub sass: String,
    /// "compiled by … and disassembled by …".
    pub tools: String,
}

fn stem(dir: &Path, module: &EmbeddedPtx) -> PathBuf {
    // The PTX's hash in the name: a cubin is only ever used for the PTX it was built from.
    dir.join(format!("{}-{}", module.name, &module.sha256()[..16]))
}

/// The prebuilt `module`, where [`ENV`] names a directory holding it.
pub fn find(module: &EmbeddedPtx) -> Option<Prebuilt> {
    let dir = PathBuf::from(std::env::var_os(ENV)?);
    let stem = stem(&dir, module);
    Some(Prebuilt {
        cubin: std::fs::read(stem.with_extension("cubin")).ok()?,
        sass: std::fs::read_to_string(stem.with_extension("sass")).ok()?,
        tools: std::fs::read_to_string(stem.with_extension("tools")).ok()?,
    })
}

/// Writes `bytes` to `path` whole or not at all (a reader never sees half a file).
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, bytes)?;
    std::fs::rename(partial, path)
}

fn prebuild(dir: &Path, module: &EmbeddedPtx, cc: &str) -> Result<(), String> {
    let arch = super::sass::arch(module, cc);
    let (cubin, sass, tools) = super::sass::compile(module, &arch)?;
    let stem = stem(dir, module);
    let io = |e: std::io::Error| format!("writing into {}: {e}", dir.display());
    // The cubin last: `find` needs all three, so it is the one that makes a module available.
    write_whole(&stem.with_extension("sass"), sass.as_bytes()).map_err(io)?;
    write_whole(&stem.with_extension("tools"), tools.as_bytes()).map_err(io)?;
    write_whole(&stem.with_extension("cubin"), &cubin).map_err(io)
}

/// Compiles the modules named in `order` first, in that order, then every other embedded one,
/// on `workers` threads, into `dir`, for a GPU of compute capability `cc`. Returns the
/// threads; a module that fails is left to its suite (the reason goes to stderr).
pub fn start(dir: PathBuf, cc: String, order: &[&str], workers: usize) -> Vec<JoinHandle<()>> {
    let mut queue: Vec<&'static EmbeddedPtx> = order
        .iter()
        .filter_map(|name| crate::kernels::module(name))
        .collect();
    for module in MODULES {
        if !queue.iter().any(|m| m.name == module.name) {
            queue.push(module);
        }
    }
    let queue = std::sync::Arc::new(std::sync::Mutex::new(queue.into_iter()));
    (0..workers.max(1))
        .map(|_| {
            let (queue, dir, cc) = (queue.clone(), dir.clone(), cc.clone());
            std::thread::spawn(move || {
                loop {
                    let next = queue.lock().map(|mut q| q.next()).unwrap_or(None);
                    let Some(module) = next else { break };
                    match prebuild(&dir, module, &cc) {
                        Ok(()) => {}
                        // Without the toolkit no module can be built: stop early.
                        Err(reason) if reason.starts_with("skipped") => break,
                        Err(reason) => eprintln!("note: prebuilding {}: {reason}", module.name),
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
    fn a_module_is_found_only_when_all_three_files_are_there_for_its_ptx() {
        let dir = tempfile::tempdir().unwrap();
        let module = crate::kernels::module("clock").unwrap();
        let stem = stem(dir.path(), module);
        // SAFETY (of the test's environment): no other test reads this variable.
        unsafe { std::env::set_var(ENV, dir.path()) };
        assert!(find(module).is_none());
        write_whole(&stem.with_extension("sass"), b"Function : x").unwrap();
        write_whole(&stem.with_extension("tools"), b"compiled by ptxas").unwrap();
        assert!(find(module).is_none(), "no cubin yet");
        write_whole(&stem.with_extension("cubin"), b"\x7fELF").unwrap();
        let found = find(module).unwrap();
        assert_eq!(found.cubin, b"\x7fELF");
        assert_eq!(found.sass, "Function : x");
        // Another module's PTX has another name.
        assert!(find(crate::kernels::module("shared").unwrap()).is_none());
        unsafe { std::env::remove_var(ENV) };
    }
}

//! The machine code the GPU really ran: the embedded PTX compiled for the device with
//! `ptxas` and disassembled with `cuobjdump -sass`, where those tools exist (they come with
//! the CUDA toolkit, not the driver). Without them the run carries on and says why.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use crate::analysis::sass::{self, KernelSass};
use crate::kernels::EmbeddedPtx;

#[derive(Debug, Clone, Serialize)]
pub struct SassRecord {
    /// "written to FILE", or why no SASS was made.
    pub status: String,
    pub arch: String,
    pub kernels: Vec<KernelSass>,
}

pub(crate) fn find_tool(name: &str) -> Option<PathBuf> {
    let mut directories: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).collect())
        .unwrap_or_default();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var) {
            directories.push(PathBuf::from(root).join("bin"));
        }
    }
    directories.push(PathBuf::from("/usr/local/cuda/bin"));
    directories
        .into_iter()
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

fn run_tool(tool: &Path, args: &[&std::ffi::OsStr]) -> Result<String, String> {
    let output = Command::new(tool)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", tool.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed: {}",
            tool.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The ptxas target for `module` on a GPU of compute capability `cc` ("9.0"): a module built
/// for an architecture-specific target (sm_90a) compiles only for it.
pub fn arch(module: &EmbeddedPtx, cc: &str) -> String {
    match module.target() {
        Some(target) if target.ends_with('a') => target.to_string(),
        _ => format!("sm_{}", cc.replace('.', "")),
    }
}

/// Compiles `module` with the toolkit's ptxas for `arch`: the cubin and its `cuobjdump -sass`
/// text, and the two tools' paths.
pub fn compile(module: &EmbeddedPtx, arch: &str) -> Result<(Vec<u8>, String, String), String> {
    compile_ptx(module.name, module.ptx, arch)
}

/// [`compile`] for PTX text named `name`.
pub fn compile_ptx(
    name: &str,
    ptx_text: &str,
    arch: &str,
) -> Result<(Vec<u8>, String, String), String> {
    let (mut cubin, tools) = assemble(name, ptx_text, arch)?;
    let text = cubin
        .disassemble()
        .map_err(|reason| format!("failed: {reason}"))?;
    Ok((std::mem::take(&mut cubin.bytes), text, tools))
}

/// A cubin ptxas made, kept in a scratch directory until dropped.
pub struct Cubin {
    pub bytes: Vec<u8>,
    file: PathBuf,
    cuobjdump: PathBuf,
}

impl Cubin {
    /// Its `cuobjdump -sass` text.
    pub fn disassemble(&self) -> Result<String, String> {
        run_tool(&self.cuobjdump, &["-sass".as_ref(), self.file.as_os_str()])
    }
}

impl Drop for Cubin {
    fn drop(&mut self) {
        if let Some(work) = self.file.parent() {
            let _ = std::fs::remove_dir_all(work);
        }
    }
}

/// The first half of [`compile_ptx`]: the cubin, and the tools that make and read it ("compiled
/// by … and disassembled by …"). A missing tool is an error that starts with "skipped".
pub fn assemble(name: &str, ptx_text: &str, arch: &str) -> Result<(Cubin, String), String> {
    let (Some(ptxas), Some(cuobjdump)) = (find_tool("ptxas"), find_tool("cuobjdump")) else {
        return Err(
            "skipped: ptxas or cuobjdump not found (PATH, CUDA_HOME/bin, CUDA_PATH/bin, /usr/local/cuda/bin); install the CUDA toolkit to get SASS".into(),
        );
    };
    static UNIQUE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let work = std::env::temp_dir().join(format!(
        "gpubench-sass-{}-{}",
        std::process::id(),
        UNIQUE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&work)
        .map_err(|e| format!("skipped: cannot create {}: {e}", work.display()))?;
    let ptx = work.join(format!("{name}.ptx"));
    let tools = format!(
        "compiled by {} and disassembled by {}",
        ptxas.display(),
        cuobjdump.display()
    );
    // Made first, so that the scratch directory goes whatever happens.
    let mut cubin = Cubin {
        bytes: Vec::new(),
        file: work.join(format!("{name}.cubin")),
        cuobjdump,
    };
    let file = cubin.file.clone();
    cubin.bytes = std::fs::write(&ptx, ptx_text)
        .map_err(|e| format!("cannot write {}: {e}", ptx.display()))
        .and_then(|()| {
            run_tool(
                &ptxas,
                &[
                    format!("-arch={arch}").as_ref(),
                    ptx.as_os_str(),
                    "-o".as_ref(),
                    file.as_os_str(),
                ],
            )
        })
        .and_then(|_| {
            std::fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))
        })
        .map_err(|reason| format!("failed: {reason}"))?;
    Ok((cubin, tools))
}

/// Compiles `module` for compute capability `cc` ("9.0") and returns the annotated SASS
/// text (if any) and the record for the metadata. Where `gpubench all` compiled the module
/// already ([`super::prebuilt`]), that SASS is the one read, of the very cubin the suite ran.
pub fn disassemble(module: &EmbeddedPtx, cc: &str) -> (Option<String>, SassRecord) {
    let arch = arch(module, cc);
    let prebuilt =
        super::prebuilt::find(module).and_then(|found| Some((found.sass()?, found.tools)));
    let compiled = match prebuilt {
        Some(found) => Ok(found),
        None => compile(module, &arch).map(|(_, text, tools)| (text, tools)),
    };
    match compiled {
        Ok((text, status)) => {
            let (annotated, kernels) = sass::annotate(&text);
            (
                Some(annotated),
                SassRecord {
                    status,
                    arch,
                    kernels,
                },
            )
        }
        Err(status) => (
            None,
            SassRecord {
                status,
                arch,
                kernels: Vec::new(),
            },
        ),
    }
}

/// [`disassemble`] of `modules` on a thread of its own, so the host's ptxas runs while the GPU
/// measures; [`Beside::join`] gives the SASS of all of them (concatenated) and the first
/// module's record, holding every module's kernels.
pub struct Beside(std::thread::JoinHandle<Vec<(Option<String>, SassRecord)>>);

pub fn beside(modules: &[&'static str], cc: &str) -> Beside {
    let modules: Vec<&'static EmbeddedPtx> = modules
        .iter()
        .filter_map(|name| crate::kernels::module(name))
        .collect();
    let cc = cc.to_string();
    Beside(std::thread::spawn(move || {
        crate::gpu::turn::background();
        modules
            .into_iter()
            .map(|module| disassemble(module, &cc))
            .collect()
    }))
}

impl Beside {
    pub fn join(self) -> anyhow::Result<(Option<String>, SassRecord)> {
        let read = self
            .0
            .join()
            .map_err(|_| anyhow::anyhow!("the SASS disassembly thread panicked"))?;
        let text = read
            .iter()
            .map(|(text, _)| text.clone())
            .collect::<Option<Vec<String>>>()
            .map(|texts| texts.concat());
        let mut records = read.into_iter().map(|(_, record)| record);
        let mut record = records
            .next()
            .ok_or_else(|| anyhow::anyhow!("no module to disassemble"))?;
        for other in records {
            record.kernels.extend(other.kernels);
        }
        Ok((text, record))
    }
}

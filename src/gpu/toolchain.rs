//! The CUDA toolkit's tools, where they exist (they come with the toolkit, not the driver):
//! `ptxas` compiles the embedded PTX for the device and `cuobjdump -sass` disassembles the
//! cubin. `sass` reads what they give back; `prebuilt` runs them ahead for `gpubench all`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::kernels::EmbeddedPtx;

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

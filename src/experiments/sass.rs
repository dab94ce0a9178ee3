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

fn find_tool(name: &str) -> Option<PathBuf> {
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

/// Compiles `module` for compute capability `cc` ("9.0") and returns the annotated SASS
/// text (if any) and the record for the metadata.
pub fn disassemble(module: &EmbeddedPtx, cc: &str) -> (Option<String>, SassRecord) {
    // A module built for an architecture-specific target (sm_90a) compiles only for it.
    let arch = match module.target() {
        Some(target) if target.ends_with('a') => target.to_string(),
        _ => format!("sm_{}", cc.replace('.', "")),
    };
    let fail = |status: String| {
        (
            None,
            SassRecord {
                status,
                arch: arch.clone(),
                kernels: Vec::new(),
            },
        )
    };
    let (Some(ptxas), Some(cuobjdump)) = (find_tool("ptxas"), find_tool("cuobjdump")) else {
        return fail(
            "skipped: ptxas or cuobjdump not found (PATH, CUDA_HOME/bin, CUDA_PATH/bin, /usr/local/cuda/bin); install the CUDA toolkit to get SASS".into(),
        );
    };
    let work = std::env::temp_dir().join(format!("gpubench-sass-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&work) {
        return fail(format!("skipped: cannot create {}: {e}", work.display()));
    }
    let ptx = work.join(format!("{}.ptx", module.name));
    let cubin = work.join(format!("{}.cubin", module.name));
    let result = std::fs::write(&ptx, module.ptx)
        .map_err(|e| format!("cannot write {}: {e}", ptx.display()))
        .and_then(|()| {
            run_tool(
                &ptxas,
                &[
                    format!("-arch={arch}").as_ref(),
                    ptx.as_os_str(),
                    "-o".as_ref(),
                    cubin.as_os_str(),
                ],
            )
        })
        .and_then(|_| run_tool(&cuobjdump, &["-sass".as_ref(), cubin.as_os_str()]));
    let _ = std::fs::remove_dir_all(&work);
    match result {
        Ok(text) => {
            let (annotated, kernels) = sass::annotate(&text);
            (
                Some(annotated),
                SassRecord {
                    status: format!(
                        "compiled by {} and disassembled by {}",
                        ptxas.display(),
                        cuobjdump.display()
                    ),
                    arch,
                    kernels,
                },
            )
        }
        Err(reason) => fail(format!("failed: {reason}")),
    }
}

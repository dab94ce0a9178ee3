//! The machine code the GPU really ran: the embedded PTX compiled for the device with
//! `ptxas` and disassembled with `cuobjdump -sass`, where those tools exist (they come with
//! the CUDA toolkit, not the driver). Without them the run carries on and says why.

use serde::Serialize;

use crate::analysis::sass::{self, KernelSass};
use crate::kernels::EmbeddedPtx;

pub use super::toolchain::{Cubin, arch, assemble, compile, compile_ptx};

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct SassRecord {
    /// "written to FILE", or why no SASS was made.
    pub status: String,
    pub arch: String,
    pub kernels: Vec<KernelSass>,
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
        crate::gpu::lease::lower_priority();
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

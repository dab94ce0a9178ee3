//! The PTX that build.rs compiled from `cuda/*.cu`, with what built it.

use sha2::{Digest, Sha256};

/// One `cuda/<name>.cu`, compiled to PTX at build time.
#[derive(Debug)]
pub struct EmbeddedPtx {
    pub name: &'static str,
    pub ptx: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// The git commit the binary was built from (`-dirty` when the tree had changes), or "".
pub const GIT_COMMIT: &str = env!("GPUBENCH_GIT_COMMIT");

/// The SHA-256 of `text`, in lower-case hex.
pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

pub fn module(name: &str) -> Option<&'static EmbeddedPtx> {
    MODULES.iter().find(|module| module.name == name)
}

impl EmbeddedPtx {
    pub fn sha256(&self) -> String {
        sha256_hex(self.ptx)
    }

    /// The `.target` line of the PTX (the architecture it was compiled for).
    pub fn target(&self) -> Option<&'static str> {
        self.ptx
            .lines()
            .find_map(|line| line.trim().strip_prefix(".target "))
            .map(str::trim)
    }

    /// The `.version` line of the PTX (the PTX ISA the driver must support).
    pub fn isa_version(&self) -> Option<&'static str> {
        self.ptx
            .lines()
            .find_map(|line| line.trim().strip_prefix(".version "))
            .map(str::trim)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_source_is_embedded_with_its_entry_points() {
        let divergence = module("divergence").expect("cuda/divergence.cu is embedded");
        assert!(divergence.ptx.contains(".entry divergence_single"));
        assert!(divergence.ptx.contains(".entry divergence_double"));
        let clock = module("clock").expect("cuda/clock.cu is embedded");
        assert!(clock.ptx.contains(".entry clock_rate"));
        assert!(module("no-such-kernel").is_none());
    }

    #[test]
    fn ptx_metadata_is_recorded() {
        let divergence = module("divergence").unwrap();
        assert_eq!(divergence.sha256().len(), 64);
        assert!(divergence.isa_version().is_some());
        assert_eq!(divergence.target(), Some("sm_75"));
        // A source that names its own target is compiled for it.
        assert_eq!(module("tensor").unwrap().target(), Some("sm_90a"));
        assert!(NVCC_VERSION.contains("release"));
        assert!(PTX_ARCH.starts_with("compute_") || PTX_ARCH.starts_with("sm_"));
    }

    /// The timed loops must reach the GPU as loops: between the clock read that starts the
    /// timed region and the one that ends it there must be the multiply-add and a backward
    /// branch for every loop level (unroll loop plus one or two bound loops), not an
    /// unrolled or closed-form body.
    #[test]
    fn divergence_loop_body_survives_the_compiler() {
        let ptx = module("divergence").unwrap().ptx;
        for (entry, loop_levels) in [("divergence_single", 2), ("divergence_double", 3)] {
            let start = ptx.find(&format!(".entry {entry}")).unwrap();
            let body = &ptx[start..];
            let body = &body[..body.find("\n}").unwrap_or(body.len())];
            let clock_reads: Vec<usize> = body.match_indices("%clock64").map(|(i, _)| i).collect();
            assert_eq!(clock_reads.len(), 4, "{entry}: overhead pair, start, stop");
            let timed = &body[clock_reads[2]..clock_reads[3]];
            assert!(
                timed.contains("mad.lo.s32"),
                "{entry}: loop body in the timed region"
            );
            assert!(
                timed.matches(".pragma \"nounroll\"").count() >= loop_levels,
                "{entry}: every timed loop kept as a loop"
            );
            assert!(
                timed.matches("bra").count() >= loop_levels,
                "{entry}: back-edges"
            );
        }
    }
}

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

    /// The committed PTX (`cuda/ptx/`) is what a fresh clone without nvcc embeds, so it must
    /// belong to today's kernel sources.
    #[test]
    fn the_committed_ptx_belongs_to_todays_kernel_sources() {
        if !COMMITTED_PTX_IS_CURRENT {
            panic!(
                "cuda/ptx/PROVENANCE does not name today's cuda/ sources: run scripts/refresh-ptx.sh and commit cuda/ptx/"
            );
        }
    }

    /// Where build.rs compiled the kernels with the nvcc that made the committed PTX, the two
    /// must be the same bytes (no path, date or host in them).
    #[test]
    fn the_committed_ptx_is_what_that_nvcc_compiles() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cuda/ptx");
        let provenance = std::fs::read_to_string(folder.join("PROVENANCE")).unwrap();
        let committed_nvcc = provenance
            .lines()
            .find_map(|line| line.strip_prefix("nvcc "))
            .expect("PROVENANCE names its nvcc");
        if PTX_ORIGIN != "nvcc" || committed_nvcc != NVCC_VERSION || !COMMITTED_PTX_IS_CURRENT {
            eprintln!(
                "not compared: this build's PTX came from {PTX_ORIGIN} ({NVCC_VERSION}), the committed from {committed_nvcc}"
            );
            return;
        }
        for module in MODULES {
            let committed = std::fs::read_to_string(folder.join(format!("{}.ptx", module.name)))
                .unwrap_or_else(|e| panic!("cuda/ptx/{}.ptx: {e}", module.name));
            assert!(
                committed == module.ptx,
                "cuda/ptx/{}.ptx differs from nvcc's compile of today's source",
                module.name
            );
        }
        let committed_files = std::fs::read_dir(&folder)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "ptx"))
            .count();
        assert_eq!(
            committed_files,
            MODULES.len(),
            "a stale module in cuda/ptx/"
        );
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

//! The launcher of `storage_probe` (cuda/cache.cu): which caches share one array.

use super::*;
use crate::suites::cache::texture::LinearTexture;

/// The load path of one walk: the kernel's path number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbePath {
    /// `ld.global`, cached in the L1.
    L1,
    /// `ld.global.nc`.
    ReadOnly,
    /// `tex.1d` through a texture object over the chain's buffer.
    Texture,
    /// The constant bank (`LDC`), the chain in the module's `const_chain`.
    Constant,
}

impl ProbePath {
    pub const ALL: [ProbePath; 4] = [
        ProbePath::L1,
        ProbePath::ReadOnly,
        ProbePath::Texture,
        ProbePath::Constant,
    ];

    fn number(self) -> i32 {
        match self {
            ProbePath::L1 => 0,
            ProbePath::ReadOnly => 1,
            ProbePath::Texture => 2,
            ProbePath::Constant => 3,
        }
    }
}

/// Where a walk's chain lives: word indices in a buffer (with a texture over it), or byte
/// offsets in `const_chain` from `start`, written there by [`write_constant_chain`].
#[derive(Clone, Copy)]
pub enum ProbeChain<'a> {
    Buffer(&'a LinearTexture),
    Constant { start: u32 },
}

/// One walk: its path, its chain, the steps of one pass and how many passes (the fill walk's
/// untimed passes before the eviction; it is timed over one more).
#[derive(Clone, Copy)]
pub struct Walk<'a> {
    pub path: ProbePath,
    pub chain: ProbeChain<'a>,
    pub steps: u32,
    pub passes: u32,
}

/// The chain of the probe's buffer walks: `elements` word indices `stride_words` apart, each
/// the next's, the last the first's; the words between are 0.
pub fn buffer_chain(gpu: &Gpu, elements: u32, stride_words: u32) -> Result<LinearTexture, GpuError> {
    let words = elements as usize * stride_words as usize;
    let mut chain = vec![0_u32; words];
    for k in 0..elements {
        chain[(k * stride_words) as usize] = ((k + 1) % elements) * stride_words;
    }
    check_chain(&chain, &[0], false)?;
    LinearTexture::new(gpu, &chain)
}

/// Writes chains into `const_chain`: each `(start byte, elements, stride bytes)` a cycle of
/// byte offsets from its start; they must not overlap and must fit the 64 KiB array.
pub fn write_constant_chain(gpu: &mut Gpu, chains: &[(u32, u32, u32)]) -> Result<(), GpuError> {
    let module = gpu.module("cache")?;
    let stream = gpu.stream().clone();
    let mut symbol = module
        .get_global("const_chain", &stream)
        .map_err(driver_error("finding const_chain"))?;
    let mut words = vec![0_u32; symbol.len() / 4];
    let mut used = vec![false; words.len()];
    for &(start, elements, stride) in chains {
        for k in 0..elements {
            let at = ((start + k * stride) / 4) as usize;
            let next = start + ((k + 1) % elements) * stride;
            if stride % 4 != 0 || start % 4 != 0 || at >= words.len() || used[at] {
                return Err(GpuError::driver(
                    "writing the storage probe's constant chains",
                    format!(
                        "{chains:?} do not fit the {}-byte array without overlapping",
                        symbol.len()
                    ),
                ));
            }
            used[at] = true;
            words[at] = next;
        }
    }
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    stream
        .memcpy_htod(&bytes, &mut symbol)
        .map_err(driver_error("writing the storage probe's constant chains"))
}

/// Runs `storage_probe`: `fill.passes` passes of `fill`, then `evict` (if any), then one pass
/// of `fill` timed.
/// Returns the cycles of the timed pass; fails where either walk did not end where it began.
///
/// Kernel signature: `(const unsigned *fill, unsigned long long fill_texture, const unsigned
/// *starts[2], int fill_steps, int fill_passes, const unsigned *evict, unsigned long long
/// evict_texture, int evict_steps, int fill_path, int evict_path, long long *out[3])`; one
/// thread.
pub fn storage_probe(
    gpu: &mut Gpu,
    fill: Walk,
    evict: Option<Walk>,
    deadline: Duration,
) -> Result<i64, GpuError> {
    let function = l1_preferring(gpu, "storage_probe")?;
    let stream = gpu.stream().clone();
    let start = |walk: Option<&Walk>| match walk.map(|w| w.chain) {
        Some(ProbeChain::Constant { start }) => start,
        _ => 0,
    };
    let starts = upload(gpu, &[start(Some(&fill)), start(evict.as_ref())], "the probe's starts")?;
    let (fill_buffer, fill_texture) = buffer_of(Some(&fill), &starts);
    let (evict_buffer, evict_texture) = buffer_of(evict.as_ref(), &starts);
    let mut out = zeros::<i64>(gpu, 3, "the probe's result")?;
    if !fill.steps.is_multiple_of(16) || fill.steps == 0 {
        return Err(GpuError::driver(
            "checking a storage probe",
            format!("{} timed steps are not a whole number of 16", fill.steps),
        ));
    }
    let fill_steps = as_i32(fill.steps, "the fill steps")?;
    let fill_passes = as_i32(fill.passes, "the fill passes")?;
    let evict_steps = as_i32(
        evict.map_or(0, |w| w.steps.saturating_mul(w.passes)),
        "the evict steps",
    )?;
    let fill_path = fill.path.number();
    let evict_path = evict.map_or(-1, |w| w.path.number());
    let mut launch = stream.launch_builder(&function);
    launch
        .arg(fill_buffer)
        .arg(&fill_texture)
        .arg(&starts)
        .arg(&fill_steps)
        .arg(&fill_passes)
        .arg(evict_buffer)
        .arg(&evict_texture)
        .arg(&evict_steps)
        .arg(&fill_path)
        .arg(&evict_path)
        .arg(&mut out);
    // SAFETY: the arguments match the signature above; buffer chains were checked when built
    // (every index inside its buffer, which the texture reads too), constant chains were
    // written inside const_chain, a walk through a path reads only its own kind of chain, and
    // the textures and buffers outlive the wait; `out` holds 3.
    unsafe { launch_and_wait(gpu, "storage_probe", launch, one_block(1), deadline) }?;
    let out = read(gpu, &out, "the probe's result")?;
    let ended = |got: i64, walk: Option<&Walk>| got == i64::from(start(walk));
    if !ended(out[1], Some(&fill)) || !ended(out[2], evict.as_ref()) {
        return Err(GpuError::driver(
            "checking a storage probe",
            format!(
                "the walks ended at {} and {}, not where they began: a chain was not walked whole",
                out[1],
                out[2]
            ),
        ));
    }
    Ok(out[0])
}

/// A walk's buffer and texture; a constant walk's (or a missing one's) buffer argument is
/// never read, and `stand_in` takes its place.
fn buffer_of<'a>(walk: Option<&Walk<'a>>, stand_in: &'a CudaSlice<u32>) -> (&'a CudaSlice<u32>, u64) {
    match walk.map(|w| w.chain) {
        Some(ProbeChain::Buffer(t)) => (t.buffer(), t.handle()),
        _ => (stand_in, 0),
    }
}

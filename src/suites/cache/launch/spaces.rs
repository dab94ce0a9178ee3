//! The chases of the shared, constant and texture spaces, each with its own kernel: the
//! chain copied into shared memory, read through the constant bank, or fetched as a texture.

use super::*;

/// Runs `chase_shared` (cuda/cache.cu): 256 threads copy `chain` (word indices, uploaded as
/// byte offsets) into dynamic shared memory as shared-window addresses, thread 0 chases it.
/// Returns (cycles of the timed loads, final word index).
///
/// Kernel signature: `(const unsigned *chain[words], int words, int warm, int steps,
/// long long *out[2])`, with words * 4 bytes of dynamic shared memory (at most 48 KiB).
pub fn chase_shared(
    gpu: &mut Gpu,
    chain: &[u32],
    laps: Laps,
) -> Result<(i64, i64), GpuError> {
    check_chain(chain, &[0], false)?;
    let function = gpu.function("cache", "chase_shared")?;
    let stream = gpu.stream().clone();
    let offsets: Vec<u32> = chain.iter().map(|&w| 4 * w).collect();
    let device_chain = upload(gpu, &offsets, "the chase chain")?;
    let mut out = zeros::<i64>(gpu, 2, "the chase result")?;
    let words = as_i32(chain.len() as u32, "the chain length")?;
    let (warm, steps) = laps.ints()?;
    let mut config = one_block(256);
    config.shared_mem_bytes = u32::try_from(chain.len() * 4).unwrap_or(u32::MAX);
    let mut launch = stream.launch_builder(&function);
    launch
        .arg(&device_chain)
        .arg(&words)
        .arg(&warm)
        .arg(&steps)
        .arg(&mut out);
    // SAFETY: the arguments match the kernel signature above; the dynamic shared memory holds
    // the `words` elements copied, check_chain proved every offset lies inside them, `out`
    // holds 2.
    unsafe { launch_and_wait(gpu, "chase_shared", launch, config, laps.deadline) }?;
    chase_result(gpu, &out)
}

/// Runs `chase_constant` (per-thread register index: LDC) or `chase_constant_uniform` (warp-
/// uniform index: ULDC) (cuda/cache.cu) on one thread after writing `chain` (word indices, at
/// most 16384 words) into the module's `__constant__ unsigned const_chain[16384]` as byte
/// offsets. Returns (cycles of the timed loads, final word index).
///
/// Kernel signature: `(const unsigned *starts[1], int warm, int steps, long long *out[2])`.
pub fn chase_constant(
    gpu: &mut Gpu,
    entry: &str,
    chain: &[u32],
    laps: Laps,
) -> Result<(i64, i64), GpuError> {
    check_chain(chain, &[0], false)?;
    let module = gpu.module("cache")?;
    let function = gpu.function("cache", entry)?;
    let stream = gpu.stream().clone();
    let mut symbol = module
        .get_global("const_chain", &stream)
        .map_err(driver_error("finding const_chain"))?;
    let bytes: Vec<u8> = chain.iter().flat_map(|w| (4 * w).to_le_bytes()).collect();
    if bytes.len() > symbol.len() {
        return Err(GpuError::driver(
            "writing the constant-memory chain",
            format!(
                "{} bytes do not fit the {}-byte array",
                bytes.len(),
                symbol.len()
            ),
        ));
    }
    let mut target = symbol.slice_mut(..bytes.len());
    stream
        .memcpy_htod(&bytes, &mut target)
        .map_err(driver_error("writing the constant-memory chain"))?;
    let starts = upload(gpu, &[0_u32], "the chase start")?;
    let mut out = zeros::<i64>(gpu, 2, "the chase result")?;
    let (warm, steps) = laps.ints()?;
    let mut launch = stream.launch_builder(&function);
    launch.arg(&starts).arg(&warm).arg(&steps).arg(&mut out);
    // SAFETY: the arguments match the kernel signature above; check_chain proved every offset
    // written to const_chain lies inside the chain, which fits the array; `out` holds 2.
    unsafe { launch_and_wait(gpu, entry, launch, one_block(1), laps.deadline) }?;
    chase_result(gpu, &out)
}

/// Runs `chase_texture` (cuda/cache.cu) on one thread through a texture object over `chain`.
pub fn chase_texture(
    gpu: &mut Gpu,
    chain: &[u32],
    laps: Laps,
) -> Result<(i64, i64), GpuError> {
    check_chain(chain, &[0], false)?;
    let texture = crate::suites::cache::texture::LinearTexture::new(gpu, chain)?;
    chase_through(gpu, texture, laps)
}

/// [`chase_texture`] over the address-order chain of `elements` word indices `stride_bytes`
/// apart, built on the device by `stride_indices`.
pub fn chase_texture_stride(
    gpu: &mut Gpu,
    (elements, stride_bytes): (u64, u64),
    laps: Laps,
) -> Result<(i64, i64), GpuError> {
    let deadline = laps.deadline;
    let chain = chain_on_device::<u32>(gpu, "stride_indices", elements, stride_bytes, deadline)?;
    let texture = crate::suites::cache::texture::LinearTexture::over(chain)?;
    chase_through(gpu, texture, laps)
}

/// Kernel signature: `chase_texture(unsigned long long texture, int warm, int steps, long long
/// *out[2])`.
fn chase_through(
    gpu: &mut Gpu,
    texture: crate::suites::cache::texture::LinearTexture,
    laps: Laps,
) -> Result<(i64, i64), GpuError> {
    let function = gpu.function("cache", "chase_texture")?;
    let stream = gpu.stream().clone();
    let mut out = zeros::<i64>(gpu, 2, "the chase result")?;
    let handle = texture.handle();
    let (warm, steps) = laps.ints()?;
    let mut launch = stream.launch_builder(&function);
    launch.arg(&handle).arg(&warm).arg(&steps).arg(&mut out);
    // SAFETY: the arguments match the kernel signature above; the texture object stays alive
    // until after the wait below, every index in its chain is below its length, `out` holds 2.
    let result = unsafe { launch_and_wait(gpu, "chase_texture", launch, one_block(1), laps.deadline) }
        .and_then(|()| chase_result(gpu, &out));
    drop(texture);
    result
}

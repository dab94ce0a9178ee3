//! Launchers of cuda/l2_partition.cu: the first touch of L2-resident lines from each SM.

use std::time::Duration;

use cudarc::driver::PushKernelArg;

use crate::error::GpuError;
use crate::gpu::launch::*;
use crate::gpu::Gpu;

/// Lines of 128 B per region: 256 KiB, 64 chunks of 4 KiB.
pub const PARTITION_LINES: u32 = 2048;
/// Words of one 128-byte line.
const LINE_WORDS: usize = 32;
/// One-warp blocks per launch: enough that every SM receives some before the first leave.
const CLAIM_BLOCKS: u32 = 1024;

/// One sweep: for each SM in `probes`, a fresh region warmed by SM `warm_sm`, then walked
/// `passes` times by the probing SM.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstTouch {
    /// Per probe, `passes × PARTITION_LINES` cycles, pass by pass in address order.
    pub cycles: Vec<Vec<u32>>,
    /// Per probe, whether a block landed on the warming and on the probing SM.
    pub claimed: Vec<(bool, bool)>,
}

/// Runs `l2_partition_warm` then `l2_partition_probe` once per SM of `probes`, each pair on a
/// region of its own (no probe's reads touch another's lines).
///
/// Kernel signatures: `l2_partition_warm(const unsigned *region, unsigned lines, unsigned
/// target, int *flag, unsigned *sink)` and `l2_partition_probe(const unsigned *region,
/// unsigned lines, unsigned passes, unsigned target, int *flag, unsigned *out[passes *
/// lines])`.
pub fn l2_first_touch(
    gpu: &mut Gpu,
    warm_sm: u32,
    probes: &[u32],
    passes: u32,
) -> Result<FirstTouch, GpuError> {
    let warm = gpu.function("l2_partition", "l2_partition_warm")?;
    let probe = gpu.function("l2_partition", "l2_partition_probe")?;
    let lines = PARTITION_LINES as usize;
    let words = lines * LINE_WORDS;
    let mut chain = vec![0u32; words * probes.len()];
    for region in chain.chunks_mut(words) {
        for j in 0..lines {
            region[j * LINE_WORDS] = (((j + 1) % lines) * LINE_WORDS) as u32;
        }
    }
    let regions = upload(gpu, &chain, "the partition regions")?;
    let per_probe = passes as usize * lines;
    let mut out = zeros::<u32>(gpu, per_probe * probes.len(), "the first-touch cycles")?;
    let mut warm_flags = zeros::<i32>(gpu, probes.len(), "the warm claim flags")?;
    let mut probe_flags = zeros::<i32>(gpu, probes.len(), "the probe claim flags")?;
    let mut sink = zeros::<u32>(gpu, 1, "the sink")?;
    let stream = gpu.stream().clone();
    let config = line_of(CLAIM_BLOCKS, WARP_LANES as u32);
    for (k, &sm) in probes.iter().enumerate() {
        let region = regions.slice(k * words..(k + 1) * words);
        let mut warm_flag = warm_flags.slice_mut(k..k + 1);
        let mut builder = stream.launch_builder(&warm);
        builder
            .arg(&region)
            .arg(&PARTITION_LINES)
            .arg(&warm_sm)
            .arg(&mut warm_flag)
            .arg(&mut sink);
        // SAFETY: the arguments match l2_partition_warm's signature; the region holds
        // PARTITION_LINES lines of LINE_WORDS words and the flag one int.
        unsafe { launch("l2_partition_warm", builder, config) }?;
        let mut probe_flag = probe_flags.slice_mut(k..k + 1);
        let mut probe_out = out.slice_mut(k * per_probe..(k + 1) * per_probe);
        let mut builder = stream.launch_builder(&probe);
        builder
            .arg(&region)
            .arg(&PARTITION_LINES)
            .arg(&passes)
            .arg(&sm)
            .arg(&mut probe_flag)
            .arg(&mut probe_out);
        // SAFETY: the arguments match l2_partition_probe's signature; `probe_out` holds
        // passes × PARTITION_LINES values and the region every line the chain names.
        unsafe { launch("l2_partition_probe", builder, config) }?;
    }
    gpu.wait("l2_partition_probe", Duration::from_secs(30))?;
    let cycles = read(gpu, &out, "the first-touch cycles")?;
    let warm_flags = read(gpu, &warm_flags, "the warm claim flags")?;
    let probe_flags = read(gpu, &probe_flags, "the probe claim flags")?;
    Ok(FirstTouch {
        cycles: cycles.chunks(per_probe).map(<[u32]>::to_vec).collect(),
        claimed: warm_flags
            .iter()
            .zip(&probe_flags)
            .map(|(&w, &p)| (w != 0, p != 0))
            .collect(),
    })
}

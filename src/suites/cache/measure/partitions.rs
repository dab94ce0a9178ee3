//! The L2 partition experiment (`super::l2_partitions`, `cuda/l2_partition.cu`): every SM
//! reads, once and again, 2048 lines of a fresh 256 KiB region that one warming SM has just
//! read into the L2. The first sweep warms from SM 0; the second from the first SM the first
//! sweep found across from it, so that each SM's side is seen from both partitions. Issue #32
//! asks where the near and far L2 lie; the cache suite's chase only shows that some lines cost
//! more past about half the L2.

use anyhow::Result;

use crate::gpu::Gpu;
use super::partition_launch::{self as launch, PARTITION_LINES};
use crate::suites::cache::l2_partitions::{self, Partitions, Probe, Sweep};

/// First touch, then a re-read.
const PASSES: u32 = 2;

/// One sweep from `warm_sm` over every SM; an SM that no block of the launch landed on (for
/// the warming or the probing kernel) is tried once more, then left without readings.
fn sweep(gpu: &mut Gpu, warm_sm: u32, sms: u32) -> Result<Sweep> {
    let all: Vec<u32> = (0..sms).collect();
    let mut touch = launch::l2_first_touch(gpu, warm_sm, &all, PASSES)?;
    let missed: Vec<u32> = all
        .iter()
        .zip(&touch.claimed)
        .filter(|(_, c)| !(c.0 && c.1))
        .map(|(&sm, _)| sm)
        .collect();
    if !missed.is_empty() {
        let again = launch::l2_first_touch(gpu, warm_sm, &missed, PASSES)?;
        for (k, &sm) in missed.iter().enumerate() {
            touch.cycles[sm as usize] = again.cycles[k].clone();
            touch.claimed[sm as usize] = again.claimed[k];
        }
    }
    let lines = PARTITION_LINES as usize;
    let probes = all
        .iter()
        .zip(touch.cycles.iter().zip(&touch.claimed))
        .map(|(&sm, (cycles, claimed))| {
            let kept = claimed.0 && claimed.1;
            let values = |pass: usize| -> Vec<f64> {
                if kept {
                    cycles[pass * lines..(pass + 1) * lines]
                        .iter()
                        .map(|&c| f64::from(c))
                        .collect()
                } else {
                    Vec::new()
                }
            };
            Probe {
                sm,
                first: values(0),
                again: values(1),
            }
        })
        .collect();
    Ok(Sweep { warm_sm, probes })
}

/// Both sweeps and what they show; `None` where no first touch was timed.
pub fn measure(gpu: &mut Gpu, sms: u32) -> Result<Option<Partitions>> {
    let first = sweep(gpu, 0, sms)?;
    let across = l2_partitions::analyse(std::slice::from_ref(&first))
        .and_then(|read| read.per_sm.into_iter().find(|r| r.side == l2_partitions::Side::Across))
        .map(|r| r.sm);
    let mut sweeps = vec![first];
    if let Some(warm) = across {
        sweeps.push(sweep(gpu, warm, sms)?);
    }
    Ok(l2_partitions::analyse(&sweeps))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_kernels_and_the_line_size_are_the_hosts() {
        let ptx = crate::kernels::module("l2_partition").unwrap().ptx;
        for entry in ["l2_partition_warm", "l2_partition_probe"] {
            assert!(ptx.contains(&format!(".entry {entry}(")), "{entry}");
        }
        let source = include_str!("../../../../cuda/l2_partition.cu");
        assert!(source.contains("#define LINE_WORDS 32\n"));
        assert_eq!(crate::suites::cache::l2_partitions::LINE_BYTES, 32 * 4);
    }
}

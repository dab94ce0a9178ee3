//! The TLB space's readings: each level's reach, the page size, and the sweeps at further strides.

use anyhow::Result;

use super::measure::{self as cache, Order, Space, tlb};
use super::report::{TlbLevel, TlbReach, TlbStride, TlbSummary};
use super::*;
use crate::analysis::cache_inference;
use crate::gpu::Gpu;
use crate::suites::cache::launch::TlbBuffer;
use crate::harness::suite;

/// TLB levels: each cache level's size read as a reach, and the page size from a stride sweep
/// at four times the first reach (`pages.csv`).
pub(super) fn translation_levels(
    gpu: &mut Gpu,
    buffer: &mut TlbBuffer,
    suite: &suite::SuiteRun,
    report: &cache_inference::CacheReport,
    stride: u64,
) -> Result<TlbSummary> {
    let first_reach = report.levels.iter().find_map(|level| level.size_bytes);
    let page = match first_reach {
        Some(reach) => {
            let footprint = (4 * reach).min(buffer.bytes()) / stride * stride;
            let strides: Vec<u64> = (0..14).map(|k| (4_u64 << 10) << k).collect();
            let points = cache::stride_sweep(footprint, strides, 8, |s| {
                tlb::measure(gpu, buffer, Order::Stride, footprint, s)
            })?;
            granularity_of(suite, "pages.csv", footprint, &points)?
        }
        None => None,
    };
    match &page {
        Some(page) => println!(
            "page size {} KiB (confidence {:.2})",
            page.bytes >> 10,
            page.confidence
        ),
        None => println!("page size: not read (no TLB reach found in the sweep)"),
    }
    let levels = report
        .levels
        .iter()
        .map(|level| TlbLevel {
            confidence: level.confidence,
            entries: match (level.size_bytes, &page) {
                (Some(reach), Some(page)) => Some(reach / page.bytes),
                _ => None,
            },
            latency_cycles: level.latency_cycles,
            reach_bytes: level.size_bytes,
        })
        .collect();
    Ok(TlbSummary { levels, page })
}

/// TLB sweeps at further strides (`tlb_strides.csv`): the main sweep's stride is one of
/// `strides` (default 2 MiB, 32 MiB, 512 MiB, 1 GiB); each other gets its own sweep from two
/// strides to the largest footprint, and each says where a level appears or that none did.
pub(super) fn translation_strides(
    gpu: &mut Gpu,
    buffer: &mut TlbBuffer,
    suite: &suite::SuiteRun,
    order: Order,
    main_stride: u64,
    strides: &[u64],
    largest: u64,
) -> Result<Vec<TlbStride>> {
    let mut strides: Vec<u64> = if strides.is_empty() {
        vec![main_stride, 32 << 20, 512 << 20, 1 << 30]
    } else {
        strides.to_vec()
    };
    strides.retain(|&s| s != main_stride && s.checked_mul(8).is_some_and(|m| m <= largest));
    if strides.is_empty() {
        // Nothing to sweep, so no tlb_strides.csv: an empty one reads as a damaged run.
        println!(
            "tlb: no further stride: each needs footprints up to 8 strides within {largest} B"
        );
        return Ok(Vec::new());
    }
    let mut all_points = Vec::new();
    let mut summary = Vec::new();
    for stride in strides {
        let smallest = 2 * stride;
        let sweep = cache::sweep(
            cache::RiseThreshold::of(Space::Tlb),
            stride,
            smallest,
            largest,
            16,
            |f| tlb::measure(gpu, buffer, order, f, stride),
        )?;
        let report = cache_inference::infer_with(
            &sweep.points,
            cache::RiseThreshold::of(Space::Tlb).minimum_rise(),
        );
        let reaches: Vec<TlbReach> = report
            .iter()
            .flat_map(|r| r.levels.iter())
            .filter_map(|l| {
                l.size_bytes.map(|b| TlbReach {
                    elements_at_reach: b / stride,
                    latency_cycles: l.latency_cycles,
                    reach_bytes: b,
                })
            })
            .collect();
        let verdict = if reaches.is_empty() {
            format!("no step from {smallest} B up to {largest} B at a {stride}-byte stride")
        } else {
            let list: Vec<String> = reaches
                .iter()
                .map(|r| {
                    format!(
                        "{} B ({} elements)",
                        r.reach_bytes, r.elements_at_reach
                    )
                })
                .collect();
            format!("at a {stride}-byte stride, steps past {}", list.join(", "))
        };
        println!("tlb: {verdict}");
        summary.push(TlbStride {
            levels: reaches,
            points: sweep.points.len(),
            stride_bytes: stride,
            verdict,
        });
        all_points.extend(sweep.points);
    }
    suite.run.write_csv("tlb_strides.csv", &all_points)?;
    Ok(summary)
}

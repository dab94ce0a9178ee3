//! The numbers a reader came for, one line per suite: which rows of the summary make each
//! suite's headline and how they are written. The README's suites table (`tests/readme.rs`)
//! and the top of the run's page (`html`) are both made from [`HEADLINES`], so a headline is
//! read the same way wherever it is shown. A headline quotes figures only: a row the run
//! states as unresolved, or does not have, leaves the headline unstated with the reason.

use super::figures::Figure;

/// Each suite's headline: text with `{key|format}` fields, where `key` is a figure's key
/// within the suite ([`super::keys`]: `sass/FFMA/latency` is the pipeline suite's
/// `pipeline/sass/FFMA/latency`, `clock64 back-to-back` the clock suite's row of that
/// quantity) and `format` is a number of decimals, `TB` (a GB/s rate in TB/s, two
/// decimals), `size` (bytes in KiB or MiB), `%` (a fraction in per cent) or `lead` (a verdict's
/// words up to its first semicolon or parenthesis).
pub const HEADLINES: &[(&str, &str)] = &[
    (
        "clock",
        "`clock64` back-to-back {clock64 back-to-back|0} cycles; {cycle counter scope|lead}",
    ),
    (
        "divergence",
        "{single loop: cost per divergent lane|0} cycles per divergent lane; double loop \
         predicted within {double loop predicted from the single: max error|0} %",
    ),
    (
        "branch",
        "{path order (ascending clauses)|lead}; two warps overlap {warp overlap (two warps)|%}",
    ),
    (
        "sync",
        "Listing 6: {Listing 6|lead}; Listing 7: {Listing 7|lead}",
    ),
    (
        "regs",
        "{allocation unit|0} registers per warp, {register-file partitions|0} partitions, \
         {register file per block|0} per block",
    ),
    (
        "shared",
        "{banks/indexed-load-latency|1} cycles (indexed load); {banks/conflict-cost|2} cycles \
         per extra conflict way",
    ),
    (
        "pipeline",
        "FFMA {sass/FFMA/latency|0} cycles, {sass/FFMA/throughput|0}/clock/SM; DFMA {sass/DFMA/latency|0}; \
         POPC {sass/POPC/latency|0}; MUFU.EX2 {sass/MUFU.EX2/latency|0}; SHFL {sass/SHFL/latency|0}",
    ),
    (
        "cache",
        "L1 {global/1/latency|1} cycles; constant L1 {constant/1/size|size}, \
         {constant/1/line|0} B lines, {constant/1/ways|0} ways; L2 \
         {l2/1/latency|0} / {l2/2/latency|0} cycles",
    ),
    (
        "bandwidth",
        "L2 read {l2/strong read/at the l2 strong read search's winner|TB} TB/s (lines many \
         SMs share: {l2/shared-line read/at the l2 shared-line read search's winner|TB}); \
         DRAM read {dram/read/at the dram read search's winner|TB} TB/s \
         ({dram read: fraction of theoretical peak|1} % of peak), write \
         {dram/write/at the dram write search's winner|TB}, copy \
         {dram/copy/at the dram copy search's winner|TB}",
    ),
    (
        "slots",
        "`bfs` {bfs: active slots|0} % active, {bfs: idle through intrinsic branches|0} % idle \
         through intrinsic branches",
    ),
    (
        "tensor",
        "wgmma m64n256k16 FP16 {wgmma/m64n256k16/FP16→FP32/chip|0} TFLOPS \
         ({wgmma/m64n256k16/FP16→FP32/share|2} % of the dense peak)",
    ),
    (
        "flops",
        "FFMA {FP32 FFMA/chip|1} TFLOPS \
         ({FP32 FFMA/share|1} % of peak), DFMA \
         {FP64 DFMA/per-sm|0} FLOP/clock/SM \
         ({FP64 DFMA/share|0} %), HFMA2 \
         {FP16x2 HFMA2/chip|1} \
         ({FP16x2 HFMA2/share|0} %)",
    ),
    (
        "dsm",
        "another block's shared memory {another block's shared memory latency, cluster of 2|0} \
         cycles (cluster of 2)",
    ),
    (
        "tma",
        "{TMA copy latency, cached|0} cycles cached, {TMA copy latency, from memory|0} from \
         memory",
    ),
    (
        "atomics",
        "global add {global add u32 latency, 1 MiB chain|0} cycles at an L2-resident chain \
         (load: {global load u32 latency, 1 MiB chain|0})",
    ),
];

/// The headline of `suite`'s `template` from `figures`, or why it cannot be stated (the row it
/// needs is missing, unresolved, has no value or is in another unit).
pub fn headline(figures: &[Figure], suite: &str, template: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = open
            + rest[open..]
                .find('}')
                .ok_or_else(|| format!("an unclosed field in {template:?}"))?;
        let field = &rest[open + 1..close];
        let (quantity, format) = field
            .rsplit_once('|')
            .ok_or_else(|| format!("the field {field:?} names no format"))?;
        out.push_str(&value(
            figures,
            &super::keys::plain(suite, quantity),
            format,
        )?);
        rest = &rest[close + 1..];
    }
    Ok(out + rest)
}

/// Each suite of `suites` with a headline, in [`HEADLINES`]' order, and its headline or why
/// there is none.
pub fn of_suites(
    figures: &[Figure],
    suites: impl Fn(&str) -> bool,
) -> Vec<(&'static str, Result<String, String>)> {
    HEADLINES
        .iter()
        .filter(|(suite, _)| suites(suite))
        .map(|(suite, template)| (*suite, headline(figures, suite, template)))
        .collect()
}

fn value(figures: &[Figure], quantity: &str, format: &str) -> Result<String, String> {
    let figure = figures
        .iter()
        .find(|f| f.key == quantity)
        .ok_or_else(|| format!("the run has no row '{quantity}'"))?;
    if figure.is_unresolved() {
        return Err(format!("'{quantity}' is unresolved in this run"));
    }
    let number = || {
        figure
            .value
            .ok_or_else(|| format!("'{quantity}' has no value"))
    };
    let unit = |want: &str| {
        (figure.unit == want)
            .then_some(())
            .ok_or_else(|| format!("'{quantity}' is in {:?}, not {want}", figure.unit))
    };
    Ok(match format {
        "TB" => {
            unit("GB/s")?;
            format!("{:.2}", number()? / 1e3)
        }
        "size" => {
            unit("bytes")?;
            let bytes = number()?;
            if bytes >= f64::from(1 << 20) {
                format!("{} MiB", bytes / f64::from(1 << 20))
            } else {
                format!("{} KiB", bytes / 1024.0)
            }
        }
        "%" => {
            unit("fraction")?;
            format!("{:.0} %", 100.0 * number()?)
        }
        "lead" => {
            let text = figure
                .text
                .as_deref()
                .ok_or_else(|| format!("'{quantity}' has no verdict"))?;
            let end = text.find([';', '(']).unwrap_or(text.len());
            text[..end].trim().to_string()
        }
        decimals => {
            let decimals: usize = decimals
                .parse()
                .map_err(|_| format!("the format '{decimals}' of '{quantity}'"))?;
            format!("{:.*}", decimals, number()?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_headline_quotes_figures_and_names_the_row_it_cannot() {
        let mut clock = Figure::sample(
            "Clocks and timers",
            "clock64 back-to-back",
            Some(3.2),
            "cycles",
            "",
        );
        let scope = Figure {
            text: Some("8 groups of SMs share a counter offset; (sizes)".into()),
            ..Figure::sample("Clocks and timers", "cycle counter scope", None, "", "")
        };
        let template =
            "`clock64` back-to-back {clock64 back-to-back|0} cycles; {cycle counter scope|lead}";
        assert_eq!(
            headline(&[clock.clone(), scope.clone()], "clock", template).unwrap(),
            "`clock64` back-to-back 3 cycles; 8 groups of SMs share a counter offset"
        );
        assert!(
            headline(std::slice::from_ref(&scope), "clock", template)
                .unwrap_err()
                .contains("no row 'clock/clock64")
        );
        clock.uncertainty = "did not repeat: 4 cycles".into();
        clock.settle(crate::report::figures::Reason::DidNotRepeat);
        assert!(
            headline(&[clock, scope], "clock", template)
                .unwrap_err()
                .contains("unresolved")
        );
    }
}

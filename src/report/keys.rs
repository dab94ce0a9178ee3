//! Every figure's stable key, apart from the words a table shows it with (issue #72; nvbench's
//! summary tags, `nv/cold/time/gpu/mean`, are the model).
//!
//! A key is a path of `/`-separated parts whose first part is the suite that measured the
//! figure: `cache/global/1/latency`, `pipeline/sass/IADD3/throughput`. A suite gives each
//! figure its key where it makes the row ([`super::figures::Rows::key`]); a row it gives none
//! is keyed by its suite and quantity (`sync/barrier cost`), which holds as long as the words
//! do. The keys below are the ones the core reads (the curated tables, the roofline, the
//! machine model, the Accel-Sim export, the headlines): each is made by one function here,
//! which the suite calls and the core parses, so no core code reads a figure's words and a
//! suite may reword any row.
//!
//! Files written before keys existed hold the words only: [`from_words`] is the one migration
//! table from those words to the keys, tested against what the suites key today.

/// The separator of a key's parts; none of the names a key holds (a SASS opcode, an
/// instruction, a tensor kernel's shape and types) contains it.
pub const SEP: char = '/';

/// The SM clock the clock suite measured (MHz): the clock the tables turn cycles into
/// nanoseconds with, and the export states.
pub const SM_CLOCK: &str = "clock/sm";

/// The key of a row a suite gives no key of its own.
pub fn plain(suite: &str, quantity: &str) -> String {
    format!("{suite}{SEP}{quantity}")
}

/// What a figure's key says it is, where it is one the core reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known<'a> {
    /// One level of a memory space: `level` is "1", "2", … or [`BEYOND`].
    Memory {
        space: &'a str,
        level: &'a str,
        what: &'a str,
    },
    /// The SASS load of a space's timed loop.
    Load {
        space: &'a str,
    },
    /// A SASS instruction's (opcode's) or a PTX operation's `what` ([`LATENCY`],
    /// [`THROUGHPUT`]).
    Sass {
        opcode: &'a str,
        what: &'a str,
    },
    Ptx {
        operation: &'a str,
        what: &'a str,
    },
    /// A CUDA-core instruction's rate ([`PER_SM`], [`CHIP`], [`SHARE`]).
    Flops {
        name: &'a str,
        what: &'a str,
    },
    /// A tensor-core kernel's `what` ([`LATENCY`], [`THROUGHPUT`], [`CHIP`], [`SHARE`]).
    Tensor {
        family: &'a str,
        shape: &'a str,
        types: &'a str,
        what: &'a str,
    },
    /// A bandwidth level's headline rate of `operation`, from one `search`.
    Bandwidth {
        level: &'a str,
        operation: &'a str,
        search: &'a str,
    },
    /// The TMA suite's L2 read by bulk copies of `lines` ("shared", "private").
    L2BulkRead {
        lines: &'a str,
    },
    /// What the arithmetic that makes a space's next index adds to each load of its chase.
    IndexChain {
        space: &'a str,
    },
    /// The shared suite's `what` ([`banks::CONFLICT_COST`], [`banks::INDEXED_LOAD`]).
    Banks {
        what: &'a str,
    },
}

/// A memory space's level past its last cache (a chase that misses every cache).
pub const BEYOND: &str = "memory";
pub const LATENCY: &str = "latency";
pub const THROUGHPUT: &str = "throughput";
/// A rate per SM and clock.
pub const PER_SM: &str = "per-sm";
/// A rate over the chip, per second.
pub const CHIP: &str = "chip";
/// A share of the whitepaper's peak.
pub const SHARE: &str = "share";

/// The shared suite's quantities the core reads.
pub mod banks {
    /// Cycles each extra access to one bank adds (the fit's slope).
    pub const CONFLICT_COST: &str = "conflict-cost";
    /// A conflict-free 4-byte load whose index is computed on the chain.
    pub const INDEXED_LOAD: &str = "indexed-load-latency";
}

/// A memory level's quantities the core reads, as the key names them.
pub mod level {
    pub const SIZE: &str = "size";
    /// Read from the curve with no model (`capacity` rows).
    pub const CAPACITY: &str = "capacity";
    pub const LINE: &str = "line";
    pub const WAYS: &str = "ways";
    pub const SETS: &str = "sets";
    pub const LATENCY: &str = "latency";
    /// The conflict experiment's ways and way size, and the stride sweep's fetch granularity.
    pub const CONFLICT_WAYS: &str = "conflict-ways";
    pub const CONFLICT_WAY_SIZE: &str = "conflict-way-size";
    pub const FETCH_GRANULARITY: &str = "fetch-granularity";
}

impl Known<'_> {
    /// The key.
    pub fn key(&self) -> String {
        let parts: Vec<&str> = match *self {
            Known::Memory { space, level, what } => vec!["cache", space, level, what],
            Known::Load { space } => vec!["cache", space, "sass-load"],
            Known::Sass { opcode, what } => vec!["pipeline", "sass", opcode, what],
            Known::Ptx { operation, what } => vec!["pipeline", "ptx", operation, what],
            Known::Flops { name, what } => vec!["flops", name, what],
            Known::Tensor {
                family,
                shape,
                types,
                what,
            } => vec!["tensor", family, shape, types, what],
            Known::Bandwidth {
                level,
                operation,
                search,
            } => vec!["bandwidth", level, operation, search],
            Known::L2BulkRead { lines } => vec!["tma", "l2-bulk-read", lines],
            Known::IndexChain { space } => vec!["cache", space, "index-chain"],
            Known::Banks { what } => vec!["shared", "banks", what],
        };
        parts.join(&SEP.to_string())
    }
}

/// The load paths the cache suite's shared-storage probe compares, by the memory space whose
/// first level each fills: (space, path).
pub const STORAGE_PATHS: [(&str, &str); 4] = [
    ("global", "l1"),
    ("readonly", "readonly"),
    ("texture", "texture"),
    ("constant", "constant"),
];

/// The key of the shared-storage verdict on `fill`'s lines after a walk through `evict`.
pub fn storage(fill: &str, evict: &str) -> String {
    ["cache", "storage", fill, evict].join(&SEP.to_string())
}

/// The (fill, evict) paths of a shared-storage verdict's key ([`storage`]).
pub fn storage_pair(key: &str) -> Option<(&str, &str)> {
    let mut parts = key.split(SEP);
    let (Some("cache"), Some("storage"), Some(fill), Some(evict), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    let known = |p: &str| STORAGE_PATHS.iter().any(|&(_, path)| path == p);
    (known(fill) && known(evict)).then_some((fill, evict))
}

/// Whether `key` is a bandwidth headline of `operation` at `level`, whichever search it came
/// from (the curated memory table and the roofline's memory ceilings take either).
pub fn is_bandwidth(key: &str, level: &str, operation: &str) -> bool {
    matches!(parse(key), Some(Known::Bandwidth { level: l, operation: o, .. })
        if l == level && o == operation)
}

/// What `key` is, where it is a key the core reads. A row keyed by its words
/// ([`plain`]) may hold the separator in them; it is never read as a known key, since each
/// known key's last part is one of the few its constructor writes.
pub fn parse(key: &str) -> Option<Known<'_>> {
    let parts: Vec<&str> = key.split(SEP).collect();
    let timing = |what: &str| [LATENCY, THROUGHPUT].contains(&what);
    let rate = |what: &str| [PER_SM, CHIP, SHARE].contains(&what);
    let level_what = |what: &str| {
        [
            level::SIZE,
            level::CAPACITY,
            level::LINE,
            level::WAYS,
            level::SETS,
            level::LATENCY,
            level::CONFLICT_WAYS,
            level::CONFLICT_WAY_SIZE,
            level::FETCH_GRANULARITY,
        ]
        .contains(&what)
    };
    let level_number = |level: &str| level == BEYOND || level.parse::<u32>().is_ok_and(|n| n >= 1);
    Some(match parts[..] {
        ["cache", space, "sass-load"] => Known::Load { space },
        ["cache", space, "index-chain"] => Known::IndexChain { space },
        ["shared", "banks", what]
            if [banks::CONFLICT_COST, banks::INDEXED_LOAD].contains(&what) =>
        {
            Known::Banks { what }
        }
        ["cache", space, level, what] if level_number(level) && level_what(what) => {
            Known::Memory { space, level, what }
        }
        ["pipeline", "sass", opcode, what] if timing(what) => Known::Sass { opcode, what },
        ["pipeline", "ptx", operation, what] if timing(what) => Known::Ptx { operation, what },
        ["flops", name, what] if rate(what) => Known::Flops { name, what },
        ["tensor", family, shape, types, what] if timing(what) || rate(what) => Known::Tensor {
            family,
            shape,
            types,
            what,
        },
        ["bandwidth", level, operation, search] if search.starts_with("at the ") => {
            Known::Bandwidth {
                level,
                operation,
                search,
            }
        }
        ["tma", "l2-bulk-read", lines] => Known::L2BulkRead { lines },
        _ => return None,
    })
}

/// The suite of each section the summary has had, for [`from_words`].
const SUITE_OF_SECTION: [(&str, &str); 17] = [
    ("Memory hierarchy", "cache"),
    ("Clocks and timers", "clock"),
    ("Bandwidth", "bandwidth"),
    ("Pipeline", "pipeline"),
    ("Arithmetic peak (CUDA cores)", "flops"),
    ("Tensor cores", "tensor"),
    ("TMA", "tma"),
    ("Roofline", "roofline"),
    ("SM map", "sm-map"),
    ("Shared memory", "shared"),
    ("Lane slots", "slots"),
    ("Atomics", "atomics"),
    ("Registers", "regs"),
    ("Branches", "branch"),
    ("Synchronization", "sync"),
    ("Divergence", "divergence"),
    ("Distributed shared memory", "dsm"),
];

/// The suites added after figure keys (run-directory format 3): every file they write holds its
/// figures' keys, so the migration table has no older words of theirs to read.
pub const BORN_KEYED: [&str; 2] = ["launch", "dpx"];

/// The keys of figures an older suite gained after figure keys (the TMA suite's box shapes and
/// copies into shared memory, the cache suite's shared-storage verdicts): every file that
/// holds them holds their keys too.
pub const BORN_KEYED_FIGURES: [&str; 3] = ["tma/tiles/", "tma/async/", "cache/storage/"];

/// Whether every file holding the figure `key` of `suite` holds the key itself, so that the
/// migration table has no words of it to read ([`BORN_KEYED`], [`BORN_KEYED_FIGURES`]).
pub fn born_keyed(suite: &str, key: &str) -> bool {
    BORN_KEYED.contains(&suite) || BORN_KEYED_FIGURES.iter().any(|p| key.starts_with(p))
}

/// The migration table: the key of a figure a file holds in words only (every format before
/// keys), from its section and quantity as the suites of those formats wrote them. No other
/// code reads a figure's words for what it is.
pub fn from_words(section: &str, quantity: &str) -> String {
    let suite = suite_of_section(section);
    if suite == "clock" && quantity == "SM clock (measured)" {
        return SM_CLOCK.into();
    }
    known_from_words(suite, quantity)
        .map(|k| k.key())
        .unwrap_or_else(|| plain(suite, quantity))
}

fn suite_of_section(section: &str) -> &str {
    SUITE_OF_SECTION
        .iter()
        .find(|(s, _)| *s == section)
        .map_or(section, |(_, suite)| suite)
}

/// The key of a figure a file holds: its own where the file has one that is not just its words,
/// else the migration table's. A row a suite keyed by its words ([`plain`]) in an older format
/// may have a key of its own today (the shared suite's bank-conflict cost, the cache suite's
/// index chain): such a file is read as today's run is keyed, so that `compare` pairs them.
pub fn of_saved(key: Option<String>, section: &str, quantity: &str) -> String {
    match key {
        Some(key) if key != plain(suite_of_section(section), quantity) => key,
        _ => from_words(section, quantity),
    }
}

fn known_from_words<'a>(suite: &str, quantity: &'a str) -> Option<Known<'a>> {
    match suite {
        "clock" => None,
        "cache" => memory_from_words(quantity),
        "pipeline" => {
            let (name, what) = timing(quantity)?;
            let head = name.split(" (").next().unwrap_or(name);
            let is_sass = head
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '.');
            if is_sass {
                // "IADD3 latency", "MUFU.SIN (FMUL.RZ ×96 subtracted) latency".
                Some(Known::Sass { opcode: head, what })
            } else {
                // "fp32 div (PTX, chain and loop) latency", or in a run before the SASS
                // table "fp32 div latency"; an operation names its PTX type first.
                let kind = name.split(' ').next()?;
                ["fp16x2", "fp32", "fp64", "int32", "uint32"]
                    .contains(&kind)
                    .then(|| Known::Ptx {
                        operation: name.split(" (PTX").next().unwrap_or(name),
                        what,
                    })
            }
        }
        "flops" => {
            let (name, what) = if let Some(name) = quantity.strip_suffix(" rate, all SMs at once") {
                (name, PER_SM)
            } else if let Some(name) =
                quantity.strip_suffix(" over all SMs, per second of wall time")
            {
                (name, CHIP)
            } else {
                (
                    quantity.strip_suffix(": share of the whitepaper peak")?,
                    SHARE,
                )
            };
            Some(Known::Flops { name, what })
        }
        "tensor" => {
            let (kernel, what) = if let Some(k) = quantity.strip_suffix(" at the measured clock") {
                (k, CHIP)
            } else if let Some(k) = quantity
                .strip_suffix(": share of the dense peak")
                .or_else(|| quantity.strip_suffix(": share of the sparse peak"))
            {
                (k, SHARE)
            } else {
                timing(quantity)?
            };
            // A family may say where A comes from: "wgmma (A in registers) m64n8k16 …".
            const REGISTERS: &str = " (A in registers)";
            let family_end = match kernel.find(&format!("{REGISTERS} ")) {
                Some(i) => i + REGISTERS.len(),
                None => kernel.find(' ')?,
            };
            let family = &kernel[..family_end];
            let mut parts = kernel[family_end + 1..].splitn(2, ' ');
            let (shape, types) = (parts.next()?, parts.next()?);
            Some(Known::Tensor {
                family,
                shape,
                types,
                what,
            })
        }
        "bandwidth" => {
            // "l2 read (at the l2 read search's winner)".
            let (name, search) = quantity.strip_suffix(')')?.split_once(" (")?;
            let (level, operation) = name.split_once(' ')?;
            if !["shared", "l1", "l2", "dram"].contains(&level) || !search.starts_with("at the ") {
                return None;
            }
            Some(Known::Bandwidth {
                level,
                operation,
                search,
            })
        }
        "tma" => {
            let lines = match quantity {
                "L2 read by bulk copies, lines shared by every SM" => "shared",
                "L2 read by bulk copies, lines private to one block" => "private",
                _ => return None,
            };
            Some(Known::L2BulkRead { lines })
        }
        "shared" => Some(Known::Banks {
            what: match quantity {
                "cost per extra bank-conflict way" => banks::CONFLICT_COST,
                "indexed load latency (4 B, no conflict; the word index is scaled on the chain)" => {
                    banks::INDEXED_LOAD
                }
                _ => return None,
            },
        }),
        _ => None,
    }
}

/// "X latency" / "X throughput".
fn timing(quantity: &str) -> Option<(&str, &'static str)> {
    if let Some(name) = quantity.strip_suffix(" latency") {
        Some((name, LATENCY))
    } else {
        Some((quantity.strip_suffix(" throughput")?, THROUGHPUT))
    }
}

/// "global: level 1 latency", "shared: slowest level latency", "global: level 1 ways
/// (conflict experiment)", "global: timed-loop load instruction (SASS)".
fn memory_from_words(quantity: &str) -> Option<Known<'_>> {
    let (space, rest) = quantity.split_once(": ")?;
    if rest == "timed-loop load instruction (SASS)" {
        return Some(Known::Load { space });
    }
    if rest == "index-chain overhead per load" {
        return Some(Known::IndexChain { space });
    }
    let (level, words) = if let Some(words) = rest.strip_prefix("slowest level ") {
        (BEYOND, words)
    } else {
        let rest = rest.strip_prefix("level ")?;
        let (level, words) = rest.split_once(' ')?;
        (level, words)
    };
    let what = match words {
        "size" => level::SIZE,
        "capacity" => level::CAPACITY,
        "line" => level::LINE,
        "ways" => level::WAYS,
        "sets" => level::SETS,
        "latency" => level::LATENCY,
        "ways (conflict experiment)" => level::CONFLICT_WAYS,
        "way size (conflict experiment)" => level::CONFLICT_WAY_SIZE,
        "fetch granularity (stride sweep)" => level::FETCH_GRANULARITY,
        _ => return None,
    };
    Some(Known::Memory { space, level, what })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_storage_key_parses_back_to_its_paths_and_nothing_else_does() {
        assert_eq!(
            storage_pair(&storage("l1", "texture")),
            Some(("l1", "texture"))
        );
        assert_eq!(storage_pair("cache/storage/l1/kept"), None);
        assert_eq!(storage_pair("cache/storage/l1/texture/x"), None);
        assert_eq!(storage_pair("cache/global/1/latency"), None);
    }

    #[test]
    fn figures_born_keyed_are_the_new_suites_and_the_tma_shapes_only() {
        assert!(born_keyed("dpx", "dpx/anything"));
        assert!(born_keyed("tma", "tma/tiles/l2/4x256x1/swizzle-0"));
        assert!(born_keyed("tma", "tma/async/dram/cp.async.cg/4"));
        // The TMA suite's older rows are read from their words.
        assert!(!born_keyed(
            "tma",
            &plain("tma", "TMA copy latency, cached")
        ));
        assert!(!born_keyed("cache", "cache/global/1/latency"));
    }

    #[test]
    fn every_known_key_parses_back_to_itself() {
        let known = [
            Known::Memory {
                space: "global",
                level: "1",
                what: level::LATENCY,
            },
            Known::Memory {
                space: "shared",
                level: BEYOND,
                what: level::LATENCY,
            },
            Known::Load { space: "texture" },
            Known::Sass {
                opcode: "MUFU.EX2",
                what: THROUGHPUT,
            },
            Known::Ptx {
                operation: "fp32 div",
                what: LATENCY,
            },
            Known::Flops {
                name: "FP32 FFMA",
                what: CHIP,
            },
            Known::Tensor {
                family: "wgmma",
                shape: "m64n256k16",
                types: "FP16→FP32",
                what: CHIP,
            },
            Known::Bandwidth {
                level: "l2",
                operation: "shared-line read",
                search: "at the l2 read search's winner",
            },
            Known::L2BulkRead { lines: "shared" },
            Known::IndexChain { space: "global" },
            Known::Banks {
                what: banks::CONFLICT_COST,
            },
        ];
        for k in known {
            assert_eq!(parse(&k.key()), Some(k), "{}", k.key());
        }
        assert_eq!(parse(&plain("sync", "barrier cost")), None);
        // A row keyed by words that hold the separator is not read as a level or a rate.
        assert_eq!(parse(&plain("cache", "global: hits/misses/share")), None);
        assert_eq!(parse(&plain("flops", "FFMA/FADD")), None);
        assert_eq!(parse(&plain("bandwidth", "l2/read/per SM")), None);
        assert_eq!(parse(SM_CLOCK), None);
    }

    #[test]
    fn the_migration_table_reads_the_words_of_older_formats() {
        assert_eq!(
            from_words("Memory hierarchy", "global: level 2 ways"),
            "cache/global/2/ways"
        );
        assert_eq!(
            from_words("Memory hierarchy", "shared: slowest level latency"),
            "cache/shared/memory/latency"
        );
        assert_eq!(
            from_words("Pipeline", "fp32 div latency"),
            "pipeline/ptx/fp32 div/latency"
        );
        assert_eq!(
            from_words("Pipeline", "IMAD (IADD3 subtracted) latency"),
            "pipeline/sass/IMAD/latency"
        );
        assert_eq!(
            from_words(
                "Pipeline",
                "fp16x2 fma (half2) (PTX, chain and loop) throughput"
            ),
            "pipeline/ptx/fp16x2 fma (half2)/throughput"
        );
        assert_eq!(
            from_words("Pipeline", "warps to reach 95% of fp32 fma throughput"),
            "pipeline/warps to reach 95% of fp32 fma throughput"
        );
        assert_eq!(
            from_words(
                "Tensor cores",
                "wgmma m64n256k16 FP16→FP32 at the measured clock"
            ),
            "tensor/wgmma/m64n256k16/FP16→FP32/chip"
        );
        assert_eq!(
            from_words(
                "Tensor cores",
                "wgmma (A in registers) m64n8k16 FP16→FP32 latency"
            ),
            "tensor/wgmma (A in registers)/m64n8k16/FP16→FP32/latency"
        );
        assert_eq!(
            from_words(
                "Tensor cores",
                "wgmma.sp m64n256k32 FP16→FP32: share of the sparse peak"
            ),
            "tensor/wgmma.sp/m64n256k32/FP16→FP32/share"
        );
        assert_eq!(
            from_words("Shared memory", "cost per extra bank-conflict way"),
            "shared/banks/conflict-cost"
        );
        assert_eq!(
            from_words("Memory hierarchy", "global: index-chain overhead per load"),
            "cache/global/index-chain"
        );
        // A key that is just its words is read as today's suite keys the row; any other stays.
        assert_eq!(
            of_saved(
                Some(plain("shared", "cost per extra bank-conflict way")),
                "Shared memory",
                "cost per extra bank-conflict way"
            ),
            "shared/banks/conflict-cost"
        );
        assert_eq!(
            of_saved(
                Some("dpx/x".into()),
                "DPX",
                "cost per extra bank-conflict way"
            ),
            "dpx/x"
        );
        // A section no suite writes any more keeps its words.
        assert_eq!(from_words("Elsewhere", "x"), "Elsewhere/x");
        assert_eq!(
            from_words(
                "Memory hierarchy",
                "global: level 1 with a 0 % shared carveout"
            ),
            "cache/global: level 1 with a 0 % shared carveout"
        );
    }
}

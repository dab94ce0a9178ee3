//! The speed mechanisms of `gpubench all`, each of which can be turned off to measure what it
//! saves (`scripts/bench-mechanisms.sh`): a mechanism earns its code only by the time it saves
//! (issue #73). [`ENV`] names the ones turned off, comma-separated; unset, all are on. `all`
//! refuses a name it does not know and records the ones off in `all.json`; its worker processes
//! inherit the variable.

/// The environment variable naming the mechanisms turned off (`workers,kept`).
pub const ENV: &str = "GPUBENCH_WITHOUT";

/// One of `all`'s speed mechanisms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    /// A worker process runs several suites one after another (off: a new process per suite).
    Workers,
    /// A worker keeps its GPU context from one suite to the next (off: each suite creates one).
    Kept,
    /// `all` compiles every module to a cubin ahead, on the host's other cores (off: each suite
    /// has the driver compile its PTX).
    Prebuilt,
    /// A suite steps aside for long host work and is given the GPU again between later suites
    /// (off: it keeps the GPU through its host work).
    Parked,
    /// Suites with long preparation start early in a full run (the instruction cache's compiles,
    /// slots' ncu; off: every suite starts one turn ahead of its own, in registry order).
    Early,
}

impl Mechanism {
    pub const ALL: [Mechanism; 5] = [
        Mechanism::Workers,
        Mechanism::Kept,
        Mechanism::Prebuilt,
        Mechanism::Parked,
        Mechanism::Early,
    ];

    /// Its name in [`ENV`].
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Workers => "workers",
            Mechanism::Kept => "kept",
            Mechanism::Prebuilt => "prebuilt",
            Mechanism::Parked => "parked",
            Mechanism::Early => "early",
        }
    }
}

/// Whether `mechanism` is on in this process: [`ENV`] does not name it.
pub fn on(mechanism: Mechanism) -> bool {
    !named(std::env::var(ENV).ok().as_deref(), mechanism)
}

fn named(list: Option<&str>, mechanism: Mechanism) -> bool {
    list.is_some_and(|list| list.split(',').any(|n| n.trim() == mechanism.name()))
}

/// The mechanisms [`ENV`] turns off, by name; an error naming the known ones where it names
/// another.
pub fn turned_off() -> Result<Vec<&'static str>, String> {
    let Ok(list) = std::env::var(ENV) else {
        return Ok(Vec::new());
    };
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if !Mechanism::ALL.iter().any(|m| m.name() == name) {
            let known: Vec<&str> = Mechanism::ALL.iter().map(|m| m.name()).collect();
            return Err(format!(
                "{ENV} names {name:?}, which is no mechanism of `all`; the mechanisms are {}",
                known.join(", ")
            ));
        }
    }
    Ok(Mechanism::ALL
        .iter()
        .filter(|m| named(Some(&list), **m))
        .map(|m| m.name())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mechanism_is_off_only_where_the_list_names_it() {
        assert!(!named(None, Mechanism::Kept));
        assert!(named(Some("workers, kept"), Mechanism::Kept));
        assert!(!named(Some("workers"), Mechanism::Kept));
        assert!(!named(Some("keptx"), Mechanism::Kept));
        assert!(named(Some("early"), Mechanism::Early));
    }
}

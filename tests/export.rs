//! `gpubench export` on the committed runs, with no GPU: the schema is the one committed, every
//! committed machine model validates against it and comes back byte for byte, what the run did
//! not settle is exported as unresolved (never as a value), and no file is overwritten.

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn gpubench() -> Command {
    Command::cargo_bin("gpubench").unwrap()
}

fn committed_schema() -> serde_json::Value {
    let text = std::fs::read_to_string(root().join("schema/machine-model.schema.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Each committed export: the run it was made from, its file, and the repeat it was confirmed
/// by where that is not the run's own.
fn committed_exports() -> Vec<(PathBuf, PathBuf, Option<PathBuf>)> {
    let results = root().join("results");
    vec![
        (
            results.join("h100/all"),
            results.join("h100/all/machine-model.json"),
            Some(results.join("h100/all-repeat")),
        ),
        (
            results.join("h200/all"),
            results.join("h200/all/machine-model.json"),
            None,
        ),
        (
            results.join("h200x2/gpu0-f64c03ac"),
            results.join("h200x2/gpu0-f64c03ac/machine-model.json"),
            None,
        ),
        (
            results.join("h200x2/gpu1-954a65b1"),
            results.join("h200x2/gpu1-954a65b1/machine-model.json"),
            None,
        ),
        // With every cache level's capacity (its own repeat inside, in `run/repeat`).
        (
            results.join("h200/capacity-99dbf92/run"),
            results.join("h200/capacity-99dbf92/run/machine-model.json"),
            None,
        ),
    ]
}

#[test]
fn the_schema_is_the_committed_one() {
    let printed = gpubench().args(["export", "--schema"]).output().unwrap();
    assert!(printed.status.success());
    let committed = std::fs::read(root().join("schema/machine-model.schema.json")).unwrap();
    assert!(
        printed.stdout == committed,
        "the schema changed: write it again with `gpubench export --schema --output schema/machine-model.schema.json` (and bump SCHEMA_ID if a reader would break)"
    );
}

#[test]
fn every_committed_export_validates_against_the_schema() {
    let validator = jsonschema::validator_for(&committed_schema()).unwrap();
    for (_, file, _) in committed_exports() {
        let model: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&model)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", file.display());
        // A value the run did not settle is never under `value`.
        let mut unresolved = 0;
        for figure in model["figures"].as_array().unwrap() {
            if figure["status"] == "unresolved" {
                unresolved += 1;
                assert!(figure["value"].is_null(), "{figure}");
            } else {
                assert!(figure["seen"].is_null(), "{figure}");
            }
        }
        assert!(unresolved > 0, "{}", file.display());
        // The hierarchy is there, each level with its latency.
        let memory = model["memory"].as_array().unwrap();
        assert!(memory.len() >= 10, "{}", file.display());
        assert!(memory.iter().all(|l| l["latency"].is_object()));
        // Where the run read capacities, every cache level with a rise has one as a figure,
        // its interval around its value (#51).
        if memory.iter().any(|l| l["capacity"].is_object()) {
            for (space, level) in [
                ("global", "1"),
                ("readonly", "1"),
                ("texture", "1"),
                ("l2", "1"),
                ("l2", "2"),
                ("instruction", "1"),
                ("instruction", "2"),
                ("constant", "1"),
            ] {
                let found = memory
                    .iter()
                    .find(|l| l["space"] == space && l["level"] == level)
                    .unwrap_or_else(|| panic!("{}: no {space} level {level}", file.display()));
                let capacity = &found["capacity"];
                assert_eq!(capacity["status"], "figure", "{space} {level}: {capacity}");
                let (low, value, high) = (
                    capacity["low"].as_f64().unwrap(),
                    capacity["value"].as_f64().unwrap(),
                    capacity["high"].as_f64().unwrap(),
                );
                assert!(low <= value && value < high, "{space} {level}: {capacity}");
            }
        }
    }
    // A model missing a required part is refused by the schema (it constrains something).
    let mut broken: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&committed_exports()[0].1).unwrap()).unwrap();
    broken.as_object_mut().unwrap().remove("gpu");
    assert!(!validator.is_valid(&broken));
}

#[test]
fn the_output_is_never_overwritten_and_bad_input_is_one_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("model.json");
    std::fs::write(&out, "keep").unwrap();
    let refused = gpubench()
        .args(["export", "results/h100/all", "--output"])
        .arg(&out)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("never overwrites"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep");
    let missing = gpubench().args(["export", "no/such/run"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("is not a directory"));
}

/// #71: `export --output` writes its file whole or not at all. Killed by SIGTERM at any moment
/// (before, during or after the write), it leaves either nothing or the complete model, never
/// a half-written file nor its staging file, and removes the directories it made; finished, the
/// directory holds the model alone, the same bytes as standard output.
#[test]
fn an_exported_file_is_whole_or_absent_even_when_killed() {
    let run = root().join("results/h100/all");
    let whole = exported(&run, None, "json");
    for delay_ms in [0, 5, 20, 60, 150, 400, 2000] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("made/model.json");
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("gpubench"))
            .arg("export")
            .arg(&run)
            .arg("--output")
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        // SAFETY: kill sends a signal to the child's pid, which has not been waited for.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        let status = child.wait().unwrap();
        let left: Vec<String> = walk(dir.path());
        if status.success() {
            assert_eq!(left, vec!["made", "made/model.json"], "{delay_ms} ms");
            assert!(std::fs::read(&out).unwrap() == whole, "{delay_ms} ms");
        } else {
            assert!(
                left.is_empty(),
                "killed after {delay_ms} ms, it left {left:?}"
            );
        }
    }
}

/// The paths under `dir`, relative to it, sorted.
fn walk(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            found.push(
                path.strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
            if path.is_dir() {
                pending.push(path);
            }
        }
    }
    found.sort();
    found
}

/// `gpubench export RUN [--repeat-of REPEAT] --format FORMAT`'s output, which must succeed.
fn exported(run: &Path, repeat: Option<&Path>, format: &str) -> Vec<u8> {
    let mut export = gpubench();
    export.arg("export").arg(run).args(["--format", format]);
    if let Some(repeat) = repeat {
        export.arg("--repeat-of").arg(repeat);
    }
    let made = export.output().unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    made.stdout
}

#[test]
fn every_committed_export_comes_back_byte_for_byte() {
    for (run, file, repeat) in committed_exports() {
        assert!(
            exported(&run, repeat.as_deref(), "json") == std::fs::read(&file).unwrap(),
            "{} differs from a fresh export of {}",
            file.display(),
            run.display()
        );
        // And its simulator configuration, committed beside it.
        let config = file.with_file_name("gpgpusim.config");
        assert!(
            exported(&run, repeat.as_deref(), "accel-sim") == std::fs::read(&config).unwrap(),
            "{} differs from a fresh export",
            config.display()
        );
    }
}

#[test]
fn a_value_outside_its_domain_is_refused_not_exported() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    common::copy_tree(&root().join("results/h100/all"), &run);
    let json = run.join("pipeline/pipeline.json");
    let text = std::fs::read_to_string(&json).unwrap();
    let first = text.find("\"latency_cycles\": ").unwrap() + "\"latency_cycles\": ".len();
    let end = first + text[first..].find([',', '\n']).unwrap();
    std::fs::write(&json, format!("{}-5.0{}", &text[..first], &text[end..])).unwrap();
    let refused = gpubench().arg("export").arg(&run).output().unwrap();
    assert_eq!(
        refused.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(refused.stdout.is_empty());
}

/// GPGPU-Sim's options by name, with the type it registers each under.
fn gpgpusim_options() -> std::collections::BTreeMap<String, String> {
    std::fs::read_to_string(root().join("tests/fixtures/gpgpusim-options.tsv"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut fields = l.split('\t');
            Some((fields.next()?.to_string(), fields.next()?.to_string()))
        })
        .collect()
}

/// Whether `value` parses as GPGPU-Sim parses `option` (its registered type; for strings, the
/// `sscanf` format its sources read the string with).
fn parses(option: &str, kind: &str, value: &str) -> bool {
    let unsigned_list = |n: usize| {
        let parts: Vec<&str> = value.split(',').collect();
        parts.len() == n && parts.iter().all(|p| p.parse::<u32>().is_ok())
    };
    match kind {
        "OPT_UINT32" => value.parse::<u32>().is_ok(),
        "OPT_INT32" => value.parse::<i32>().is_ok(),
        "OPT_BOOL" => value == "0" || value == "1",
        "OPT_FLOAT" => value.parse::<f32>().is_ok(),
        "OPT_CSTR" => match option {
            // gpu-sim.cc: "%lf:%lf:%lf:%lf".
            "-gpgpu_clock_domains" => {
                let parts: Vec<&str> = value.split(':').collect();
                parts.len() == 4 && parts.iter().all(|p| p.parse::<f64>().is_ok())
            }
            // cuda-sim.cc: six unsigned for int, five for fp and dp, one for sfu.
            "-ptx_opcode_latency_int" | "-ptx_opcode_initiation_int" => unsigned_list(6),
            "-ptx_opcode_latency_fp"
            | "-ptx_opcode_initiation_fp"
            | "-ptx_opcode_latency_dp"
            | "-ptx_opcode_initiation_dp" => unsigned_list(5),
            "-ptx_opcode_latency_sfu" | "-ptx_opcode_initiation_sfu" => unsigned_list(1),
            // gpu-cache.h: "%c:%u:%u:%u,%c:%c:%c:%c:%c,%c:%u:%u,%u:%u,%u" (the tail optional).
            "-gpgpu_const_cache:l1" | "-gpgpu_cache:dl1" => {
                let groups: Vec<&str> = value.split(',').collect();
                let geometry: Vec<&str> = groups[0].split(':').collect();
                let policy: Vec<&str> = groups.get(1).map_or(vec![], |g| g.split(':').collect());
                geometry.len() == 4
                    && geometry[0].len() == 1
                    && geometry[1..].iter().all(|p| p.parse::<u32>().is_ok())
                    && policy.len() == 5
                    && policy.iter().all(|p| p.len() == 1)
            }
            _ => false,
        },
        _ => false,
    }
}

#[test]
fn every_accel_sim_option_exists_and_parses_in_its_format() {
    let options = gpgpusim_options();
    assert!(options.len() > 200, "{} options", options.len());
    for (run, _, repeat) in committed_exports() {
        let text = String::from_utf8(exported(&run, repeat.as_deref(), "accel-sim")).unwrap();
        let mut set = 0;
        for line in text
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            let (option, value) = line.split_once(' ').unwrap();
            let kind = options
                .get(option)
                .unwrap_or_else(|| panic!("{option} is not a GPGPU-Sim option"));
            assert!(parses(option, kind, value), "{option} {value} ({kind})");
            set += 1;
        }
        assert!(set >= 15, "{}: only {set} options", run.display());
        // Every option said to be left undetermined is one the simulator has.
        for listed in text.lines().filter_map(|l| l.strip_prefix("#   ")) {
            let option = listed.split(':').next().unwrap();
            let option = if option == "-gpgpu_cache" || option == "-gpgpu_tex_cache" {
                listed.split(": ").next().unwrap()
            } else {
                option
            };
            assert!(options.contains_key(option), "{option}");
        }
    }
    assert!(!parses("-gpgpu_clock_domains", "OPT_CSTR", "1980:1980"));
    assert!(!parses("-ptx_opcode_latency_fp", "OPT_CSTR", "4,4,4,4"));
    assert!(!parses("-gpgpu_n_clusters", "OPT_UINT32", "-1"));
}

/// The export's latency translation is what the committed simulator runs measured: for every
/// `results/sim/*/answer-key.json`, the hit latency less the constant lands within 2 cycles of
/// the configuration's option, and the constant is the runs' mean offset within half a cycle;
/// the L2's is learned per interconnect (the configuration's `-network_mode`), each from at
/// least two configurations.
#[test]
fn the_latency_translation_is_what_the_simulated_runs_measured() {
    use gpubench::report::accel_sim::{
        L1_CHASE_OVER_OPTION, L2_CHASE_OVER_OPTION_BY_NETWORK, SMEM_CHASE_OVER_OPTION,
    };
    let mut offsets = std::collections::BTreeMap::<String, Vec<f64>>::new();
    for entry in std::fs::read_dir(root().join("results/sim")).unwrap() {
        let key = entry.unwrap().path().join("answer-key.json");
        let Ok(text) = std::fs::read_to_string(&key) else {
            continue;
        };
        let key: serde_json::Value = serde_json::from_str(&text).unwrap();
        let network = key["config_options"]["-network_mode"]
            .as_str()
            .unwrap_or_else(|| panic!("{text}: no -network_mode"))
            .to_string();
        for row in key["rows"].as_array().unwrap() {
            let parameter = row["parameter"].as_str().unwrap();
            for option in [
                "-gpgpu_l1_latency",
                "-gpgpu_l2_rop_latency",
                "-gpgpu_smem_latency",
            ] {
                if parameter == format!("hit latency (cycles) vs {option}") {
                    let configured: f64 = row["config"].as_str().unwrap().parse().unwrap();
                    let measured = row["gpubench"].as_f64().unwrap();
                    let group = if option == "-gpgpu_l2_rop_latency" {
                        format!("{option} -network_mode {network}")
                    } else {
                        option.to_string()
                    };
                    offsets
                        .entry(group)
                        .or_default()
                        .push(measured - configured);
                }
            }
        }
    }
    let mut constants = vec![
        ("-gpgpu_l1_latency".to_string(), L1_CHASE_OVER_OPTION),
        ("-gpgpu_smem_latency".to_string(), SMEM_CHASE_OVER_OPTION),
    ];
    for (mode, offset, _) in L2_CHASE_OVER_OPTION_BY_NETWORK {
        constants.push((
            format!("-gpgpu_l2_rop_latency -network_mode {mode}"),
            offset,
        ));
    }
    // Every group the runs hold has its constant.
    for group in offsets.keys() {
        assert!(constants.iter().any(|(g, _)| g == group), "{group}");
    }
    for (group, constant) in constants {
        let seen = &offsets[&group];
        assert!(seen.len() >= 2, "{group}: {} runs", seen.len());
        let mean = seen.iter().sum::<f64>() / seen.len() as f64;
        assert!(
            (mean - constant).abs() <= 0.5,
            "{group}: the runs' offset is {mean:.2}, the export takes {constant}"
        );
        for offset in seen {
            assert!((offset - constant).abs() <= 2.0, "{group}: {seen:?}");
        }
    }
}

/// `--base`: a cache string's fields that no run measures come from the base configuration,
/// the geometry from the run; a base that cannot be read, or one given to the JSON model, is
/// one sentence and exit 2.
#[test]
fn a_base_configuration_fills_the_cache_strings_unmeasured_fields() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("gpgpusim.config");
    std::fs::write(
        &base,
        "-gpgpu_cache:dl1 S:4:128:64,L:T:m:L:L,A:256:32,16:0,32\n-gpgpu_n_clusters 80\n",
    )
    .unwrap();
    let run = root().join("results/sim/SM7_QV100-1SM/global");
    let out = gpubench()
        .arg("export")
        .arg(&run)
        .args(["--format", "accel-sim", "--base"])
        .arg(&base)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("\n-gpgpu_cache:dl1 S:4:128:256,L:T:m:L:L,A:256:32,16:0,32\n"),
        "{text}"
    );
    assert!(text.contains("(--base), not measured"), "{text}");
    let json = gpubench()
        .arg("export")
        .arg(&run)
        .arg("--base")
        .arg(&base)
        .output()
        .unwrap();
    assert_eq!(json.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&json.stderr).contains("--format accel-sim"));
    let missing = gpubench()
        .arg("export")
        .arg(&run)
        .args(["--format", "accel-sim", "--base", "no/such.config"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--base no/such.config"));
}

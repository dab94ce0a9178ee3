//! Issue #71, hostile files round 4: text from a run never becomes a simulator option line or
//! live Markdown or a spreadsheet formula; `--base` is read as a run's files are; duplicated and
//! lying manifests, a directory given twice, and the smaller flags are refused. Every refusal
//! is exit code 2 in one sentence naming what is wrong, with nothing left behind.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use assert_cmd::Command;
use common::copy_tree;

fn committed_all() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results/h100/all")
}

/// A copy of the committed H100 clock suite at `to`.
fn clock_run(to: &Path) -> PathBuf {
    copy_tree(&committed_all().join("clock"), to);
    to.to_path_buf()
}

/// `gpubench ARGS…`, killed after a minute.
fn gpubench<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    gpubench_in(Path::new("."), args)
}

/// [`gpubench`] run in the directory `cwd`.
fn gpubench_in<I, S>(cwd: &Path, args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut command = Command::cargo_bin("gpubench").unwrap();
    command
        .current_dir(cwd)
        .args(args)
        .timeout(Duration::from_secs(60));
    command.output().unwrap()
}

/// Refused with exit code 2 in one sentence holding every one of `says`.
fn refused(output: &Output, says: &[&str]) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "not one sentence: {stderr}");
    for said in says {
        assert!(lines[0].contains(said), "{said:?} not in: {stderr}");
    }
}

/// Nothing at `out`, and nothing named like a staging directory beside it.
fn nothing_left(out: &Path) {
    assert!(!out.exists(), "a refused command left {}", out.display());
    let leftovers: Vec<String> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// `path`'s JSON with `edit` applied.
fn edit_json(path: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
}

/// The option lines of an accel-sim export: every line that is neither a comment nor blank.
fn option_lines(config: &str) -> Vec<String> {
    config
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

// Item 1: no string read from a run becomes a simulator option line or live Markdown / CSV.

#[test]
fn a_device_name_or_version_with_a_line_break_is_refused_naming_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    for (key, value) in [
        ("name", "H100\n-gpgpu_shmem_per_block 1\n#"),
        ("compute_capability", "9.0\r-gpgpu_n_clusters 1"),
        ("driver_cuda_version", "12.4\u{1b}[2J"),
    ] {
        let run = clock_run(&dir.path().join(format!("run-{key}")));
        edit_json(&run.join("metadata.json"), |m| {
            m["device"][key] = value.into();
        });
        let field = format!("device.{key}");
        let out = dir.path().join(format!("options-{key}.config"));
        let output = gpubench([
            "export".as_ref(),
            run.as_os_str(),
            "--format".as_ref(),
            "accel-sim".as_ref(),
            "--output".as_ref(),
            out.as_os_str(),
        ]);
        refused(&output, &["metadata.json", &field, "control character"]);
        nothing_left(&out);
        let out = dir.path().join(format!("report-{key}"));
        let output = gpubench([
            "report".as_ref(),
            run.as_os_str(),
            "--output".as_ref(),
            out.as_os_str(),
        ]);
        refused(&output, &["metadata.json", &field]);
        nothing_left(&out);
        let clock = committed_all().join("clock");
        let output = gpubench(["compare".as_ref(), clock.as_os_str(), run.as_os_str()]);
        refused(&output, &["metadata.json", &field]);
    }
    // A name past the driver's 256-byte buffer is not a name either; a megabyte of one is
    // refused by the reader, before the metadata is typed.
    let run = clock_run(&dir.path().join("run-long"));
    edit_json(&run.join("metadata.json"), |m| {
        m["device"]["name"] = "H".repeat(300).into();
    });
    let output = gpubench(["export".as_ref(), run.as_os_str()]);
    refused(
        &output,
        &["metadata.json", "device.name", "300 characters long"],
    );
    edit_json(&run.join("metadata.json"), |m| {
        m["device"]["name"] = "H".repeat(1 << 20).into();
    });
    let output = gpubench(["export".as_ref(), run.as_os_str()]);
    refused(
        &output,
        &["metadata.json", "/device/name holds 1048576 bytes of text"],
    );
}

#[test]
fn a_base_path_holding_line_breaks_stays_inside_its_comments() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir
        .path()
        .join("x\n-gpgpu_n_clusters 1\n-gpgpu_shmem_size 0\n#");
    std::fs::create_dir(&folder).unwrap();
    let base = folder.join("gpgpusim.config");
    std::fs::write(
        &base,
        "-gpgpu_n_clusters 132\n-gpgpu_const_cache:l1 N:128:64:8,L:R:f:N:L,S:2:64,4\n",
    )
    .unwrap();
    let output = gpubench([
        "export".as_ref(),
        committed_all().as_os_str(),
        "--format".as_ref(),
        "accel-sim".as_ref(),
        "--base".as_ref(),
        base.as_os_str(),
    ]);
    assert!(output.status.success(), "{output:?}");
    let config = String::from_utf8(output.stdout).unwrap();
    assert!(config.contains("(--base), not measured"), "{config}");
    let options = option_lines(&config);
    let clusters: Vec<&String> = options
        .iter()
        .filter(|l| l.starts_with("-gpgpu_n_clusters"))
        .collect();
    assert_eq!(clusters, ["-gpgpu_n_clusters 132"], "{config}");
    assert!(
        !options.iter().any(|l| l.starts_with("-gpgpu_shmem_size 0")),
        "{config}"
    );
    // The same options as without the base, but for the constant cache's fields after its
    // geometry, which are the base's.
    let plain = gpubench([
        "export".as_ref(),
        committed_all().as_os_str(),
        "--format".as_ref(),
        "accel-sim".as_ref(),
    ]);
    let plain = option_lines(&String::from_utf8(plain.stdout).unwrap());
    let names = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .map(|l| l.split_whitespace().next().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&options), names(&plain));
}

#[test]
fn html_in_names_is_not_live_in_the_markdown_and_formulas_are_text_in_the_csv() {
    let dir = tempfile::tempdir().unwrap();
    let run = clock_run(&dir.path().join("<img src=x onerror=alert(1)>"));
    edit_json(&run.join("metadata.json"), |m| {
        m["device"]["name"] = "H100 <script>alert(1)</script>".into();
    });
    let out = dir.path().join("out");
    let output = gpubench([
        "report".as_ref(),
        run.as_os_str(),
        "--output".as_ref(),
        out.as_os_str(),
    ]);
    assert!(output.status.success(), "{output:?}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("H100 &lt;script>"), "{summary}");
    assert!(!summary.contains("<script"), "{summary}");

    let compared = gpubench([
        "compare".as_ref(),
        committed_all().join("clock").as_os_str(),
        run.as_os_str(),
    ]);
    assert!(compared.status.success(), "{compared:?}");
    let markdown = String::from_utf8(compared.stdout).unwrap();
    assert!(
        !markdown.contains("<img") && !markdown.contains("<script"),
        "{markdown}"
    );

    // compare names a run by the path it was given: a relative one starts with the name.
    let name = "=HYPERLINK(\"http:x\";\"y\")";
    clock_run(&dir.path().join(name));
    let compared = gpubench_in(
        dir.path(),
        [
            "compare".as_ref(),
            "--format".as_ref(),
            "csv".as_ref(),
            committed_all().join("clock").as_os_str(),
            name.as_ref(),
        ],
    );
    assert!(compared.status.success(), "{compared:?}");
    let csv = String::from_utf8(compared.stdout).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let mut rows = 0;
    for record in reader.records() {
        for field in record.unwrap().iter() {
            let live = field.starts_with(['=', '+', '@']) || field.starts_with('-');
            assert!(
                !live || field.parse::<f64>().is_ok(),
                "{field:?} would run as a formula"
            );
        }
        rows += 1;
    }
    assert!(rows > 0, "{csv}");
    assert!(csv.contains("'=HYPERLINK"), "{csv}");
}

// Item 2: `--base` is read as a run's files are, and must set an option.

#[test]
fn a_base_that_is_no_bounded_regular_gpgpusim_config_is_refused_in_one_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.config");
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path and nothing else.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let huge = dir.path().join("huge.config");
    let file = std::fs::File::create(&huge).unwrap();
    file.set_len(3 << 30).unwrap(); // sparse: 3 GiB of NULs, on no disk
    let mut cases: Vec<(PathBuf, &str)> = vec![
        (PathBuf::from("/dev/zero"), "not a regular file"),
        (fifo, "not a regular file"),
        (dir.path().to_path_buf(), "not a regular file"),
        (huge, "larger than the 4194304 bytes"),
        (PathBuf::from("/dev/null"), "not a regular file"),
    ];
    for (name, text) in [
        ("empty.config", String::new()),
        ("model.json", "{\"-gpgpu_n_clusters\": 1}\n".to_string()),
        ("nuls.config", "\0".repeat(4096)),
        (
            "comments.config",
            "# -gpgpu_n_clusters 1\n--\n- 5\n".to_string(),
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        cases.push((path, "sets no GPGPU-Sim option"));
    }
    for (base, says) in cases {
        let out = dir.path().join("options.config");
        let started = std::time::Instant::now();
        let output = gpubench([
            "export".as_ref(),
            committed_all().join("clock").as_os_str(),
            "--format".as_ref(),
            "accel-sim".as_ref(),
            "--base".as_ref(),
            base.as_os_str(),
            "--output".as_ref(),
            out.as_os_str(),
        ]);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{}: {:?}",
            base.display(),
            started.elapsed()
        );
        let named = format!("--base {}", base.display());
        refused(&output, &[&named, says]);
        nothing_left(&out);
    }
}

// Item 4: duplicates and lying manifests.

/// An `all` run of four quick suites copied from the committed one, with an `all.json` naming
/// them (as hostile_runs.rs builds it).
fn small_all(to: &Path) -> PathBuf {
    const SUITES: [&str; 4] = ["clock", "shared", "branch", "sync"];
    let all = committed_all();
    for suite in SUITES {
        copy_tree(&all.join(suite), &to.join(suite));
    }
    std::fs::copy(all.join("info.json"), to.join("info.json")).unwrap();
    std::fs::copy(all.join("all.json"), to.join("all.json")).unwrap();
    edit_json(&to.join("all.json"), |m| {
        m["suites"]
            .as_array_mut()
            .unwrap()
            .retain(|s| SUITES.contains(&s["name"].as_str().unwrap()));
    });
    to.to_path_buf()
}

fn report_to(run: &Path, out: &Path) -> Output {
    gpubench([
        "report".as_ref(),
        run.as_os_str(),
        "--output".as_ref(),
        out.as_os_str(),
    ])
}

/// Every row of `csv` below its header written three times, as the issue's tensor.csv.
fn triple_rows(csv: &Path) {
    let text = std::fs::read_to_string(csv).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    let tripled: String = std::iter::once(rows[0])
        .chain(rows[1..].iter().flat_map(|r| [*r, *r, *r]))
        .map(|r| format!("{r}\n"))
        .collect();
    std::fs::write(csv, tripled).unwrap();
}

#[test]
fn a_csv_row_written_twice_is_refused_naming_the_file_and_both_lines() {
    let dir = tempfile::tempdir().unwrap();
    // Read back by report's figure.
    let run = dir.path().join("shared");
    copy_tree(&committed_all().join("shared"), &run);
    triple_rows(&run.join("shared.csv"));
    let out = dir.path().join("out");
    refused(
        &report_to(&run, &out),
        &["shared.csv: line 3 repeats line 2"],
    );
    nothing_left(&out);
    // Read back by the figures every command derives: 113 tensor rows were exported for 31.
    let run = dir.path().join("tensor");
    copy_tree(&committed_all().join("tensor"), &run);
    triple_rows(&run.join("tensor.csv"));
    let out = dir.path().join("model.json");
    let output = gpubench([
        "export".as_ref(),
        run.as_os_str(),
        "--output".as_ref(),
        out.as_os_str(),
    ]);
    refused(&output, &["tensor.csv: line 3 repeats line 2"]);
    nothing_left(&out);
}

#[test]
fn a_figure_written_twice_in_figures_json_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = clock_run(&dir.path().join("run"));
    edit_json(&run.join("figures.json"), |f| {
        let figures = f["figures"].as_array_mut().unwrap();
        let first = figures[0].clone();
        figures.extend(std::iter::repeat_n(first, 10_000));
    });
    let clock = committed_all().join("clock");
    let output = gpubench(["compare".as_ref(), clock.as_os_str(), run.as_os_str()]);
    refused(&output, &["figures.json", "appears twice"]);
}

#[test]
fn an_all_json_that_disagrees_with_the_disk_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    // Listing only clock: three complete suites would vanish without a word.
    let run = small_all(&dir.path().join("only-clock"));
    edit_json(&run.join("all.json"), |m| {
        m["suites"]
            .as_array_mut()
            .unwrap()
            .retain(|s| s["name"] == "clock");
    });
    let out = dir.path().join("out-only-clock");
    refused(
        &report_to(&run, &out),
        &["all.json does not list", "only-clock/branch"],
    );
    nothing_left(&out);

    // A suite listed twice.
    let run = small_all(&dir.path().join("twice"));
    edit_json(&run.join("all.json"), |m| {
        let suites = m["suites"].as_array_mut().unwrap();
        let shared = suites
            .iter()
            .find(|s| s["name"] == "shared")
            .unwrap()
            .clone();
        suites.push(shared);
    });
    let out = dir.path().join("out-twice");
    refused(
        &report_to(&run, &out),
        &["all.json lists the suite shared more than once"],
    );
    nothing_left(&out);

    // The suite says it failed; the manifest says complete.
    let run = small_all(&dir.path().join("status"));
    edit_json(&run.join("shared/metadata.json"), |m| {
        m["status"] = "failed".into();
    });
    let out = dir.path().join("out-status");
    refused(
        &report_to(&run, &out),
        &[
            "all.json records the suite shared as complete",
            "shared/metadata.json says failed",
        ],
    );
    nothing_left(&out);
    let clock = committed_all().join("clock");
    let output = gpubench(["compare".as_ref(), clock.as_os_str(), run.as_os_str()]);
    refused(&output, &["shared/metadata.json says failed"]);

    // A negative wall time.
    let run = small_all(&dir.path().join("seconds"));
    edit_json(&run.join("all.json"), |m| {
        m["suites"][0]["seconds"] = (-777.0).into();
    });
    let out = dir.path().join("out-seconds");
    refused(
        &report_to(&run, &out),
        &["all.json", "/suites/0/seconds holds -777"],
    );
    nothing_left(&out);
}

#[test]
fn a_devices_json_gpu_marked_complete_without_its_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fanout = dir.path().join("fanout");
    std::fs::create_dir(&fanout).unwrap();
    let gpu = |index: u32, uuid: &str, dir: &str| {
        serde_json::json!({
            "device": {"index": index, "name": "NVIDIA H100 80GB HBM3", "uuid": uuid},
            "dir": dir,
            "log": format!("{dir}.log"),
            "status": "complete",
            "seconds": 65.8
        })
    };
    let manifest = serde_json::json!({
        "command": ["all"],
        "parallel": true,
        "started_utc": "2026-11-25T16:37:11Z",
        "finished_utc": "2026-11-25T16:38:17Z",
        "gpus": [
            gpu(0, "GPU-ef81159d-fff8-b556-6015-a755c9892db3", "gpu0-ef81159d"),
            gpu(1, "GPU-1f77a902-080d-3ea6-75c2-30e906419c34", "gpu1-1f77a902"),
        ]
    });
    std::fs::write(
        fanout.join("devices.json"),
        serde_json::to_string_pretty(&manifest).unwrap(),
    )
    .unwrap();
    clock_run(&fanout.join("gpu0-ef81159d"));
    let clock = committed_all().join("clock");
    let output = gpubench(["compare".as_ref(), clock.as_os_str(), fanout.as_os_str()]);
    refused(
        &output,
        &[
            "devices.json records the GPU run gpu1-1f77a902 as complete",
            "is not a directory",
        ],
    );
}

#[test]
fn a_run_given_twice_is_refused_as_standing_beside_or_confirming_itself() {
    let dir = tempfile::tempdir().unwrap();
    let run = clock_run(&dir.path().join("run"));
    // The same directory by another spelling is the same directory.
    let again = dir.path().join("run/../run/");
    let output = gpubench(["compare".as_ref(), run.as_os_str(), again.as_os_str()]);
    refused(&output, &["are the same directory"]);
    let other = clock_run(&dir.path().join("other"));
    let output = gpubench([
        "compare".as_ref(),
        "--fleet".as_ref(),
        run.as_os_str(),
        other.as_os_str(),
        run.as_os_str(),
    ]);
    refused(&output, &["are the same directory"]);
    let out = dir.path().join("model.json");
    let output = gpubench([
        "export".as_ref(),
        run.as_os_str(),
        "--repeat-of".as_ref(),
        again.as_os_str(),
        "--output".as_ref(),
        out.as_os_str(),
    ]);
    refused(&output, &["--repeat-of", "itself"]);
    nothing_left(&out);
    let out = dir.path().join("out");
    let output = gpubench([
        "report".as_ref(),
        run.as_os_str(),
        "--repeat-of".as_ref(),
        run.as_os_str(),
        "--output".as_ref(),
        out.as_os_str(),
    ]);
    refused(&output, &["--repeat-of", "itself"]);
    nothing_left(&out);
}

// Item 6: the smaller ones.

#[test]
fn calibrate_with_absurd_threads_is_refused_and_leaves_no_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("study");
    let output = gpubench([
        "calibrate".as_ref(),
        "--cases".as_ref(),
        "4".as_ref(),
        "--threads".as_ref(),
        "100000".as_ref(),
        "--output".as_ref(),
        out.as_os_str(),
    ]);
    refused(
        &output,
        &["--threads must be between 1 and 1024, not 100000"],
    );
    nothing_left(&out);
    // The retry the abort used to block.
    let output = gpubench([
        "calibrate".as_ref(),
        "--cases".as_ref(),
        "4".as_ref(),
        "--threads".as_ref(),
        "2".as_ref(),
        "--output".as_ref(),
        out.as_os_str(),
    ]);
    assert!(output.status.success(), "{output:?}");
    assert!(out.join("calibration.json").is_file());
}

#[test]
fn export_output_into_a_missing_directory_is_made_as_report_makes_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = clock_run(&dir.path().join("run"));
    let out = dir.path().join("new/deeper/model.json");
    let output = gpubench([
        "export".as_ref(),
        run.as_os_str(),
        "--output".as_ref(),
        out.as_os_str(),
    ]);
    assert!(output.status.success(), "{output:?}");
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(model["schema"], "gpubench-machine-model/2");
    // A refused export makes no directories; one inside a file is refused in one sentence.
    let out = dir.path().join("other/model.json");
    let output = gpubench([
        "export".as_ref(),
        dir.path().join("no-run").as_os_str(),
        "--output".as_ref(),
        out.as_os_str(),
    ]);
    refused(&output, &["is not a directory"]);
    assert!(!dir.path().join("other").exists());
    let inside = run.join("clock.json").join("model.json");
    let output = gpubench([
        "export".as_ref(),
        run.as_os_str(),
        "--output".as_ref(),
        inside.as_os_str(),
    ]);
    refused(&output, &["clock.json is a file"]);
}

#[test]
fn a_tolerance_for_a_unit_no_figure_has_is_refused() {
    let clock = committed_all().join("clock");
    let shared = committed_all().join("shared");
    let output = gpubench([
        "compare".as_ref(),
        "--tolerance".as_ref(),
        "nosuchunit=0".as_ref(),
        clock.as_os_str(),
        shared.as_os_str(),
    ]);
    refused(
        &output,
        &["--tolerance nosuchunit=0", "\"nosuchunit\"", "cycles"],
    );
    let output = gpubench([
        "compare".as_ref(),
        "--tolerance".as_ref(),
        "cycles=2".as_ref(),
        clock.as_os_str(),
        shared.as_os_str(),
    ]);
    assert!(output.status.success(), "{output:?}");
}

#[test]
fn a_report_to_a_255_character_output_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let run = clock_run(&dir.path().join("run"));
    // The longest name a file may have (255 bytes, its last character two).
    let name = format!("{}é", "r".repeat(253));
    assert_eq!(name.len(), 255);
    let out = dir.path().join(&name);
    let output = report_to(&run, &out);
    assert!(output.status.success(), "{output:?}");
    assert!(out.join("summary.md").is_file());
    nothing_left(&dir.path().join("out"));
}

// Item 3: a device's facts within their physical domains.

#[test]
fn a_device_with_no_sms_registers_or_bus_is_refused_naming_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, serde_json::Value, &str); 5] = [
        (
            "multiprocessors",
            "metadata.json",
            0.into(),
            "/device/multiprocessors holds 0",
        ),
        (
            "registers_per_multiprocessor",
            "metadata.json",
            (-65536).into(),
            "/device/registers_per_multiprocessor holds -65536",
        ),
        (
            "shared_memory_per_multiprocessor_bytes",
            "metadata.json",
            0.into(),
            "/device/shared_memory_per_multiprocessor_bytes holds 0",
        ),
        (
            "memory_bus_bits",
            "bandwidth.json",
            0.into(),
            "/memory_bus_bits holds 0",
        ),
        (
            "dram_peak_bytes_per_second",
            "bandwidth.json",
            1.into(),
            "dram_peak_bytes_per_second holds 1, but its memory clock (2619 MHz) and bus (5120 bits) give 3352320000000",
        ),
    ];
    for (key, file, value, says) in cases {
        let run = dir.path().join(key);
        copy_tree(&committed_all().join("bandwidth"), &run);
        edit_json(&run.join(file), |j| {
            if file == "metadata.json" {
                j["device"][key] = value.clone();
            } else {
                j[key] = value.clone();
            }
        });
        let out = dir.path().join(format!("{key}.config"));
        let output = gpubench([
            "export".as_ref(),
            run.as_os_str(),
            "--format".as_ref(),
            "accel-sim".as_ref(),
            "--output".as_ref(),
            out.as_os_str(),
        ]);
        refused(&output, &[file, says]);
        nothing_left(&out);
        let out = dir.path().join(format!("{key}-report"));
        refused(&report_to(&run, &out), &[file, says]);
        nothing_left(&out);
    }
    // An SM count left out is no SM count: the caption said "0 SMs".
    let run = clock_run(&dir.path().join("no-sm-count"));
    edit_json(&run.join("metadata.json"), |m| {
        m["device"]
            .as_object_mut()
            .unwrap()
            .remove("multiprocessors");
    });
    let output = gpubench(["export".as_ref(), run.as_os_str()]);
    refused(
        &output,
        &["metadata.json", "device.multiprocessors is 0 (or missing)"],
    );
}

#[test]
fn a_refused_report_leaves_no_parent_directories_it_made() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("shared");
    copy_tree(&committed_all().join("shared"), &run);
    triple_rows(&run.join("shared.csv"));
    let out = dir.path().join("new/deeper/out");
    refused(
        &report_to(&run, &out),
        &["shared.csv: line 3 repeats line 2"],
    );
    assert!(
        !dir.path().join("new").exists(),
        "a refused report left the directories it made"
    );
    // Directories that were there stay.
    std::fs::create_dir(dir.path().join("kept")).unwrap();
    let out = dir.path().join("kept/out");
    refused(
        &report_to(&run, &out),
        &["shared.csv: line 3 repeats line 2"],
    );
    assert!(dir.path().join("kept").is_dir());
    nothing_left(&out);
}

/// Every number under `key` in `value`, at any depth, set to `to`; how many.
fn set_every(value: &mut serde_json::Value, key: &str, to: f64) -> usize {
    match value {
        serde_json::Value::Object(map) => map
            .iter_mut()
            .map(|(k, v)| {
                if k == key && v.is_number() {
                    *v = to.into();
                    1
                } else {
                    set_every(v, key, to)
                }
            })
            .sum(),
        serde_json::Value::Array(items) => items.iter_mut().map(|v| set_every(v, key, to)).sum(),
        _ => 0,
    }
}

#[test]
fn a_negative_r_squared_or_share_of_peak_is_refused_not_summarised() {
    let dir = tempfile::tempdir().unwrap();
    for (suite, file, key) in [
        ("divergence", "fit.json", "r_squared"),
        ("bandwidth", "bandwidth.json", "fraction_of_peak"),
    ] {
        let run = dir.path().join(suite);
        copy_tree(&committed_all().join(suite), &run);
        edit_json(&run.join(file), |j| {
            assert!(set_every(j, key, -0.5) > 0, "{file} has no {key}");
        });
        let out = dir.path().join(format!("{suite}.json"));
        let output = gpubench([
            "export".as_ref(),
            run.as_os_str(),
            "--output".as_ref(),
            out.as_os_str(),
        ]);
        let field = format!("{key} holds -0.5, outside its domain");
        refused(&output, &[file, &field]);
        nothing_left(&out);
    }
}

// Item 5, in part: no figure's words longer than gpubench writes are copied into outputs.

#[test]
fn a_figure_text_longer_than_gpubench_writes_is_refused_without_echoing_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = clock_run(&dir.path().join("run"));
    edit_json(&run.join("figures.json"), |f| {
        f["figures"][0]["uncertainty"] = "x".repeat(5000).into();
    });
    let clock = committed_all().join("clock");
    let output = gpubench(["compare".as_ref(), clock.as_os_str(), run.as_os_str()]);
    refused(
        &output,
        &[
            "figures.json",
            "the uncertainty of a figure",
            "5000 characters long, more than the 4096",
        ],
    );
    assert!(output.stderr.len() < 2000, "the refusal echoed the text");
}

#[test]
fn a_report_ended_by_sigterm_leaves_nothing_behind() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("new/out");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("gpubench"))
        .arg("report")
        .arg(committed_all())
        .arg("--output")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed while it writes: once its staging directory holds something.
    let started = std::time::Instant::now();
    let staging = loop {
        let found = std::fs::read_dir(dir.path().join("new"))
            .into_iter()
            .flatten()
            .map(|e| e.unwrap().path())
            .find(|p| p.read_dir().is_ok_and(|mut d| d.next().is_some()));
        if let Some(found) = found {
            break found;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the report ended first"
        );
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no staging seen"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(staging.to_string_lossy().contains(".out.partial-"));
    // SAFETY: kill sends a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert!(
        !dir.path().join("new").exists(),
        "left {:?}",
        std::fs::read_dir(dir.path().join("new")).map(|d| d.count())
    );
}

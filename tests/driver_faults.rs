//! A broken driver, without a GPU: small stand-ins for `libcuda.so` compiled by the test with
//! the system C compiler and put first on `LD_LIBRARY_PATH`, where cudarc's dynamic loading
//! finds them. A driver that cannot serve gpubench must end in one sentence and exit code 3,
//! never a panic; one that blocks must end at gpubench's deadline, with nothing left running.

use std::path::{Path, PathBuf};
use std::process::Command as Process;
use std::time::Duration;

use assert_cmd::Command;
use predicates::prelude::*;

const NO_USABLE_GPU: i32 = 3;

/// Compiles `source` into `dir/libcuda.so` (and the `.so.1` name), or `None` where this machine
/// has no C compiler.
fn stub_driver(dir: &Path, source: &str) -> Option<PathBuf> {
    stub_driver_with(dir, source, &[])
}

/// As [`stub_driver`], with extra compiler flags (`-DNAME=VALUE`).
fn stub_driver_with(dir: &Path, source: &str, flags: &[&str]) -> Option<PathBuf> {
    let library = shared_library(dir, "libcuda.so", source, flags)?;
    std::fs::copy(&library, dir.join("libcuda.so.1")).unwrap();
    Some(dir.to_path_buf())
}

/// `source` compiled into `dir/name` as a shared library, or `None` where this machine has
/// no C compiler.
fn shared_library(dir: &Path, name: &str, source: &str, flags: &[&str]) -> Option<PathBuf> {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    // What the stand-ins share, beside them for their #include.
    std::fs::write(dir.join("suite_name.h"), SUITE_NAME).unwrap();
    let library = dir.join(name);
    let built = Process::new("cc")
        .args(["-shared", "-fPIC"])
        .args(flags)
        .arg("-o")
        .arg(&library)
        .arg(&c)
        .status()
        .ok()?;
    assert!(built.success(), "{name} did not compile");
    Some(library)
}

fn info_with(libraries: &Path) -> assert_cmd::assert::Assert {
    let run = tempfile::tempdir().unwrap();
    Command::cargo_bin("gpubench")
        .unwrap()
        .current_dir(run.path())
        .env("LD_LIBRARY_PATH", libraries)
        .args(["divergence", "--output", "out"])
        .timeout(Duration::from_secs(30))
        .assert()
}

fn one_error_line(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.len() == 1 && lines[0].starts_with("Error: ") && !text.contains("internal bug")
}

#[test]
fn a_driver_library_without_cu_init_is_no_usable_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let Some(libraries) = stub_driver(
        dir.path(),
        "int cuDriverGetVersion(int *v) { *v = 13000; return 0; }\n",
    ) else {
        eprintln!("no C compiler on this machine: the driver-fault tests did not run");
        return;
    };
    info_with(&libraries)
        .code(NO_USABLE_GPU)
        .stderr(predicate::function(one_error_line))
        .stderr(predicate::str::contains("has no cuInit"));
}

#[test]
fn a_driver_whose_cu_init_fails_is_no_usable_gpu() {
    let dir = tempfile::tempdir().unwrap();
    // 100 is CUDA_ERROR_NO_DEVICE; cuGetErrorString and cuGetErrorName answer like a driver.
    let source = r#"
static const char *text = "no CUDA-capable device is detected";
static const char *name = "CUDA_ERROR_NO_DEVICE";
int cuInit(unsigned flags) { (void)flags; return 100; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuGetErrorString(int e, const char **s) { (void)e; *s = text; return 0; }
int cuGetErrorName(int e, const char **s) { (void)e; *s = name; return 0; }
"#;
    let Some(libraries) = stub_driver(dir.path(), source) else {
        eprintln!("no C compiler on this machine: the driver-fault tests did not run");
        return;
    };
    info_with(&libraries)
        .code(NO_USABLE_GPU)
        .stderr(predicate::function(one_error_line));
}

const FAKE_DRIVER: &str = include_str!("fixtures/fake_libcuda.c");

#[test]
fn ptx_the_driver_cannot_load_is_no_usable_gpu_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let Some(libraries) = stub_driver(dir.path(), FAKE_DRIVER) else {
        eprintln!("no C compiler on this machine: the driver-fault tests did not run");
        return;
    };
    let run = tempfile::tempdir().unwrap();
    Command::cargo_bin("gpubench")
        .unwrap()
        .current_dir(run.path())
        .env("LD_LIBRARY_PATH", &libraries)
        .args(["divergence", "--output", "out"])
        .timeout(Duration::from_secs(30))
        .assert()
        .code(NO_USABLE_GPU)
        .stderr(predicate::function(one_error_line))
        .stderr(predicate::str::contains(
            "cannot load gpubench's kernels (cuda/divergence.cu: CUDA_ERROR_INVALID_PTX",
        ))
        .stderr(predicate::str::contains("DriverError").not());
    assert!(!run.path().join("out").exists());
}

#[test]
fn a_driver_call_that_blocks_ends_at_the_suite_deadline_with_nothing_left_running() {
    let dir = tempfile::tempdir().unwrap();
    let Some(libraries) = stub_driver_with(dir.path(), FAKE_DRIVER, &["-DLOAD_SLEEP=100"]) else {
        eprintln!("no C compiler on this machine: the driver-fault tests did not run");
        return;
    };
    let pids = tempfile::tempdir().unwrap();
    let run = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    Command::cargo_bin("gpubench")
        .unwrap()
        .current_dir(run.path())
        .env("LD_LIBRARY_PATH", &libraries)
        .env("FAKE_CUDA_PID_DIR", pids.path())
        .args([
            "all",
            "--only",
            "divergence",
            "--suite-timeout-seconds",
            "2",
        ])
        .args(["--output", "out"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(4)
        .stderr(predicate::str::contains("divergence: timed out"));
    // info and divergence each block for 100 s unless killed at 2 s.
    assert!(started.elapsed() < Duration::from_secs(30));
    let manifest = std::fs::read_to_string(run.path().join("out/all.json")).unwrap();
    assert!(manifest.contains("\"status\": \"timed out\""), "{manifest}");
    assert!(manifest.contains("\"finished_utc\": \""), "{manifest}");
    let blocked: Vec<String> = std::fs::read_dir(pids.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        blocked.len(),
        2,
        "info and divergence reach the load: {blocked:?}"
    );
    for pid in blocked {
        assert!(
            !Path::new("/proc").join(&pid).exists(),
            "process {pid}, blocked in the driver, outlived its deadline"
        );
    }
}

/// `--device all` on the stub (one fake GPU whose driver rejects the PTX): the GPU's child
/// fails in one sentence into its log, devices.json names the GPU by its UUID and records the
/// failure, and the whole command exits 4.
#[test]
fn every_gpu_of_a_fan_out_is_recorded_even_when_it_fails() {
    let dir = tempfile::tempdir().unwrap();
    let Some(libraries) = stub_driver(dir.path(), FAKE_DRIVER) else {
        eprintln!("no C compiler on this machine: the driver-fault tests did not run");
        return;
    };
    let run = tempfile::tempdir().unwrap();
    Command::cargo_bin("gpubench")
        .unwrap()
        .current_dir(run.path())
        .env("LD_LIBRARY_PATH", &libraries)
        .args(["divergence", "--device", "all", "--output", "out"])
        .timeout(Duration::from_secs(30))
        .assert()
        .code(4)
        .stderr(predicate::str::contains("1 of 1 GPUs did not complete"));
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.path().join("out/devices.json")).unwrap(),
    )
    .unwrap();
    let gpu = &manifest["gpus"][0];
    assert_eq!(gpu["device"]["name"], "Fake GPU");
    assert_eq!(
        gpu["device"]["uuid"],
        "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f"
    );
    assert_eq!(gpu["dir"], "gpu0-10111213");
    assert_eq!(gpu["status"], "failed (exit 3)");
    assert!(manifest["finished_utc"].is_string());
    let log = std::fs::read_to_string(run.path().join("out/gpu0-10111213.log")).unwrap();
    assert!(log.contains("cannot load gpubench's kernels"), "{log}");
}

/// A driver with GPUs that run nothing but go bad on cue (see the fixture's header).
const FAKE_GPU: &str = include_str!("fixtures/fake_gpu.c");

/// How the stand-ins tell which suite a process runs (included by both).
const SUITE_NAME: &str = include_str!("fixtures/suite_name.h");

/// `gpubench all --only <suites>` on the stand-in GPUs, with `env` set; its exit code.
fn all_on_fake_gpus(libraries: &Path, run: &Path, env: &[(&str, &str)], args: &[&str]) -> i32 {
    let mut command = Command::cargo_bin("gpubench").unwrap();
    command
        .current_dir(run)
        .env("LD_LIBRARY_PATH", libraries)
        .args(["all", "--output", "out"])
        .args(args)
        .timeout(Duration::from_secs(120));
    for (name, value) in env {
        command.env(name, value);
    }
    command.assert().get_output().status.code().unwrap_or(-1)
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A launch, a copy or a synchronisation that fails half-way through a suite (the third
/// launch, the second copy or wait of the branch suite): that suite is recorded as failed with
/// the driver's error name and sentence, what it wrote stays, and the suites before and after
/// it complete (clock, and sync, whose probes read what a GPU that runs nothing leaves and say
/// so); `all` exits 4.
#[test]
fn a_fault_in_the_middle_of_a_suite_fails_that_suite_alone() {
    let dir = tempfile::tempdir().unwrap();
    let Some(libraries) = stub_driver(dir.path(), FAKE_GPU) else {
        eprintln!("no C compiler on this machine: the driver-fault tests did not run");
        return;
    };
    let faults = [
        (
            "launch:3",
            "719",
            "CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure",
        ),
        (
            "copy:2",
            "700",
            "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered",
        ),
        (
            "sync:2",
            "214",
            "CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error encountered",
        ),
    ];
    for (fault, error, words) in faults {
        let run = tempfile::tempdir().unwrap();
        let env = [
            ("FAKE_CUDA_FAIL", fault),
            ("FAKE_CUDA_ERROR", error),
            ("FAKE_CUDA_FAULT_SUITE", "branch"),
        ];
        assert_eq!(
            all_on_fake_gpus(&libraries, run.path(), &env, &[]),
            4,
            "{fault}"
        );
        let manifest = json(&run.path().join("out/all.json"));
        let suites = manifest["suites"].as_array().unwrap();
        let suite = |name: &str| suites.iter().find(|s| s["name"] == name).unwrap().clone();
        assert_eq!(suite("branch")["status"], "failed", "{fault}");
        let said = suite("branch")["error"].as_str().unwrap().to_string();
        assert!(said.contains(words), "{fault}: {said}");
        assert_eq!(suite("clock")["status"], "complete", "{fault}");
        assert_eq!(suite("sync")["status"], "complete", "{fault}");
        assert!(run.path().join("out/clock/clock.json").is_file(), "{fault}");
        assert!(manifest["finished_utc"].is_string(), "{fault}");
    }
    // Failed at its third launch, after it began its directory: what it wrote is kept.
    let run = tempfile::tempdir().unwrap();
    let env = [
        ("FAKE_CUDA_FAIL", "launch:3"),
        ("FAKE_CUDA_FAULT_SUITE", "branch"),
    ];
    all_on_fake_gpus(&libraries, run.path(), &env, &["--only", "branch"]);
    assert!(run.path().join("out/branch/metadata.json").is_file());
}

/// `all` with every speed mechanism turned off (what scripts/bench-mechanisms.sh does, one at
/// a time) runs the same suites to the same outcomes on the stand-in GPU, and says in
/// `all.json` which it turned off.
#[test]
fn all_with_its_speed_mechanisms_off_completes_as_with_them_on() {
    let dir = tempfile::tempdir().unwrap();
    let Some(libraries) = stub_driver(dir.path(), FAKE_GPU) else {
        eprintln!("no C compiler on this machine: the driver-fault tests did not run");
        return;
    };
    let only = ["--only", "clock,branch,sync,regs"];
    let outcomes = |env: &[(&str, &str)]| {
        let run = tempfile::tempdir().unwrap();
        let code = all_on_fake_gpus(&libraries, run.path(), env, &only);
        let manifest = json(&run.path().join("out/all.json"));
        let statuses: Vec<(String, String)> = manifest["suites"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["name"].to_string(), s["status"].to_string()))
            .collect();
        (code, statuses, manifest["mechanisms_off"].clone())
    };
    // Clock and sync complete on a GPU that runs nothing; branch and regs fail on what it
    // leaves: the outcomes are compared, not assumed.
    let (code_on, on, none_off) = outcomes(&[]);
    assert!(
        on.contains(&("\"clock\"".into(), "\"complete\"".into())),
        "{on:?}"
    );
    assert!(
        on.contains(&("\"sync\"".into(), "\"complete\"".into())),
        "{on:?}"
    );
    assert!(none_off.is_null(), "{none_off}");
    let every = "workers,kept,prebuilt,parked,early";
    let (code_off, off, named) = outcomes(&[("GPUBENCH_WITHOUT", every)]);
    assert_eq!(code_off, code_on);
    assert_eq!(off, on);
    assert_eq!(
        named,
        serde_json::json!(every.split(',').collect::<Vec<_>>())
    );
}

/// A worker process of `gpubench all` (harness::worker) on the stand-in GPU: it runs the
/// suites it is given one after another in one process, retaining the context once for the
/// first and again (the kept one) for each after, each writing its output to its own log, its
/// turn's done-with-the-GPU file and its own command line in its metadata; the processes a
/// suite starts (sync's probes) are no workers; a suite that fails ends the worker with the
/// suite's exit code, so its broken context serves no other.
#[test]
fn a_worker_runs_suites_one_after_another_and_ends_with_a_failed_one() {
    use gpubench::harness::worker::{Job, exit_code, give};
    let dir = tempfile::tempdir().unwrap();
    let Some(libraries) = stub_driver(dir.path(), FAKE_GPU) else {
        eprintln!("no C compiler on this machine: the driver-fault tests did not run");
        return;
    };
    let run = tempfile::tempdir().unwrap();
    let queue = run.path().join("queue");
    std::fs::create_dir(&queue).unwrap();
    let driver_log = run.path().join("driver.log");
    let job = |suite: &str, dir: &str| {
        let log = run.path().join(format!("{dir}.log"));
        std::fs::File::create(&log).unwrap();
        Job {
            args: ["gpubench", suite, "--output"]
                .iter()
                .map(|a| a.to_string())
                .chain([run.path().join(dir).to_string_lossy().into_owned()])
                .collect(),
            vars: vec![(
                "GPUBENCH_GPU_DONE".into(),
                run.path()
                    .join(format!("{dir}.done"))
                    .to_string_lossy()
                    .into(),
            )],
            log,
        }
    };
    // The clock and sync, then divergence, which a GPU that runs nothing fails.
    give(&queue, 1, &job("clock", "first")).unwrap();
    give(&queue, 2, &job("sync", "second")).unwrap();
    give(&queue, 3, &job("divergence", "divergence")).unwrap();
    let worker = Process::new(assert_cmd::cargo::cargo_bin("gpubench"))
        .env("LD_LIBRARY_PATH", &libraries)
        .env("GPUBENCH_WORKER", &queue)
        .env("FAKE_CUDA_LOG", &driver_log)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let ended = wait_for_exit(worker, Duration::from_secs(60));
    assert_eq!(ended.code(), Some(4), "the failed suite's exit code");
    assert_eq!(exit_code(&queue, 1), Some(0));
    assert_eq!(exit_code(&queue, 2), Some(0));
    assert_eq!(exit_code(&queue, 3), None, "its end is the worker's");
    for (done, suite) in [("first", "clock"), ("second", "sync")] {
        let dir = run.path().join(done);
        assert!(dir.join(format!("{suite}.json")).is_file(), "{done}");
        assert!(run.path().join(format!("{done}.done")).is_file(), "{done}");
        let log = std::fs::read_to_string(run.path().join(format!("{done}.log"))).unwrap();
        assert!(log.contains("run written to"), "{done}: {log}");
        let metadata = json(&dir.join("metadata.json"));
        assert_eq!(metadata["command_line"][1], suite, "{metadata}");
        assert_eq!(metadata["command_line"][3], dir.to_str().unwrap());
    }
    // Each probe ran in a child process of sync's, which read its own command line.
    let probes = std::fs::read_to_string(run.path().join("second.log")).unwrap();
    assert!(!probes.contains("process ended"), "{probes}");
    assert!(probes.contains("simt-spin: completed"), "{probes}");
    let failed = std::fs::read_to_string(run.path().join("divergence.log")).unwrap();
    assert!(failed.contains("Error: the measurement failed"), "{failed}");
    // "<suite> <device> retain <pid>": one process, each suite retaining the context.
    let text = std::fs::read_to_string(&driver_log).unwrap();
    let retains: Vec<Vec<&str>> = text
        .lines()
        .map(|line| line.split(' ').collect::<Vec<_>>())
        .filter(|words| words.len() == 4 && words[2] == "retain")
        .collect();
    let worker = retains[0][3];
    let suites: Vec<&str> = retains
        .iter()
        .filter(|w| w[3] == worker)
        .map(|w| w[0])
        .collect();
    assert_eq!(suites, ["first", "second", "divergence"], "{text}");
    // Sync's probe process, started with its own command line, retained a context of its own.
    assert!(
        retains.iter().any(|w| w[0] == "sync" && w[3] != worker),
        "{text}"
    );
}

/// Waits for `child` to end within `deadline` (killed and failed otherwise).
fn wait_for_exit(mut child: std::process::Child, deadline: Duration) -> std::process::ExitStatus {
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            panic!("the worker did not end within {deadline:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Under `--device all`, the second of four GPUs falls off the bus at its second launch
/// (CUDA_ERROR_DEVICE_UNAVAILABLE): its run ends there (the suite that met it failed, the rest
/// not run), exiting 5; the other three complete; devices.json says which GPU failed and how;
/// and the fleet comparison compares the three and names the fourth.
#[test]
fn a_gpu_lost_under_device_all_ends_that_gpus_run_alone() {
    let dir = tempfile::tempdir().unwrap();
    let Some(libraries) = stub_driver(dir.path(), FAKE_GPU) else {
        eprintln!("no C compiler on this machine: the driver-fault tests did not run");
        return;
    };
    let run = tempfile::tempdir().unwrap();
    let env = [
        ("FAKE_CUDA_GPUS", "4"),
        ("FAKE_CUDA_FAIL", "launch:2"),
        ("FAKE_CUDA_ERROR", "46"),
        ("FAKE_CUDA_FAULT_DEVICE", "1"),
    ];
    let args = ["--only", "clock,sync", "--device", "all"];
    let code = all_on_fake_gpus(&libraries, run.path(), &env, &args);
    assert_eq!(code, 4);
    let out = run.path().join("out");
    let manifest = json(&out.join("devices.json"));
    let gpus = manifest["gpus"].as_array().unwrap();
    for (i, gpu) in gpus.iter().enumerate() {
        if i == 1 {
            assert_eq!(gpu["status"], "failed: GPU lost (exit 5)");
            let failures: Vec<&str> = gpu["failures"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap())
                .collect();
            assert_eq!(failures.len(), 2, "{failures:?}");
            assert!(
                failures[0].starts_with("clock: failed (the GPU was lost while launching")
                    && failures[0].contains("CUDA_ERROR_DEVICE_UNAVAILABLE"),
                "{failures:?}"
            );
            // Clock may step aside while `all` still compiles its module, and sync then has
            // the first turn and meets the lost GPU itself (1 run in 15 of 84d057d, before
            // the workers); either way nothing runs on that GPU after the loss.
            assert!(
                failures[1] == "sync: not run (the GPU was lost during the clock suite)"
                    || failures[1].starts_with("sync: failed (the GPU was lost while"),
                "{failures:?}"
            );
        } else {
            assert_eq!(gpu["status"], "complete", "GPU {i}");
        }
    }
    let compared = Command::cargo_bin("gpubench")
        .unwrap()
        .arg("compare")
        .arg(&out)
        .arg("--fleet")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let compared = String::from_utf8(compared).unwrap();
    assert!(
        compared.contains("gpu1-20212223 did not complete: Fake GPU 1"),
        "{compared}"
    );
    assert!(compared.contains("gpu3-40414243"), "{compared}");
    // The fan-out compared its GPUs itself, the lost one named above.
    let own = std::fs::read_to_string(out.join("compare.md")).unwrap();
    assert!(
        own.contains("gpu1-20212223 did not complete: Fake GPU 1"),
        "{own}"
    );
    assert!(own.contains("| Median | MAD | Odd ones |"), "{own}");
    assert!(!out.join("index.html").exists(), "a page nobody asked for");
}

/// `all --device all --format html`: each GPU's page, and the fleet page at the top linking
/// them, with the comparison it shows beside it.
#[test]
fn a_fan_out_asked_for_pages_writes_the_fleet_page() {
    let dir = tempfile::tempdir().unwrap();
    let Some(libraries) = stub_driver(dir.path(), FAKE_GPU) else {
        eprintln!("no C compiler on this machine: the driver-fault tests did not run");
        return;
    };
    let run = tempfile::tempdir().unwrap();
    let args = [
        "--only",
        "clock,sync",
        "--device",
        "all",
        "--format",
        "html",
    ];
    let code = all_on_fake_gpus(&libraries, run.path(), &[("FAKE_CUDA_GPUS", "2")], &args);
    assert_eq!(code, 0);
    let out = run.path().join("out");
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(page.contains("gpubench fleet: 2 GPUs"), "{page}");
    for gpu in ["gpu0-10111213", "gpu1-20212223"] {
        let link = format!("{gpu}/index.html");
        assert!(page.contains(&format!("<a href=\"{link}\">")), "{gpu}");
        assert!(out.join(&link).is_file(), "{link}");
    }
    assert!(out.join("compare.md").is_file());
}

/// The disk fills while `all` writes (a file-size limit of 30 KiB, below a figure's size):
/// gpubench ignores SIGXFSZ, so whether or not the shell left it to kill, the write fails
/// (EFBIG, as a full disk's ENOSPC fails it) and the suite is recorded as failed saying so; no
/// half-written file is left in the run, every JSON file in it is whole, and all.json says
/// where each suite stopped; `all` exits 4.
#[test]
fn a_full_disk_in_the_middle_of_all_leaves_nothing_half_written() {
    let dir = tempfile::tempdir().unwrap();
    let Some(libraries) = stub_driver(dir.path(), FAKE_GPU) else {
        eprintln!("no C compiler on this machine: the driver-fault tests did not run");
        return;
    };
    let me = assert_cmd::cargo::cargo_bin("gpubench");
    let said = "File too large";
    for ignore in ["", "trap '' XFSZ;"] {
        let run = tempfile::tempdir().unwrap();
        let script =
            format!("ulimit -f 30; {ignore} exec \"$0\" all --only clock,sync --output out",);
        let output = Process::new("sh")
            .current_dir(run.path())
            .env("LD_LIBRARY_PATH", &libraries)
            .args(["-c", &script])
            .arg(&me)
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(4),
            "{said}: {:?}, {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        let out = run.path().join("out");
        let manifest = json(&out.join("all.json"));
        assert!(manifest["finished_utc"].is_string(), "{said}");
        // A suite whose figure happens to fit (a loaded machine draws sync's smaller) may
        // complete; every one that failed failed on the limit, and one at least did.
        let suites = manifest["suites"].as_array().unwrap();
        let failed: Vec<&serde_json::Value> = suites
            .iter()
            .filter(|s| s["status"] != "complete")
            .collect();
        assert!(!failed.is_empty(), "{said}: {suites:?}");
        for suite in failed {
            assert_eq!(suite["status"], "failed", "{said}: {suite}");
            let error = suite["error"].as_str().unwrap();
            assert!(error.contains(said), "{said}: {error}");
        }
        let mut files = vec![out.clone()];
        while let Some(path) = files.pop() {
            if path.is_dir() {
                files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(!name.contains("partial"), "{said}: {} left", path.display());
            if name.ends_with(".json") {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(
                    serde_json::from_str::<serde_json::Value>(&text).is_ok(),
                    "{said}: {} is not whole",
                    path.display()
                );
            }
        }
    }
}

/// A stand-in NVML beside the stand-in driver (see the fixture's header).
const FAKE_NVML: &str = include_str!("fixtures/fake_nvml.c");

/// `dir` with the stand-in driver and the stand-in NVML, or `None` without a C compiler.
fn fake_gpu_with_nvml(dir: &Path) -> Option<PathBuf> {
    let libraries = stub_driver(dir, FAKE_GPU)?;
    shared_library(dir, "libnvidia-ml.so.1", FAKE_NVML, &[])?;
    Some(libraries)
}

/// NVML sees the clocks held down (a power cap) while the sync suite runs: that suite's
/// metadata says so, every figure it gave is marked in the summary, which names it and what
/// NVML saw, and `compare` against a run that was not held down marks the same figures in the
/// throttled run's column alone, the others in neither.
#[test]
fn a_throttle_seen_during_a_suite_marks_its_figures_in_the_summary_and_compare() {
    let dir = tempfile::tempdir().unwrap();
    let Some(libraries) = fake_gpu_with_nvml(dir.path()) else {
        eprintln!("no C compiler on this machine: the driver-fault tests did not run");
        return;
    };
    let run = tempfile::tempdir().unwrap();
    let only = ["--only", "clock,sync"];
    let held = [("FAKE_NVML_THROTTLE_SUITE", "sync")];
    assert_eq!(all_on_fake_gpus(&libraries, run.path(), &held, &only), 0);
    std::fs::rename(run.path().join("out"), run.path().join("held")).unwrap();
    assert_eq!(all_on_fake_gpus(&libraries, run.path(), &[], &only), 0);
    let held = run.path().join("held");

    let nvml = |suite: &str| json(&held.join(suite).join("metadata.json"))["nvml"].clone();
    let said = nvml("sync")["throttled"].as_str().unwrap().to_string();
    assert!(said.contains("power 2.0 ms"), "{said}");
    assert!(said.contains("sw power cap after the run"), "{said}");
    assert!(nvml("clock")["throttled"].is_null());
    assert_eq!(nvml("clock")["identity"]["name"], "Fake GPU");

    let summary = std::fs::read_to_string(held.join("summary.md")).unwrap();
    let rows: Vec<&str> = summary.lines().filter(|l| l.starts_with("| ")).collect();
    let figure_rows = |suite: &str| {
        rows.iter()
            .filter(|l| l.contains(&format!(" {suite}/")))
            .copied()
            .collect::<Vec<_>>()
    };
    assert!(!figure_rows("sync").is_empty(), "{summary}");
    assert!(!figure_rows("clock").is_empty(), "{summary}");
    for row in figure_rows("sync") {
        assert!(row.contains("(throttled)"), "{row}");
    }
    for row in figure_rows("clock") {
        assert!(!row.contains("(throttled)"), "{row}");
    }
    assert!(
        summary.contains("## Measured under throttling"),
        "{summary}"
    );
    assert!(summary.contains(&format!("| sync | {said} |")), "{summary}");
    let suites = json(&held.join("summary.json"))["suites"].clone();
    let sync = suites
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "sync");
    assert_eq!(sync.unwrap()["throttled"], said.as_str());

    let compared = Command::cargo_bin("gpubench")
        .unwrap()
        .arg("compare")
        .arg(&held)
        .arg(run.path().join("out"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let compared = String::from_utf8(compared).unwrap();
    let rows: Vec<&str> = compared.lines().filter(|l| l.starts_with("| ")).collect();
    let marked: Vec<&&str> = rows.iter().filter(|l| l.contains("(throttled)")).collect();
    assert_eq!(marked.len(), figure_rows("sync").len(), "{compared}");
    for row in marked {
        let cells: Vec<&str> = row.split(" | ").collect();
        assert!(cells[1].ends_with("(throttled)"), "{row}");
        assert!(!cells[2].contains("(throttled)"), "{row}");
    }
    let footnote = format!(
        "{} figures were measured while NVML saw the clocks held down (in {}), marked (throttled)",
        figure_rows("sync").len(),
        held.display()
    );
    assert!(compared.contains(&footnote), "{compared}");
}

/// A process that is not gpubench's, as NVML would list it: a `sleep` of this test's, not a
/// child of the gpubench it runs.
fn another_process() -> std::process::Child {
    std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap()
}

/// Another process on the GPU when `all` starts: refused in one sentence naming it, exit 7,
/// nothing written; the same for a suite run on its own. With `--allow-shared` the run
/// measures, records the process in every suite's metadata, and leaves no figure a figure:
/// each is unresolved with the reason "shared GPU", and the summary opens with the
/// conditions.
#[test]
fn another_process_on_the_gpu_is_refused_or_every_figure_unresolved() {
    let dir = tempfile::tempdir().unwrap();
    let Some(libraries) = fake_gpu_with_nvml(dir.path()) else {
        eprintln!("no C compiler on this machine: the driver-fault tests did not run");
        return;
    };
    let mut other = another_process();
    let pid = other.id().to_string();
    let env = [("FAKE_NVML_OTHER_PID", pid.as_str())];
    let run = tempfile::tempdir().unwrap();
    let refused = Command::cargo_bin("gpubench")
        .unwrap()
        .current_dir(run.path())
        .env("LD_LIBRARY_PATH", &libraries)
        .env("FAKE_NVML_OTHER_PID", &pid)
        .args(["all", "--only", "clock", "--output", "out"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(7);
    let said = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(one_error_line(&said), "{said}");
    assert!(
        said.contains(&format!(
            "device 0 is in use by PID {pid} (sleep, 1024 MiB)"
        )),
        "{said}"
    );
    assert!(said.contains("--allow-shared"), "{said}");
    assert!(!run.path().join("out").exists());
    let alone = Command::cargo_bin("gpubench")
        .unwrap()
        .current_dir(run.path())
        .env("LD_LIBRARY_PATH", &libraries)
        .env("FAKE_NVML_OTHER_PID", &pid)
        .args(["clock", "--output", "alone"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(7);
    let said = String::from_utf8_lossy(&alone.get_output().stderr).into_owned();
    assert!(said.contains(&format!("PID {pid} (sleep")), "{said}");
    assert!(!run.path().join("alone").exists());

    let only = ["--only", "clock,sync", "--allow-shared"];
    assert_eq!(all_on_fake_gpus(&libraries, run.path(), &env, &only), 0);
    other.kill().unwrap();
    other.wait().unwrap();
    let out = run.path().join("out");
    for suite in ["clock", "sync"] {
        let conditions = json(&out.join(suite).join("metadata.json"))["conditions"].clone();
        assert_eq!(conditions["allow_shared"], true, "{conditions}");
        assert_eq!(
            conditions["others_at_start"][0]["pid"].as_u64(),
            pid.parse().ok()
        );
    }
    let summary = json(&out.join("summary.json"));
    let figures = summary["figures"].as_array().unwrap();
    assert!(!figures.is_empty());
    for figure in figures.iter().filter(|f| f["source"] != "roofline.csv") {
        assert_eq!(figure["status"], "unresolved", "{figure}");
        assert_eq!(figure["unresolved"]["reason"], "shared-gpu", "{figure}");
    }
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    let conditions = md.find("## Conditions").expect("a Conditions block");
    assert!(conditions < md.find("| Section").unwrap(), "{md}");
    assert!(
        md.contains(&format!("Other processes at the start: PID {pid} (sleep")),
        "{md}"
    );
    assert!(
        md.contains("shared GPU: measured with --allow-shared beside PID"),
        "{md}"
    );
}

/// A process that starts while `all` runs (NVML lists it only while the sync suite measures):
/// `all` goes on and completes, the sync suite's figures are unresolved naming the process,
/// the clock suite's stay figures, and the Conditions block names the suite it overlapped.
#[test]
fn a_process_that_appears_during_a_suite_marks_that_suite_alone() {
    let dir = tempfile::tempdir().unwrap();
    let Some(libraries) = fake_gpu_with_nvml(dir.path()) else {
        eprintln!("no C compiler on this machine: the driver-fault tests did not run");
        return;
    };
    let mut other = another_process();
    let pid = other.id().to_string();
    let env = [
        ("FAKE_NVML_OTHER_PID", pid.as_str()),
        ("FAKE_NVML_OTHER_SUITE", "sync"),
    ];
    let run = tempfile::tempdir().unwrap();
    assert_eq!(
        all_on_fake_gpus(&libraries, run.path(), &env, &["--only", "clock,sync"]),
        0
    );
    other.kill().unwrap();
    other.wait().unwrap();
    let out = run.path().join("out");
    let during = |suite: &str| {
        json(&out.join(suite).join("metadata.json"))["conditions"]["others_during"].clone()
    };
    assert_eq!(during("sync")[0]["pid"].as_u64(), pid.parse().ok());
    assert_eq!(during("clock").as_array().map(Vec::len), Some(0));
    let summary = json(&out.join("summary.json"));
    let of = |suite: &str| {
        summary["figures"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| {
                f["source"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("{suite}/"))
            })
            .cloned()
            .collect::<Vec<_>>()
    };
    assert!(!of("sync").is_empty() && !of("clock").is_empty());
    for figure in of("sync") {
        assert_eq!(figure["unresolved"]["reason"], "shared-gpu", "{figure}");
        assert!(
            figure["uncertainty"]
                .as_str()
                .unwrap()
                .contains(&format!("PID {pid} (sleep")),
            "{figure}"
        );
    }
    for figure in of("clock") {
        assert!(figure["unresolved"].is_null(), "{figure}");
    }
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        md.contains(&format!(
            "**check:** Other processes while suites measured: sync: PID {pid} (sleep"
        )),
        "{md}"
    );
}

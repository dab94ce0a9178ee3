#!/usr/bin/env python3
"""Scores gpubench's cache inference against the GPGPU-Sim configuration it ran on.

    scripts/sim/answer_key.py GPGPUSIM_CONFIG RESULTS_DIR [GPUBENCH]

GPGPUSIM_CONFIG is the gpgpusim.config the runs used (scripts/sim/config.sh assembles it);
RESULTS_DIR holds gpubench's run directories, one per space (global/, l2/, shared/ and, where
the configuration turns the perfect constant cache off, constant/), as scripts/sim/answer-key.sh
and run-suite.sh write them. Writes RESULTS_DIR/answer-key.md and answer-key.json;
given the GPUBENCH binary, also the round trip: `gpubench export --format accel-sim` of each
space's run, option by option against the configuration.

Every configured value is read from the file (the last value of an option wins, as in
GPGPU-Sim's parser); the few that GPGPU-Sim fixes in its code rather than in the file (the
32-byte sector of an 'S' cache, the L1D's resizing when -gpgpu_adaptive_cache_config is on)
are derived here with the code they come from named.
"""

import json
import re
import subprocess
import sys
from pathlib import Path


def options(path):
    """Option -> its last value in a gpgpusim.config (comments and blank lines skipped)."""
    found = {}
    for line in Path(path).read_text().splitlines():
        words = line.split(None, 1)
        if len(words) == 2 and words[0].startswith("-") and not line.startswith("#"):
            found[words[0]] = words[1].split("#", 1)[0].strip()
    return found


def geometry(cache_string):
    """'S:4:128:64,L:T:m:L:L,...' -> (sectored, sets, line bytes, ways, replacement, index)."""
    parts = cache_string.split(",")
    head = parts[0].split(":")
    policy = parts[1].split(":")
    # gpu-cache.h: an 'S' cache splits each line into SECTOR_CHUNCK_SIZE = 4 sectors of
    # SECTOR_SIZE = 32 bytes; 'N' is not sectored.
    sectored = head[0] == "S"
    return {
        "sectored": sectored,
        "sets": int(head[1]),
        "line_bytes": int(head[2]),
        "ways": int(head[3]),
        "sector_bytes": 32 if sectored else None,
        # 'L' LRU, 'F' FIFO, 'R' random (gpu-cache.h replacement_policy_t)
        "replacement": {"L": "lru", "F": "fifo", "R": "random"}.get(policy[0], policy[0]),
        # set index: 'L' linear, 'P' IPOLY hash, 'X' XOR, 'H' Fermi hash
        "set_index": {"L": "linear", "P": "ipoly", "X": "xor", "H": "fermi"}.get(
            policy[4] if len(policy) > 4 else "L", policy[4] if len(policy) > 4 else "L"
        ),
    }


def l1d_expected(o, kernel_shared_bytes=0):
    """The L1D a kernel with `kernel_shared_bytes` of shared memory gets (shader.cc,
    shader_core_config::max_cta: with -gpgpu_adaptive_cache_config 1 the ways become
    unified size / (sets x line) x (1 - the shared-memory option chosen / unified size))."""
    g = geometry(o["-gpgpu_cache:dl1"])
    if o.get("-gpgpu_adaptive_cache_config", "0") == "1":
        unified = int(o["-gpgpu_unified_l1d_size"]) * 1024
        max_ways = unified // (g["sets"] * g["line_bytes"])
        chosen = next(
            int(kib) * 1024
            for kib in o["-gpgpu_shmem_option"].split(",")
            if kernel_shared_bytes <= int(kib) * 1024
        )
        g["ways"] = int(max_ways * (1 - chosen / unified) + 0.5)
        g["why_ways"] = (
            f"-gpgpu_adaptive_cache_config 1: {max_ways} ways (-gpgpu_unified_l1d_size "
            f"{unified // 1024} KiB / {g['sets']} sets / {g['line_bytes']} B) x (1 - "
            f"{chosen // 1024} KiB shared / {unified // 1024} KiB), for a kernel with "
            f"{kernel_shared_bytes} B of shared memory"
        )
    g["size_bytes"] = g["sets"] * g["ways"] * g["line_bytes"]
    return g


def l2_expected(o):
    """The whole L2: the -gpgpu_cache:dl2 geometry is one slice's, one slice per memory
    sub-partition (-gpgpu_n_mem x -gpgpu_n_sub_partition_per_mchannel)."""
    g = geometry(o["-gpgpu_cache:dl2"])
    slices = int(o["-gpgpu_n_mem"]) * int(o.get("-gpgpu_n_sub_partition_per_mchannel", "1"))
    g["slices"] = slices
    g["slice_sets"] = g["sets"]
    g["sets"] = g["sets"] * slices
    g["size_bytes"] = g["sets"] * g["ways"] * g["line_bytes"]
    return g


def constant_expected(o):
    """The constant L1 (-gpgpu_const_cache:l1, per SM); a load reaches it only with
    -gpgpu_perfect_inst_const_cache 0 (shader.cc: a perfect cache answers every constant load)."""
    g = geometry(o["-gpgpu_const_cache:l1"])
    g["size_bytes"] = g["sets"] * g["ways"] * g["line_bytes"]
    return g


def first_cached_level(run):
    """The report's first level with a size (the cache whose rise the sweep saw)."""
    if (run / "cache.json").exists():
        cache = json.loads((run / "cache.json").read_text())
    else:
        # A run that failed after its sweep (its closing clock probe) wrote no cache.json: the
        # levels come from `gpubench analyze cache --json chase.csv` (analyze.json), the fetch
        # granularity and conflict readings from the lines it printed (stdout.txt).
        cache = {"report": json.loads((run / "analyze.json").read_text())}
        printed = (run / "stdout.txt").read_text() if (run / "stdout.txt").exists() else ""
        m = re.search(r"fetch granularity \(line or sector\): (\d+) B \(confidence ([\d.]+)", printed)
        if m:
            cache["fetch_granularity"] = {"estimate": {"bytes": int(m[1]), "confidence": float(m[2])}}
        m = re.search(r"^conflict .*; (.*)$", printed, re.M)
        if m:
            cache["conflict"] = {"ways": None, "verdict": m[1]}
    levels = cache["report"]["levels"]
    level = next((lv for lv in levels if lv.get("size_bytes") or lv.get("capacity")), None)
    return cache, levels, level


def verdict(expected, stated, low=None, high=None):
    """'right' / 'wrong' for a stated figure; for an interval, whether it holds the value."""
    if stated is None and low is None:
        return "not stated"
    if low is not None and high is not None and stated is None:
        return "right (interval)" if low <= expected <= high else "wrong (interval)"
    return "right" if stated == expected else "wrong"


def rows_for(space, run, expected, latency_option, o):
    rows = []
    cache, levels, level = first_cached_level(run)
    if level is None:
        return [{"space": space, "parameter": "cache level", "config": "-", "gpubench": "no level with a size", "confidence": None, "verdict": "not stated"}]
    conf = level.get("confidence")
    cap = level.get("capacity") or {}
    low, high = cap.get("low_bytes"), cap.get("high_bytes")
    # The capacity is gpubench's figure (the largest footprint with no miss, read without a
    # model, and an interval); the model fit's size is a separate answer with its confidence.
    figure = cap.get("hits_up_to_bytes")
    if figure is not None:
        off = figure - expected["size_bytes"]
        lines = off / expected["line_bytes"]
        rows.append({
            "space": space, "parameter": "capacity (bytes)", "config": expected["size_bytes"],
            "gpubench": f"{figure} (interval {low}..{high}, coverage {cap.get('coverage')})",
            "confidence": None,
            "verdict": f"interval {'holds it' if low <= expected['size_bytes'] <= high else 'misses it'}; "
                       f"figure {'right' if abs(lines) <= 1 else 'off'} by {off:+d} B ({lines:+.1f} lines, "
                       f"{100 * off / expected['size_bytes']:+.1f} %)",
        })
    if level.get("size_is_interval"):
        # No geometry stands behind a point: the size is stated as the capacity interval, at
        # the interval's coverage, and is right where the interval holds the size.
        rows.append({
            "space": space, "parameter": "size as stated (bytes)", "config": expected["size_bytes"],
            "gpubench": f"interval {low}..{high} ({level.get('basis')})", "confidence": conf,
            "verdict": verdict(expected["size_bytes"], None, low, high),
        })
    else:
        rows.append({
            "space": space, "parameter": "size by model fit (bytes)", "config": expected["size_bytes"],
            "gpubench": str(level.get("size_bytes")), "confidence": conf,
            "verdict": verdict(expected["size_bytes"], level.get("size_bytes")),
        })
    fit = (level.get("fit") or {}).get("best") or {}
    for key, name in [("line_bytes", "line (bytes)"), ("ways", "ways"), ("sets", "sets")]:
        rows.append({
            "space": space, "parameter": name, "config": expected[key],
            "gpubench": f"{level.get(key)} (best fit: {fit.get(key)})",
            "confidence": conf, "verdict": verdict(expected[key], level.get(key)),
        })
    rows.append({
        "space": space, "parameter": "sector (bytes)", "config": expected["sector_bytes"],
        "gpubench": f"best fit: {fit.get('sector_bytes')}", "confidence": conf,
        "verdict": verdict(expected["sector_bytes"], fit.get("sector_bytes")) + " (fit only)",
    })
    rows.append({
        "space": space, "parameter": "replacement", "config": expected["replacement"],
        "gpubench": f"best fit: {fit.get('policy')}", "confidence": conf,
        "verdict": ("right" if fit.get("policy") and expected["replacement"] in fit["policy"] else "not stated" if not fit.get("policy") else "wrong") + " (fit only)",
    })
    gran = (cache.get("fetch_granularity") or {}).get("estimate") or {}
    if gran:
        unit = expected["sector_bytes"] or expected["line_bytes"]
        rows.append({
            "space": space, "parameter": "fetch granularity (bytes)", "config": unit,
            "gpubench": gran.get("bytes"), "confidence": gran.get("confidence"),
            "verdict": verdict(unit, gran.get("bytes")),
        })
    conflict = cache.get("conflict") or {}
    if conflict:
        rows.append({
            "space": space, "parameter": "ways (conflict experiment)", "config": expected["ways"],
            "gpubench": f"{conflict.get('ways')}: {conflict.get('verdict')}", "confidence": None,
            "verdict": verdict(expected["ways"], conflict.get("ways")),
        })
    if latency_option:
        rows.append(latency_row(space, level["latency_cycles"], latency_option, o))
    return rows


def latency_row(space, hit, option, o):
    """The measured hit latency against the configuration's latency option."""
    return {
        "space": space, "parameter": f"hit latency (cycles) vs {option}",
        "config": o.get(option), "gpubench": round(hit, 1), "confidence": None,
        "verdict": f"difference {hit - float(o.get(option, 'nan')):+.1f}",
    }


# Options whose exported value the simulated device's attributes give (sim/libcuda answers
# them from the configuration): their round trip checks the layer, not a measurement.
FROM_ATTRIBUTES = {"-gpgpu_n_clusters", "-gpgpu_shader_registers", "-gpgpu_registers_per_block",
                   "-gpgpu_shmem_size"}
# Written by the exporter as a convention (one SM per cluster), not read from the run.
EXPORTER_CONVENTION = {"-gpgpu_n_cores_per_cluster"}
LATENCIES = {"-gpgpu_l1_latency", "-gpgpu_l2_rop_latency", "-gpgpu_smem_latency"}
# The spaces a results directory may hold, each gpubench's run directory of `cache --space`.
SPACES = ["global", "l2", "shared", "constant"]


def exported_options(gpubench, run, config):
    """`gpubench export --format accel-sim RUN --base CONFIG`'s option lines, with the comment
    above each. Run beside CONFIG so that the export names it as gpgpusim.config, not by a path
    of this machine's."""
    config = Path(config).resolve()
    out = subprocess.run([str(Path(gpubench).resolve()), "export", "--format", "accel-sim", str(Path(run).resolve()),
                          "--base", config.name],
                         capture_output=True, text=True, check=True, cwd=config.parent).stdout
    found, why = {}, ""
    for line in out.splitlines():
        if line.startswith("# "):
            why = line[2:]
        elif line.startswith("-"):
            option, value = line.split(" ", 1)
            found[option] = (value, why)
    return found


def whole_string(o, option, geometry):
    """The cache string GPGPU-Sim runs with: `geometry` (the effective sets, line and ways)
    and the configuration's fields after it."""
    return geometry + "," + o[option].split(",", 1)[1]


def round_trip(o, results, gpubench, config):
    """Each option the export of each space's run writes (with the configuration as its
    --base), against the configuration it ran on: integers and cache strings exactly (the
    geometry measured, the fields after it the base's), latencies within 2 cycles."""
    rows = []
    for space in SPACES:
        run = results / space
        if not (run / "cache.json").exists():
            continue
        for option, (value, why) in exported_options(gpubench, run, config).items():
            configured = o.get(option)
            if option == "-gpgpu_cache:dl1":
                want = l1d_expected(o)
                geometry = f"{'S' if want['sectored'] else 'N'}:{want['sets']}:{want['line_bytes']}:{want['ways']}"
                configured = whole_string(o, option, geometry)
                if configured != o[option]:
                    configured += f" (effective; the file's string is {o[option]})"
                same = value == whole_string(o, option, geometry)
                verdict_text = ("right" if same else "wrong") + " (the whole string; the geometry measured)"
            elif option == "-gpgpu_const_cache:l1":
                want = constant_expected(o)
                geometry = f"N:{want['sets']}:{want['line_bytes']}:{want['ways']}"
                same = value == whole_string(o, option, geometry)
                verdict_text = ("right" if same else "wrong") + " (the whole string; the geometry measured)"
            elif configured is None:
                verdict_text = "not in the configuration"
            elif option in LATENCIES:
                diff = float(value) - float(configured)
                verdict_text = f"{'right' if abs(diff) <= 2 else 'wrong'} ({diff:+.0f} cycles)"
            else:
                same = value.strip() == configured.strip()
                verdict_text = ("right" if same else "wrong") + (
                    " (a device attribute the layer answers from the configuration)"
                    if option in FROM_ATTRIBUTES else
                    " (the exporter writes one SM per cluster: not a measurement)"
                    if option in EXPORTER_CONVENTION else "")
            rows.append({"space": space, "option": option, "exported": value,
                         "config": configured, "verdict": verdict_text, "why": why,
                         "measured": option not in FROM_ATTRIBUTES | EXPORTER_CONVENTION})
    return rows


def main():
    config, results = sys.argv[1], Path(sys.argv[2])
    gpubench = sys.argv[3] if len(sys.argv) > 3 else None
    o = options(config)
    rows = []
    if any((results / "global" / f).exists() for f in ("cache.json", "analyze.json")):
        rows += rows_for("global (L1D)", results / "global", l1d_expected(o), "-gpgpu_l1_latency", o)
    if any((results / "l2" / f).exists() for f in ("cache.json", "analyze.json")):
        rows += rows_for("l2 (.cg)", results / "l2", l2_expected(o), "-gpgpu_l2_rop_latency", o)
    if (results / "shared" / "cache.json").exists():
        # Shared memory has no cache to size: its one level is its latency.
        levels = json.loads((results / "shared" / "cache.json").read_text())["report"]["levels"]
        rows.append(latency_row("shared", levels[-1]["latency_cycles"], "-gpgpu_smem_latency", o))
    if (results / "constant" / "cache.json").exists():
        if o.get("-gpgpu_perfect_inst_const_cache", "0") != "0":
            rows.append({"space": "constant", "parameter": "cache level", "config": "perfect (every load hits)",
                         "gpubench": "-", "confidence": None, "verdict": "not scored: -gpgpu_perfect_inst_const_cache 1"})
        else:
            # No latency option: GPGPU-Sim's constant cache answers a hit without one.
            rows += rows_for("constant", results / "constant", constant_expected(o), None, o)
    runs = {}
    for space in SPACES:
        meta = results / space / "metadata.json"
        if meta.exists():
            m = json.loads(meta.read_text())
            runs[space] = {"gpubench_commit": m["build"]["git_commit"], "device": m["device"]["name"],
                           "started_utc": m["started_utc"], "status": m["status"]}
    key = {
        "runs": runs,
        "config_options": {k: o.get(k) for k in [
            "-gpgpu_cache:dl1", "-gpgpu_adaptive_cache_config", "-gpgpu_unified_l1d_size",
            "-gpgpu_shmem_option", "-gpgpu_cache:dl2", "-gpgpu_n_mem",
            "-gpgpu_n_sub_partition_per_mchannel", "-gpgpu_n_clusters", "-gpgpu_l1_latency",
            "-gpgpu_l2_rop_latency", "-dram_latency", "-gpgpu_smem_latency", "-gpgpu_clock_domains",
            "-gpgpu_const_cache:l1", "-gpgpu_perfect_inst_const_cache", "-network_mode"]},
        "l1d": l1d_expected(o), "l2": l2_expected(o), "rows": rows,
    }
    lines = ["| space | parameter | configuration | gpubench | confidence | verdict |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        c = "" if r["confidence"] is None else f"{r['confidence']:.2f}"
        lines.append(f"| {r['space']} | {r['parameter']} | {r['config']} | {r['gpubench']} | {c} | {r['verdict']} |")
    # Calibration: among the figures gpubench states (a capacity, line, way or set count, a
    # fetch granularity: not the fit's unstated best guesses) at confidence >= p, the share right.
    stated = [r for r in rows if r["confidence"] is not None and "(fit only)" not in r["verdict"]
              and r["verdict"].split(" ")[0] in ("right", "wrong")]
    lines.append("")
    for p in (0.0, 0.5, 0.9):
        at = [r for r in stated if r["confidence"] >= p]
        right = sum(r["verdict"].startswith("right") for r in at)
        lines.append(f"Stated at confidence >= {p}: {len(at)}, right {right}.")
    key["calibration"] = [{"p": p, "stated": len([r for r in stated if r["confidence"] >= p]),
                           "right": sum(r["verdict"].startswith("right") for r in stated if r["confidence"] >= p)}
                          for p in (0.0, 0.5, 0.9)]
    if gpubench:
        trip = round_trip(o, results, gpubench, config)
        key["round_trip"] = trip
        lines += ["", "Round trip: `gpubench export --format accel-sim --base gpgpusim.config` of each space's run against the configuration:", "",
                  "| space | option | exported | configuration | verdict |", "|---|---|---|---|---|"]
        for r in trip:
            lines.append(f"| {r['space']} | {r['option']} | {r['exported']} | {r['config']} | {r['verdict']} |")
        measured = [r for r in trip if r["measured"]]
        right = sum(r["verdict"].startswith("right") for r in measured)
        lines.append("")
        lines.append(f"Measured options reproduced: {right} of {len(measured)}.")
    (results / "answer-key.json").write_text(json.dumps(key, indent=1) + "\n")
    (results / "answer-key.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

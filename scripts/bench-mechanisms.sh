#!/usr/bin/env bash
# What each of `gpubench all`'s speed mechanisms saves (issue #73: one that saves less than
# 0.3 s of `all` or of `all --quick` goes, with its code). Runs `all` and `all --quick` RUNS
# times cold (CUDA_CACHE_DISABLE=1, so the driver's JIT cache flatters nothing) with every
# mechanism on, then with each turned off in turn (GPUBENCH_WITHOUT, src/gpu/mechanisms.rs),
# interleaved so that a drift of the machine falls on every configuration alike. Prints a
# Markdown table of the whole run's median wall time, min-max, its saving against all on, and
# the time the suites held the GPU (their intervals in all.json), into OUT/mechanisms.md.
#   usage: scripts/bench-mechanisms.sh [BIN] [RUNS] [MECHANISMS]
#          (defaults: target/device/gpubench 3 "workers kept prebuilt parked early")
#   environment: OUT (default ./bench-mechanisms) keeps every run directory and the table.
set -uo pipefail
BIN=${1:-target/device/gpubench}
RUNS=${2:-3}
MECHANISMS=${3:-workers kept prebuilt parked early}
OUT=${OUT:-bench-mechanisms}
mkdir -p "$OUT"
export CUDA_CACHE_DISABLE=1

for i in $(seq 1 "$RUNS"); do
  for off in none $MECHANISMS; do
    for mode in full quick; do
      flags=""
      [ "$mode" = quick ] && flags=--quick
      dir="$OUT/$mode-$off-$i"
      if [ "$off" = none ]; then
        env -u GPUBENCH_WITHOUT "$BIN" all $flags --output "$dir" >/dev/null 2>"$dir.log"
      else
        GPUBENCH_WITHOUT=$off "$BIN" all $flags --output "$dir" >/dev/null 2>"$dir.log"
      fi
      echo "$mode without $off, run $i: exit $?"
    done
  done
done

python3 - "$OUT" none $MECHANISMS <<'PY' | tee "$OUT/mechanisms.md"
import glob, json, statistics, sys
out, configs = sys.argv[1], sys.argv[2:]
def runs(mode, off):
    found = []
    for path in sorted(glob.glob(f"{out}/{mode}-{off}-*/all.json")):
        a = json.load(open(path))
        if a.get("total_seconds") is None:
            continue
        assert (a.get("mechanisms_off") or ["none"]) == [off] or off == "none", path
        gpu = sum(e - s for suite in a["suites"] for s, e in suite.get("gpu_intervals_seconds", []))
        failed = [s["name"] for s in a["suites"] if s["status"] not in ("complete", "skipped")]
        found.append((a["total_seconds"], gpu, failed))
    return found
def cell(values):
    if not values:
        return "-", None
    m = statistics.median(values)
    return f"{m:.2f} s ({min(values):.2f}-{max(values):.2f})", m
print("| turned off | `all`, median (min-max) | saves | GPU held | `all --quick`, median (min-max) | saves | GPU held |")
print("|---|---|---|---|---|---|---|")
base = {}
for off in configs:
    row = [off if off != "none" else "nothing (every mechanism on)"]
    for mode in ["full", "quick"]:
        found = runs(mode, off)
        text, median = cell([t for t, _, _ in found])
        failed = sorted({f for _, _, fs in found for f in fs})
        if failed:
            text += " (failed: " + ", ".join(failed) + ")"
        gpu, _ = cell([g for _, g, _ in found])
        if off == "none":
            base[mode] = median
            saves = "-"
        elif median is not None and base.get(mode) is not None:
            saves = f"{median - base[mode]:+.2f} s"
        else:
            saves = "-"
        row += [text, saves, gpu]
    print("| " + " | ".join(row) + " |")
print()
print("'saves' is the median wall time with the mechanism off less the median with every mechanism on: what the mechanism saves (negative where the run was faster without it).")
PY

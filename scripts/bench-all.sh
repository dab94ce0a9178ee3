#!/usr/bin/env bash
# How long `gpubench all` takes, suite by suite: RUNS runs cold (CUDA_CACHE_DISABLE=1, so the
# driver's JIT cache cannot flatter the figure) and RUNS warm (the cache filled by a first,
# uncounted run), full and --quick. Prints min / median / max of each suite's wall time and of
# its split (JIT, GPU, host, driver start, as each suite recorded them; "ahead" is the cuInit a
# suite made before its turn, hidden behind the suite before; "aside" the time a suite that
# stepped aside for host work waited for the GPU again, while others measured; "setup" the
# part of the wall from its context to its own measurement) and of the whole run. "held" is
# the time the suite held the GPU (its turns in all.json): the held times and the gaps
# between turns add up to the whole run. Below each table: the whole run over the suites' GPU
# time, each suite's longest GPU waits by kernel (its metadata.json's gpu_waits), and, for the
# suites holding the GPU longest beyond their waits, the steps of their turns (the logs' trace
# lines, GPUBENCH_TRACE).
#   usage: scripts/bench-all.sh [BIN] [RUNS] [MODES]    (defaults: target/device/gpubench 3 "full quick")
#   environment: OUT (default ./bench-out) keeps every run directory and bench.md.
set -uo pipefail
BIN=${1:-target/device/gpubench}
RUNS=${2:-3}
MODES=${3:-full quick}
OUT=${OUT:-bench-out}
mkdir -p "$OUT"
cache=$(mktemp -d)
export CUDA_CACHE_PATH=$cache
# Each suite's log says how far into its turn it was as each step ended (read below).
export GPUBENCH_TRACE=1

run() { # mode label index
  local flags=""
  [ "$1" = quick ] && flags=--quick
  local dir="$OUT/$1-$2-$3"
  if [ "$2" = cold ]; then
    CUDA_CACHE_DISABLE=1 "$BIN" all $flags --output "$dir" >/dev/null 2>"$dir.log"
  else
    "$BIN" all $flags --output "$dir" >/dev/null 2>"$dir.log"
  fi
  echo "$1 $2 run $3: exit $?, $(python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['total_seconds'],1))" "$dir/all.json") s"
}

for mode in $MODES; do
  for i in $(seq 1 "$RUNS"); do run "$mode" cold "$i"; done
  # The first warm run fills the JIT cache and is not counted.
  run "$mode" fill 0
  for i in $(seq 1 "$RUNS"); do run "$mode" warm "$i"; done
done
rm -rf "$cache"

python3 - "$OUT" $MODES <<'EOF' | tee "$OUT/bench.md"
import glob, json, os, statistics, sys
out, modes = sys.argv[1], sys.argv[2:]
def intervals(suite):
    # When the suite held the GPU (`gpu_turns_seconds` in all.json of format 2 and before).
    return suite.get("gpu_intervals_seconds", suite.get("gpu_turns_seconds", []))
def mmm(values, digits=1):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    return " / ".join(f"{v:.{digits}f}" for v in (min(values), statistics.median(values), max(values)))
for mode in modes:
    for cache in ["cold", "warm"]:
        runs = [json.load(open(p)) for p in sorted(glob.glob(f"{out}/{mode}-{cache}-*/all.json"))]
        if not runs:
            continue
        print(f"\n## gpubench all{' --quick' if mode == 'quick' else ''}, JIT cache {cache}: {len(runs)} runs, min / median / max seconds\n")
        print("| suite | held | wall | JIT | GPU | host | driver start | setup | driver overlapped | waiting for the GPU |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        names = [s["name"] for s in runs[0]["suites"]]
        for name in names:
            rows = [next((s for s in r["suites"] if s["name"] == name), {}) for r in runs]
            split = lambda key, old=None: [(s.get("time_split") or {}).get(key, (s.get("time_split") or {}).get(old)) for s in rows]
            held = [sum(b - a for a, b in intervals(s)) if intervals(s) else None for s in rows]
            print(f"| {name} | {mmm(held)} | {mmm([s.get('seconds') for s in rows])} | {mmm(split('jit_seconds'))} | "
                  f"{mmm(split('gpu_wait_seconds'))} | {mmm(split('host_seconds'))} | {mmm(split('driver_start_seconds'))} | "
                  f"{mmm(split('setup_seconds'))} | {mmm(split('driver_start_overlapped_seconds', 'driver_ahead_seconds'))} | {mmm(split('waiting_for_gpu_seconds', 'waiting_for_turn_seconds'))} |")
        held_all = [sum(b - a for s in r["suites"] for a, b in intervals(s)) for r in runs]
        print(f"| **whole run** | {mmm(held_all)} | **{mmm([r['total_seconds'] for r in runs])}** | | | | | | | |")
        # The issue's yardstick: the whole run over the time the GPU was busy with the
        # suites' work (the sum of each suite's GPU column, its waits for queued GPU work).
        busy = [sum((s.get("time_split") or {}).get("gpu_wait_seconds", 0.0) for s in r["suites"]) for r in runs]
        ratios = [r["total_seconds"] / b for r, b in zip(runs, busy) if b > 0]
        print(f"\nWhole run over the suites' GPU time (sum of the GPU column): {mmm(busy)} s busy, ratio {mmm(ratios, 3)} (min / median / max).")
        # Where each suite's GPU time went: its metadata's waits by kernel (the queued work
        # before a wait is in it too), the three longest, median seconds over the runs.
        dirs = sorted(glob.glob(f"{out}/{mode}-{cache}-*/all.json"))
        print(f"\nLongest GPU waits by kernel (median seconds over the {len(runs)} runs; suites waiting 0.2 s or more):\n")
        for name in names:
            by_kernel = {}
            for d in dirs:
                path = os.path.join(os.path.dirname(d), name, "metadata.json")
                if not os.path.exists(path):
                    continue
                for w in json.load(open(path)).get("gpu_waits", []):
                    by_kernel.setdefault(w["kernel"], []).append(w["seconds"])
            total = sum(statistics.median(v) for v in by_kernel.values())
            if total < 0.2:
                continue
            top = sorted(by_kernel.items(), key=lambda kv: -statistics.median(kv[1]))[:3]
            print(f"- {name} ({total:.2f} s): " + ", ".join(f"{k} {statistics.median(v):.2f}" for k, v in top))
        # Inside each turn (GPUBENCH_TRACE: each suite's log says how far into its turn it
        # was as each step ended): the steps of 0.05 s or more, median seconds over the runs,
        # for the suites that held the GPU longest beyond their GPU waits.
        print(f"\nInside the turns (median seconds per step, from the logs' trace lines; suites whose held time exceeds their GPU waits by 0.15 s or more):\n")
        for name in names:
            rows = [next((s for s in r["suites"] if s["name"] == name), {}) for r in runs]
            held = statistics.median([sum(b - a for a, b in intervals(s)) for s in rows] or [0])
            busy = statistics.median([(s.get("time_split") or {}).get("gpu_wait_seconds", 0.0) for s in rows] or [0])
            if held - busy < 0.15:
                continue
            steps = {}
            for d in dirs:
                log = os.path.join(os.path.dirname(d), "logs", f"{name}.log")
                if not os.path.exists(log):
                    continue
                last = 0.0
                for line in open(log, errors="replace"):
                    if not line.startswith("trace: "):
                        continue
                    at, what = line[len("trace: "):].split(" s into the turn: ", 1)
                    steps.setdefault(what.strip(), []).append(float(at) - last)
                    last = float(at)
            shown = [(k, statistics.median(v)) for k, v in steps.items() if statistics.median(v) >= 0.05]
            print(f"- {name} (held {held:.2f} s, GPU waits {busy:.2f} s): " + (", ".join(f"{k} {v:.2f}" for k, v in shown) or "no step of 0.05 s or more"))
        failed = [s["name"] for r in runs for s in r["suites"] if s["status"] != "complete"]
        if failed:
            print(f"\nsuites that did not complete: {', '.join(failed)}")
EOF

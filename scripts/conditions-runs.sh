#!/usr/bin/env bash
# The field conditions of issue #70 on a GPU machine, from binaries built elsewhere
# (scripts/prepare-device.sh): `all --quick` alone; beside a tensor-core loop and beside a
# memory-bound loop (refused, exit 7; then --allow-shared); with a loop started while `all`
# runs; `clock` for the SM clock against two timers; the GPU tests. Writes into $OUT
# (default ./device-out) and tars the run directories into conditions-runs.tar.gz.
#   usage: scripts/conditions-runs.sh [alone] [beside] [during] [clock] [smmap] [tests]
# smmap: four `all --repeat --only cache-l2,sm-map`: eight sm-map readings, each set beside
# the cache suite's partitions of the same run.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-device-out}
BIN=$(realpath target/device/gpubench)
RUNS="$OUT/runs"
mkdir -p "$RUNS"
steps=${*:-alone beside during clock smmap tests}
log() { echo "=== $*"; }

# A CUDA program that is not gpubench's, for $1 seconds: bf16 matrix products on the tensor
# cores ("tensor") or a device-to-device copy loop ("memory"), through PyTorch where the
# machine has it, else gpubench's own bandwidth suite told --allow-shared.
other() {
  local kind=$1 seconds=$2
  if python3 -c 'import torch' 2>/dev/null; then
    python3 - "$kind" "$seconds" <<'PY' &
import sys, time, torch
kind, seconds = sys.argv[1], float(sys.argv[2])
if kind == "tensor":
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    work = lambda: a @ a
else:
    a = torch.empty(1 << 30, device="cuda", dtype=torch.uint8)
    b = torch.empty_like(a)
    work = lambda: b.copy_(a)
t = time.time()
while time.time() - t < seconds:
    work()
    torch.cuda.synchronize()
PY
  else
    "$BIN" bandwidth --allow-shared --output "$RUNS/other-$kind-$$" >/dev/null 2>&1 &
  fi
  OTHER=$!
  # Until NVML lists it.
  for _ in $(seq 100); do
    nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -qw "$OTHER" && break
    sleep 0.1
  done
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
}

for step in $steps; do
  case $step in
  alone)
    log "all --quick alone"
    nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,persistence_mode,mig.mode.current --format=csv
    /usr/bin/time -f "wall %e s" "$BIN" all --quick --output "$RUNS/alone" >"$OUT/alone.log" 2>&1
    echo "exit $?"; tail -3 "$OUT/alone.log"
    ;;
  beside)
    for kind in tensor memory; do
      log "all --quick beside a $kind loop"
      other $kind 60
      "$BIN" all --quick --output "$RUNS/refused-$kind" >"$OUT/refused-$kind.log" 2>&1
      echo "exit $? (7 expected)"; cat "$OUT/refused-$kind.log"
      ls "$RUNS/refused-$kind" 2>/dev/null && echo "UNEXPECTED: a directory was written"
      /usr/bin/time -f "wall %e s" "$BIN" all --quick --allow-shared --output "$RUNS/shared-$kind" >"$OUT/shared-$kind.log" 2>&1
      echo "exit $?"; tail -3 "$OUT/shared-$kind.log"
      kill $OTHER 2>/dev/null; wait $OTHER 2>/dev/null
      python3 - "$RUNS/shared-$kind/summary.json" <<'PY'
import json, sys, collections
s = json.load(open(sys.argv[1]))
c = collections.Counter(f["status"] for f in s["figures"])
r = collections.Counter((f.get("unresolved") or {}).get("reason") for f in s["figures"])
print("figures by status:", dict(c), "by reason:", dict(r))
PY
    done
    ;;
  during)
    log "all with a tensor loop started 3 s into it, for 8 s"
    "$BIN" all --output "$RUNS/during" >"$OUT/during.log" 2>&1 &
    ALL=$!
    sleep 3
    other tensor 8
    wait $ALL; echo "all exit $?"
    wait $OTHER
    tail -3 "$OUT/during.log"
    grep -A3 "## Conditions" -m1 "$RUNS/during/summary.md"
    python3 - "$RUNS/during" <<'PY'
import json, sys, os, collections
d = sys.argv[1]
s = json.load(open(os.path.join(d, "summary.json")))
for suite in s["suites"]:
    if suite.get("shared"):
        print("marked:", suite["name"], "-", suite["shared"])
c = collections.Counter(f["status"] for f in s["figures"])
print("figures by status:", dict(c))
PY
    ;;
  clock)
    log "clock: the SM clock against two timers, five runs"
    for i in 1 2 3 4 5; do
      "$BIN" clock --output "$RUNS/clock-$i" 2>&1 | grep -E "SM clock|warning"
    done
    ;;
  smmap)
    log "sm-map against the cache suite's L2 partitions, four runs with --repeat"
    for i in 1 2 3 4; do
      "$BIN" all --repeat --only cache-l2,sm-map --output "$RUNS/smmap-$i" >"$OUT/smmap-$i.log" 2>&1
      echo "run $i exit $?"
    done
    python3 - "$RUNS" <<'PY'
import csv, json, os, sys
runs = sys.argv[1]
agree = 0
total = 0
for i in range(1, 5):
    for sub in ("", "repeat"):
        d = os.path.join(runs, f"smmap-{i}", sub)
        groups = json.load(open(os.path.join(d, "cache-l2", "cache.json")))["l2_partitions"]["groups"]
        l2 = [sorted(g) for g in groups]
        sms = list(csv.DictReader(open(os.path.join(d, "sm-map", "sms.csv"))))
        by = {}
        for row in sms:
            if row["partition"] not in ("", None):
                by.setdefault(row["partition"], []).append(int(row["sm"]))
        mapped = sorted(sorted(g) for g in by.values())
        same = mapped == sorted(l2)
        unresolved = json.load(open(os.path.join(d, "sm-map", "sm-map.json"))).get("partitions_unresolved")
        total += 1
        agree += same
        print(f"smmap-{i}{'/repeat' if sub else ''}: cache-l2 {[len(g) for g in l2]}, sm-map {[len(g) for g in mapped]}, {'agree' if same else 'DIFFER'}{', sm-map unresolved: ' + unresolved if unresolved else ''}")
print(f"{agree} of {total} sm-map readings agree with the cache suite's partitions")
PY
    ;;
  tests)
    log "GPU tests"
    GPUBENCH_BIN=$BIN target/device/gpu-tests --ignored --test-threads=1 >"$OUT/gpu-tests.txt" 2>&1
    echo "exit $?"; grep -E "^test |test result" "$OUT/gpu-tests.txt" | grep -v " ok$" | tail -12
    ;;
  esac
done
tar czf "$OUT/conditions-runs.tar.gz" -C "$OUT" runs
ls -la "$OUT"

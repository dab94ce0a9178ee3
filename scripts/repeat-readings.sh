#!/usr/bin/env bash
# Readings that did not repeat on one card (issue #70, item 6), measured N times in a row on
# one GPU from binaries built elsewhere (scripts/prepare-device.sh): the bandwidth suite (its
# fall-off footprints and the L2 write rate) and the instruction space of the cache suite (the
# L1's capacity). Tars the runs and their logs into $OUT/repeat-readings.tar.gz
# ($OUT: default ./device-out; the device tool brings back only a few files).
#   usage: scripts/repeat-readings.sh [N] [bandwidth] [instruction]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-device-out}
BIN=$(realpath target/device/gpubench)
N=${1:-4}
shift || true
steps=${*:-bandwidth instruction}
WORK=$(mktemp -d)
RUNS="$WORK/runs"
mkdir -p "$RUNS" "$OUT"
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
for step in $steps; do
  for i in $(seq "$N"); do
    case $step in
    bandwidth) args=(bandwidth) ;;
    instruction) args=(cache --space instruction) ;;
    *) echo "unknown step $step"; exit 2 ;;
    esac
    echo "=== $step $i"
    /usr/bin/time -f "wall %e s" "$BIN" "${args[@]}" --output "$RUNS/$step-$i" >"$WORK/$step-$i.log" 2>&1
    echo "exit $?"
    grep -E "falls off|l2 +write|level 1|capacity|wall" "$WORK/$step-$i.log" | head -20
  done
done
tar czf "$OUT/repeat-readings.tar.gz" -C "$WORK" .
ls -la "$OUT"

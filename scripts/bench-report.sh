#!/usr/bin/env bash
# How long the pages take (issue #33: "written in under a second"): `gpubench report RUN
# --format html` on the committed H100 run and on the committed two-H200 fan-out (both GPUs'
# pages and the fleet page), RUNS times each from a fresh output directory; every figure is
# redrawn as SVG on the way, so this is the whole report, not only the page. Prints min /
# median / max wall seconds and the page sizes. No GPU needed.
#   usage: scripts/bench-report.sh [BIN] [RUNS]    (defaults: target/release/gpubench 5)
set -euo pipefail
BIN=${1:-target/release/gpubench}
RUNS=${2:-5}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for run in results/h100/all results/h200x2; do
  times=()
  for i in $(seq 1 "$RUNS"); do
    out="$scratch/$i-$(basename "$run")"
    start=$(date +%s.%N)
    "$BIN" report "$run" --format html --output "$out" >/dev/null 2>&1
    end=$(date +%s.%N)
    times+=("$(printf '%.2f' "$(echo "$end - $start" | bc)")")
  done
  sorted=$(printf '%s\n' "${times[@]}" | sort -n)
  echo "$run: report --format html, $RUNS runs: min $(echo "$sorted" | head -1) s," \
    "median $(echo "$sorted" | sed -n "$(((RUNS + 1) / 2))p") s, max $(echo "$sorted" | tail -1) s;" \
    "page $(stat -c %s "$out/index.html") bytes"
done

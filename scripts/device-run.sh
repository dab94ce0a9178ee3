#!/usr/bin/env bash
# Runs gpubench's GPU work on a machine with a GPU but no Rust toolchain, from binaries built
# elsewhere (scripts/prepare-device.sh puts them under target/device/). Writes everything into
# $OUT (default ./device-out) and tars the run directories into one file.
#   usage: scripts/device-run.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-device-out}
mkdir -p "$OUT/runs"
BIN=target/device/gpubench
log() { echo "=== $*"; }

log "nvidia-smi (read only)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,pstate --format=csv 2>&1

log "gpubench info"
$BIN info
$BIN info --json >"$OUT/info.json"

log "GPU tests (ignored by default)"
GPUBENCH_BIN=$BIN target/device/gpu-tests --ignored --test-threads=1 2>&1 | tail -8

log "default divergence run (preheat 1)"
/usr/bin/time -f "wall %e s" $BIN divergence --output "$OUT/runs/divergence"
log "preheat 0"
$BIN divergence --preheat 0 --output "$OUT/runs/divergence-preheat0"
log "random lane order: the model fitted on it must hold as well"
$BIN divergence --pattern random --output "$OUT/runs/divergence-model"
log "half pattern"
$BIN divergence --pattern half --kernel single --no-split --output "$OUT/runs/divergence-half"

log "bad input and a missing device: each must exit non-zero with one sentence"
for args in "--samples 0" "--pattern list:1,2" "--device 7"; do
  # shellcheck disable=SC2086
  $BIN divergence $args --output "$OUT/runs/should-not-exist"
  echo "exit code $? for: divergence $args"
done
test -e "$OUT/runs/should-not-exist" && echo "FAIL: a refused run left a directory"

ls "$OUT/runs"
tar -C "$OUT" -czf "$OUT/runs.tar.gz" runs && rm -rf "$OUT/runs"

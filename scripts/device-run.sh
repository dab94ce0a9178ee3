#!/usr/bin/env bash
# Runs gpubench's GPU work on a machine with a GPU but no Rust toolchain, from binaries built
# elsewhere (scripts/prepare-device.sh puts them under target/device/). Writes everything into
# $OUT (default ./device-out) and tars the run directories into one file.
#   usage: scripts/device-run.sh [info] [tests] [divergence] [clock] [shared] [sync] [branch] [regs] [pipeline] [bandwidth] [cache] [cache-fast] [cache-l2] [cache-instruction] [cache-new] [slots] [all] [all-quick] [errors]
#   (no argument: all of them)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-device-out}
mkdir -p "$OUT/runs"
BIN=target/device/gpubench
log() { echo "=== $*"; }
steps=${*:-info tests divergence clock shared sync branch regs pipeline cache slots errors}

for step in $steps; do
  case $step in
  info)
    log "nvidia-smi (read only)"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,pstate --format=csv 2>&1
    log "gpubench info"
    $BIN info
    $BIN info --json >"$OUT/info.json"
    ;;
  tests)
    log "GPU tests (ignored by default)"
    GPUBENCH_BIN=$BIN target/device/gpu-tests --ignored --test-threads=1 2>&1 | tail -12
    ;;
  divergence)
    log "default divergence run (preheat 1)"
    /usr/bin/time -f "wall %e s" $BIN divergence --output "$OUT/runs/divergence"
    log "preheat 0"
    $BIN divergence --preheat 0 --output "$OUT/runs/divergence-preheat0"
    log "random lane order: the model fitted on it must hold as well"
    $BIN divergence --pattern random --output "$OUT/runs/divergence-model"
    ;;
  clock | shared | sync | branch | regs | pipeline | bandwidth)
    log "gpubench $step"
    /usr/bin/time -f "wall %e s" $BIN "$step" --output "$OUT/runs/$step"
    ;;
  all)
    log "gpubench all"
    /usr/bin/time -f "wall %e s" $BIN all --output "$OUT/runs/all"
    log "gpubench report on its output (no GPU needed)"
    $BIN report "$OUT/runs/all" --output "$OUT/runs/all-report" | tail -3
    cmp "$OUT/runs/all/summary.md" "$OUT/runs/all-report/summary.md" && echo "summary.md byte-identical"
    ;;
  all-quick)
    log "gpubench all --quick"
    /usr/bin/time -f "wall %e s" $BIN all --quick --output "$OUT/runs/all-quick"
    ;;
  slots)
    log "gpubench slots (ncu cross-check included where ncu is on PATH)"
    /usr/bin/time -f "wall %e s" $BIN slots --output "$OUT/runs/slots"
    ;;
  texture)
    log "gpubench cache --space texture"
    /usr/bin/time -f "wall %e s" $BIN cache --space texture --output "$OUT/runs/cache-texture"
    ;;
  cache-extra)
    log "gpubench cache --space constant"
    /usr/bin/time -f "wall %e s" $BIN cache --space constant --output "$OUT/runs/cache-constant"
    log "gpubench cache --space global --chain random"
    /usr/bin/time -f "wall %e s" $BIN cache --space global --chain random --output "$OUT/runs/cache-global-random"
    ;;
  cache-new)
    for space in instruction tlb; do
      log "gpubench cache --space $space"
      /usr/bin/time -f "wall %e s" $BIN cache --space "$space" --output "$OUT/runs/cache-$space"
    done
    log "gpubench cache --space global --threads 32 --per-load"
    /usr/bin/time -f "wall %e s" $BIN cache --space global --threads 32 --per-load --output "$OUT/runs/cache-global-threads32"
    ;;
  cache-fast)
    # Every cache space but the long l2 and instruction sweeps, with the carveout sweep.
    log "gpubench cache --space global --carveout 0,25,50,75,100"
    /usr/bin/time -f "wall %e s" $BIN cache --space global --carveout 0,25,50,75,100 --output "$OUT/runs/cache-global"
    for space in readonly texture constant constant-uniform shared tlb; do
      log "gpubench cache --space $space"
      /usr/bin/time -f "wall %e s" $BIN cache --space "$space" --output "$OUT/runs/cache-$space"
    done
    log "gpubench cache --space tlb --chain random"
    /usr/bin/time -f "wall %e s" $BIN cache --space tlb --chain random --output "$OUT/runs/cache-tlb-random"
    ;;
  cache-l2)
    log "gpubench cache --space l2"
    /usr/bin/time -f "wall %e s" $BIN cache --space l2 --output "$OUT/runs/cache-l2"
    ;;
  cache-instruction)
    log "gpubench cache --space instruction"
    /usr/bin/time -f "wall %e s" $BIN cache --space instruction --output "$OUT/runs/cache-instruction"
    ;;
  cache)
    log "gpubench cache --space global --carveout 0,25,50,75,100"
    /usr/bin/time -f "wall %e s" $BIN cache --space global --carveout 0,25,50,75,100 --output "$OUT/runs/cache-global"
    for space in l2 readonly shared constant constant-uniform texture instruction tlb; do
      log "gpubench cache --space $space"
      /usr/bin/time -f "wall %e s" $BIN cache --space "$space" --output "$OUT/runs/cache-$space"
    done
    log "gpubench cache --space tlb --chain random"
    /usr/bin/time -f "wall %e s" $BIN cache --space tlb --chain random --output "$OUT/runs/cache-tlb-random"
    log "gpubench cache --space global --chain random --per-load"
    /usr/bin/time -f "wall %e s" $BIN cache --space global --chain random --per-load --output "$OUT/runs/cache-global-random"
    log "gpubench cache --space global --threads 32"
    /usr/bin/time -f "wall %e s" $BIN cache --space global --threads 32 --output "$OUT/runs/cache-global-threads32"
    ;;
  errors)
    log "bad input and a missing device: each must exit non-zero with one sentence"
    for args in "divergence --samples 0" "divergence --pattern list:1,2" "divergence --device 7" "sync --device 7"; do
      # shellcheck disable=SC2086
      $BIN $args --output "$OUT/runs/should-not-exist"
      echo "exit code $? for: $args"
    done
    test -e "$OUT/runs/should-not-exist" && echo "FAIL: a refused run left a directory"
    ;;
  *) echo "unknown step $step" ;;
  esac
done
ls "$OUT/runs"
tar -C "$OUT" -czf "$OUT/runs.tar.gz" runs && rm -rf "$OUT/runs"

#!/usr/bin/env bash
# The loop, real -> simulated -> measured (issue #76, item 5): a real GPU's export, simulated on
# a reduced shipped base, measured again by the same suites, each figure set beside the real
# run's:
#   scripts/sim/loop.sh REAL_RUN BASE OUT_DIR
# REAL_RUN: a run directory of `gpubench all` on a real GPU (its cache spaces global, l2,
# shared and constant, and its shared suite, are what the loop sets side by side). BASE: a
# derived configuration in sim/configs/ (one SM, a small L2: e.g. SM86_RTX3070-1SM) whose
# shipped base and reductions the simulated GPU keeps. OUT_DIR (must not exist) gets:
#   export.config   gpubench export REAL_RUN --format accel-sim --base <BASE's shipped gpgpusim.config>
#   loop.config     a derived configuration: BASE's options, then the export's but its SM count
#   loop-constant.config   the same with the constant cache modelled, for the constant space
#   global/ l2/ shared/ constant/ banks/   the simulated runs (scripts/sim/run-suite.sh, each
#                   with its .sim.json and .log)
#   loop.md, loop.json   scripts/sim/loop.py: figure, real, simulated, difference, the option
#                   that carries it, and whether it came back
# RUNS (default "global l2 shared constant banks") picks the runs, two at a time; the sweeps are
# the answer key's, bounded for the base's small caches (SWEEP_GLOBAL, SWEEP_L2, SWEEP_SHARED,
# SWEEP_CONSTANT: gpubench cache arguments). Needs scripts/sim/build.sh's output in target/sim
# (SIM_OUT overrides) and gpubench built (GPUBENCH overrides the binary).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
usage="usage: scripts/sim/loop.sh REAL_RUN BASE OUT_DIR"
real=${1:?$usage}
base=${2:?$usage}
out=${3:?$usage}
sim=${SIM_OUT:-$repo/target/sim}
gpubench=${GPUBENCH:-${CARGO_TARGET_DIR:-$repo/target}/release/gpubench}
[ -x "$gpubench" ] || { echo "error: no $gpubench (cargo build --release)" >&2; exit 1; }
[ -d "$real" ] || { echo "error: $real is not a run directory" >&2; exit 1; }
[ ! -e "$out" ] || { echo "error: $out exists" >&2; exit 1; }
derived=$repo/sim/configs/$base.config
[ -f "$derived" ] || { echo "error: $base is not a derived configuration in sim/configs/" >&2; exit 1; }
shipped=$(sed -n 's/^# base: *//p' "$derived" | head -1)
# shellcheck disable=SC1091
source "$sim/env.sh"
mkdir -p "$out"
out=$(cd "$out" && pwd)
"$gpubench" export "$real" --format accel-sim \
  --base "$GPUBENCH_SIM_CONFIGS/$shipped/gpgpusim.config" --output "$out/export.config"
# The simulated GPU keeps the base's one SM (132 would take hours a sweep); every other option
# the export writes comes after the base's, so its value wins.
{
  echo "# base: $shipped"
  echo "# The loop (scripts/sim/loop.sh): $base's options, then those of the export of"
  echo "# $(basename "$real") but its SM count; written $(date -u +%Y-%m-%dT%H:%M:%SZ)."
  grep -v '^# base:' "$derived"
  echo
  echo "# ---- gpubench export $(basename "$real") --format accel-sim (without -gpgpu_n_clusters)"
  grep -v '^-gpgpu_n_clusters ' "$out/export.config"
} > "$out/loop.config"
# The constant space's own: the constant cache modelled (shipped configurations make every
# constant load hit), so the exported -gpgpu_const_cache:l1 is what it reads. Only there: with
# it, every kernel's parameter loads go through that cache too (the shared suite's indexed load
# read 51.3 cycles with it against 38.0 without, on the H100's export).
{
  cat "$out/loop.config"
  echo
  echo "# ---- the loop's own, for the constant space only: the constant cache modelled"
  echo "-gpgpu_perfect_inst_const_cache 0"
} > "$out/loop-constant.config"

read -r -a global_args <<< "${SWEEP_GLOBAL:---stride 128 --min-bytes 16384 --max-bytes 262144 --fine-points 16}"
read -r -a l2_args <<< "${SWEEP_L2:---min-bytes 65536 --max-bytes 524288 --fine-points 16 --resolution 64}"
read -r -a shared_args <<< "${SWEEP_SHARED:---min-bytes 1024 --max-bytes 8192}"
read -r -a constant_args <<< "${SWEEP_CONSTANT:---min-bytes 1024 --max-bytes 16384}"
one() {
  local name=$1
  case $name in
  global) set -- cache --space global "${global_args[@]}" ;;
  l2) set -- cache --space l2 "${l2_args[@]}" ;;
  shared) set -- cache --space shared "${shared_args[@]}" ;;
  constant) set -- cache --space constant "${constant_args[@]}" ;;
  banks) set -- shared --iterations 256 ;;
  *) echo "error: no run named $name" >&2; return 2 ;;
  esac
  local config=$out/loop.config
  [ "$name" != constant ] || config=$out/loop-constant.config
  GPUBENCH=$gpubench "$repo/scripts/sim/run-suite.sh" "$config" "$out/$name" "$@" \
    > "$out/$name.log" 2>&1
}
read -r -a runs <<< "${RUNS:-global l2 shared constant banks}"
status=0
for ((i = 0; i < ${#runs[@]}; i += 2)); do
  pids=()
  for name in "${runs[@]:i:2}"; do
    echo "$(date -u +%H:%M:%S) $name" >&2
    one "$name" &
    pids+=("$!:$name")
  done
  for p in "${pids[@]}"; do
    wait "${p%%:*}" || { status=$?; echo "error: ${p#*:} failed ($status); $out/${p#*:}.log" >&2; }
  done
done
python3 "$repo/scripts/sim/loop.py" "$gpubench" "$real" "$out"
exit "$status"

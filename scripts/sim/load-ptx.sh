#!/usr/bin/env bash
# Loads each PTX file into the simulated device (sim-load-ptx) on a shipped GPGPU-Sim
# configuration and prints one line per file: loaded (with its kernels) or the simulator's
# complaint. scripts/sim/load-ptx.sh [CONFIG] [OUT_DIR] [FILE.ptx ...]   (default: cuda/ptx/*.ptx)
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
config=${1:-SM7_QV100}
out=${2:-$repo/target/sim}
shift $(( $# < 2 ? $# : 2 ))
files=()
for f in "$@"; do files+=("$(realpath "$f")"); done
((${#files[@]})) || files=("$repo"/cuda/ptx/*.ptx)
# shellcheck disable=SC1091
source "$out/env.sh"
run=$out/run/load-ptx-$config
rm -rf "$run"
mkdir -p "$run"
cp "$GPUBENCH_SIM_CONFIGS/$config"/* "$run/"
cd "$run"
for ptx in "${files[@]}"; do
  name=$(basename "$ptx" .ptx)
  "$out/bin/sim-load-ptx" "$ptx" > "$name.log" 2> "$name.err"
  status=$?
  kernels=$(grep -c '^kernel .*: loaded' "$name.log")
  if [ "$status" = 0 ]; then
    echo "$name: loaded, $kernels kernels"
  else
    why=$( (grep -h 'Assertion\|parser error\|syntax error\|error\|gpubench-sim:' "$name.err" "$name.log" |
      grep -v '^GPGPU-Sim PTX: Warning' | head -3) | tr '\n' ' ')
    echo "$name: FAILED (exit $status) after $(grep -c 'instruction assembly for function' "$name.log") functions assembled: $why"
  fi
done

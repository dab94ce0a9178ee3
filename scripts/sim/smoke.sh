#!/usr/bin/env bash
# Runs the simulated device's smoke test (sim/test/chase.c, built by scripts/sim/build.sh) on a
# shipped GPGPU-Sim configuration, in OUT_DIR/run/CONFIG (git-ignored):
#   scripts/sim/smoke.sh [CONFIG] [OUT_DIR] [-- sim-chase arguments]
# CONFIG is a directory name under GPGPU-Sim's configs/tested-cfgs (default SM7_QV100). The
# simulator's own log goes to OUT_DIR/run/CONFIG/gpgpusim.log; the test's lines to stdout.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
config=${1:-SM7_QV100}
out=${2:-$repo/target/sim}
shift $(( $# < 2 ? $# : 2 ))
[ "${1:-}" = "--" ] && shift
# shellcheck disable=SC1091
source "$out/env.sh"
run=$out/run/$config
rm -rf "$run"
mkdir -p "$run"
cp "$GPUBENCH_SIM_CONFIGS/$config"/* "$run/"
cd "$run"
export GPUBENCH_SIM_CONFIG_NAME=$config
status=0
"$out/bin/sim-chase" "$@" > chase.out 2> gpgpusim.err || status=$?
grep -v '^GPGPU-Sim\|^gpgpu_\|^\s' chase.out | grep '^device:\|^chase:\|^fill:' || true
grep 'gpgpu_simulation_rate\|gpgpu_simulation_time' chase.out | sed 's/^/simulator: /' || true
grep 'gpubench-sim' gpgpusim.err || true
mv chase.out gpgpusim.log
echo "exit status $status; simulator log: $run/gpgpusim.log"
exit "$status"

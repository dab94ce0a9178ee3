#!/usr/bin/env bash
# Writes a simulated device's configuration into RUN_DIR (created; must not exist):
#   scripts/sim/config.sh NAME RUN_DIR
# NAME is a shipped GPGPU-Sim configuration (a directory under configs/tested-cfgs, e.g.
# SM7_QV100) or a derived one, sim/configs/NAME.config, whose "# base: SHIPPED" line names the
# shipped directory it is copied from and whose options are appended to its gpgpusim.config
# (the last value of an option wins); NAME may also be the path of such a file outside
# sim/configs/ (the loop's, scripts/sim/loop.sh). Needs GPUBENCH_SIM_CONFIGS (source
# target/sim/env.sh). A derived file's "# drop: OPTION" lines comment that option out of the
# shipped file first: an option the shipped file sets that this GPGPU-Sim no longer knows
# (SM3_KEPLER_TITAN's -smem_latency) stops the simulator at start-up, and appending cannot
# remove it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
name=${1:?usage: scripts/sim/config.sh NAME RUN_DIR}
run=${2:?usage: scripts/sim/config.sh NAME RUN_DIR}
: "${GPUBENCH_SIM_CONFIGS:?source target/sim/env.sh first}"
derived=$repo/sim/configs/$name.config
case $name in *.config) [ -f "$name" ] && derived=$name ;; esac
if [ -f "$derived" ]; then
  base=$(sed -n 's/^# base: *//p' "$derived" | head -1)
  [ -n "$base" ] || { echo "error: $derived has no '# base: SHIPPED' line" >&2; exit 1; }
else
  base=$name
fi
[ -d "$GPUBENCH_SIM_CONFIGS/$base" ] || { echo "error: no $GPUBENCH_SIM_CONFIGS/$base" >&2; exit 1; }
[ ! -e "$run" ] || { echo "error: $run exists" >&2; exit 1; }
mkdir -p "$run"
cp "$GPUBENCH_SIM_CONFIGS/$base"/* "$run/"
if [ -f "$derived" ]; then
  sed -n 's/^# drop: *//p' "$derived" | while read -r option; do
    grep -q -- "^$option[[:space:]]" "$run/gpgpusim.config" ||
      { echo "error: $derived drops $option, which $base's gpgpusim.config does not set" >&2; exit 1; }
    sed -i -- "s|^$option[[:space:]]|# dropped by scripts/sim/config.sh: &|" "$run/gpgpusim.config"
  done
  { echo; echo "# ---- appended by gpubench's scripts/sim/config.sh from sim/configs/$name.config"; cat "$derived"; } >> "$run/gpgpusim.config"
fi

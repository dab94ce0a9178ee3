#!/usr/bin/env bash
# Scores a committed answer key again from its runs, without simulating anything: after a change
# to what scripts/sim/answer_key.py records or checks, or to gpubench's inference or export.
#   scripts/sim/rescore.sh RESULTS_DIR...
# Each RESULTS_DIR (results/sim/CONFIG, as scripts/sim/answer-key.sh wrote it) names its
# configuration in sim.json (or, for a constant-space key, constant.sim.json); the
# configuration is assembled again with scripts/sim/config.sh and must be the one the runs used
# (its sha256 is sim.json's), else the directory is left as it is and the script fails.
# Needs target/sim (scripts/sim/build.sh) for the shipped configurations and gpubench built
# (GPUBENCH overrides the binary).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
gpubench=${GPUBENCH:-${CARGO_TARGET_DIR:-$repo/target}/release/gpubench}
[ -x "$gpubench" ] || { echo "error: no $gpubench (cargo build --release)" >&2; exit 1; }
[ $# -ge 1 ] || { echo "usage: scripts/sim/rescore.sh RESULTS_DIR..." >&2; exit 2; }
# shellcheck disable=SC1091
source "${SIM_OUT:-$repo/target/sim}/env.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
for results in "$@"; do
  meta=$results/sim.json
  [ -f "$meta" ] || meta=$results/constant.sim.json
  [ -f "$meta" ] || { echo "error: $results has no sim.json" >&2; status=1; continue; }
  read -r config sha < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["configuration"], d["gpgpusim_config_sha256"])' "$meta")
  rm -rf "$scratch/run"
  "$repo/scripts/sim/config.sh" "$config" "$scratch/run" >/dev/null
  got=$(sha256sum "$scratch/run/gpgpusim.config" | cut -d' ' -f1)
  if [ "$got" != "$sha" ]; then
    echo "error: $results: $config assembles to another gpgpusim.config than its runs used ($got, not $sha); left as it is" >&2
    status=1
    continue
  fi
  python3 "$repo/scripts/sim/answer_key.py" "$scratch/run/gpgpusim.config" "$results" "$gpubench" >/dev/null
  echo "rescored $results"
done
exit "$status"

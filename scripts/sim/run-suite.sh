#!/usr/bin/env bash
# Runs one gpubench suite on a simulated device and keeps its run directory beside a record of
# how it was made:
#   scripts/sim/run-suite.sh CONFIG RESULTS_DIR SUITE [ARGS...]
# CONFIG is a shipped GPGPU-Sim configuration or a derived one in sim/configs/ (as for
# answer-key.sh); RESULTS_DIR (must not exist) gets gpubench's run directory of `gpubench SUITE
# ARGS... --output RESULTS_DIR` and, beside it, RESULTS_DIR.sim.json: the simulator's commit,
# the configuration's hash and options, the repository's HEAD at the start, the command and
# its exit status. The simulator's own log stays in target/sim/run/. Needs scripts/sim/build.sh's output
# in target/sim (SIM_OUT overrides) and gpubench built (GPUBENCH overrides the binary).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
usage="usage: scripts/sim/run-suite.sh CONFIG RESULTS_DIR SUITE [ARGS...]"
config=${1:?$usage}
results=${2:?$usage}
suite=${3:?$usage}
shift 3
sim=${SIM_OUT:-$repo/target/sim}
gpubench=${GPUBENCH:-${CARGO_TARGET_DIR:-$repo/target}/release/gpubench}
[ -x "$gpubench" ] || { echo "error: no $gpubench (cargo build --release)" >&2; exit 1; }
gpubench=$(cd "$(dirname "$gpubench")" && pwd)/$(basename "$gpubench")
[ ! -e "$results" ] || { echo "error: $results exists" >&2; exit 1; }
mkdir -p "$(dirname "$results")"
results=$(cd "$(dirname "$results")" && pwd)/$(basename "$results")
# shellcheck disable=SC1091
source "$sim/env.sh"
# The results' name too: runs started in the same second (the loop's two at a time) must not
# share a working directory, where GPGPU-Sim writes and reads its files.
run=$sim/run/$suite-$(basename "$config" .config)-$(basename "$results")-$(date -u +%Y%m%dT%H%M%SZ)
"$repo/scripts/sim/config.sh" "$config" "$run"
export GPUBENCH_SIM_CONFIG_NAME=$(basename "$config" .config)
head_at_start=$(git -C "$repo" rev-parse HEAD)
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ] || head_at_start+=-dirty
echo "$(date -u +%H:%M:%S) $config: gpubench $suite $* --output $results" >&2
status=0
# gpgpusim.config is read from the working directory; GPGPU-Sim prints to stdout.
(cd "$run" && exec "$gpubench" "$suite" "$@" --output "$results" > gpubench.log 2> gpubench.err) ||
  status=$?
tail -3 "$run/gpubench.err" >&2
python3 - "$repo/scripts/sim" "$results.sim.json" "$config" "$run/gpgpusim.config" \
  "$(git -C "$sim/gpgpu-sim" rev-parse HEAD)" "$head_at_start" "$status" \
  "gpubench $suite $* --output RESULTS_DIR" <<'PY'
import hashlib, json, sys, datetime
scripts, out, config, path, sim_commit, head, status, command = sys.argv[1:]
sys.path.insert(0, scripts)
from answer_key import options  # the configuration's options, read as answer_key.py reads them
json.dump({
    "simulator": "GPGPU-Sim (accel-sim/gpgpu-sim_distribution) with gpubench's sim/patches and sim/libcuda",
    "gpgpu_sim_commit": sim_commit,
    "configuration": config,
    "gpgpusim_config_sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(),
    # The binary's own commit is the run's metadata.json build.git_commit.
    "repository_head_at_start": head,
    "command": command,
    "exit_status": int(status),
    "written_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    # Every option the configuration sets: the answer key the run is scored against.
    "options": options(path),
}, open(out, "w"), indent=1)
PY
exit "$status"

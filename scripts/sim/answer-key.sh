#!/usr/bin/env bash
# Runs gpubench's cache suite on a simulated device and scores its answers against the
# configuration (issue 50's answer key):
#   scripts/sim/answer-key.sh CONFIG [RESULTS_DIR]
# CONFIG is a shipped GPGPU-Sim configuration or a derived one in sim/configs/ (see
# scripts/sim/config.sh). RESULTS_DIR (default results/sim/CONFIG; must not exist) gets one
# gpubench run directory per space (global: the L1D; l2: ld.global.cg), sim.json (the
# simulator's commit, the configuration's options, the commands) and answer-key.md / .json
# (scripts/sim/answer_key.py); each run directory also gets gpubench's printed lines
# (stdout.txt, stderr-tail.txt) and, where the run failed after its sweep and wrote no
# cache.json, `gpubench analyze cache --json` of its chase.csv (analyze.json). The simulator's
# own logs stay in target/sim/run/.
# Needs scripts/sim/build.sh's output in target/sim and gpubench built (cargo build --release;
# GPUBENCH overrides the binary). The sweeps are bounded for the derived configurations' small
# caches (SWEEP_GLOBAL, SWEEP_L2: gpubench cache arguments).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
config=${1:?usage: scripts/sim/answer-key.sh CONFIG [RESULTS_DIR]}
results=${2:-$repo/results/sim/$config}
sim=${SIM_OUT:-$repo/target/sim}
gpubench=${GPUBENCH:-${CARGO_TARGET_DIR:-$repo/target}/release/gpubench}
[ -x "$gpubench" ] || { echo "error: no $gpubench (cargo build --release)" >&2; exit 1; }
[ ! -e "$results" ] || { echo "error: $results exists" >&2; exit 1; }
mkdir -p "$(dirname "$results")"
results=$(cd "$(dirname "$results")" && pwd)/$(basename "$results")
# shellcheck disable=SC1091
source "$sim/env.sh"
run=$sim/run/answer-key-$config-$(date -u +%Y%m%dT%H%M%SZ)
"$repo/scripts/sim/config.sh" "$config" "$run"
export GPUBENCH_SIM_CONFIG_NAME=$config
# The derived configurations' L1D is 128 KiB and their L2 256 KiB: the global sweep stops at
# 256 KiB (the L1D's rise and the L2 plateau behind it), the L2's at 512 KiB; the global chase
# steps a line (128 B) at a time, a quarter of the default 32 B stride's loads (the fetch
# granularity experiment still reads the sector).
read -r -a global_args <<< "${SWEEP_GLOBAL:---stride 128 --min-bytes 16384 --max-bytes 262144 --fine-points 16}"
read -r -a l2_args <<< "${SWEEP_L2:---min-bytes 65536 --max-bytes 524288 --fine-points 16 --resolution 64}"
# SPACES (default "global l2") picks the spaces to run, e.g. SPACES=global where a configuration's
# L2 was already scored.
read -r -a spaces <<< "${SPACES:-global l2}"
mkdir -p "$results"
head_at_start=$(git -C "$repo" rev-parse HEAD)
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ] || head_at_start+=-dirty
commands=()
pids=()
# The two spaces run side by side, each in its own copy of the configuration: GPGPU-Sim
# writes and removes temporary files (rm -f *info) in its working directory.
for space in "${spaces[@]}"; do
  if [ "$space" = global ]; then args=("${global_args[@]}"); else args=("${l2_args[@]}"); fi
  command=("$gpubench" cache --space "$space" "${args[@]}" --output "$results/$space")
  commands+=("gpubench cache --space $space ${args[*]} --output RESULTS_DIR/$space")
  echo "$(date -u +%H:%M:%S) $space: ${command[*]}" >&2
  mkdir "$run/$space"
  find "$run" -maxdepth 1 -type f -exec cp {} "$run/$space/" \;
  # gpgpusim.config is read from the working directory; GPGPU-Sim prints to stdout.
  (cd "$run/$space" && exec "${command[@]}" > gpubench.log 2> gpubench.err) &
  pids+=($!)
done
status=0
statuses=()
for i in "${!spaces[@]}"; do
  code=0
  wait "${pids[$i]}" || code=$?
  statuses+=("$code")
  [ "$code" = 0 ] || { status=$code; echo "error: ${commands[$i]} failed ($code); logs in $run" >&2; }
done
for space in "${spaces[@]}"; do
  # gpubench's own lines (GPGPU-Sim's share the log) go with the run.
  mkdir -p "$results/$space"
  grep -a '^levels\|^level \|^[0-9] \|^ \{7\}\|^unresolved\|space:\|^L2 part\|^conflict\|^index chain\|^timed loop' \
    "$run/$space/gpubench.log" | grep -v 'GPGPU-Sim\|functional simulation' > "$results/$space/stdout.txt" || true
  tail -3 "$run/$space/gpubench.err" > "$results/$space/stderr-tail.txt"
  # A run that failed after its sweep wrote chase.csv but no cache.json, or in its sweep (the
  # simulator aborted: the points finished so far are in chase-so-far.csv): its levels are read
  # from the saved curve, as `gpubench analyze cache` reads any (answer_key.py says so).
  if [ ! -f "$results/$space/cache.json" ]; then
    for curve in chase.csv chase-so-far.csv; do
      if [ -f "$results/$space/$curve" ]; then
        "$gpubench" analyze cache --json "$results/$space/$curve" > "$results/$space/analyze.json" || true
        break
      fi
    done
  fi
  cat "$results/$space/stdout.txt" >&2
done
simdir=$sim/gpgpu-sim
python3 - "$results/sim.json" "$config" "$run/gpgpusim.config" "$(git -C "$simdir" rev-parse HEAD)" \
  "$head_at_start" "${spaces[*]}" "${statuses[*]}" "${commands[@]}" <<'PY'
import hashlib, json, sys, datetime
out, config, path, sim_commit, head, spaces, statuses, *commands = sys.argv[1:]
text = open(path, "rb").read()
json.dump({
    "simulator": "GPGPU-Sim (accel-sim/gpgpu-sim_distribution) with gpubench's sim/patches and sim/libcuda",
    "gpgpu_sim_commit": sim_commit,
    "configuration": config,
    "gpgpusim_config_sha256": hashlib.sha256(text).hexdigest(),
    # The binary's own commit is each run's metadata.json build.git_commit.
    "repository_head_at_start": head,
    "commands": commands,
    "exit_status": dict(zip(spaces.split(), map(int, statuses.split()))),
    "written_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
}, open(out, "w"), indent=1)
PY
python3 "$repo/scripts/sim/answer_key.py" "$run/gpgpusim.config" "$results" "$gpubench"
exit "$status"

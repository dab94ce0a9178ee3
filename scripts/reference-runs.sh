#!/usr/bin/env bash
# One machine's reference run, in one session on the GPU machine, from binaries built elsewhere
# (scripts/prepare-device.sh puts them under target/device/): what results/<machine>/ holds and
# the README quotes. In order:
#   1. the card as found: nvidia-smi (read only), `gpubench info --json`, the processes on it;
#   2. the GPU tests (gpu-tests.txt);
#   3. `gpubench all --repeat --format html` (every GPU side by side under `--device all` when
#      the machine has more than one), with its wall time; on a several-GPU machine also one
#      GPU's `all` alone, for the fan-out's wall time against it;
#   4. `compare` of the run and its repeat (per GPU); between the GPUs of a node the run
#      writes its own (run/compare.md, the fleet page run/index.html);
#   5. `report` of the run into a fresh directory and a byte check of summary.md against the
#      live run's (a live run and `report` share one path);
#   6. `export` of the run: machine model (json), GPGPU-Sim options (accel-sim), Prometheus;
#   7. the repeat figures only; figures only where large: every file over $KEEP_BYTES (default 256 KiB) that `report`
#      does not need (it reads figures.json where a curve is gone) leaves, and is listed in
#      left-out.txt with its size.
# Writes into $OUT (default ./device-out)/reference and tars it into reference.tar.gz there.
#   usage: scripts/reference-runs.sh [--node]
#   --node: `all --device all` (a several-GPU machine), named node-<n>x<gpu> in the log.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-device-out}
BIN=$(realpath target/device/gpubench)
TESTS=target/device/gpu-tests
KEEP_BYTES=${KEEP_BYTES:-262144}
REF="$OUT/reference"
node=false
[ "${1:-}" = "--node" ] && node=true
if [ -e "$REF" ]; then
  echo "$REF already exists; choose a new \$OUT" >&2
  exit 2
fi
mkdir -p "$REF"
log() { echo "=== $*" | tee -a "$REF/log.txt"; }

log "the card as found (read only), $(date -u +%FT%TZ)"
nvidia-smi >"$REF/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,pstate,ecc.mode.current,persistence_mode,mig.mode.current \
  --format=csv 2>&1 | tee -a "$REF/log.txt"
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv 2>&1 | tee -a "$REF/log.txt"
"$BIN" --version | tee -a "$REF/log.txt"
"$BIN" info --json >"$REF/info.json"

log "GPU tests"
GPUBENCH_BIN=$BIN "$TESTS" --ignored --test-threads=1 >"$REF/gpu-tests.txt" 2>&1
echo "exit $?" >>"$REF/gpu-tests.txt"
tail -4 "$REF/gpu-tests.txt" | tee -a "$REF/log.txt"

device=0
$node && device=all
log "gpubench all --repeat --format html --device $device"
start=$(date +%s%N)
"$BIN" all --repeat --format html --device "$device" --output "$REF/run" >"$REF/all-log.txt" 2>&1
echo "exit $?" >>"$REF/all-log.txt"
end=$(date +%s%N)
echo "all --repeat: wall $(((end - start) / 1000000)) ms (both runs)" | tee -a "$REF/log.txt"
grep -E "suites in|exit" "$REF/all-log.txt" | tee -a "$REF/log.txt"

if $node; then
  log "one GPU's all alone (the fan-out's wall time against it)"
  start=$(date +%s%N)
  "$BIN" all --device 0 --output "$REF/one-gpu" >"$REF/one-gpu-log.txt" 2>&1
  echo "exit $?" >>"$REF/one-gpu-log.txt"
  end=$(date +%s%N)
  echo "one GPU's all: wall $(((end - start) / 1000000)) ms" | tee -a "$REF/log.txt"
  # The GPUs of the node side by side: `all --device all` wrote run/compare.md and the fleet
  # page run/index.html itself (with links relative to it); `compare` again would only copy them.
  log "compare: the GPUs of the node (run/compare.md)"
  grep -m1 -iE "flag" "$REF/run/compare.md" | tee -a "$REF/log.txt"
  for gpu in "$REF"/run/gpu*/; do
    name=$(basename "$gpu")
    [ -d "$gpu/repeat" ] && "$BIN" compare "$gpu" "$gpu/repeat" >"$REF/compare-$name-repeat.md" 2>&1
  done
else
  log "compare: the run and its repeat"
  "$BIN" compare "$REF/run" "$REF/run/repeat" >"$REF/compare-run-repeat.md" 2>&1
  grep -m1 -iE "flag" "$REF/compare-run-repeat.md" | tee -a "$REF/log.txt"

  log "report of the run: the same summary as the live run"
  "$BIN" report "$REF/run" --output "$OUT/report-check" >/dev/null 2>&1
  if cmp -s "$REF/run/summary.md" "$OUT/report-check/summary.md"; then
    echo "summary.md byte-identical" | tee -a "$REF/log.txt"
  else
    echo "summary.md DIFFERS between the live run and report" | tee -a "$REF/log.txt"
  fi
  rm -rf "$OUT/report-check"

  log "export"
  "$BIN" export "$REF/run" --output "$REF/run/machine-model.json" 2>&1 | tail -1
  "$BIN" export "$REF/run" --format accel-sim --output "$REF/run/gpgpusim.config" 2>&1 | tail -1
  "$BIN" export "$REF/run" --format prometheus --output "$REF/run/gpubench.prom" 2>&1 | tail -1
fi

log "the repeat figures only (each suite's figures.json and metadata.json, the summaries)"
find "$REF"/run/repeat "$REF"/run/gpu*/repeat -mindepth 1 -type f 2>/dev/null |
  grep -vE '/(figures|metadata|all|info)\.json$|/summary\.(md|tex|json)$' | xargs -r rm -f
find "$REF"/run/repeat "$REF"/run/gpu*/repeat -type d -empty -delete 2>/dev/null

log "figures only where large (over $KEEP_BYTES bytes; report reads figures.json instead)"
find "$REF" -type f -size +"${KEEP_BYTES}"c \
  ! -name figures.json ! -name metadata.json ! -name 'summary.*' ! -name '*.html' \
  ! -name '*.png' ! -name '*.json' ! -name '*.prom' ! -name '*.txt' ! -name '*.md' -printf '%s %P\n' |
  sort -rn >"$REF/left-out.txt"
while read -r _ path; do rm -f "$REF/$path"; done <"$REF/left-out.txt"
wc -l <"$REF/left-out.txt" | sed 's/$/ files left out (left-out.txt)/' | tee -a "$REF/log.txt"
du -sh "$REF" | tee -a "$REF/log.txt"

tar czf "$OUT/reference.tar.gz" -C "$OUT" reference
echo "written: $OUT/reference.tar.gz"

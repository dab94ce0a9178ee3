#!/usr/bin/env bash
# A fleet through Slurm: one array task per node runs `gpubench all --quick --device all` into
# DIR/<host>-<task>; a gather step then compares every GPU of every node in fleet mode.
#
#   jid=$(sbatch --parsable --array=0-15 scripts/slurm-fleet.sh DIR)     # 16 nodes
#   sbatch --dependency=afterany:$jid scripts/slurm-fleet.sh --gather DIR
#
# DIR/fleet.md (the odd GPUs ranked first), fleet.csv and fleet.json are the result.
# GPUBENCH names the binary (default: gpubench on PATH). Set the #SBATCH lines for your site.
#SBATCH --job-name=gpubench-fleet
#SBATCH --nodes=1
#SBATCH --exclusive
#SBATCH --time=00:30:00
set -euo pipefail
gpubench=${GPUBENCH:-gpubench}

if [[ ${1:-} == --gather ]]; then
  dir=${2:?usage: slurm-fleet.sh --gather DIR}
  nodes=()
  for node in "$dir"/*/; do
    [[ -f $node/devices.json || -f $node/summary.json ]] && nodes+=("${node%/}")
  done
  if (( ${#nodes[@]} == 0 )); then
    echo "slurm-fleet.sh: no node runs under $dir" >&2
    exit 1
  fi
  for format in markdown csv json html; do
    ext=${format/markdown/md}
    "$gpubench" compare --fleet --format "$format" "${nodes[@]}" > "$dir/fleet.$ext"
  done
  echo "compared ${#nodes[@]} node runs: $dir/fleet.md, the page $dir/fleet.html"
  exit 0
fi

dir=${1:?usage: sbatch --array=0-N slurm-fleet.sh DIR}
mkdir -p "$dir"
exec "$gpubench" all --quick --device all \
  --output "$dir/$(hostname -s)-${SLURM_ARRAY_JOB_ID:-0}-${SLURM_ARRAY_TASK_ID:-0}"

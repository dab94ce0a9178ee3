#!/usr/bin/env bash
# Wheels for running reframe/gpubench_check.py on a GPU host with no network: ReFrame 4.10.4 and
# its dependencies for the host's Python, without polars (ReFrame imports it only for its
# results database, which the check leaves off). 8 MB instead of 57.
#   usage: scripts/reframe-wheels.sh [PYTHON_VERSION] [DIR]   (defaults: 3.12 target/rf-wheels)
#   on the GPU host:
#     pip install --no-index --no-deps --target /tmp/rfenv DIR/*.whl
#     PYTHONPATH=/tmp/rfenv python3 /tmp/rfenv/bin/reframe -C reframe/settings.py \
#       -c reframe/gpubench_check.py -S gpubench=$PWD/target/device/gpubench -r
set -euo pipefail
PY=${1:-3.12}
DIR=${2:-target/rf-wheels}
ABI=cp${PY/./}
rm -rf "$DIR"
# pip reads the `extra != 'no-analytics'` marker on polars as true whatever the extras, so the
# polars wheels are downloaded and then removed.
pip download -q "reframe-hpc==4.10.4" --only-binary=:all: --python-version "$PY" \
  --implementation cp --abi "$ABI" --platform manylinux2014_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 --platform any -d "$DIR"
rm -f "$DIR"/polars*
du -sh "$DIR"

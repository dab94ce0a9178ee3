#!/usr/bin/env bash
# Writes cuda/ptx/ again: the PTX that build.rs compiled from today's cuda/ sources with the
# nvcc it found, and PROVENANCE (the sources' digest and that nvcc's version). Run it after
# changing a kernel, where an nvcc is (build.rs installs the pinned one from PyPI otherwise),
# and commit cuda/ptx/ with the change; `cargo test` fails until the two agree.
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir=$(cargo build --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "build-script-executed" and "gpubench" in m["package_id"]:
        print(m["out_dir"])
' | tail -1)
if ! grep -q 'PTX_ORIGIN: &str = "nvcc"' "$out_dir/kernels.rs"; then
    echo "build.rs took the committed PTX (no nvcc found); set NVCC or CUDA_HOME and run again" >&2
    exit 1
fi
mkdir -p cuda/ptx
rm -f cuda/ptx/*.ptx
cp "$out_dir"/*.ptx cuda/ptx/
cp "$out_dir/PROVENANCE" cuda/ptx/PROVENANCE
echo "cuda/ptx/ written from $out_dir ($(ls cuda/ptx/*.ptx | wc -l) modules)"

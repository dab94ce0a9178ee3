#!/usr/bin/env bash
# Builds what scripts/device-run.sh needs into target/device/ (git-ignored, so the device
# tool can carry it): the release binary and the ignored GPU test binary.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
tests=$(cargo test --release --test gpu --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "gpu" and m.get("executable"):
        print(m["executable"])')
rm -rf target/device && mkdir -p target/device
cp target/release/gpubench target/device/gpubench
cp "$tests" target/device/gpu-tests
ls -la target/device

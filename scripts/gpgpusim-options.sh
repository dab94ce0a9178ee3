#!/usr/bin/env bash
# Lists every option a GPGPU-Sim checkout registers (option_parser_register), with its type and
# the file that registers it, as tests/fixtures/gpgpusim-options.tsv holds them:
#   scripts/gpgpusim-options.sh PATH/TO/gpgpu-sim_distribution > tests/fixtures/gpgpusim-options.tsv
set -euo pipefail
src=${1:?pass a gpgpu-sim_distribution checkout}
commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)
echo "# Every option GPGPU-Sim registers (option_parser_register) with its type and file, from"
echo "# accel-sim/gpgpu-sim_distribution at $commit;"
echo "# written by scripts/gpgpusim-options.sh. Facts about the simulator's interface, for tests/export.rs."
cd "$src"
python3 - <<'PY'
import pathlib, re
options = {}
for path in sorted(pathlib.Path("src").rglob("*")):
    if path.suffix not in (".cc", ".cpp", ".h"):
        continue
    text = path.read_text(errors="replace")
    for m in re.finditer(r'option_parser_register\s*\(\s*\w+\s*,\s*"([^"]+)"\s*,\s*(OPT_\w+)', text):
        options[m.group(1)] = (m.group(2), str(path))
for name, (kind, path) in sorted(options.items()):
    print(f"{name}\t{kind}\t{path}")
PY

#!/usr/bin/env bash
# What a refusal costs (issue #71 item 5: "every refusal in seconds and under 1 GB"): the
# hostile files the issue timed, each made from a copy of the committed H100 run's cache-global
# suite (or the whole run), handed to the command the issue ran; prints the command's exit
# code, its wall seconds and its largest resident memory (GNU time's %M), and the first line it
# printed. The speed goal is met here, never in a timed test. No GPU needed.
#   usage: scripts/bench-hostile.sh [BIN]    (default: target/release/gpubench)
set -euo pipefail
BIN=$(realpath "${1:-target/release/gpubench}")
RUN=results/h100/all
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (/usr/bin/time)" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

suite() { # a copy of the cache-global suite at $1
  cp -r "$RUN/cache-global" "$1"
}

measure() { # measure NAME COMMAND...: one row of the table
  local name=$1; shift
  set +e
  /usr/bin/time -f '%e %M' -o "$scratch/time" "$@" >"$scratch/out" 2>"$scratch/err"
  local code=$?
  set -e
  seconds=$(tail -1 "$scratch/time" | cut -d' ' -f1)
  kib=$(tail -1 "$scratch/time" | cut -d' ' -f2)
  printf '| %s | %s | %s | %d | %s |\n' "$name" "$code" "$seconds" "$((kib / 1024))" \
    "$(grep -v '^\s*$' "$scratch/err" | head -1 | cut -c1-110)"
}

echo "| case | exit | seconds | max MiB | first line |"
echo "|---|---|---|---|---|"

# 1. chase.csv.gz of one row repeated: ~900 MB unpacked in 2 MB.
suite "$scratch/repeated"
rm "$scratch/repeated/chase.csv"
python3 - "$RUN/cache-global/chase.csv" "$scratch/repeated/chase.csv.gz" <<'EOF'
import gzip, sys
lines = open(sys.argv[1]).readlines()
with gzip.open(sys.argv[2], "wb", compresslevel=9) as out:
    out.write(lines[0].encode())
    block = (lines[1] * 100000).encode()
    for _ in range(900_000_000 // len(block)):
        out.write(block)
EOF
measure "one row repeated (2 MB .gz): analyze cache" "$BIN" analyze cache "$scratch/repeated/chase.csv.gz"
measure "one row repeated (2 MB .gz): report" "$BIN" report "$scratch/repeated" --output "$scratch/r1"

# 2. A 1 GB valid CSV (distinct rows) for analyze cache.
python3 - "$scratch/big.csv" <<'EOF'
import sys
with open(sys.argv[1], "w") as out:
    out.write("footprint_bytes,stride_bytes,cycles\n")
    row, n = 0, 0
    while n < 1_000_000_000:
        row += 1
        line = f"{row * 8},8,{30 + (row % 7)}.5\n"
        out.write(line)
        n += len(line)
EOF
measure "1 GB valid CSV: analyze cache" "$BIN" analyze cache "$scratch/big.csv"

# 3. A 10-million-row curve (~210 MB) for analyze cache.
head -n 10000001 "$scratch/big.csv" >"$scratch/long.csv" || true
rm "$scratch/big.csv"
measure "10-million-row curve: analyze cache" "$BIN" analyze cache "$scratch/long.csv"
rm "$scratch/long.csv"

# 4. Five unused 1 MB .json.gz files (each ~1 GB of spaces unpacked) beside a suite.
suite "$scratch/unused"
for i in 1 2 3 4 5; do
  python3 - "$scratch/unused/unused-$i.json.gz" <<'EOF'
import gzip, sys
with gzip.open(sys.argv[1], "wb", compresslevel=9) as out:
    out.write(b'{"a": 1')
    block = b" " * (1 << 24)
    for _ in range(64):
        out.write(block)
    out.write(b"}")
EOF
done
measure "five unused 1 MB .json.gz: report" "$BIN" report "$scratch/unused" --output "$scratch/r2"

# 5. A 1 MB device name in metadata.json.
suite "$scratch/name"
python3 - "$scratch/name/metadata.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
m["device"]["name"] = "H" * (1 << 20)
json.dump(m, open(sys.argv[1], "w"))
EOF
measure "1 MB device name: report" "$BIN" report "$scratch/name" --output "$scratch/r3"

# 6. A 100 MB figure text in figures.json.
suite "$scratch/text"
python3 - "$scratch/text/figures.json" <<'EOF'
import json, sys
f = json.load(open(sys.argv[1]))
f["figures"][0]["uncertainty"] = "x" * 100_000_000
json.dump(f, open(sys.argv[1], "w"))
EOF
measure "100 MB figure text: report" "$BIN" report "$scratch/text" --output "$scratch/r4"

# For scale: the committed suite, unharmed.
suite "$scratch/plain"
measure "the committed suite (no damage): report" "$BIN" report "$scratch/plain" --output "$scratch/r5"

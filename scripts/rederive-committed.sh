#!/usr/bin/env bash
# After a change to how figures are derived from a run's files (a ceiling, a reason's words),
# re-derives what is committed from those files, as the tests that hold them byte for byte
# make them: every committed summary (`report DIR`), the committed machine models and
# simulator configurations (`export`), the H100 run's page, and the H100 run's figures.json
# rows that the derivation now marks unresolved. Prints each file it rewrote.
#   usage: scripts/rederive-committed.sh   (after `cargo build`)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/debug/gpubench}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
find results -name summary.md -printf '%h\n' | sort | while read -r run; do
  rm -rf "$scratch/r"
  "$BIN" report "$run" --output "$scratch/r" >/dev/null
  for table in summary.md summary.tex summary.json; do
    if ! cmp -s "$scratch/r/$table" "$run/$table"; then
      cp "$scratch/r/$table" "$run/$table"
      echo "rewrote $run/$table"
    fi
  done
done
export_one() {
  local run=$1 repeat=${2:-}
  local args=()
  [ -n "$repeat" ] && args=(--repeat-of "$repeat")
  "$BIN" export "$run" --format json "${args[@]}" >"$scratch/m.json"
  "$BIN" export "$run" --format accel-sim "${args[@]}" >"$scratch/g.config"
  cmp -s "$scratch/m.json" "$run/machine-model.json" || { cp "$scratch/m.json" "$run/machine-model.json"; echo "rewrote $run/machine-model.json"; }
  cmp -s "$scratch/g.config" "$run/gpgpusim.config" || { cp "$scratch/g.config" "$run/gpgpusim.config"; echo "rewrote $run/gpgpusim.config"; }
}
export_one results/h100/all results/h100/all-repeat
export_one results/h200/all
export_one results/h200x2/gpu0-f64c03ac
export_one results/h200x2/gpu1-954a65b1
export_one results/h200/capacity-99dbf92/run
# The H100 run's page (kept as its page, tables and the data it links), made in place: its
# links stay inside its own directory.
page=results/h100/all/report-html
mv "$page" "$scratch/old-page"
"$BIN" report results/h100/all --format html --output "$page" >/dev/null
find "$page" -mindepth 1 -maxdepth 1 ! -name index.html ! -name tables.md ! -name tables.tex ! -name data -exec rm -rf {} +
for file in index.html tables.md tables.tex; do
  cmp -s "$page/$file" "$scratch/old-page/$file" || echo "rewrote $page/$file"
done
# The H100 run confirmed by its committed repeat, and the two compared (as made first: from
# copies under /tmp/r, whose paths its header names).
"$BIN" report results/h100/all --repeat-of results/h100/all-repeat --output "$scratch/confirmed" >/dev/null 2>&1
cmp -s "$scratch/confirmed/summary.md" results/h100/all-repeat/summary-confirmed.md || {
  cp "$scratch/confirmed/summary.md" results/h100/all-repeat/summary-confirmed.md
  echo "rewrote results/h100/all-repeat/summary-confirmed.md"
}
if [ ! -e /tmp/r ]; then
  mkdir -p /tmp/r
  cp -r results/h100/all /tmp/r/all
  cp -r results/h100/all-repeat /tmp/r/all-repeat
  "$BIN" compare /tmp/r/all /tmp/r/all-repeat >"$scratch/compare.md"
  rm -rf /tmp/r
  cmp -s "$scratch/compare.md" results/h100/all-repeat/compare.md || {
    cp "$scratch/compare.md" results/h100/all-repeat/compare.md
    echo "rewrote results/h100/all-repeat/compare.md"
  }
else
  echo "left results/h100/all-repeat/compare.md: /tmp/r exists" >&2
fi
# figures.json of the H100 run: the rows the summary now marks unresolved for a condition of
# the run take its words. (An inference's own standing is left out: the file is of format 2,
# which said it in words only, and reading it back gives it again.)
python3 - <<'PY'
import json, os
run = "results/h100/all"
summary = json.load(open(os.path.join(run, "summary.json")))
inferred = {"low-confidence", "uncalibrated", "not-identifiable", "did-not-repeat"}
for f in summary["figures"]:
    if (f.get("unresolved") or {}).get("reason") in inferred:
        del f["unresolved"]
derived = {(f["source"].split("/")[0], f["section"], f["quantity"]): f for f in summary["figures"]}
for suite in sorted(os.listdir(run)):
    path = os.path.join(run, suite, "figures.json")
    if not os.path.isfile(path):
        continue
    saved = json.load(open(path))
    changed = False
    for figure in saved["figures"]:
        now = derived.get((suite, figure["section"], figure["quantity"]))
        if now and now.get("unresolved") != figure.get("unresolved"):
            figure["uncertainty"] = now["uncertainty"]
            figure["unresolved"] = now.get("unresolved")
            if figure["unresolved"] is None:
                del figure["unresolved"]
            changed = True
    if changed:
        open(path, "w").write(json.dumps(saved, indent=2, ensure_ascii=False) + "\n")
        print("rewrote", path)
PY

#!/usr/bin/env bash
# gpubench's bandwidth ceilings beside the public kernels people already trust, in one session
# on one GPU, one after the other: gpu-benches' gpu-l2-cache (L2 read, and DRAM read past the
# L2) and gpu-stream (DRAM write, read and copy). Their code never enters this repository:
# pass the path of a gpu-benches checkout you fetched (git clone
# https://github.com/te42kyfo/gpu-benches); it is built here for the GPU at hand with its
# metric hooks left out (an empty initMeasureMetric, which is all gpu-l2-cache calls).
#
#   scripts/peers.sh GPUBENCH_BINARY GPU_BENCHES_DIR OUTPUT_DIR
#
# Writes OUTPUT_DIR/bandwidth and, on a GPU with the TMA (compute capability 9.0 on), OUTPUT_DIR/tma
# (gpubench's runs), OUTPUT_DIR/peers/*.txt (the peers' own output),
# OUTPUT_DIR/peers.md (the table of ratios) and OUTPUT_DIR/peers.json. Needs nvcc and python3.
# Figures compared: each side's best at the pattern named in the table; gpu-benches' figures
# are its own (minimum time over 11 runs for gpu-l2-cache, its printed rate for gpu-stream).
# MT4G's cache, latency and bandwidth figures are set beside gpubench's by scripts/peers-mt4g.sh
# (a session of its own: MT4G takes over ten minutes).
set -euo pipefail
if [ $# -ne 3 ]; then
    echo "usage: $0 GPUBENCH_BINARY GPU_BENCHES_DIR OUTPUT_DIR (a new directory)" >&2
    exit 2
fi
gpubench=$1 benches=$2 out=$3
if [ -e "$out" ]; then
    echo "$out already exists; choose a new output directory" >&2
    exit 2
fi
for f in gpu-l2-cache/main.cu gpu-stream/main.cu; do
    if [ ! -f "$benches/$f" ]; then
        echo "$benches has no $f; pass the path of a gpu-benches checkout" >&2
        exit 2
    fi
done
mkdir -p "$out/peers" "$out/build"
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
shim="$out/build/no-metrics.h"
cat >"$shim" <<'EOF'
#define GPU_MEASURE_METRICS_H_
inline void initMeasureMetric() {}
EOF
(cd "$benches/gpu-l2-cache" && nvcc -std=c++17 -O3 -arch="sm_$arch" -include "$(realpath "$shim")" \
    -o "$(realpath "$out/build")/gpu-l2-cache" main.cu)
# Our patch, applied at run time to a copy (the checkout is not modified): gpu-l2-cache with
# 128 KiB per block instead of 512 KiB (N = 16 for 64), so that at data sets of more than
# 2 x SMs x 128 KiB the regions outnumber the resident 1024-thread blocks and no two blocks
# resident together read one region: its private-line figure. At 9-23 MB its own 512 KiB
# regions are 18-46, so 6-15 of an H200's 264 resident blocks read each region at once.
mkdir -p "$out/build/private-src"
l2_sources=$(realpath "$benches/gpu-l2-cache") shim_path=$(realpath "$shim")
build_path=$(realpath "$out/build")
sed 's/measure<64>(i);/measure<16>(i);/' "$benches/gpu-l2-cache/main.cu" \
    >"$out/build/private-src/main.cu"
if [ "$(grep -c 'measure<16>(i);' "$out/build/private-src/main.cu")" -eq 0 ]; then
    echo "gpu-l2-cache/main.cu has no 'measure<64>(i);' to patch; this script needs updating" >&2
    exit 2
fi
(cd "$out/build/private-src" && nvcc -std=c++17 -O3 -arch="sm_$arch" \
    -I "$l2_sources" -include "$shim_path" -o "$build_path/gpu-l2-cache-private" main.cu)
(cd "$benches/gpu-stream" && nvcc -std=c++17 -O3 -arch="sm_$arch" \
    -o "$(realpath "$out/build")/gpu-stream" main.cu)
# The checkout's commit (its own .git only, never a repository it happens to sit in), else
# what a .commit file beside its sources says.
if [ -e "$benches/.git" ]; then
    commit=$(git -C "$benches" rev-parse HEAD)
else
    commit=$(cat "$benches/.commit" 2>/dev/null || echo unknown)
fi

"$gpubench" bandwidth --output "$out/bandwidth" >"$out/peers/gpubench.txt" 2>&1
# The L2 read by bulk copies, where the GPU has the TMA.
if [ "$arch" -ge 90 ]; then
    "$gpubench" tma --output "$out/tma" >"$out/peers/gpubench-tma.txt" 2>&1
fi
"$out/build/gpu-l2-cache" >"$out/peers/gpu-l2-cache.txt" 2>&1
"$out/build/gpu-l2-cache-private" >"$out/peers/gpu-l2-cache-private.txt" 2>&1
"$out/build/gpu-stream" >"$out/peers/gpu-stream.txt" 2>&1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv >"$out/peers/gpu.csv"

python3 - "$out" "$commit" "$*" <<'EOF'
import csv, json, os, re, sys
out, commit, command = sys.argv[1], sys.argv[2], sys.argv[3]
run = json.load(open(f"{out}/bandwidth/bandwidth.json"))
ours = {(l["level"], l["operation"]): l for l in run["levels"]}
# The tma suite's re-timed fastest pattern of each kind of line, as the bandwidth suite's levels.
bulk = f"{out}/tma/tma-l2-read.csv"
if os.path.exists(bulk):
    for r in csv.DictReader(open(bulk)):
        if r["role"] == "figure" and r["gb_per_s"]:
            ours[("tma", r["lines"])] = {
                "median_bytes_per_second": float(r["gb_per_s"]) * 1e9,
                "threads": 32, "blocks_per_sm": int(r["blocks_per_sm"]),
                "footprint_bytes": int(r["footprint_bytes"]),
                "pattern": f"{int(r['slice_bytes']) >> 10} KiB copies, {r['stages']} in flight per block, {r['blocks_per_sm']} per SM"}

# The copy engines' DRAM copy (cuMemcpyDtoD, no kernel), where the run measured it.
engines = (run.get("copy_engines") or {}).get("Ok")
if engines and engines["mismatched_words"] == 0:
    ours[("dram", "copy engines")] = {
        "median_bytes_per_second": engines["median_bytes_per_second"],
        "threads": None, "blocks_per_sm": None, "footprint_bytes": 2 * engines["array_bytes"]}

# The DRAM copy by bulk copies through shared memory (the tma suite), where the run made it.
bulk_copy = f"{out}/tma/tma-dram-copy.csv"
if os.path.exists(bulk_copy):
    for r in csv.DictReader(open(bulk_copy)):
        if r["role"] == "figure" and r["gb_per_s"] and r["mismatched_words"] == "0":
            ours[("dram", "bulk copies")] = {
                "median_bytes_per_second": float(r["gb_per_s"]) * 1e9,
                "threads": 32, "blocks_per_sm": int(r["blocks_per_sm"]),
                "footprint_bytes": 2 * int(r["array_bytes"]),
                "pattern": f"{int(r['chunk_bytes']) >> 10} KiB chunks{' by ticket' if r.get('chunk_order') == 'ticket' else ''}, {r['stages']} buffers per block, {r['blocks_per_sm']} per SM"}

def tb(bytes_per_second):
    return bytes_per_second / 1e12

# gpu-l2-cache: "<block kB> kB <data set kB> kB <ms>ms <spread>% <GB/s> GB/s ..."; each line
# (data set bytes, regions, TB/s).
def l2_lines(name):
    lines = []
    for line in open(f"{out}/peers/{name}.txt"):
        m = re.match(r"\s*(\d+) kB\s+(\d+) kB\s+\S+\s+\S+\s+([\d.]+) GB/s", line)
        if m:
            block, data = int(m.group(1)), int(m.group(2))
            lines.append((data * 1024, data // block, float(m.group(3)) / 1e3))
    return lines
l2 = l2_lines("gpu-l2-cache")
in_l2 = [tb for size, _, tb in l2 if 9e6 <= size <= 23.6e6]
past_l2 = max(l2)[2] if l2 else None
# Blocks of 1024 threads resident at once: 2 per SM where an SM holds 2048 threads (every GPU
# since Volta but Turing, which holds 1: there the bound only asks for more regions).
resident = 2 * run["multiprocessors"]
readers = [resident / regions for size, regions, _ in l2 if 9e6 <= size <= 23.6e6]
private = [tb for _, regions, tb in l2_lines("gpu-l2-cache-private") if regions >= resident]
# gpu-stream: "<block> <threads> <occ> % | GB/s: init read scale triad 3pt 5pt"
stream = {"init": [], "read": [], "scale": []}
for line in open(f"{out}/peers/gpu-stream.txt"):
    m = re.search(r"GB/s:\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", line)
    if m:
        for key, value in zip(("init", "read", "scale"), m.groups()):
            stream[key].append(float(value) / 1e3)

rows = []
def row(ceiling, our_key, our_pattern, peer, peer_pattern):
    level = ours.get(our_key)
    value = tb(level["median_bytes_per_second"]) if level else None
    ratio = value / peer if value and peer else None
    rows.append({"ceiling": ceiling, "gpubench_tb_per_s": value, "gpubench_pattern": our_pattern,
                 "peer_tb_per_s": peer, "peer_pattern": peer_pattern, "ratio": ratio,
                 "gpubench_threads": level and level["threads"],
                 "gpubench_blocks_per_sm": level and level["blocks_per_sm"],
                 "gpubench_footprint_bytes": level and level["footprint_bytes"]})

# Like for like: a ratio only where both sides read the same kind of line.
peer_private = max(private) if private else None
peer_private_pattern = (f"gpu-l2-cache with 128 KiB regions (our run-time patch): best where the "
                        f"regions are at least the {resident} resident blocks, so a line is read by one block at a time")
order = (ours.get(("l2", "strong read")) or {}).get("slice_order")
row("L2 read, private lines", ("l2", "strong read"),
    "bandwidth `l2 strong read`: each line one block at a time, .cg" +
    ("; far more blocks than are resident, each reading one slice" if order == "stream" else ""),
    peer_private, peer_private_pattern)
level = ours.get(("tma", "private"))
if level:
    row("L2 read, private lines, TMA bulk copies", ("tma", "private"),
        f"tma `L2 read by bulk copies`: each line one block per pass, {level['pattern']}",
        peer_private, peer_private_pattern)
# Rows with no like peer, or no gpubench kernel of the peer's pattern: no ratio.
row("L2 read, gpu-l2-cache's own pattern", None, "no kernel of its pattern",
    max(in_l2) if in_l2 else None,
    "gpu-l2-cache as published: best at 9-23 MB data sets, where "
    + (f"{min(readers):.0f}-{max(readers):.0f}" if readers else "several")
    + " resident blocks read each 512 KiB region at once")
row("L2 read, lines many SMs read at once", ("l2", "shared-line read"),
    "bandwidth `l2 shared-line read`: every resident block reads a 512 KiB chunk with many others, .cg",
    None, "no peer kernel of this pattern")
level = ours.get(("tma", "shared"))
if level:
    row("L2 read, lines every SM reads, TMA bulk copies", ("tma", "shared"),
        f"tma `L2 read by bulk copies`: lines every SM reads, {level['pattern']}",
        None, "no peer kernel of this pattern")
def dram(operation):
    # How the run's DRAM kernels handed out their slices (runs before 2026-11-25: fixed).
    order = (ours.get(("dram", operation)) or {}).get("slice_order")
    return f"bandwidth `dram {operation}`" + (": slices taken in order by ticket" if order == "ticket" else "")

row("DRAM read", ("dram", "read"), dram("read"),
    max([past_l2] + stream["read"]) if stream["read"] else past_l2,
    "best of gpu-l2-cache's largest data set and gpu-stream read")
row("DRAM write", ("dram", "write"), dram("write"),
    max(stream["init"]) if stream["init"] else None, "gpu-stream init, best block size")
row("DRAM copy (read + write bytes)", ("dram", "copy"), dram("copy") + ", SM kernel",
    max(stream["scale"]) if stream["scale"] else None, "gpu-stream scale, best block size")
if ("dram", "bulk copies") in ours:
    b = ours[("dram", "bulk copies")]
    row("DRAM copy (read + write bytes), TMA bulk copies", ("dram", "bulk copies"),
        f"tma `DRAM copy by bulk copies`: SM kernel, cp.async.bulk through shared memory, {b['pattern']}",
        max(stream["scale"]) if stream["scale"] else None, "gpu-stream scale, best block size")
if ("dram", "copy engines") in ours:
    e = ours[("dram", "copy engines")]
    row("DRAM copy (read + write bytes), copy engines", ("dram", "copy engines"),
        f"bandwidth `dram copy by the copy engines`: cuMemcpyDtoD of {e['footprint_bytes'] >> 21} MiB arrays, no kernel",
        max(stream["scale"]) if stream["scale"] else None, "gpu-stream scale, best block size")

peak = tb(run["dram_peak_bytes_per_second"])
gpu = open(f"{out}/peers/gpu.csv").read().strip().splitlines()[-1]
with open(f"{out}/peers.md", "w") as md:
    md.write(f"# gpubench beside gpu-benches\n\nGPU: {gpu}\n\n")
    md.write(f"gpu-benches commit {commit}; DRAM theoretical peak {peak:.2f} TB/s; "
             f"gpubench's figures are medians over its repeats at the winner of its occupancy search.\n\n")
    md.write("| ceiling | gpubench | pattern | best peer | peer pattern | ratio |\n|---|---|---|---|---|---|\n")
    for r in rows:
        f = lambda v: "-" if v is None else f"{v:.2f} TB/s"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3f}"
        md.write(f"| {r['ceiling']} | {f(r['gpubench_tb_per_s'])} | {r['gpubench_pattern']} | "
                 f"{f(r['peer_tb_per_s'])} | {r['peer_pattern']} | {ratio} |\n")
    for key, mover in ((("dram", "copy"), "the bandwidth suite's SM kernel"),
                       (("dram", "bulk copies"), "TMA bulk copies (an SM kernel)"),
                       (("dram", "copy engines"), "the copy engines")):
        copy = ours.get(key)
        if copy:
            md.write(f"\nDRAM copy by {mover} is {100 * tb(copy['median_bytes_per_second']) / peak:.1f} % of the theoretical peak.\n")
    md.write(f"\nCommand: scripts/peers.sh {command}\n")
json.dump({"gpu": gpu, "gpu_benches_commit": commit, "dram_peak_tb_per_s": peak, "rows": rows},
          open(f"{out}/peers.json", "w"), indent=2)
print(open(f"{out}/peers.md").read())
EOF
rm -rf "$out/build"

#!/usr/bin/env bash
# gpubench's cache, latency and bandwidth figures beside MT4G's (caps-tum/mt4g, "Memory Topology
# 4 GPUs"), in one session on one GPU, one after the other. MT4G's code never enters this
# repository: pass the path of a checkout you fetched (git clone https://github.com/caps-tum/mt4g)
# and of a directory holding its two header-only dependencies, nlohmann/json.hpp (nlohmann/json's
# single_include) and cxxopts.hpp (jarro2783/cxxopts's include).
#
#   scripts/peers-mt4g.sh GPUBENCH_BINARY MT4G_DIR DEPS_DIR OUTPUT_DIR [SECONDS_PER_GROUP]
#
# MT4G is HIP code built by hipcc; with no ROCm at hand it is built here by nvcc alone, through
# scripts/peers/hip/ (the HIP runtime names it calls, mapped onto CUDA's, as hipcc's NVIDIA
# platform maps them). Its full run takes over ten minutes on an H100, so each of its groups (l1,
# l2, constant, readonly, texture, shared, memory) runs in a process of its own under a time limit
# (default 420 s: the l2 group takes about 290 s on an H100); a group that does not finish says
# so in the table, with no figure.
#
# Writes OUTPUT_DIR/gpubench (gpubench's cache spaces, shared memory and bandwidth suites, one
# `all --only` run), OUTPUT_DIR/mt4g/GROUP.json and GROUP.txt (MT4G's own output),
# OUTPUT_DIR/mt4g/latency-kernels.sass (the SASS of MT4G's latency kernels, as built here),
# OUTPUT_DIR/mt4g.md (the table, quantity by quantity) and OUTPUT_DIR/mt4g.json. Needs nvcc and
# python3.
set -euo pipefail
if [ $# -lt 4 ] || [ $# -gt 5 ]; then
    echo "usage: $0 GPUBENCH_BINARY MT4G_DIR DEPS_DIR OUTPUT_DIR (a new directory) [SECONDS_PER_GROUP]" >&2
    exit 2
fi
gpubench=$1 mt4g=$2 deps=$3 out=$4 limit=${5:-420}
for tool in nvcc cuobjdump nvidia-smi python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "$tool is not on PATH; run this on a machine with the GPU, the CUDA toolkit and python3" >&2
        exit 2
    fi
done
if [ -e "$out" ]; then
    echo "$out already exists; choose a new output directory" >&2
    exit 2
fi
if [ ! -f "$mt4g/src/main.cpp" ] || [ ! -d "$mt4g/include/benchmarks" ]; then
    echo "$mt4g has no src/main.cpp and include/benchmarks; pass the path of an MT4G checkout" >&2
    exit 2
fi
for f in nlohmann/json.hpp cxxopts.hpp; do
    if [ ! -f "$deps/$f" ]; then
        echo "$deps has no $f; put nlohmann/json's single_include/nlohmann/json.hpp and cxxopts's include/cxxopts.hpp there" >&2
        exit 2
    fi
done
shim=$(realpath "$(dirname "$0")/peers")
mkdir -p "$out/mt4g" "$out/build/include" "$out/build/obj"
build=$(realpath "$out/build")
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
if [ -e "$mt4g/.git" ]; then
    commit=$(git -C "$mt4g" rev-parse HEAD)
else
    commit=$(cat "$mt4g/.commit" 2>/dev/null || echo unknown)
fi
echo "#define MT4G_VERSION \"${commit:0:12}\"" >"$build/include/version.hpp"

# One nvcc per source file, as many at once as there are cores (a serial build takes minutes).
start=$(date +%s)
(cd "$mt4g" && find src -name '*.cpp' | sort | xargs -P "$(nproc)" -I{} sh -c \
    'nvcc -std=c++20 -O3 -arch=sm_'"$arch"' -x cu -Wno-deprecated-gpu-targets -D__HIP_PLATFORM_NVIDIA__ \
        -I"$0/include" -Iinclude -I"$1" -I"$2" -c {} -o "$0/obj/$(echo {} | tr / _).o"' \
    "$build" "$shim" "$(realpath "$deps")") >"$out/mt4g/build.txt" 2>&1 || {
    echo "building MT4G failed; see $out/mt4g/build.txt" >&2
    exit 1
}
nvcc -arch="sm_$arch" -o "$build/mt4g" "$build"/obj/*.o >>"$out/mt4g/build.txt" 2>&1
echo "built MT4G ${commit:0:12} for sm_$arch in $(($(date +%s) - start)) s" | tee -a "$out/mt4g/build.txt"
# What its latency kernels execute between their two clock reads (the table shows it).
cuobjdump -sass "$build/mt4g" >"$build/mt4g.sass"

# A suite that fails is recorded as such in gpubench's summary; MT4G still runs.
"$gpubench" all --only cache-global,cache-l2,cache-readonly,cache-constant,cache-constant-uniform,cache-texture,cache-shared,shared,bandwidth \
    --output "$out/gpubench" >"$out/mt4g/gpubench.txt" 2>&1 ||
    echo "gpubench all exited $?; see $out/mt4g/gpubench.txt" >&2
if [ ! -f "$out/gpubench/summary.json" ]; then
    echo "gpubench wrote no summary; see $out/mt4g/gpubench.txt" >&2
    exit 1
fi

groups="l1 l2 constant readonly texture shared memory"
: >"$out/mt4g/groups.tsv"
for group in $groups; do
    start=$(date +%s)
    status=0
    timeout "$limit" "$build/mt4g" --"$group" -q -l "$out/mt4g" -f "$group" >"$out/mt4g/$group.txt" 2>&1 || status=$?
    printf '%s\t%s\t%s\n' "$group" "$status" "$(($(date +%s) - start))" >>"$out/mt4g/groups.tsv"
done
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv >"$out/mt4g/gpu.csv"

python3 "$(dirname "$0")/peers_mt4g_table.py" "$out" "$commit" "$limit" "$*"
rm -rf "$out/build"

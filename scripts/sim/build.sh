#!/usr/bin/env bash
# Builds a simulated CUDA device for gpubench: GPGPU-Sim's libcudart.so from a checkout the user
# fetched (accel-sim/gpgpu-sim_distribution, `dev`), with gpubench's %clock64 patch, and
# gpubench's driver-API layer (sim/libcuda/) as libcuda.so.1 on top of it.
#
#   scripts/sim/build.sh GPGPU_SIM_DIR [OUT_DIR]      (OUT_DIR defaults to target/sim)
#
# GPGPU_SIM_DIR is never modified: its HEAD is cloned (git clone --shared) into
# OUT_DIR/gpgpu-sim, where sim/patches/*.patch are applied and make runs. Everything generated
# lies under OUT_DIR (git-ignored):
#   OUT_DIR/cuda-11.8/        CUDA_INSTALL_PATH assembled from PyPI wheels (headers, ptxas) and
#                             a fake bin/nvcc that only answers --version
#   OUT_DIR/gpgpu-sim/        the patched clone and its build; lib/gcc-*/cuda-11080/release/
#   OUT_DIR/lib/              libcuda.so.1, libcuda.so, libcudart.so (link) — put on LD_LIBRARY_PATH
#   OUT_DIR/bin/sim-chase     the smoke test (sim/test/chase.c); sim-load-ptx (sim/test/load_ptx.c);
#                             sim-cache-kernels (sim/test/cache_kernels.c)
#   OUT_DIR/env.sh            variables to source before running on the simulated device
# Needs: git, python3 with pip, g++, gcc, make, and Debian's bison flex xutils-dev zlib1g-dev libgl-dev
# (installed with apt-get when missing and running as root). GPGPU-Sim's make takes about
# 8 minutes on 2 cores; MAKE_JOBS (default 2) sets -j.
set -euo pipefail
# Everything is inside main, so bash has read the whole script before running any of it.
main() {
src=$(cd "${1:?usage: scripts/sim/build.sh GPGPU_SIM_DIR [OUT_DIR]}" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${2:-$repo/target/sim}
mkdir -p "$out"
out=$(cd "$out" && pwd)
jobs=${MAKE_JOBS:-2}

# --- Debian packages GPGPU-Sim's build needs
missing=()
for pkg in bison flex xutils-dev zlib1g-dev libgl-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y "${missing[@]}"
  else
    echo "error: install ${missing[*]} (apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi

# --- CUDA 11.8 install path from PyPI (GPGPU-Sim refuses CUDA newer than 11.x)
cuda=$out/cuda-11.8
if [ ! -f "$cuda/.complete" ]; then
  rm -rf "$cuda" "$out/wheels"
  python3 -m pip install --quiet --no-deps --target "$out/wheels" \
    nvidia-cuda-runtime-cu11==11.8.89 nvidia-cuda-nvcc-cu11==11.8.89
  mkdir -p "$cuda/bin" "$cuda/include"
  cp -r "$out/wheels/nvidia/cuda_runtime/include/." "$cuda/include/"
  cp -r "$out/wheels/nvidia/cuda_nvcc/include/." "$cuda/include/"
  cp "$out/wheels/nvidia/cuda_nvcc/bin/ptxas" "$cuda/bin/ptxas"
  cp "$repo/sim/cuda-include/cudaProfiler.h" "$cuda/include/cudaProfiler.h"
  # All that setup_environment and version_detection.mk read from nvcc is this line.
  printf '#!/bin/sh\necho "Cuda compilation tools, release 11.8, V11.8.89"\n' > "$cuda/bin/nvcc"
  chmod +x "$cuda/bin/nvcc" "$cuda/bin/ptxas"
  touch "$cuda/.complete"
fi

# --- GPGPU-Sim: clone the user's HEAD, patch, make
sim=$out/gpgpu-sim
commit=$(git -C "$src" rev-parse HEAD)
if [ ! -d "$sim/.git" ] || [ "$(git -C "$sim" rev-parse HEAD)" != "$commit" ]; then
  rm -rf "$sim"
  git clone --quiet --shared --no-checkout "$src" "$sim"
  git -C "$sim" checkout --quiet --detach "$commit"
fi
# The patches touch neighbouring lines, so whether one is applied cannot be asked of each
# alone: a stamp names the set applied. A changed set is applied afresh to the commit's
# sources (make then rebuilds what they touch).
patches=$(cat "$repo"/sim/patches/*.patch | sha256sum | cut -d' ' -f1)
if [ "$(cat "$sim/.gpubench-patches" 2>/dev/null)" != "$patches" ]; then
  git -C "$sim" checkout --quiet -- .
  for patch in "$repo"/sim/patches/*.patch; do
    git -C "$sim" apply "$patch"
  done
  echo "$patches" > "$sim/.gpubench-patches"
fi
(
  cd "$sim"
  export CUDA_INSTALL_PATH=$cuda
  set +eu # setup_environment is not written for set -eu
  # shellcheck disable=SC1091
  source setup_environment release
  status=$?
  set -eu
  [ "$status" = 0 ] || { echo "error: GPGPU-Sim's setup_environment failed" >&2; exit 1; }
  make -j"$jobs"
)
simlib=$(ls -d "$sim"/lib/gcc-*/cuda-11080/release | head -1)
[ -f "$simlib/libcudart.so" ] || { echo "error: no libcudart.so under $sim/lib" >&2; exit 1; }
echo "GPGPU-Sim $commit built: $simlib/libcudart.so"

# --- gpubench's driver-API layer: libcuda.so.1 over GPGPU-Sim's libcudart.so
obj=$out/obj
mkdir -p "$obj" "$out/lib" "$out/bin"
cxxflags=(-std=c++17 -O2 -g -fPIC -Wall -Wno-unused-function -Wno-sign-compare
  -DCUDART_VERSION=11080 -I"$sim/libcuda" -I"$sim/src" -I"$cuda/include")
for part in cuda memory; do
  g++ "${cxxflags[@]}" -c "$repo/sim/libcuda/gpubench_sim_$part.cc" -o "$obj/gpubench_sim_$part.o"
done
# Every cu* name cudarc may look up or libcudart.so exports (GPGPU-Sim's own driver functions
# mostly print a warning and return CUDA_SUCCESS) that the layer does not define gets a
# definition that stops the process with its name. libcuda.so.1 comes first in symbol lookup,
# so none of libcudart.so's cu* functions is reachable by name.
nm -g --defined-only "$obj/gpubench_sim_cuda.o" "$obj/gpubench_sim_memory.o" | awk '$2 == "T" {print $3}' | sort -u > "$obj/implemented.txt"
{
  nm -D --defined-only "$simlib/libcudart.so" | awk '$2 == "T" {print $3}' | sed 's/@.*//' | grep '^cu[A-Z]'
  grep -v '^#' "$repo/sim/libcuda/cudarc-0.19-driver-symbols.txt"
} | sort -u > "$obj/wanted.txt"
comm -23 "$obj/wanted.txt" "$obj/implemented.txt" > "$obj/unimplemented.txt"
{
  echo '// Generated by scripts/sim/build.sh: driver functions the simulated device does not implement.'
  echo 'extern "C" [[noreturn]] void gpubench_sim_unimplemented(const char *function);'
  while read -r name; do
    echo "extern \"C\" int $name() { gpubench_sim_unimplemented(\"$name\"); }"
  done < "$obj/unimplemented.txt"
} > "$obj/unimplemented.cc"
g++ -O1 -fPIC -c "$obj/unimplemented.cc" -o "$obj/unimplemented.o"
g++ -shared -Wl,-soname,libcuda.so.1 -o "$out/lib/libcuda.so.1" \
  "$obj/gpubench_sim_cuda.o" "$obj/gpubench_sim_memory.o" "$obj/unimplemented.o" \
  -L"$simlib" -lcudart -Wl,-rpath,"$simlib" -pthread
ln -sf libcuda.so.1 "$out/lib/libcuda.so"
echo "libcuda.so.1: $(grep -c "^cu" "$obj/implemented.txt") driver functions implemented, $(wc -l < "$obj/unimplemented.txt") stop the process"

# --- the smoke test (sim/test/chase.c), against CUDA 11.8's cuda.h
gcc -O2 -Wall -I"$cuda/include" -DCHASE_PTX="\"$repo/sim/test/chase.ptx\"" \
  "$repo/sim/test/chase.c" -o "$out/bin/sim-chase" \
  -L"$out/lib" -lcuda -Wl,-rpath,"$out/lib"
gcc -O2 -Wall -I"$cuda/include" "$repo/sim/test/load_ptx.c" -o "$out/bin/sim-load-ptx" \
  -L"$out/lib" -lcuda -Wl,-rpath,"$out/lib"
gcc -O2 -Wall -I"$cuda/include" -DCACHE_PTX="\"$repo/cuda/ptx/cache.ptx\"" \
  "$repo/sim/test/cache_kernels.c" -o "$out/bin/sim-cache-kernels" -L"$out/lib" -lcuda -Wl,-rpath,"$out/lib"

cat > "$out/env.sh" <<ENV
# Source this before running a program on the simulated device (written by scripts/sim/build.sh).
export CUDA_INSTALL_PATH=$cuda
export PTXAS_CUDA_INSTALL_PATH=$cuda
export LD_LIBRARY_PATH=$out/lib:$simlib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export GPUBENCH_SIM_CONFIGS=$sim/configs/tested-cfgs
ENV
echo "done: source $out/env.sh; then scripts/sim/smoke.sh runs the smoke test"
}
main "$@"

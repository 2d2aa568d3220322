#!/usr/bin/env bash
# Builds MNN's CPU runtime (libMNN.so) and its model converter MNNConvert from a
# source tree of https://github.com/alibaba/MNN into PREFIX, for the MNN engine
# adapter (engines/mnn_engine.*) and `probe-engine mnn`.
#
#   scripts/engines/build-mnn.sh SRC PREFIX      (PREFIX defaults to /opt/mnn; JOBS=2)
#
# SRC is an MNN source tree; MNNConvert is built against the protobuf and
# flatbuffers MNN vendors in 3rd_party/ (nothing is downloaded). The runtime is
# CPU only (no Metal, OpenCL, Vulkan, CUDA or other GPU/NPU backend, no OpenMP:
# MNN's own thread pool, which the adapter runs with one thread), built with
# SSE and AVX2+FMA kernels but without the AVX-512 ones, so that the measured
# table does not depend on the measuring CPU having AVX-512 (MNN picks SSE or
# AVX2 at run time from cpuid; any x86-64 CPU with AVX2 computes the same).
# No low-memory (weight-quantized), bf16 or transformer-fusion kernels: the
# adapter runs fp32 with precision high. libMNN.so is one library (no separate
# Express/CPU libraries) and the installed MNNConvert finds it and its own
# libMNNConvertDeps.so through an $ORIGIN-relative run path, so PREFIX can be
# moved. The commit built from, when SRC is a git work tree or when MNN_COMMIT
# is set, is written to PREFIX/MNN_COMMIT, and its date (YYYYMMDD) to
# PREFIX/MNN_DATE; the measured profile is named after the date and records
# the commit. MNN_DATE=YYYYMMDD names it when SRC is not a git tree.
# Nothing of MNN is committed to this repository.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 SRC [PREFIX]" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
prefix=${2:-/opt/mnn}
jobs=${JOBS:-2}
build=${BUILD_DIR:-"$src/build-bcast"}

if [[ ! -f "$src/CMakeLists.txt" || ! -f "$src/include/MNN/Interpreter.hpp" ||
      ! -f "$src/tools/converter/source/MNNConverter.cpp" ]]; then
  echo "$0: $src is not an MNN source tree (no include/MNN/Interpreter.hpp or" \
       "tools/converter/source/MNNConverter.cpp)" >&2
  exit 1
fi

commit=${MNN_COMMIT:-}
date=${MNN_DATE:-}
if git -C "$src" rev-parse HEAD >/dev/null 2>&1; then
  if [[ -z "$commit" ]]; then commit=$(git -C "$src" rev-parse HEAD); fi
  if [[ -z "$date" ]]; then
    date=$(git -C "$src" log -1 --format=%cd --date=format:%Y%m%d "$commit")
  fi
fi

# shellcheck source=scripts/engines/cmake_tools.sh
. "$(dirname "${BASH_SOURCE[0]}")/cmake_tools.sh"

# MNN_SEP_BUILD=OFF: one libMNN.so (CPU backend and Express inside) instead of
# libMNN + libMNN_Express + one library per backend.
cmake -S "$src" -B "$build" "${generator[@]}" "${launcher[@]}" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON '-DCMAKE_INSTALL_RPATH=$ORIGIN/../lib;$ORIGIN' \
  -DMNN_BUILD_SHARED_LIBS=ON -DMNN_SEP_BUILD=OFF \
  -DMNN_BUILD_CONVERTER=ON -DMNN_BUILD_PROTOBUFFER=ON \
  -DMNN_BUILD_TOOLS=OFF -DMNN_BUILD_DEMO=OFF -DMNN_BUILD_TEST=OFF -DMNN_BUILD_BENCHMARK=OFF \
  -DMNN_BUILD_QUANTOOLS=OFF -DMNN_EVALUATION=OFF -DMNN_BUILD_TRAIN=OFF \
  -DMNN_BUILD_OPENCV=OFF -DMNN_BUILD_LLM=OFF -DMNN_BUILD_DIFFUSION=OFF -DMNN_BUILD_AUDIO=OFF \
  -DMNN_METAL=OFF -DMNN_OPENCL=OFF -DMNN_OPENGL=OFF -DMNN_VULKAN=OFF -DMNN_CUDA=OFF \
  -DMNN_MUSA=OFF -DMNN_TENSORRT=OFF -DMNN_COREML=OFF -DMNN_NNAPI=OFF -DMNN_QNN=OFF \
  -DMNN_RKNN=OFF -DMNN_HEXAGON=OFF -DMNN_ONEDNN=OFF \
  -DMNN_OPENMP=OFF -DMNN_USE_THREAD_POOL=ON \
  -DMNN_USE_SSE=ON -DMNN_AVX2=ON -DMNN_AVX512=OFF \
  -DMNN_LOW_MEMORY=OFF -DMNN_SUPPORT_BF16=OFF -DMNN_SUPPORT_TRANSFORMER_FUSE=OFF \
  -DMNN_BUILD_TORCH=OFF

# MNNConvert needs libMNN and libMNNConvertDeps (with the vendored protobuf);
# the converter's test programs are not built.
cmake --build "$build" -j "$jobs" --target MNN MNNConvert
cmake --install "$build"  # headers and libMNN.so
mkdir -p "$prefix/bin" "$prefix/lib"
install -m 755 "$build/MNNConvert" "$prefix/bin/MNNConvert"
install -m 644 "$build/tools/converter/libMNNConvertDeps.so" "$prefix/lib/libMNNConvertDeps.so"
if [[ -n "$commit" ]]; then echo "$commit" > "$prefix/MNN_COMMIT"; fi
if [[ -n "$date" ]]; then echo "$date" > "$prefix/MNN_DATE"; fi
echo "MNN ${commit:-(commit unknown)} installed in $prefix"

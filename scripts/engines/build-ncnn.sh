#!/usr/bin/env bash
# Builds ncnn (libncnn, CPU only) and its ONNX converter onnx2ncnn from a
# source tree of https://github.com/Tencent/ncnn into PREFIX, for the ncnn
# engine adapter (engines/ncnn_engine.*) and `probe-engine ncnn`.
#
#   scripts/engines/build-ncnn.sh SRC PREFIX      (JOBS=2 by default)
#
# SRC is an ncnn source tree (no submodules needed: Vulkan/glslang, OpenMP,
# python, benchmarks, examples and tests are all off). onnx2ncnn is compiled
# against Debian's protobuf (libprotobuf-dev, protobuf-compiler). The library
# is built for AVX2+FMA without AVX-512 and without runtime CPU dispatch, so
# the measured table does not depend on the CPU it was measured on having
# AVX-512; int8/bf16 kernels are left out (the adapter runs fp32 storage).
# The commit built from, when SRC is a git work tree or when NCNN_COMMIT is
# set, is written to PREFIX/NCNN_COMMIT; the measured profile records it.
# NCNN_VERSION_DATE=YYYYMMDD names the version when SRC is not a git tree.
# Nothing of ncnn is committed to this repository.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 SRC PREFIX" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
prefix=$2
jobs=${JOBS:-2}
build=${BUILD_DIR:-"$src/build-bcast"}

if [[ ! -f "$src/CMakeLists.txt" || ! -d "$src/src" || ! -f "$src/tools/onnx/onnx2ncnn.cpp" ]]; then
  echo "$0: $src is not an ncnn source tree (no src/ or tools/onnx/onnx2ncnn.cpp)" >&2
  exit 1
fi

commit=${NCNN_COMMIT:-}
if [[ -z "$commit" ]] && git -C "$src" rev-parse HEAD >/dev/null 2>&1; then
  commit=$(git -C "$src" rev-parse HEAD)
fi

# ncnn's version is 1.0.<date>, the date of the configure by default: use the
# commit's date instead, so that the same commit reports the same version (the
# probe's files are named after it).
version_date=${NCNN_VERSION_DATE:-}
if [[ -z "$version_date" ]] && git -C "$src" rev-parse HEAD >/dev/null 2>&1; then
  version_date=$(git -C "$src" log -1 --format=%cd --date=format:%Y%m%d)
fi
version_args=()
if [[ -n "$version_date" ]]; then version_args=(-DNCNN_VERSION="$version_date"); fi

# shellcheck source=scripts/engines/cmake_tools.sh
. "$(dirname "${BASH_SOURCE[0]}")/cmake_tools.sh"

cmake -S "$src" -B "$build" "${generator[@]}" "${launcher[@]}" \
  -DCMAKE_BUILD_TYPE=Release "${version_args[@]}" \
  -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DNCNN_VULKAN=OFF -DNCNN_OPENMP=OFF -DNCNN_SIMPLEOMP=OFF \
  -DNCNN_BUILD_TOOLS=OFF -DNCNN_BUILD_EXAMPLES=OFF -DNCNN_BUILD_BENCHMARK=OFF \
  -DNCNN_BUILD_TESTS=OFF -DNCNN_PYTHON=OFF -DNCNN_SHARED_LIB=OFF \
  -DNCNN_RUNTIME_CPU=OFF -DNCNN_AVX=ON -DNCNN_FMA=ON -DNCNN_F16C=ON -DNCNN_AVX2=ON \
  -DNCNN_XOP=OFF -DNCNN_AVX512=OFF -DNCNN_AVXVNNI=OFF -DNCNN_AVXVNNIINT8=OFF \
  -DNCNN_AVXVNNIINT16=OFF -DNCNN_AVXNECONVERT=OFF \
  -DNCNN_INT8=OFF -DNCNN_BF16=OFF -DNCNN_PIXEL_DRAWING=OFF

# Only the library: the other converters (caffe, mxnet, darknet, ...) are not
# needed and would double the build time.
cmake --build "$build" -j "$jobs" --target ncnn
cmake --install "$build/src"

# onnx2ncnn is no longer part of ncnn's CMake build (pnnx replaced it), but its
# source still lives in tools/onnx and needs only protobuf: one protoc call and
# one compile.
onnx_build="$build/onnx2ncnn"
mkdir -p "$onnx_build" "$prefix/bin"
protoc --proto_path="$src/tools/onnx" --cpp_out="$onnx_build" "$src/tools/onnx/onnx.proto"
cxx=${CXX:-c++}
compiler=()
if command -v ccache >/dev/null 2>&1; then compiler=(ccache); fi
"${compiler[@]}" "$cxx" -O2 -std=c++17 -I"$onnx_build" -o "$onnx_build/onnx2ncnn" \
  "$src/tools/onnx/onnx2ncnn.cpp" "$onnx_build/onnx.pb.cc" -lprotobuf -lpthread
install -m 755 "$onnx_build/onnx2ncnn" "$prefix/bin/onnx2ncnn"
if [[ -n "$commit" ]]; then
  echo "$commit" > "$prefix/NCNN_COMMIT"
fi
echo "ncnn ${commit:-(commit unknown)} installed in $prefix"

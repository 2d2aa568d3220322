#!/usr/bin/env bash
# Installs the Debian packages that building, testing and benchmarking onnx-bcast need.
# Fast when everything is present: apt is only touched when a package is missing.
set -euo pipefail
packages=(
  cmake g++ make pkg-config ccache
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  libabsl-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev libdnnl-dev
  # libdnnl-dev only recommends the OpenCL development files, yet its dnnl-config.cmake requires
  # them (its GPU runtime is OpenCL): without them oneDNN is left out (runtime/CMakeLists.txt).
  ocl-icd-opencl-dev
  python3-onnx python3-numpy
  pybind11-dev python3-dev python3-venv python3-pip python3-setuptools python3-wheel
  libmimalloc-dev libcli11-dev
  libopencv-dnn-dev
  strace pre-commit git
  clang libclang-rt-14-dev
)
missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  if [[ $status != *"install ok installed"* ]]; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

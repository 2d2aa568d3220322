#!/bin/sh
# Whole-graph benchmarks: builds onnx-bcast and the bench/graph tools, then runs run.py
# (synthetic 10k/100k/1M-node models, phase timings, peak RSS, libonnx InferShapes in the
# same run, growth, and the 1 GiB external-weights memory check).
# Usage: bench/graph/run.sh [BUILD_DIR] [run.py options]   (default BUILD_DIR: build)
# Needs: the Debian packages of scripts/setup.sh, strace for the weight-read count.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
[ $# -gt 0 ] && shift
jobs=$(nproc 2>/dev/null || echo 2)
mkdir -p "$build"
log=$build/bench-graph-build.log
# Build output goes to a log; its end is shown if a step fails.
quiet() { "$@" >>"$log" 2>&1 || { tail -n 40 "$log"; echo "failed: $*" >&2; exit 1; }; }
: >"$log"
quiet cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
quiet cmake --build "$build" -j"$jobs" --target onnx-bcast
# The tools come from the project build once bench/ adds this folder, else from their own.
if cmake --build "$build" -j"$jobs" --target bench_graph_phases bench_graph_gen \
     bench_graph_onnx_infer >>"$log" 2>&1; then
  tools=$build/bin
else
  quiet cmake -S "$root/bench/graph" -B "$build/bench-graph-tools" -DCMAKE_BUILD_TYPE=Release
  quiet cmake --build "$build/bench-graph-tools" -j"$jobs"
  tools=$build/bench-graph-tools
fi
exec /usr/bin/python3 "$root/bench/graph/run.py" --cli "$build/bin/onnx-bcast" --tools "$tools" "$@"

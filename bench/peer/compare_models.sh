#!/usr/bin/env bash
# Whole-model peer comparison with onnxruntime over the committed export corpus (issue #24):
#   bench/peer/compare_models.sh [--build-dir DIR] [--threads 1,2] [--runs N] [--rounds R]
#                                [--only REGEX] [--json FILE]
# Builds onnx-bcast (Release) if needed, installs onnxruntime-node from npm beside this script
# (once), makes each model of tests/fixtures/exported static at its test dims (image models at
# 224x224; `opt --passes none --dim ...`, the model otherwise unchanged), then alternates our
# `run --bench` with onnxruntime's runs (ort_models.mjs) and prints medians and ratios.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$root/build"
threads="1"
runs=20
rounds=3
only=""
json=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build="$(realpath -m "$2")"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --json) json="$2"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "compare_models.sh: unknown argument $1" >&2; exit 64 ;;
  esac
done
for tool in cmake node npm /usr/bin/python3; do
  command -v "$tool" >/dev/null || { echo "compare_models.sh: $tool not found" >&2; exit 69; }
done
if [[ ! -x "$build/bin/onnx-bcast" ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j"$(nproc)" --target onnx-bcast >/dev/null
fi
if [[ ! -d "$here/node_modules/onnxruntime-node" ]]; then
  (cd "$here" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
corpus="$root/tests/fixtures/exported"
models=()
# name \t dims: the manifest's first valid binding of the model's own symbols, H and W 224.
while IFS=$'\t' read -r name dims; do
  [[ -n "$only" && ! "$name" =~ $only ]] && continue
  "$build/bin/onnx-bcast" opt "$corpus/$name.onnx" -o "$tmp/$name.onnx" --passes none \
    ${dims:+--dim "$dims"} -q >/dev/null
  models+=(--model "$tmp/$name.onnx")
done < <(/usr/bin/python3 - "$corpus" <<'PY'
import json, sys, onnx
corpus = sys.argv[1]
manifest = json.load(open(f"{corpus}/manifest.json"))
for name, entry in sorted(manifest.items()):
    m = onnx.load(f"{corpus}/{name}.onnx", load_external_data=False)
    declared = {d.dim_param for i in m.graph.input for d in i.type.tensor_type.shape.dim}
    b = dict(entry["bindings_ok"][0])
    if "H" in b and "W" in b:
        b["H"] = b["W"] = 224
    dims = ",".join(f"{k}={v}" for k, v in sorted(b.items()) if k in declared)
    print(f"{name}\t{dims}")
PY
)
args=(--onnx-bcast "$build/bin/onnx-bcast" --threads "$threads" --runs "$runs" --rounds "$rounds")
[[ -n "$json" ]] && args+=(--json "$json")
node "$here/ort_models.mjs" "${args[@]}" "${models[@]}"

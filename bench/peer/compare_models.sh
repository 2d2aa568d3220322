#!/usr/bin/env bash
# Whole-model peer comparison with onnxruntime over the committed export corpus (issue #24):
#   bench/peer/compare_models.sh [--build-dir DIR] [--threads 1,2] [--runs N] [--rounds R]
#                                [--only REGEX] [--json FILE] [--baseline ONNX_BCAST]
# Builds onnx-bcast (Release) if needed, installs onnxruntime-node from npm beside this script
# (once), makes each model of tests/fixtures/exported static at its test dims (image models at
# 224x224; `opt --passes none --dim ...`, the model otherwise unchanged), then alternates our
# `run --bench` with onnxruntime's runs (ort_models.mjs) and prints medians and ratios.
# --baseline runs a second onnx-bcast binary (e.g. the previous commit's) in each round too.
set -euo pipefail
peer_name=compare_models.sh peer_usage_lines=9
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
here="$peer_here"
root="$peer_root"
build="$root/build"
threads="1"
runs=20
rounds=3
only=""
json=""
baseline=""
while [[ $# -gt 0 ]]; do
  peer_shared_flag "$@"
  if ((peer_shift)); then shift "$peer_shift"; continue; fi
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --baseline) baseline="$(realpath "$2")"; shift 2 ;;
    *) peer_die 64 "unknown argument $1" ;;
  esac
done
peer_require_tools
[[ -x "$build/bin/onnx-bcast" ]] || peer_build "$build" onnx-bcast
peer_ensure_ort
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
[[ -n "$baseline" ]] && args+=(--baseline "$baseline")
peer_machine_line
node "$here/ort_models.mjs" "${args[@]}" "${models[@]}"

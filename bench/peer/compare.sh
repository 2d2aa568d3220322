#!/usr/bin/env bash
# Peer comparison of the broadcast kernels with onnxruntime (issue #7). One command:
#   bench/peer/compare.sh [--quick] [--build-dir DIR] [--threads 1,2] [--reps N]
#                         [--only REGEX] [--no-e2e] [--json FILE]
# Builds bench_peer_driver and onnx-bcast (Release) if needed, installs onnxruntime-node
# from npm beside this script (once), writes the single-node models with Debian's
# python3-onnx into a temporary directory, and runs ort_kernel.mjs, which interleaves our
# kernel, onnxruntime's kernel (profiler time) and a STREAM-style add sample by sample and
# prints medians and ratios. --quick takes fewer samples, for iteration.
set -euo pipefail
peer_name=compare.sh peer_usage_lines=9
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
here="$peer_here"
root="$peer_root"
build="$root/build-peer"
threads="1,2"
reps=15
e2e=1
only=""
json=""
peer_own_flag() {
  peer_shift=1
  case "$1" in
    --quick) reps=5 ;;
    --reps) reps="$2"; peer_shift=2 ;;
    --no-e2e) e2e=0 ;;
    *) peer_shift=0 ;;
  esac
}
peer_parse_args "$@"

peer_require_tools
targets=(bench_peer_driver)
[[ $e2e == 1 ]] && targets+=(onnx-bcast)
peer_build "$build" "${targets[@]}" -- -DBCAST_BUILD_TESTS=OFF
peer_ensure_ort

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$tmp/cases.json" <<'PY'
import json, sys
shapes = [  # the case table of issue #7 (bench/bench_util.h has the same)
    ("same", [4, 64, 256, 256], [4, 64, 256, 256], True),
    ("scalar", [4, 64, 256, 256], [], True),
    ("per_channel", [4, 64, 256, 256], [1, 64, 1, 1], True),
    ("inner_row", [16384, 1024], [1024], True),
    ("outer_column", [16384, 1024], [16384, 1], True),
    ("bidirectional", [256, 1, 1024], [1, 256, 1024], True),
    ("middle_axis", [128, 1, 4096], [128, 32, 4096], True),
    ("tiny", [1, 3, 8, 8], [3, 1, 1], False),
]
ops = [("Add", "float32"), ("Mul", "float32"), ("Div", "float32"), ("Max", "float32"),
       ("Add", "int32"), ("And", "bool")]
cases = []
for name, a, b, large in shapes:
    for op, dtype in ops:
        # Every op on the per-channel and tiny cases, float32 Add on all of them.
        if (op, dtype) != ("Add", "float32") and name not in ("per_channel", "tiny"):
            continue
        cases.append({"id": f"{op}_{dtype}_{name}", "op": op, "dtype": dtype, "a": a, "b": b,
                      "large": large})
json.dump(cases, open(sys.argv[1], "w"))
PY
/usr/bin/python3 "$here/make_models.py" "$tmp" "$tmp/cases.json"

args=(--driver "$build/bin/bench_peer_driver" --models "$tmp" --cases "$tmp/cases.json"
      --threads "$threads" --reps "$reps")
[[ -n "$only" ]] && args+=(--only "$only")
[[ -n "$json" ]] && args+=(--json "$json")
if [[ $e2e == 1 ]]; then
  args+=(--onnx-bcast "$build/bin/onnx-bcast" --e2e "$root/models/cnn_block.onnx")
  /usr/bin/python3 "$here/make_cnn.py" "$tmp/cnn_64.onnx"
  args+=(--e2e "$tmp/cnn_64.onnx")
fi
peer_machine_line
cd "$here" && node ort_kernel.mjs "${args[@]}"

#!/usr/bin/env bash
# CI step: for every model given, fail the job on a broadcast error, or when the model rewritten
# for $TARGET does not compute the same outputs. Uses the CLI's exit codes: 0 ok, 1 found (a
# broadcast error or a numeric mismatch), 2 bad model, 3 unsupported, 4 cannot write, 64 usage.
#
#   ONNX_BCAST=onnx-bcast TARGET=ncnn examples/ci/check_models.sh models/*.onnx
#
# Static engines (opencv, ncnn) need the symbolic dims bound: DIMS=N=1 (or N=1,H=640,W=640)
# binds them for every model, and DIMS_FILE names a file of lines `MODEL DIMS` for models that
# need their own (MODEL as given, or its file name; a model not listed takes $DIMS):
#
#   TARGET=opencv DIMS=N=1 DIMS_FILE=ci/dims.txt examples/ci/check_models.sh models/*.onnx
#
# REPORT_DIR=DIR keeps each model's `opt --report` there as NAME.opt.json, written when opt
# refuses too: the reasons as data for the job's artifacts ("refused", "violation_details" with
# each node's hint, "engine").
set -uo pipefail
onnx_bcast=${ONNX_BCAST:-onnx-bcast}
target=${TARGET:-explicit}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The dims of one model: its line of $DIMS_FILE, else $DIMS.
dims_of() {
  if [ -n "${DIMS_FILE:-}" ]; then
    local path dims
    while read -r path dims; do
      case $path in '' | '#'*) continue ;; esac
      if [ "$path" = "$1" ] || [ "$path" = "$(basename "$1")" ]; then
        echo "$dims"
        return
      fi
    done <"$DIMS_FILE"
  fi
  echo "${DIMS:-}"
}

failed=0
for model in "$@"; do
  name=$(basename "$model")
  dims=$(dims_of "$model")
  dim_args=()
  [ -n "$dims" ] && dim_args=(--dim "$dims")
  report_args=()
  if [ -n "${REPORT_DIR:-}" ]; then
    mkdir -p "$REPORT_DIR"
    report_args=(--report "$REPORT_DIR/$name.opt.json")
  fi
  # --strict would also fail on conditions that depend on symbolic dims; errors always fail.
  "$onnx_bcast" check "$model"
  case $? in
    0) ;;
    1) echo "FAIL $model: broadcast error (see above)" >&2; failed=1; continue ;;
    *) echo "FAIL $model: cannot be checked" >&2; failed=1; continue ;;
  esac
  "$onnx_bcast" opt "$model" --target "$target" "${dim_args[@]}" "${report_args[@]}" \
    -o "$work/$name" ||
    { echo "FAIL $model: opt --target $target failed" >&2; failed=1; continue; }
  # verify binds the dims the rewritten model declares as numbers (its first line says so).
  "$onnx_bcast" verify "$model" "$work/$name"
  case $? in
    0) echo "ok   $model" ;;
    1) echo "FAIL $model: the $target rewrite computes different outputs" >&2; failed=1 ;;
    *) echo "FAIL $model: cannot be verified" >&2; failed=1 ;;
  esac
done
exit "$failed"

#!/usr/bin/env bash
# opencv_run_guard: tests/e2e/opencv_run.cc (the newcomer walkthrough's last step) refuses a
# reference output that cannot tell a right engine from a wrong one (issue 43 item 2): all NaN
# (NaN matches NaN, so any engine "matches") and one value everywhere (an engine that ignores
# its input matches). Both models run on OpenCV and would be called matches without the guard;
# a model with varied outputs is still called a match.
#   opencv_run_guard_test.sh ONNX_BCAST OPENCV_RUN SOURCE_DIR SCRATCH
set -uo pipefail
cli=$1 opencv_run=$2 src=$3 scratch=$4
rm -rf "$scratch" && mkdir -p "$scratch"
failures=0
# expect NAME CODE TEXT: opencv_run on fixture NAME (written as binary: OpenCV reads no text
# form) exits CODE and prints TEXT.
expect() {
  local name=$1 code=$2 text=$3 out got
  "$cli" opt "$src/tests/fixtures/opencv_run/$name.onnxtxt" -o "$scratch/$name.onnx" \
    --passes none -q || { echo "FAIL $name: could not write the model"; failures=1; return; }
  out=$("$opencv_run" "$scratch/$name.onnx" "$scratch/$name.onnx" 2>&1)
  got=$?
  if [ "$got" != "$code" ] || [[ "$out" != *"$text"* ]]; then
    echo "FAIL $name: exit $got (want $code), output lacks '$text':"
    echo "$out"
    failures=1
  else
    echo "ok   $name: $out"
  fi
}
expect nan_output 1 "has no finite value"
expect constant_output 1 "holds one value"
expect varied_output 0 "runs and matches"
exit "$failures"

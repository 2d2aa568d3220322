#!/usr/bin/env bash
# A new user's walk from the README to OpenCV (issue 31 item 6), on a committed export with a
# dynamic batch N (torchvision ViT; nothing is exported here): check, opt --target opencv
# --dim N=1, verify of the two files without --samples or --dim, then OpenCV DNN on the
# written model. Each step's exit code and verdict line are asserted.
#   newcomer_walkthrough.sh CLI OPENCV_RUN SOURCE_DIR SCRATCH_DIR
#   (OPENCV_RUN: tests/e2e/opencv_run.cc, or "" when the OpenCV adapter is not built)
set -uo pipefail
cli=$1 opencv_run=$2 src=$3 scratch=$4
model=$src/tests/fixtures/exported/torchvision_vit_op14.onnx
# shellcheck source=walkthrough_lib.sh
source "$src/tests/e2e/walkthrough_lib.sh"

# 1. check: no broadcast error in the export.
step check 0 "$cli" check "$model"
has check.out "0 error"

# 2. opt for OpenCV at batch 1: written, says what the target covers, and (where the OpenCV
#    adapter is built) the last line is the engine's own verdict on the written model.
step opt 0 "$cli" opt "$model" -o vit.opencv.onnx --target opencv --dim N=1
has opt.out "dims bound: N=1"
has opt.out "target opencv: 0 node(s) outside its table"
has opt.out "target opencv covers broadcast forms only (whether opencv has a layer for every op is not checked)"
if [ -n "$opencv_run" ]; then
  case $(tail -n 1 opt.out) in
    "opencv: runs, max abs "*" x the error model's bound) (at N=1)") ;;
    *) fail "opt: the last line is not the engine's verdict: $(tail -n 1 opt.out)" ;;
  esac
fi
[ -s opt.err ] && fail "opt: stderr is not empty"

# 3. verify of the two files as they are: N is bound by the rewritten model's declaration,
#    said in the first line, and every sample runs at N=1.
step verify 0 "$cli" verify "$model" vit.opencv.onnx
first=$(head -n 1 verify.out)
case $first in
  *": EQUAL ("*"; N bound to 1 by the rewritten model)") ;;
  *) fail "verify: first line is '$first'" ;;
esac
grep -q "N=[2-9]" verify.out && fail "verify: a sample binds N to another value than 1"

# The same, once with a batch the written model refuses: a usage error naming the dim.
step verify_n2 64 "$cli" verify "$model" vit.opencv.onnx --dim N=2
has verify_n2.err "the rewritten model accepts only N=1"

# 4. OpenCV DNN runs the written model and agrees with our executor on the original.
if [ -n "$opencv_run" ]; then
  step opencv 0 "$opencv_run" "$model" vit.opencv.onnx
  has opencv.out ": runs and matches"
else
  echo "== opencv: skipped (the OpenCV adapter is not built)"
fi
echo "newcomer walkthrough: passed"

#!/usr/bin/env bash
# A new user's second round (issue 44), on committed exports only (nothing is exported here): a
# UNet with skip connections, a GoogLeNet-like CNN and a BERT-like encoder with a mask input,
# each through check -> opt (the engine check at bound dims) -> verify -> OpenCV DNN itself, with
# the exit code and verdict line of every step asserted; plus the report of a refusal, the
# output refused before any pass, and a baseline used from another folder.
#   round_two_walkthrough.sh CLI OPENCV_RUN SOURCE_DIR SCRATCH_DIR
#   (OPENCV_RUN: tests/e2e/opencv_run.cc, or "" when the OpenCV adapter is not built)
set -uo pipefail
cli=$1 opencv_run=$2 src=$3 scratch=$4
fixtures=$src/tests/fixtures
unet=$fixtures/newcomer/unet_skip_op13.onnx
googlenet=$fixtures/newcomer/googlenet_like_op13.onnx
bert=$fixtures/exported/bert_mask_op14.onnx
# shellcheck source=walkthrough_lib.sh
source "$src/tests/e2e/walkthrough_lib.sh"
# engine NAME ORIGINAL WRITTEN: OpenCV DNN runs the written model and matches the original.
engine() {
  if [ -n "$opencv_run" ]; then
    step "$1" 0 "$opencv_run" "$2" "$3"
    has "$1.out" ": runs and matches"
  else
    echo "== $1: skipped (the OpenCV adapter is not built)"
  fi
}

# --- The UNet: a condition with its parentheses, a sample verify skips and says why ---
step unet_check 0 "$cli" check "$unet"
has unet_check.out "only if (H == 1 or H mod 2 == 0) and (W == 1 or W mod 2 == 0)"
step unet_opt 0 "$cli" opt "$unet" -o unet.opencv.onnx --target opencv --dim N=1,H=32,W=32 \
  --report unet.json
has unet_opt.out "dims bound: H=32, N=1, W=32"
has unet_opt.out "target opencv: 0 node(s) outside its table"
[ -n "$opencv_run" ] && has unet_opt.out "opencv: runs, max abs"
step unet_verify 0 "$cli" verify "$unet" unet.opencv.onnx
has unet_verify.out ": EQUAL ("
# Unbound, H = W = 1 is inside the broadcast condition and the Concat skip fails there.
step unet_explicit 0 "$cli" opt "$unet" -o unet.explicit.onnx -q
[ -s unet_explicit.out ] && fail "opt -q printed on success"
step unet_verify_free 0 "$cli" verify "$unet" unet.explicit.onnx --edge-cases
has unet_verify_free.out "random sample 0 (H=1, N=1, W=1): skipped: the original rejects these inputs: Concat '/Concat'"
has unet_verify_free.out "edge case: every dim 0 (H=0, N=0, W=0; empty tensors)"
engine unet_engine "$unet" unet.opencv.onnx

# --- The GoogLeNet-like CNN: unbound, the engine check says the dims it chose and why opt
# refuses, and the refusal's report has the reasons; bound at those dims it runs ---
step googlenet_check 0 "$cli" check "$googlenet"
has googlenet_check.out "0 error"
step googlenet_unbound 1 "$cli" opt "$googlenet" -o g.onnx --target opencv --report refused.json
if [ -n "$opencv_run" ]; then
  has googlenet_unbound.out "(at H=32, N=1, W=32 (H, N, W unbound: chosen by opt))"
  has googlenet_unbound.err "bind them with --dim; not written"
  has refused.json '"refused": {'
  has refused.json '"exit": 1'
fi
[ -e g.onnx ] && fail "opt wrote a model the engine refused"
step googlenet_opt 0 "$cli" opt "$googlenet" -o g.onnx --target opencv --dim N=1,H=32,W=32
[ -n "$opencv_run" ] && has googlenet_opt.out "opencv: runs, max abs"
step googlenet_verify 0 "$cli" verify "$googlenet" g.onnx
has googlenet_verify.out ": EQUAL ("
engine googlenet_engine "$googlenet" g.onnx

# --- The BERT-like encoder: a mask of 0s and 1s through run, opt --verify and verify ---
step bert_check 0 "$cli" check "$bert"
step bert_run 0 "$cli" run "$bert" --dim N=2,S=8 --input-range mask=0:1:int --output-dir bert_out
has bert_run.out "random inputs: output 'y' float32[2,8,32]"
step bert_opt 0 "$cli" opt "$bert" -o bert.opencv.onnx --target opencv --dim N=1,S=16 \
  --input-range mask=0:1:int --verify
has bert_opt.out ": EQUAL ("
[ -n "$opencv_run" ] && has bert_opt.out "opencv: runs, max abs"
step bert_verify 0 "$cli" verify "$bert" bert.opencv.onnx --input-range mask=0:1:int
has bert_verify.out ": EQUAL ("
step bert_range_typo 64 "$cli" verify "$bert" bert.opencv.onnx --input-range masks=0:1
has bert_range_typo.err "--input-range masks=0:1: the model has no input 'masks'"
engine bert_engine "$bert" bert.opencv.onnx

# --- Errors found first: a missing output folder before any pass runs ---
step missing_dir 4 "$cli" opt "$unet" -o w/missing/x.onnx --progress
has missing_dir.err "output directory 'w/missing' does not exist"
lacks missing_dir.err "[I] pass"
[ -s missing_dir.out ] && fail "opt printed a report before refusing the output"

# --- CI: a baseline made in the repository, used from another folder ---
mkdir -p repo/zoo repo/ci repo/sub
cp "$unet" "$fixtures/check/gemm_bad_c.onnxtxt" repo/zoo/
(cd repo && "$cli" check zoo/ --json ci/base.json -q >/dev/null)
(cd repo/sub && step baseline 0 "$cli" check ../zoo --baseline ../ci/base.json --progress) || exit 1
has repo/sub/baseline.out "2 findings known to the baseline"
has repo/sub/baseline.err "[I] check 2/2: ../zoo/"
echo "round two walkthrough: passed"

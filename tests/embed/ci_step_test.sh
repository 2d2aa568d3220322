#!/usr/bin/env bash
# Tests the CI shell step of docs/ci.md, examples/ci/check_models.sh, with the built CLI: it
# passes on good models, and fails the job on a broadcast error and on a rewrite that does not
# verify (simulated by a CLI wrapper whose `opt` writes a deliberately altered model).
#   ci_step_test.sh CLI SOURCE_DIR SCRATCH_DIR PYTHON
set -uo pipefail
cli=$1 src=$2 scratch=$3 python=$4
step=$src/examples/ci/check_models.sh
rm -rf "$scratch"
mkdir -p "$scratch"

fail() { echo "FAIL: $*" >&2; exit 1; }

# Good models: exit 0, one "ok" line each.
# ncnn has no batch axis: cnn_block's N and mlp's B are bound to 1 (DIMS_FILE names the model).
# (Not legacy_axis: where ncnn is built, it computes the opset-6 broadcast's upgrade wrongly, a
# 1-D initializer that is also a graph input unsqueezed, and opt refuses it: exit 1.)
printf 'cnn_block.onnx N=1\nmlp.onnx B=1\n' >"$scratch/good_dims.txt"
ONNX_BCAST=$cli TARGET=ncnn DIMS_FILE=$scratch/good_dims.txt "$step" "$src/models/cnn_block.onnx" \
  "$src/models/external/mlp.onnx" >"$scratch/good.out" 2>&1
code=$?
cat "$scratch/good.out"
[ "$code" = 0 ] || fail "good models: exit $code"
[ "$(grep -c '^ok ' "$scratch/good.out")" = 2 ] || fail "good models: expected two ok lines"

# A static engine on dynamic-batch exports (issue 31 item 4): dims from DIMS, or per model from
# DIMS_FILE; verify binds what the written model declares, so the step passes.
exported=$src/tests/fixtures/exported
printf '# model dims\nresnet_block_op16.onnx N=1,H=32,W=32\n' >"$scratch/dims.txt"
ONNX_BCAST=$cli TARGET=opencv DIMS=N=1 DIMS_FILE=$scratch/dims.txt "$step" \
  "$exported/torchvision_vit_op14.onnx" "$exported/resnet_block_op16.onnx" >"$scratch/dims.out" 2>&1
code=$?
cat "$scratch/dims.out"
[ "$code" = 0 ] || fail "opencv with DIMS: exit $code"
[ "$(grep -c '^ok ' "$scratch/dims.out")" = 2 ] || fail "opencv with DIMS: expected two ok lines"
grep -q 'EQUAL (.*N bound to 1 by the rewritten model' "$scratch/dims.out" ||
  fail "opencv with DIMS: verify does not say N is bound"
# Without the dims, the static target cannot be met: the job fails naming the step, and with
# REPORT_DIR the refusal's report holds the reasons (issue 44 item 1).
ONNX_BCAST=$cli TARGET=opencv REPORT_DIR=$scratch/reports "$step" \
  "$exported/torchvision_vit_op14.onnx" >"$scratch/nodims.out" 2>&1
code=$?
cat "$scratch/nodims.out"
[ "$code" = 1 ] || fail "opencv without DIMS: exit $code, expected 1"
grep -q 'FAIL .*torchvision_vit_op14.onnx: opt --target opencv failed' "$scratch/nodims.out" ||
  fail "opencv without DIMS: not reported"
grep -q '"refused": {' "$scratch/reports/torchvision_vit_op14.onnx.opt.json" ||
  fail "opencv without DIMS: no report of the refusal in REPORT_DIR"

# A broadcast error fails the job, and the other models are still checked.
ONNX_BCAST=$cli "$step" "$src/tests/fixtures/check/add_mismatch.onnxtxt" \
  "$src/models/cnn_block.onnx" >"$scratch/bad.out" 2>&1
code=$?
cat "$scratch/bad.out"
[ "$code" = 1 ] || fail "broadcast error: exit $code, expected 1"
grep -q 'FAIL .*add_mismatch.onnxtxt: broadcast error' "$scratch/bad.out" || fail "not reported"
grep -q '^ok .*cnn_block.onnx' "$scratch/bad.out" || fail "later model not checked"

# A rewrite that computes something else fails the job.
"$python" - "$src/models/cnn_block.onnx" "$scratch/altered.onnx" <<'PY' || fail "cannot make the altered model"
import sys
import onnx
from onnx import numpy_helper
model = onnx.load(sys.argv[1])
init = next(t for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT)
values = numpy_helper.to_array(init).copy()
values.flat[0] += 0.5
init.CopyFrom(numpy_helper.from_array(values, init.name))
onnx.save(model, sys.argv[2])
PY
cat >"$scratch/broken-cli" <<WRAP
#!/usr/bin/env bash
# onnx-bcast whose opt writes a wrong model.
"$cli" "\$@"; code=\$?
if [ "\$1" = opt ]; then
  prev=
  for a in "\$@"; do [ "\$prev" = -o ] && cp "$scratch/altered.onnx" "\$a"; prev=\$a; done
fi
exit \$code
WRAP
chmod +x "$scratch/broken-cli"
ONNX_BCAST=$scratch/broken-cli "$step" "$src/models/cnn_block.onnx" >"$scratch/mismatch.out" 2>&1
code=$?
cat "$scratch/mismatch.out"
[ "$code" = 1 ] || fail "verify mismatch: exit $code, expected 1"
grep -q 'FAIL .*cnn_block.onnx: the explicit rewrite computes different outputs' \
  "$scratch/mismatch.out" || fail "mismatch not reported"
echo "ci step test: passed"

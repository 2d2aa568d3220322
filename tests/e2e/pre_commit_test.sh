#!/usr/bin/env bash
# Runs the repository's pre-commit hook through Debian's pre-commit (try-repo) on a scratch git
# repository with a good and a bad model: the hook must fail and name the bad node.
#   pre_commit_test.sh PRE_COMMIT BIN_DIR SOURCE_DIR
set -euo pipefail
pre_commit=$1 bin=$2 src=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch/home" PRE_COMMIT_HOME="$scratch/cache" PATH="$bin:$PATH"
mkdir -p "$HOME" "$scratch/repo"
git config --global user.email ci@example.invalid
git config --global user.name ci
git config --global init.defaultBranch main
git config --global --add safe.directory '*'
cd "$scratch/repo"
git init -q
cp "$src/models/cnn_block.onnx" good.onnx
# The Gemm fixture as a binary model (the hook takes *.onnx).
onnx-bcast opt "$src/tests/fixtures/check/gemm_bad_c.onnxtxt" -o bad.onnx --passes none -q
git add good.onnx bad.onnx
set +e
out=$("$pre_commit" try-repo "$src" onnx-bcast-check --all-files 2>&1)
code=$?
set -e
echo "$out"
[[ $code -ne 0 ]] || { echo "FAIL: the hook passed a model with a broadcast error" >&2; exit 1; }
grep -q "Gemm 'Gemm#0': C \[7\] is not unidirectionally broadcastable" <<<"$out" ||
  { echo "FAIL: the hook's output does not name the bad node" >&2; exit 1; }
# The good model alone passes.
git rm -q --cached bad.onnx && rm bad.onnx
"$pre_commit" try-repo "$src" onnx-bcast-check --all-files >/dev/null 2>&1 ||
  { echo "FAIL: the hook failed on a good model" >&2; exit 1; }
echo "pre-commit hook: 1 passed, 0 failed"

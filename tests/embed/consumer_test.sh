#!/usr/bin/env bash
# Out-of-tree consumer test: installs the build into a fresh prefix, builds the C++ example of
# docs/embedding.md (examples/converter, a separate CMake project doing find_package(onnx_bcast))
# against that prefix only, and runs it on a good and a bad model. With PYTHON, the installed
# Python package (module, stubs, py.typed) is imported from the prefix's site directory and used.
#   consumer_test.sh CMAKE BUILD_DIR SOURCE_DIR SCRATCH_DIR CXX_COMPILER [CXX_FLAGS [PYTHON]]
set -euo pipefail
cmake=$1 build=$2 src=$3 scratch=$4 cxx=$5 cxx_flags=${6:-} python=${7:-}
rm -rf "$scratch"
mkdir -p "$scratch"
scratch=$(cd "$scratch" && pwd) src=$(cd "$src" && pwd) build=$(cd "$build" && pwd)
prefix=$scratch/prefix

fail() { echo "FAIL: $*" >&2; exit 1; }

# (a) Install, as a packager would (no DESTDIR).
"$cmake" --install "$build" --prefix "$prefix" >"$scratch/install.log"
lib=$(ls "$prefix"/lib*/libonnx_bcast.so 2>/dev/null | head -1)
[ -n "$lib" ] || fail "no libonnx_bcast.so under $prefix"
[ -f "$prefix/include/onnx_bcast/onnx_bcast.h" ] || fail "header not installed"
ls "$prefix"/lib*/cmake/onnx_bcast/onnx_bcastConfig.cmake >/dev/null || fail "no package config"
[ -x "$prefix/bin/onnx-bcast" ] || fail "CLI not installed"
# Only the public API is exported: no symbol of the internal layers leaks out.
symbols=$(nm -DC --defined-only "$lib")
leaked=$(grep -E 'onnx_bcast::(proto|passes|rt|bcast|verify|cli)::' <<<"$symbols" | head -5 || true)
[ -z "$leaked" ] || fail "internal symbols exported: $leaked"
for f in 'Check(' 'Optimize(' 'Run(' 'Verify(' 'LoadModel(' 'SaveModel('; do
  grep -qF "onnx_bcast::$f" <<<"$symbols" || fail "onnx_bcast::$f not exported"
done
# The installed header stands alone (no project-internal includes).
if grep -E '#include "(proto|passes|runtime|verify|broadcast)/' \
    "$prefix/include/onnx_bcast/onnx_bcast.h"; then
  fail "public header includes internal headers"
fi

# (b) Configure and build the converter against the prefix only (the source tree is not on any
# include path: the example sees the installed header and library).
"$cmake" -S "$src/examples/converter" -B "$scratch/converter" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$cxx_flags" -DCMAKE_PREFIX_PATH="$prefix" \
  >"$scratch/configure.log" ||
  { cat "$scratch/configure.log"; fail "configure"; }
"$cmake" --build "$scratch/converter" -j2 >"$scratch/build.log" 2>&1 ||
  { cat "$scratch/build.log"; fail "build"; }
converter=$scratch/converter/converter
# Capture first: with pipefail, `ldd | grep -q` fails when grep exits early and ldd gets SIGPIPE.
deps=$(ldd "$converter")
grep -q "$prefix/.*libonnx_bcast.so" <<<"$deps" ||
  { echo "$deps"; fail "converter does not load the installed libonnx_bcast.so"; }

# (c) Run it: a good model is checked, rewritten for the explicit target (run-time shapes, so
# its symbolic batch needs no binding), verified and written.
"$converter" "$src/models/cnn_block.onnx" explicit "$scratch/cnn_explicit.onnx" >"$scratch/good.out" 2>&1 ||
  { cat "$scratch/good.out"; fail "converter on cnn_block.onnx exited $?"; }
cat "$scratch/good.out"
grep -q '^check: [0-9]* broadcasting nodes' "$scratch/good.out" || fail "no check line"
grep -q '^align-ranks: ' "$scratch/good.out" || fail "no pass report"
grep -q '^verify: equal' "$scratch/good.out" || fail "no verify line"
[ -s "$scratch/cnn_explicit.onnx" ] || fail "no output model"
"$prefix/bin/onnx-bcast" check "$scratch/cnn_explicit.onnx" >/dev/null || fail "output does not check"
# docs/embedding.md shows this run's output (the output path aside) under its command line.
shown=$(awk '/^\$ converter models\/cnn_block.onnx explicit cnn_explicit.onnx$/ {on = 1; next}
             on && /^```/ {exit} on' "$src/docs/embedding.md")
got=$(sed "s|$scratch/cnn_explicit.onnx|cnn_explicit.onnx|" "$scratch/good.out")
[ -n "$shown" ] || fail "docs/embedding.md shows no run of the converter on cnn_block.onnx"
[ "$shown" = "$got" ] || { diff <(echo "$shown") <(echo "$got");
  fail "docs/embedding.md shows another output than the converter prints (diff: - shown, + run)"; }

# External data: the weights stay beside the input and are carried to the output.
mkdir -p "$scratch/ext"
"$converter" "$src/models/external/mlp.onnx" explicit "$scratch/ext/mlp.onnx" >"$scratch/ext.out" 2>&1 ||
  { cat "$scratch/ext.out"; fail "converter on external/mlp.onnx"; }
"$prefix/bin/onnx-bcast" verify "$src/models/external/mlp.onnx" "$scratch/ext/mlp.onnx" >/dev/null ||
  fail "external-data output does not verify"

# A broadcast error: exit 1, the node named, nothing written.
set +e
"$converter" "$src/tests/fixtures/check/add_mismatch.onnxtxt" ncnn "$scratch/bad.onnx" \
  >"$scratch/bad.out" 2>&1
code=$?
set -e
cat "$scratch/bad.out"
[ "$code" = 1 ] || fail "bad model: exit $code, expected 1"
grep -q 'Add' "$scratch/bad.out" || fail "bad model: the node is not named"
[ ! -e "$scratch/bad.onnx" ] || fail "bad model: output written"

# Unknown target: an error status, exit 2.
set +e
"$converter" "$src/models/cnn_block.onnx" no-such-target "$scratch/x.onnx" >"$scratch/usage.out" 2>&1
code=$?
set -e
[ "$code" = 2 ] || fail "unknown target: exit $code, expected 2"
grep -q "no-such-target" "$scratch/usage.out" || fail "unknown target not named"
# (d) The Python package, installed under the prefix like the library it links.
if [ -n "$python" ]; then
  init=$(find "$prefix" -path '*/onnx_bcast/__init__.py' | head -1)
  [ -n "$init" ] || fail "no onnx_bcast package under $prefix"
  pkg=$(dirname "$init")
  [ -f "$pkg/__init__.pyi" ] && [ -f "$pkg/py.typed" ] || fail "stubs not installed in $pkg"
  ls "$pkg"/_core*.so >/dev/null || fail "no extension in $pkg"
  deps=$(ldd "$pkg"/_core*.so)
  grep -q "$prefix/.*libonnx_bcast.so" <<<"$deps" ||
    { echo "$deps"; fail "the extension does not load the installed libonnx_bcast.so"; }
  (cd "$scratch" && env -u PYTHONPATH PYTHONPATH="$(dirname "$pkg")" PYTHONDONTWRITEBYTECODE=1 \
    "$python" - "$prefix" "$src/models/cnn_block.onnx" <<'PY'
import inspect, sys
import onnx_bcast
assert onnx_bcast.__file__.startswith(sys.argv[1]), onnx_bcast.__file__
report = onnx_bcast.check(sys.argv[2])
assert report["summary"]["error"] == 0 and report["nodes"], report["summary"]
assert "lint" in inspect.signature(onnx_bcast.check).parameters
print("installed python package:", onnx_bcast.__file__, report["summary"])
PY
  ) || fail "the installed Python package does not work"
fi
echo "consumer test: passed"

#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer, plus a short run of
# each libFuzzer harness on its committed corpus: one clang tree (build-san by default) with
# BCAST_SANITIZE=ON and BCAST_BUILD_FUZZ=ON. Any sanitizer report fails the test that hit it.
#   scripts/sanitize.sh                 configure, build, run everything
#   BCAST_SAN_BUILD=dir JOBS=n ...      another build dir / parallelism
#   BCAST_REQUIRE_DEPS=ON ...           fail the deps.* tests of missing dependencies (test.sh)
#   scripts/sanitize.sh -L fuzz         extra arguments go to ctest (here: only the fuzz runs)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BCAST_SAN_BUILD:-build-san}
jobs=${JOBS:-2}

# Each harness's fuzzing time is set in one place, fuzz/CMakeLists.txt (docs/hostile-input.md
# states it; ctest fuzz_seconds_documented holds both); BCAST_FUZZ_SECONDS=N overrides it for
# one run, and without it a value cached by an earlier override is dropped.
if [ -n "${BCAST_FUZZ_SECONDS:-}" ]; then
  fuzz_seconds=("-DBCAST_FUZZ_SECONDS=$BCAST_FUZZ_SECONDS")
else
  fuzz_seconds=(-UBCAST_FUZZ_SECONDS)
fi

# -O1 keeps the instrumented suite fast while leaving stacks readable; line tables are enough
# for symbolized reports and cost far less to build and link than full -g. The test executables
# themselves are glue: -O0 builds them in about half the time (tests/CMakeLists.txt).
cmake -S . -B "$build" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  -DBCAST_SANITIZE=ON -DBCAST_BUILD_FUZZ=ON -DBCAST_BUILD_BENCH=OFF \
  -DBCAST_TEST_CXX_FLAGS=-O0 \
  "-DBCAST_REQUIRE_DEPS=${BCAST_REQUIRE_DEPS:-OFF}" \
  "${fuzz_seconds[@]}"
start=$SECONDS
cmake --build "$build" -j"$jobs"
echo "sanitize.sh: build $((SECONDS - start)) s" >&2

# halt_on_error/abort_on_error: a report is a failed test, never a warning in a log.
# detect_leaks stays on for our tests; the fuzz entries set their own options (fuzz/CMakeLists.txt).
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
start=$SECONDS
trap 'echo "sanitize.sh: ctest $((SECONDS - start)) s" >&2' EXIT
ctest --test-dir "$build" -j"$jobs" --output-on-failure "$@"

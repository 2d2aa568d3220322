#!/usr/bin/env bash
# The whole test suite (the README's second command; .ci/run runs exactly this):
#   1. installs missing Debian packages (scripts/setup.sh),
#   2. builds with the system compiler and runs every ctest entry (unit, golden, e2e, hostile
#      catalogue, kill-during-save, embedding, Python, fuzz-free conformance),
#   3. builds a clang tree under AddressSanitizer + UndefinedBehaviorSanitizer and runs the
#      suite there plus a short run of each libFuzzer harness and the replay of every crash
#      ever found (scripts/sanitize.sh). BCAST_SANITIZE_STAGE=0 skips it (a quick local run).
# Each stage's wall time goes to stderr at the end, so that a CI log shows where the budget
# (45 minutes on 2 cores, docs/ci.md) went.
set -euo pipefail
cd "$(dirname "$0")/.."
times=()
stage() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  times+=("$name $((SECONDS - start)) s")
}
report() { printf 'test.sh: %s\n' "${times[@]}" "total $SECONDS s" >&2; }
trap report EXIT
stage setup ./scripts/setup.sh
# setup.sh has just installed every optional dependency: a deps.* test fails if CMake still
# misses one, instead of its tests silently dropping out (sanitize.sh passes it on too).
export BCAST_REQUIRE_DEPS=ON
stage configure cmake -S . -B build -DBCAST_REQUIRE_DEPS=ON
stage build cmake --build build -j2
stage ctest ctest --test-dir build --output-on-failure -j2
if [ "${BCAST_SANITIZE_STAGE:-1}" = 1 ]; then
  stage sanitize ./scripts/sanitize.sh
fi

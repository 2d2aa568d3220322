#!/usr/bin/env bash
# The whole test suite (the README's second command; .ci/run runs exactly this):
#   1. installs missing Debian packages (scripts/setup.sh),
#   2. builds with the system compiler and runs every ctest entry (unit, golden, e2e, hostile
#      catalogue, kill-during-save, embedding, Python, fuzz-free conformance),
#   3. builds a clang tree under AddressSanitizer + UndefinedBehaviorSanitizer and runs the
#      same suite there plus a short run of each libFuzzer harness and the replay of every crash
#      ever found (scripts/sanitize.sh). BCAST_SANITIZE_STAGE=0 skips it (a quick local run).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2
if [ "${BCAST_SANITIZE_STAGE:-1}" = 1 ]; then
  ./scripts/sanitize.sh
fi

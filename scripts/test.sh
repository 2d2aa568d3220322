#!/usr/bin/env bash
# The whole test suite (the README's second command; .ci/run runs exactly this):
#   1. installs missing Debian packages (scripts/setup.sh),
#   2. builds with the system compiler and runs every ctest entry (unit, golden, e2e, hostile
#      catalogue, embedding, Python, conformance),
#   3. builds a second tree with clang under AddressSanitizer + UndefinedBehaviorSanitizer and
#      runs the same suite there, plus a short run of each libFuzzer harness
#      (scripts/sanitize.sh).
# Set BCAST_NO_SANITIZE=1 to stop after step 2 while iterating.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2
if [ "${BCAST_NO_SANITIZE:-0}" != 1 ]; then
  ./scripts/sanitize.sh
fi

#!/bin/sh
# deps.<name>: an optional dependency as CMake found it when configuring.
# Found: passes. Missing: the tests that need it were not registered, so the count just drops;
# where the dependency is required (REQUIRED = required: BCAST_REQUIRE_DEPS, set by
# scripts/test.sh and so by .ci/run; or CI set when ctest runs) that fails here, naming the
# package, instead of vanishing; elsewhere, and always for one setup.sh does not install
# (REQUIRED = never: ncnn), it is reported as skipped (exit 77, the entry's SKIP_RETURN_CODE).
#   dependency_test.sh NAME found|missing WHAT-IT-GATES INSTALL-HINT required|optional|never
name=$1 state=$2 gates=$3 hint=$4 required=${5:-optional}
if [ "$state" = found ]; then
  echo "deps.$name: found ($gates registered)"
  exit 0
fi
if [ "$required" = never ]; then
  echo "deps.$name: missing, so $gates are not registered ($hint)"
  echo "deps.$name: not installed by scripts/setup.sh: skipped, never required"
  exit 77
fi
echo "deps.$name: missing, so $gates are not registered ($hint; scripts/setup.sh installs it)"
if [ "$required" = required ]; then
  echo "deps.$name: required (BCAST_REQUIRE_DEPS: scripts/test.sh, .ci/run): scripts/setup.sh installs it, so it must be found"
  exit 1
fi
if [ -n "${CI:-}" ]; then
  echo "deps.$name: CI is set: a dependency setup.sh installs must be found"
  exit 1
fi
exit 77

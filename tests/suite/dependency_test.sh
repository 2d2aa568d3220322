#!/bin/sh
# deps.<name>: a dependency that scripts/setup.sh installs, as CMake found it when configuring.
# Found: passes. Missing: the tests that need it were not registered, so the count just drops;
# in CI (CI set) that fails here, naming the package, instead of vanishing; elsewhere it is
# reported as skipped (exit 77, the entry's SKIP_RETURN_CODE).
#   dependency_test.sh NAME found|missing WHAT-IT-GATES INSTALL-HINT
name=$1 state=$2 gates=$3 hint=$4
if [ "$state" = found ]; then
  echo "deps.$name: found ($gates registered)"
  exit 0
fi
echo "deps.$name: missing, so $gates are not registered ($hint; scripts/setup.sh installs it)"
if [ -n "${CI:-}" ]; then
  echo "deps.$name: CI is set: a dependency setup.sh installs must be found"
  exit 1
fi
exit 77

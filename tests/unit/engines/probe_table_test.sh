#!/usr/bin/env bash
# Regenerates the engine's probe table and profile from the installed engine and compares them
# with the committed ones (docs/engines-<engine>-<version>.md, engines/profiles/
# <engine>-<version>.profile): any changed cell fails with the diff, and a new engine version
# fails until its files are committed.
# Usage: probe_table_test.sh ONNX_BCAST SOURCE_DIR WORK_DIR ENGINE [rules]
# With `rules` (ncnn, MNN), only the profile's rules are compared (its comments and
# description, which count cells, and the table are not): some cells read memory out of bounds
# inside the engine (ncnn: a 5-D constant, a broadcast Sum; MNN: Where's broadcast operand), so
# their garbage values, and which of them happen to match, differ from run to run, while the
# rules they map to do not.
set -euo pipefail
cli=$1 src=$2 work=$3 engine=$4 mode=${5:-all}
rm -rf "$work"
mkdir -p "$work"
"$cli" probe-engine "$engine" --out-dir "$work"
status=0
for made in "$work"/*; do
  base=$(basename "$made")
  case $base in
    *.md) committed=$src/docs/$base ;;
    *.profile) committed=$src/engines/profiles/$base ;;
    *) echo "unexpected output $base" >&2; exit 1 ;;
  esac
  if [[ ! -f $committed ]]; then
    echo "FAIL: $committed does not exist: a new $engine version? Commit the regenerated file" \
         "(onnx-bcast probe-engine $engine --out-dir DIR)" >&2
    status=1
    continue
  fi
  if [[ $mode == rules ]]; then
    [[ $base == *.md ]] && continue
    if ! diff -u <(grep -v '^#\|^description = ' "$committed") <(grep -v '^#\|^description = ' "$made"); then
      echo "FAIL: the rules of $base differ from the committed ones (diff above)" >&2
      status=1
    fi
    continue
  fi
  if ! diff -u "$committed" "$made"; then
    echo "FAIL: $base differs from the committed one (diff above: - committed, + measured now)" >&2
    status=1
  fi
done
exit $status

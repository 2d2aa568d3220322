#!/usr/bin/env bash
# The README's embedding examples must be the tested files themselves: every example file must
# appear verbatim in README.md's embedding section.
#   docs_examples_test.sh SOURCE_DIR
set -euo pipefail
src=$1
status=0
py=/usr/bin/python3; [ -x "$py" ] || py=python3
check() {  # check DOC FILE: FILE's full text is a substring of DOC
  if ! "$py" -c 'import sys; sys.exit(open(sys.argv[2]).read() not in open(sys.argv[1]).read())' \
      "$1" "$2"; then
    echo "FAIL: $2 is not copied verbatim into $1" >&2
    status=1
  fi
}
if ! grep -q '^## Embedding' "$src/README.md"; then
  echo "FAIL: README.md has no '## Embedding' section" >&2
  exit 1
fi
docs=("$src/README.md")
for doc in "${docs[@]}"; do
  for f in examples/converter/converter.cc examples/converter/CMakeLists.txt \
           examples/python/convert.py examples/ci/check_models.sh; do
    check "$doc" "$src/$f"
  done
done
[ "$status" = 0 ] && echo "docs examples: ${#docs[@]} document(s) carry every example verbatim"
exit "$status"

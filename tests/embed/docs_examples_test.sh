#!/usr/bin/env bash
# The embedding and CI examples in the docs must be the tested files themselves: every example
# file must appear verbatim in the docs page that shows it, and the README must link that page
# (the README is the short page; the reference moved to docs/, issue 25).
#   docs/embedding.md: examples/converter/converter.cc, examples/converter/CMakeLists.txt,
#                      examples/python/convert.py (run by consumer_test.sh, test_examples.py
#                      and venv_install_test.py, which reads the block from this page)
#   docs/ci.md:        examples/ci/check_models.sh (run by ci_step_test.sh)
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
heading() {  # heading DOC LINE: DOC has that heading line
  if ! grep -qxF "$2" "$1"; then
    echo "FAIL: $1 has no '$2' heading" >&2
    status=1
  fi
}
heading "$src/docs/embedding.md" '# Embedding: C++ API, CMake package, Python module'
heading "$src/docs/embedding.md" '## In a Python conversion script'
heading "$src/docs/ci.md" '# In CI'
checked=0
while read -r page files; do
  checked=$((checked + 1))
  if ! grep -qF "($page)" "$src/README.md"; then
    echo "FAIL: README.md does not link $page" >&2
    status=1
  fi
  for f in $files; do
    check "$src/$page" "$src/$f"
  done
done <<'PAGES'
docs/embedding.md examples/converter/converter.cc examples/converter/CMakeLists.txt
docs/embedding.md examples/python/convert.py
docs/ci.md examples/ci/check_models.sh
PAGES
[ "$status" = 0 ] &&
  echo "docs examples: $checked page line(s): every example verbatim, each page linked from README.md"
exit "$status"

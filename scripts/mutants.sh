#!/usr/bin/env bash
# The mutation check (issue 43): see scripts/mutants.py. Slow; outside the README's test
# command. docs/ci.md says when to run it.
exec python3 "$(dirname "$0")/mutants.py" "$@"

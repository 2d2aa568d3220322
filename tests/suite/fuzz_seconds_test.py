#!/usr/bin/env python3
"""fuzz_seconds_documented: the time each fuzz harness runs in the test suite is set in one
place (fuzz/CMakeLists.txt's BCAST_FUZZ_SECONDS default), and docs/hostile-input.md states it.
That scripts/sanitize.sh passes a value only when the caller sets BCAST_FUZZ_SECONDS (a default
of its own once halved the suite's fuzzing time without a word) is ctest ci_path's: it runs
.ci/run with cmake stubbed and reads what reaches cmake, whatever the spelling of a default
(this file's text search knew only `${BCAST_FUZZ_SECONDS:-N}`).
usage: fuzz_seconds_test.py SOURCE_DIR
"""
import re
import sys

from suite_common import report


def main() -> int:
    src = sys.argv[1]
    cmake = open(f"{src}/fuzz/CMakeLists.txt").read()
    m = re.search(r"set\(BCAST_FUZZ_SECONDS (\d+) CACHE", cmake)
    if not m:
        print("fuzz/CMakeLists.txt sets no BCAST_FUZZ_SECONDS default")
        return 1
    seconds = int(m.group(1))
    failures = []
    docs = open(f"{src}/docs/hostile-input.md").read()
    stated = re.findall(r"runs each harness for (\d+) s", docs)
    if stated != [str(seconds)]:
        failures.append(f"docs/hostile-input.md states {stated or 'no time'} per harness, "
                        f"fuzz/CMakeLists.txt sets {seconds} s")
    return report("fuzz_seconds_documented", failures,
                  f"{seconds} s per harness, in one place and documented")


if __name__ == "__main__":
    sys.exit(main())

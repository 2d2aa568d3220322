#!/usr/bin/env python3
"""fuzz_seconds_documented: the time each fuzz harness runs in the test suite is set in one
place (fuzz/CMakeLists.txt's BCAST_FUZZ_SECONDS default), and docs/hostile-input.md states it.
scripts/sanitize.sh, which builds the fuzz tree for the README's test command, passes a value
only when the caller sets BCAST_FUZZ_SECONDS: a default of its own would change the suite's
fuzzing time without a word (it once halved it).
usage: fuzz_seconds_test.py SOURCE_DIR
"""
import re
import sys


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
    sanitize = open(f"{src}/scripts/sanitize.sh").read()
    for default in re.findall(r"BCAST_FUZZ_SECONDS:-(\w+)", sanitize):
        failures.append(f"scripts/sanitize.sh defaults BCAST_FUZZ_SECONDS to {default}, "
                        f"fuzz/CMakeLists.txt to {seconds}")
    for f in failures:
        print(f"fuzz_seconds_documented: {f}")
    if not failures:
        print(f"fuzz_seconds_documented: {seconds} s per harness, in one place and documented")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

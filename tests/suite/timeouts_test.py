#!/usr/bin/env python3
"""ctest_timeouts: every ctest entry of this build has a TIMEOUT of its own.

ctest's default is no limit at all, so one hanging test stalls CI until its own limit and the
run does not land. Reads `ctest --show-only=json-v1` (the discovered gtest cases included, which
exist only once their executables are built) and lists every entry without the property.
usage: timeouts_test.py CTEST BUILD_DIR
"""
import json
import subprocess
import sys


def main() -> int:
    ctest, build = sys.argv[1], sys.argv[2]
    shown = subprocess.run([ctest, "--show-only=json-v1", "--test-dir", build],
                           capture_output=True, text=True, check=True)
    tests = json.loads(shown.stdout)["tests"]
    missing = []
    for t in tests:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        if "TIMEOUT" not in props or float(props["TIMEOUT"]) <= 0:
            missing.append(t["name"])
    print(f"ctest_timeouts: {len(tests)} entries, {len(missing)} without a TIMEOUT")
    for name in missing[:50]:
        print(f"  no TIMEOUT: {name}")
    if len(missing) > 50:
        print(f"  ... and {len(missing) - 50} more")
    # At least this suite and a discovered gtest case: an empty listing proves nothing.
    if len(tests) < 2:
        print("ctest_timeouts: ctest listed fewer than 2 entries")
        return 1
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())

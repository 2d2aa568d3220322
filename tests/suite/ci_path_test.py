#!/usr/bin/env python3
"""ci_path: what `.ci/run` asks of the build, seen by running it. A copy of `.ci/run`,
scripts/test.sh and scripts/sanitize.sh runs with scripts/setup.sh, cmake and ctest replaced by
stubs that record their arguments (so it takes a second and installs, builds and tests nothing);
then:
- both configure steps (the normal tree and the sanitizer tree) pass -DBCAST_REQUIRE_DEPS=ON,
  so that a dependency setup.sh installs but CMake did not find fails its deps.* entry in CI's
  path whether or not CI is set (issue 43 item 8);
- neither passes a BCAST_SKIP that leaves something out;
- the sanitizer tree's fuzzing time is fuzz/CMakeLists.txt's unless BCAST_FUZZ_SECONDS is set
  by the caller: with it unset, no -DBCAST_FUZZ_SECONDS=... reaches cmake however a script
  spells a default (`${V:-30}`, `${V-30}`, `${V:=30}`, an assignment, a literal), and a cached
  override is dropped (-U); with it set, exactly that value is passed;
- both trees run ctest.
And tests/suite/dependency_test.sh's answers: found passes; missing fails where required (or
with CI set) and is a skip (77) elsewhere; a dependency setup.sh does not install (ncnn) is a
skip even in CI.
usage: ci_path_test.py SOURCE_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

from suite_common import make_stubs, report, write_executable

SEP = "\x1f"
STUB = """#!/bin/sh
# Records one call: the tool's name and its arguments, separated by US.
{ printf '%s' "$(basename "$0")"; for a in "$@"; do printf '\\037%s' "$a"; done; echo; } \
  >>"$CI_PATH_LOG"
exit 0
"""


def run_ci(src, env_extra):
    """Runs the copied .ci/run; returns (exit code, output, recorded calls as lists)."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "tree")
        for rel in (".ci/run", "scripts/test.sh", "scripts/sanitize.sh"):
            os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
            shutil.copy2(os.path.join(src, rel), os.path.join(tree, rel))
        stubs = os.path.join(tmp, "bin")
        make_stubs(stubs, ("cmake", "ctest"), STUB)
        write_executable(os.path.join(tree, "scripts", "setup.sh"), STUB)
        log = os.path.join(tmp, "calls.log")
        open(log, "w").close()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("BCAST_") and k not in ("CI", "JOBS")}
        env["PATH"] = stubs + ":/usr/bin:/bin"
        env["CI_PATH_LOG"] = log
        env.update(env_extra)
        r = subprocess.run(["bash", os.path.join(tree, ".ci", "run")], cwd=tree, env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        with open(log) as f:
            calls = [line.rstrip("\n").split(SEP) for line in f if line.strip()]
        return r.returncode, r.stdout + r.stderr, calls


def check_ci_path(src, failures):
    for fuzz in (None, "7"):
        env = {} if fuzz is None else {"BCAST_FUZZ_SECONDS": fuzz}
        code, out, calls = run_ci(src, env)
        what = "BCAST_FUZZ_SECONDS unset" if fuzz is None else f"BCAST_FUZZ_SECONDS={fuzz}"
        if code != 0:
            failures.append(f"{what}: .ci/run exited {code} with stubbed tools:\n{out}")
            continue
        configures = [c[1:] for c in calls if c[0] == "cmake" and "-S" in c]
        ctests = [c for c in calls if c[0] == "ctest"]
        if ["setup.sh"] not in calls:
            failures.append(f"{what}: .ci/run never ran scripts/setup.sh: {calls}")
        if len(configures) != 2:
            failures.append(f"{what}: expected 2 configure steps (normal, sanitizer), got "
                            f"{len(configures)}: {configures}")
            continue
        if len(ctests) != 2:
            failures.append(f"{what}: expected ctest in both trees, got {ctests}")
        for args in configures:
            tree = "sanitizer" if "-DBCAST_SANITIZE=ON" in args else "normal"
            if "-DBCAST_REQUIRE_DEPS=ON" not in args:
                failures.append(f"{what}: the {tree} tree is configured without "
                                f"-DBCAST_REQUIRE_DEPS=ON: {args}")
            for a in args:
                if a.startswith("-DBCAST_SKIP=") and a != "-DBCAST_SKIP=":
                    failures.append(f"{what}: the {tree} tree leaves out {a}")
        sanitizer = [a for a in configures if "-DBCAST_SANITIZE=ON" in a]
        if len(sanitizer) != 1:
            failures.append(f"{what}: no sanitizer configure step: {configures}")
            continue
        fuzz_args = [a for a in sanitizer[0] if "BCAST_FUZZ_SECONDS" in a]
        want = ["-UBCAST_FUZZ_SECONDS"] if fuzz is None else [f"-DBCAST_FUZZ_SECONDS={fuzz}"]
        if fuzz_args != want:
            failures.append(f"{what}: the sanitizer tree gets {fuzz_args or 'nothing'} for the "
                            f"fuzzing time, want {want} (fuzz/CMakeLists.txt sets it; only "
                            "the caller overrides it)")


def check_dependency_script(src, failures):
    script = os.path.join(src, "tests", "suite", "dependency_test.sh")
    cases = [
        # (state, required, CI set, want)
        ("found", "required", False, 0),
        ("found", "optional", True, 0),
        ("missing", "required", False, 1),
        ("missing", "optional", True, 1),
        ("missing", "optional", False, 77),
        ("missing", "never", True, 77),
        ("missing", "never", False, 77),
    ]
    for state, required, ci, want in cases:
        env = {k: v for k, v in os.environ.items() if k != "CI"}
        if ci:
            env["CI"] = "true"
        r = subprocess.run(["/bin/sh", script, "x", state, "its tests", "apt-get install x",
                            required], env=env, capture_output=True, text=True, timeout=10)
        if r.returncode != want:
            failures.append(f"dependency_test.sh x {state} ... {required} (CI "
                            f"{'set' if ci else 'unset'}): exit {r.returncode}, want {want}:\n"
                            f"{r.stdout}{r.stderr}")


def main():
    src = os.path.abspath(sys.argv[1])
    failures = []
    check_ci_path(src, failures)
    check_dependency_script(src, failures)
    return report("ci_path", failures, ".ci/run requires every dependency, skips nothing, keeps "
                  "the fuzzing time of fuzz/CMakeLists.txt unless told; dependency_test.sh "
                  "answers as documented")


if __name__ == "__main__":
    sys.exit(main())

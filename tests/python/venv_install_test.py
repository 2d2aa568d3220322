"""pip install, as a user does it: copies the source tree into a scratch directory (the source is
never written to), creates a fresh virtual environment with `python3 -m venv
--system-site-packages`, runs `pip install --no-build-isolation --no-index .` in the copy
(setup.py builds only the extension; nothing is downloaded; BCAST_PYTHON_BUILD_DIR and
BCAST_CMAKE_BUILD_DIR keep every build file under the copy's build/, which the test checks), then
with the venv's interpreter and no PYTHONPATH:
  - the Python example of the docs, extracted from docs/embedding.md (the README links it),
    converts and verifies a model;
  - test_package.py (signatures, stubs, optimize's return types, report=, one schema) passes
    against the installed package;
and removes everything. Time: the build goes through ccache, and the CMake build directory is
the copy's build/, one level under the copy's root like the project's own build/, so that with
ccache's base_dir the compile commands are the project build's and its objects are cache hits
(hence SCRATCH is best under the build tree, inside base_dir).

  venv_install_test.py SOURCE_DIR CLI SCRATCH
Environment: BCAST_PYTHON (the interpreter, default /usr/bin/python3), BCAST_KEEP=1 keeps
SCRATCH.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time


def docs_python_example(page):
    """The ```python block of docs/embedding.md's 'In a Python conversion script' section."""
    section = page.split("\n## In a Python conversion script\n", 1)
    if len(section) != 2:
        sys.exit("FAIL: docs/embedding.md has no '## In a Python conversion script' section")
    block = re.search(r"```python\n(.*?)```", section[1], re.S)
    if block is None:
        sys.exit("FAIL: that section has no ```python block")
    return block.group(1)


def tree(root):
    """Every path under the source tree, build directories and .git aside."""
    paths = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not (d == ".git" or d.startswith("build"))]
        rel = pathlib.Path(dirpath).relative_to(root)
        paths.update(str(rel / n) for n in dirnames + filenames)
    return paths


def run(cmd, **kwargs):
    print("+", " ".join(map(str, cmd)), flush=True)
    return subprocess.run(list(map(str, cmd)), **kwargs)


def main():
    source = pathlib.Path(sys.argv[1]).resolve()
    cli = pathlib.Path(sys.argv[2]).resolve()
    python = os.environ.get("BCAST_PYTHON", "/usr/bin/python3")
    tmp = pathlib.Path(sys.argv[3]).resolve()
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "2")
    env["PIP_NO_INDEX"] = "1"  # nothing may be downloaded: a missing dependency fails here
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    try:
        t0 = time.monotonic()
        src = tmp / "src"
        shutil.copytree(source, src, ignore=shutil.ignore_patterns(
            "build", "build-*", ".git", "*.egg-info", "__pycache__"))
        before = tree(src)
        env["BCAST_CMAKE_BUILD_DIR"] = str(src / "build")
        env["BCAST_PYTHON_BUILD_DIR"] = str(src / "build" / "setuptools")
        venv = tmp / "venv"
        run([python, "-m", "venv", "--system-site-packages", venv], check=True, env=env)
        vpy = venv / "bin" / "python"
        t1 = time.monotonic()
        r = run([vpy, "-m", "pip", "install", "--no-build-isolation", "--no-index", "."],
                cwd=src, env=env, capture_output=True, text=True)
        t2 = time.monotonic()
        if r.returncode != 0:
            print(r.stdout[-6000:], r.stderr[-6000:])
            sys.exit(f"FAIL: pip install exited {r.returncode}")
        added = sorted(tree(src) - before)
        if added:
            sys.exit(f"FAIL: pip install wrote outside the build directory: {added[:10]}")

        # Imported from the venv, not from any build tree.
        where = subprocess.run(
            [vpy, "-c", "import onnx_bcast, sys; print(onnx_bcast.__file__); "
                        "print(sys.prefix)"],
            cwd=tmp, env=env, capture_output=True, text=True, check=True).stdout.split()
        if not where[0].startswith(str(venv)):
            sys.exit(f"FAIL: onnx_bcast imported from {where[0]}, not from the venv {venv}")

        example = tmp / "convert.py"
        example.write_text(docs_python_example((source / "docs" / "embedding.md").read_text()))
        out = tmp / "legacy_explicit.onnx"
        r = run([vpy, example, source / "models" / "legacy_axis.onnx", "explicit", out],
                cwd=tmp, env=env, capture_output=True, text=True)
        print(r.stdout, r.stderr)
        if r.returncode != 0 or "verify: equal" not in r.stdout or not out.is_file():
            sys.exit(f"FAIL: the Python example of docs/embedding.md exited {r.returncode}")
        r = run([vpy, "-c", "import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]))",
                 out], env=env)
        if r.returncode != 0:
            sys.exit("FAIL: the example's output does not pass onnx.checker")

        test_env = dict(env, BCAST_SOURCE_DIR=str(source), BCAST_CLI=str(cli))
        r = run([vpy, "-m", "unittest", "-v", "test_package"],
                cwd=source / "tests" / "python", env=test_env)
        if r.returncode != 0:
            sys.exit("FAIL: test_package against the installed package")
        t3 = time.monotonic()
        print(f"venv install test: passed (venv {t1 - t0:.1f} s, pip install "
              f"{t2 - t1:.1f} s, example and tests {t3 - t2:.1f} s)")
    finally:
        if os.environ.get("BCAST_KEEP") == "1":
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

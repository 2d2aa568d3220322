#!/usr/bin/env python3
"""The README's examples are real: every fenced block whose first line is
`$ build/bin/onnx-bcast ...` is run, command by command, from a scratch folder laid out like the
source tree (models/ and tests/ linked, build/bin/onnx-bcast the built CLI), stdout and stderr
together, and the output compared with the lines the README shows under the command. Timings
`(12.3 ms)` compare as any number; a line `...` stands for any lines. Blocks run in order in the
same folder, so a later example may use a file an earlier one wrote (verify reads opt's output).
`probe-engine` is not run here: engines.probe_table runs it and compares what it writes with the
committed table and profile.

  readme_examples_test.py SOURCE_DIR CLI WORK_DIR [DOC ...]   (DOC default: README.md)
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys

PROMPT = "$ build/bin/onnx-bcast "
NOT_RUN = {"probe-engine": "engines.probe_table runs it"}
TIMING = re.compile(r"\(\d+(?:\.\d+)? (?:ms|s)\)")


def blocks(text):
    """(line number, [lines]) of every fenced block that opens with the CLI prompt."""
    result, block, start = [], None, 0
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            if block is None:
                block, start = [], number + 1
            else:
                if block and block[0].startswith(PROMPT):
                    result.append((start, block))
                block = None
        elif block is not None:
            block.append(line)
    return result


def commands(lines):
    """(command, expected output lines) for each `$ ` line of a block."""
    result = []
    for line in lines:
        if line.startswith("$ "):
            result.append((line[2:], []))
        else:
            result[-1][1].append(line)
    for _, expected in result:
        while expected and not expected[-1].strip():
            expected.pop()
    return result


def matches(expected, actual):
    pattern = "".join(r"(?:[^\n]*\n)*?" if line == "..."
                      else re.escape(TIMING.sub("(T)", line)) + "\n" for line in expected)
    got = "".join(TIMING.sub("(T)", line) + "\n" for line in actual)
    return re.fullmatch(pattern, got) is not None


def main():
    src = pathlib.Path(sys.argv[1]).resolve()
    cli = pathlib.Path(sys.argv[2]).resolve()
    work = pathlib.Path(sys.argv[3]).resolve()
    docs = sys.argv[4:] or ["README.md"]
    shutil.rmtree(work, ignore_errors=True)
    (work / "build" / "bin").mkdir(parents=True)
    (work / "build" / "bin" / "onnx-bcast").symlink_to(cli)
    for name in ("models", "tests"):
        (work / name).symlink_to(src / name)
    env = dict(os.environ, LC_ALL="C.UTF-8")
    failures, run, skipped = 0, 0, 0
    for doc in docs:
        found = blocks((src / doc).read_text())
        if not found:
            print(f"FAIL: {doc} has no block starting with '{PROMPT}'", file=sys.stderr)
            failures += 1
        for line, block in found:
            for command, expected in commands(block):
                sub = command[len("build/bin/onnx-bcast "):].split()[0]
                if sub in NOT_RUN:
                    print(f"{doc}:{line}: not run ({NOT_RUN[sub]}): $ {command}")
                    skipped += 1
                    continue
                r = subprocess.run(["bash", "-c", command + " 2>&1"], cwd=work, env=env,
                                   stdout=subprocess.PIPE, text=True, timeout=300)
                actual = r.stdout.rstrip("\n").split("\n") if r.stdout.strip() else []
                run += 1
                if not matches(expected, actual):
                    failures += 1
                    print(f"FAIL: {doc}:{line}: $ {command}\n--- the document shows:\n" +
                          "\n".join(expected) + "\n--- the CLI printed:\n" + "\n".join(actual),
                          file=sys.stderr)
    if failures:
        return 1
    print(f"readme examples: {run} command(s) print what {', '.join(docs)} shows"
          f" ({skipped} not run)")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The examples of the README and of the docs pages it links are real: every fenced block whose
first line is `$ build/bin/onnx-bcast ...` or `$ onnx-bcast ...` is run, one bash per block (so
`$ echo $?` sees the command before it), from a scratch folder laid out like the source tree
(models/ and tests/ linked; build/bin/onnx-bcast, also first on PATH, is the built CLI with its
stdout line-buffered as on a terminal), stdout and stderr together, and each command's output
is compared with the lines the page shows under it. Timings `(12.3 ms)` compare as any number;
a line `...` stands for any lines. Pages run in order in the same folder, so a later example may
use a file an earlier one wrote (the README's verify reads its opt's output). Not run: the
`probe-engine` command (engines.probe_table runs it and compares what it writes with the
committed table and profile), and a block right under
`<!-- not run by docs_readme_examples: REASON -->` (timings, a recording in a terminal).
Also: the pass and target tables of docs/cli-opt.md and the README's target table have one row
per pass and target of the registry (`onnx-bcast opt --list-passes`).

  readme_examples_test.py SOURCE_DIR CLI WORK_DIR [DOC ...]   (DOC default: DOCS below)
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys

PROMPTS = ("$ build/bin/onnx-bcast ", "$ onnx-bcast ")
MARK = "@@readme-example-end@@"
DOCS = ["README.md", "docs/cli-check.md", "docs/cli-opt.md", "docs/cli-verify.md",
        "docs/cli-run.md", "docs/cli-probe-engine.md", "docs/cli-common.md", "docs/ci.md"]
NOT_RUN = {"probe-engine": "engines.probe_table runs it"}
TIMING = re.compile(r"\(\d+(?:\.\d+)? (?:ms|s)\)")


def blocks(text):
    """(line number, [lines], reason not to run or None) of every fenced block that opens with
    the CLI prompt. A block right under `<!-- not run by docs_readme_examples: REASON -->` is
    listed with its reason (a timing measurement, a recording in a terminal)."""
    result, block, start, reason, previous = [], None, 0, None, ""
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            if block is None:
                block, start = [], number + 1
                m = re.fullmatch(r"<!-- not run by docs_readme_examples: (.*) -->", previous)
                reason = m.group(1) if m else None
            else:
                if block and block[0].startswith(PROMPTS):
                    result.append((start, block, reason))
                block = None
        elif block is not None:
            block.append(line)
        previous = line
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


def registry_tables(src, cli):
    """The pass table of docs/cli-opt.md and the target tables of docs/cli-opt.md and the README
    have one row per pass and target of the registry (`opt --list-passes`), and no other."""
    listing = subprocess.run([str(cli), "opt", "--list-passes"], stdout=subprocess.PIPE,
                             text=True, check=True).stdout
    section, registry = None, {"Passes:": set(), "Targets:": set()}
    for line in listing.split("\n"):
        if line in registry:
            section = line
        elif section and line.startswith("  "):
            registry[section].add(line.split()[0])
    failures = 0
    for doc, header, kind in (("docs/cli-opt.md", "| pass |", "Passes:"),
                              ("docs/cli-opt.md", "| target |", "Targets:"),
                              ("README.md", "| target |", "Targets:")):
        rows, lines = set(), (src / doc).read_text().split("\n")
        for i, line in enumerate(lines):
            if line.startswith(header):
                for row in lines[i + 2:]:
                    if not row.startswith("|"):
                        break
                    m = re.match(r"\| `([^`]+)`", row)
                    if m:
                        rows.add(m.group(1))
                break
        if rows != registry[kind]:
            failures += 1
            print(f"FAIL: {doc}'s '{header}' table lists {sorted(rows)}; the registry has "
                  f"{sorted(registry[kind])} (onnx-bcast opt --list-passes)", file=sys.stderr)
    return failures


def main():
    src = pathlib.Path(sys.argv[1]).resolve()
    cli = pathlib.Path(sys.argv[2]).resolve()
    work = pathlib.Path(sys.argv[3]).resolve()
    docs = sys.argv[4:] or DOCS
    shutil.rmtree(work, ignore_errors=True)
    (work / "build" / "bin").mkdir(parents=True)
    # Line-buffered stdout, as on the terminal the examples were shown on: a message on stderr
    # then comes after the report lines printed before it.
    wrapper = work / "build" / "bin" / "onnx-bcast"
    wrapper.write_text(f'#!/bin/sh\nexec stdbuf -oL "{cli}" "$@"\n')
    wrapper.chmod(0o755)
    for name in ("models", "tests"):
        (work / name).symlink_to(src / name)
    env = dict(os.environ, LC_ALL="C.UTF-8",
               PATH=f"{work / 'build' / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    failures, run, skipped = 0, 0, 0
    for doc in docs:
        found = blocks((src / doc).read_text())
        if not found:
            print(f"FAIL: {doc} has no block starting with '{PROMPTS[0]}'", file=sys.stderr)
            failures += 1
        for line, block, reason in found:
            cmds = commands(block)
            if reason:
                print(f"{doc}:{line}: not run ({reason}): {len(cmds)} command(s)")
                skipped += len(cmds)
                continue
            for command, _ in cmds:
                m = re.search(r"onnx-bcast (\S+)", command)
                if m and m.group(1) in NOT_RUN:
                    print(f"{doc}:{line}: not run ({NOT_RUN[m.group(1)]}): $ {command}")
                    skipped += len(cmds)
                    break
            else:
                # One shell per block, so `$ echo $?` sees the command before it.
                script = "".join(f"{{ {c}\n}} 2>&1; s=$?; printf '\\n{MARK}\\n'; (exit $s)\n"
                                 for c, _ in cmds)
                r = subprocess.run(["bash", "-c", script], cwd=work, env=env,
                                   stdout=subprocess.PIPE, text=True, timeout=600)
                outputs = r.stdout.split(f"\n{MARK}\n")
                for (command, expected), out in zip(cmds, outputs):
                    out = out.strip("\n")
                    actual = out.split("\n") if out else []
                    run += 1
                    if not matches(expected, actual):
                        failures += 1
                        print(f"FAIL: {doc}:{line}: $ {command}\n--- the document shows:\n" +
                              "\n".join(expected) + "\n--- the CLI printed:\n" +
                              "\n".join(actual), file=sys.stderr)
    failures += registry_tables(src, cli)
    if failures:
        return 1
    print(f"readme examples: {run} command(s) print what {', '.join(docs)} shows"
          f" ({skipped} not run)")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

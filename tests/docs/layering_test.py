#!/usr/bin/python3
"""scripts/check_layers.py against the tree, and against copies of it broken on purpose, so that
the check is known to fail when it should: a kernel that includes a pass, an analysis header
that includes a report (a loop between layers), two headers that include each other, a table
with a loop, libonnx included outside proto/, a kernel that reaches a pass by a path relative
to itself (`../../passes/pass.h`, once skipped as unresolved), a header beside the includer
named without its folder, and a new top-level folder the table does not list (once never
read).

Usage: layering_test.py ROOT [tree|breakages]   (both when not given)"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1])
PARTS = sys.argv[2:] or ["tree", "breakages"]
CHECK = os.path.join(ROOT, "scripts", "check_layers.py")
FOLDERS = ["support", "broadcast", "proto", "analysis", "targets", "passes", "report", "runtime",
           "engines", "verify", "driver", "api", "tools", "python", "fuzz", "bench"]


def run(root):
    r = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def copy_tree(dst):
    """The library folders' sources only (the check reads nothing else), and the table."""
    for folder in FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, folder)):
            dirnames[:] = [d for d in dirnames if d != "node_modules" and not d.startswith(".")]
            rel = os.path.relpath(dirpath, ROOT)
            for name in filenames:
                if name.endswith((".h", ".cc", ".inc")):
                    os.makedirs(os.path.join(dst, rel), exist_ok=True)
                    shutil.copy(os.path.join(dirpath, name), os.path.join(dst, rel, name))
    os.makedirs(os.path.join(dst, "docs"))
    shutil.copy(os.path.join(ROOT, "docs", "architecture.md"), os.path.join(dst, "docs"))


def prepend(path, line):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(line + "\n" + text)


failures = []


def expect(name, root, code, *needles):
    got, out = run(root)
    if got != code or any(n not in out for n in needles):
        failures.append(f"{name}: exit {got} (want {code}), output lacks one of {needles}:\n{out}")
    return out


# The tree itself: clean, or failing only on what a copy shows too (the breakages below are
# judged by their own lines, so that one problem of the tree does not hide the rest).
if "tree" in PARTS:
    tree_code, tree_out = run(ROOT)
    if tree_code != 0:
        failures.append(f"tree: exit {tree_code}:\n{tree_out}")
if "breakages" not in PARTS:
    for f in failures:
        print(f)
    sys.exit(1 if failures else 0)

BREAKAGES = [
    ("kernel includes a pass", [("runtime/kernels/binary.h", '#include "passes/pass.h"')],
     ["runtime/kernels/binary.h:1", "runtime/kernels/ may not use passes/"]),
    ("analysis includes a report", [("analysis/shape_tables.h", '#include "report/report_json.h"')],
     ["analysis/shape_tables.h:1", "analysis/ may not use report/"]),
    ("headers round a loop",
     [("analysis/shape_tables.h", '#include "analysis/dim_evaluation.h"')],
     ["headers include each other round a loop"]),
    ("onnx outside proto", [("passes/pass.h", '#include "onnx/onnx_pb.h"')],
     ["passes/pass.h:1", "may include protobuf or libonnx"]),
    ("include escaping upwards", [("runtime/kernels/binary.h", '#include "../../passes/pass.h"')],
     ["runtime/kernels/binary.h:1", "relative to its folder", "runtime/kernels/ may not use passes/"]),
    ("include beside the includer", [("passes/pass_manager.h", '#include "pass.h"')],
     ["passes/pass_manager.h:1", "relative to its folder", '"passes/pass.h"']),
]
for name, edits, needles in BREAKAGES:
    with tempfile.TemporaryDirectory() as tmp:
        copy_tree(tmp)
        for path, line in edits:
            prepend(os.path.join(tmp, path), line)
        expect(name, tmp, 1, *needles)

with tempfile.TemporaryDirectory() as tmp:
    copy_tree(tmp)
    doc = os.path.join(tmp, "docs", "architecture.md")
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    text = text.replace("\nbroadcast: support\n", "\nbroadcast: support passes\n", 1)
    with open(doc, "w", encoding="utf-8") as f:
        f.write(text)
    expect("table with a loop", tmp, 1, "the table has a loop")

# A top-level folder with sources that the table does not list, and one it marks unchecked.
with tempfile.TemporaryDirectory() as tmp:
    copy_tree(tmp)
    os.makedirs(os.path.join(tmp, "plugins"))
    with open(os.path.join(tmp, "plugins", "p.cc"), "w", encoding="utf-8") as f:
        f.write('#include "passes/pass.h"\n')
    expect("unknown top-level folder", tmp, 1, "plugins/: holds C++ sources but is not in the "
           "layers table")
    os.makedirs(os.path.join(tmp, "build-x"))
    open(os.path.join(tmp, "build-x", "CMakeCache.txt"), "w").close()
    open(os.path.join(tmp, "build-x", "gen.cc"), "w").close()
    out = expect("unknown top-level folder", tmp, 1, "plugins/")
    if "build-x" in out:
        failures.append(f"a build tree (CMakeCache.txt) was read as a folder of sources:\n{out}")

for f in failures:
    print(f)
sys.exit(1 if failures else 0)

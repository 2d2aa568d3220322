#!/usr/bin/python3
"""The layering of docs/architecture.md, enforced: every `#include "..."` of a library folder
that names a project file in another layer must be one the table allows, the table itself must
have no loop, no two project headers may include each other round a loop, and only the layers
the table lists may include protobuf or libonnx directly. Every namespace a file declares is
its folder's: `onnx_bcast::<top-level folder>` (and namespaces nested in it), so that a name's
namespace tells where it lives; api/ alone declares the public `onnx_bcast`.

The table is the fenced block tagged `layers` in docs/architecture.md (one source for the page
and this check):

    <unit>: <units it may include>...
    onnx-protobuf: <units or files that may include onnx/ or google/protobuf/>...

    unchecked: <top-level folders that hold sources but are no layer (tests, examples)>

A unit is a top-level folder, or runtime/<sub> for the executor's sub-layers. A unit may always
include itself. Third-party and system headers (absl, gtest, nlohmann, ...) are not layers.
Every top-level folder holding C++ sources is read (build trees, with a CMakeCache.txt, and
hidden folders aside): one the table neither lists nor marks unchecked is a problem, so that a
new folder cannot include what it likes unseen. An include that names a project file by a path
relative to the including file ("../../passes/pass.h", "pass.h" beside it) is a problem too,
and is checked against the table as the file it reaches.

Usage: scripts/check_layers.py [ROOT]   (ROOT defaults to the directory above scripts/)
Exits 1 naming each forbidden include by file, line and rule; 2 when the table cannot be read.
Only python3's standard library: ctest runs it (layering)."""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
ANY_INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^">]+)[">]')
SOURCE_SUFFIXES = (".h", ".cc", ".inc")
SKIP_DIRS = {"node_modules", "__pycache__"}
NAMESPACE = re.compile(r'^\s*namespace\s+(onnx_bcast(?:::\w+)*)\s*(?:\{|=)', re.M)
# The public API's header and its implementation declare the library's own namespace.
PUBLIC_NAMESPACE_FOLDERS = {"api"}


def namespace_problems(path, text):
    """A problem for each `namespace onnx_bcast...` in `path` that is not its folder's."""
    top = path.split("/")[0]
    problems = []
    for m in NAMESPACE.finditer(text):
        name = m.group(1).split("::")
        if top in PUBLIC_NAMESPACE_FOLDERS and len(name) == 1:
            continue
        if len(name) < 2 or name[1] != top:
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"{path}:{line}: declares namespace {m.group(1)}: files in {top}/ "
                            f"declare onnx_bcast::{top} (docs/architecture.md)")
    return problems


def unit_of(path):
    parts = path.split("/")
    if parts[0] == "runtime" and len(parts) > 2:
        return "runtime/" + parts[1]
    return parts[0]


def read_table(root):
    doc = os.path.join(root, "docs", "architecture.md")
    try:
        text = open(doc, encoding="utf-8").read()
    except OSError as e:
        print(f"check_layers: {doc}: {e.strerror}", file=sys.stderr)
        sys.exit(2)
    m = re.search(r"^```layers\n(.*?)^```", text, re.S | re.M)
    if not m:
        print(f"check_layers: {doc}: no ```layers block", file=sys.stderr)
        sys.exit(2)
    allowed, onnx_ok, unchecked = {}, [], []
    for n, line in enumerate(m.group(1).splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if ":" not in line:
            print(f"check_layers: {doc}: layers line {n}: expected 'unit: units...'",
                  file=sys.stderr)
            sys.exit(2)
        key, deps = line.split(":", 1)
        if key.strip() == "onnx-protobuf":
            onnx_ok = deps.split()
        elif key.strip() == "unchecked":
            unchecked = deps.split()
        else:
            allowed[key.strip()] = set(deps.split())
    return allowed, onnx_ok, unchecked


def resolve(root, path, inc):
    """The project file `inc` (included by `path`) names, relative to the root, and whether it
    was named relative to the including file instead of from the root; (None, False) for a
    file outside the project (third-party and system headers)."""
    parts = inc.split("/")
    if ".." not in parts and "." not in parts and os.path.isfile(os.path.join(root, inc)):
        return inc, False
    here = os.path.normpath(os.path.join(os.path.dirname(path), inc))
    if not here.startswith("..") and os.path.isfile(os.path.join(root, here)):
        return here, True
    return None, False


def source_folders(root, allowed, unchecked):
    """The top-level folders to read (the table's and any other holding C++ sources, build
    trees and hidden folders aside), and the problems of those the table does not know."""
    tops = {u.split("/")[0] for u in allowed}
    problems = []
    for name in sorted(os.listdir(root)):
        full = os.path.join(root, name)
        if (name in tops or name in unchecked or name.startswith(".") or name in SKIP_DIRS or
                not os.path.isdir(full) or os.path.isfile(os.path.join(full, "CMakeCache.txt"))):
            continue
        for dirpath, dirnames, filenames in os.walk(full):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")]
            if any(f.endswith(SOURCE_SUFFIXES) for f in filenames):
                problems.append(f"{name}/: holds C++ sources but is not in the layers table "
                                "(add it, or list it after 'unchecked:')")
                tops.add(name)
                break
    return sorted(tops), problems


def find_loop(graph):
    """A list of nodes round one loop of `graph` (node -> successors), or None."""
    state = {}
    stack = []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if v not in state:
                loop = visit(v)
                if loop:
                    return loop
        stack.pop()
        state[u] = 2
        return None

    for u in sorted(graph):
        if u not in state:
            loop = visit(u)
            if loop:
                return loop
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    allowed, onnx_ok, unchecked = read_table(root)
    problems = []
    for unit, deps in allowed.items():
        for d in deps:
            if d not in allowed:
                problems.append(f"docs/architecture.md: '{unit}' may include '{d}', "
                                "which is not a unit of the table")
    loop = find_loop(allowed)
    if loop:
        problems.append("docs/architecture.md: the table has a loop: " + " -> ".join(loop))

    tops, unknown = source_folders(root, allowed, unchecked)
    problems += unknown
    header_graph = {}
    for top in tops:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")]
            for name in sorted(filenames):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                unit = unit_of(path)
                if unit not in allowed:
                    if unit.split("/")[0] in allowed:  # a new runtime/<sub>
                        problems.append(f"{path}: folder '{unit}' is not in the layers table")
                    continue
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    lines = f.readlines()
                problems += namespace_problems(path, "".join(lines))
                for n, line in enumerate(lines, 1):
                    m = ANY_INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    if inc.startswith(("onnx/", "google/protobuf/")):
                        if unit not in onnx_ok and path not in onnx_ok:
                            problems.append(f"{path}:{n}: includes <{inc}>: only "
                                            f"{', '.join(onnx_ok)} may include protobuf or "
                                            "libonnx (proto/ wraps them)")
                        continue
                    if not INCLUDE.match(line):
                        continue
                    inc, relative = resolve(root, path, inc)
                    if inc is None:
                        continue
                    if relative:
                        problems.append(f"{path}:{n}: includes \"{m.group(1)}\" relative to its "
                                        f"folder: name it from the root (\"{inc}\")")
                    if path.endswith(".h") and inc.endswith(".h"):
                        header_graph.setdefault(path, set()).add(inc)
                    target = unit_of(inc)
                    if target != unit and target not in allowed[unit]:
                        problems.append(f"{path}:{n}: includes \"{inc}\": {unit}/ may not use "
                                        f"{target}/ (docs/architecture.md allows: "
                                        f"{', '.join(sorted(allowed[unit])) or 'nothing'})")
    loop = find_loop(header_graph)
    if loop:
        problems.append("headers include each other round a loop: " + " -> ".join(loop))
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"check_layers: {len(allowed)} units, every include follows docs/architecture.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())

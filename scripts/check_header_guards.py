#!/usr/bin/python3
"""One header-guard style: every project header (*.h, *.hh, *.hpp) opens, after its file
comment, with

    #ifndef ONNX_BCAST_<PATH>_
    #define ONNX_BCAST_<PATH>_

and ends with `#endif  // ONNX_BCAST_<PATH>_`, where <PATH> is the header's path from the
source root in upper case with every character other than a letter or digit turned into `_`
(runtime/tensor.h -> ONNX_BCAST_RUNTIME_TENSOR_H_). `#pragma once` is not used.

Usage: scripts/check_header_guards.py [--fix] [ROOT]
ROOT defaults to the directory above scripts/. Build trees (any directory holding a
CMakeCache.txt, or named build*), hidden directories and Python caches are skipped.
Exits 1 listing every header without the right guard; --fix rewrites them instead (turns
`#pragma once` into the guard, renames a guard that does not follow the naming).
Only python3's standard library: ctest runs it (header_guards)."""
import argparse
import os
import re
import sys

HEADER_SUFFIXES = (".h", ".hh", ".hpp")
SKIP_DIRS = {"__pycache__", "node_modules", "_skbuild"}


def skipped(dirpath, name):
    if name.startswith(".") or name in SKIP_DIRS or name.endswith(".egg-info"):
        return True
    if name.startswith("build") or name.startswith("cmake-build"):
        return True
    return os.path.exists(os.path.join(dirpath, name, "CMakeCache.txt"))


def headers(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not skipped(dirpath, d))
        for name in sorted(filenames):
            if name.endswith(HEADER_SUFFIXES):
                yield os.path.relpath(os.path.join(dirpath, name), root)


def guard_macro(relpath):
    path = relpath.replace(os.sep, "/")
    return "ONNX_BCAST_" + re.sub(r"[^A-Za-z0-9]", "_", path).upper() + "_"


def first_code_line(lines):
    """Index of the first line that is neither blank nor part of a comment, or len(lines)."""
    in_block = False
    for i, line in enumerate(lines):
        s = line.strip()
        if in_block:
            if "*/" in s:
                in_block = False
            continue
        if not s or s.startswith("//"):
            continue
        if s.startswith("/*"):
            in_block = "*/" not in s[2:]
            continue
        return i
    return len(lines)


def last_code_line(lines):
    i = len(lines) - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    return i


def problems(lines, macro):
    """What is wrong with the guard of a header, as a list of reasons (empty: all right)."""
    found = []
    if any(l.strip() == "#pragma once" for l in lines):
        found.append("uses #pragma once")
    top = first_code_line(lines)
    if top + 1 >= len(lines) or lines[top].rstrip() != "#ifndef " + macro or \
            lines[top + 1].rstrip() != "#define " + macro:
        got = lines[top].strip() if top < len(lines) else "(nothing)"
        found.append("first line of code is '%s', not '#ifndef %s' + '#define %s'"
                     % (got, macro, macro))
    end = last_code_line(lines)
    if end < 0 or lines[end].rstrip() != "#endif  // " + macro:
        got = lines[end].strip() if end >= 0 else "(nothing)"
        found.append("last line is '%s', not '#endif  // %s'" % (got, macro))
    return found


def fix(lines, macro):
    """The header with the right guard, or None when it has a shape --fix does not know."""
    out = list(lines)
    top = first_code_line(out)
    if top >= len(out):
        return None
    first = out[top].strip()
    if first == "#pragma once":
        out[top:top + 1] = ["#ifndef " + macro, "#define " + macro]
        while out and not out[-1].strip():
            out.pop()
        out += ["", "#endif  // " + macro]
        return out
    m = re.match(r"#ifndef\s+(\w+)$", first)
    if not m or top + 1 >= len(out) or out[top + 1].strip() != "#define " + m.group(1):
        return None
    end = last_code_line(out)
    if not re.match(r"#endif\b", out[end].strip()):
        return None
    out[top] = "#ifndef " + macro
    out[top + 1] = "#define " + macro
    out[end] = "#endif  // " + macro
    return out


def main():
    ap = argparse.ArgumentParser(description="Checks (or fixes) the header guards.")
    ap.add_argument("root", nargs="?",
                    default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--fix", action="store_true", help="rewrite the headers in place")
    args = ap.parse_args()
    bad = 0
    count = 0
    for rel in headers(args.root):
        count += 1
        path = os.path.join(args.root, rel)
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        macro = guard_macro(rel)
        found = problems(lines, macro)
        if not found:
            continue
        if args.fix:
            fixed = fix(lines, macro)
            if fixed is not None and not problems(fixed, macro):
                with open(path, "w", encoding="utf-8") as f:
                    f.write("\n".join(fixed) + "\n")
                print("fixed %s" % rel)
                continue
            found.append("--fix cannot rewrite it")
        bad += 1
        print("%s: %s" % (rel, "; ".join(found)))
    if count == 0:
        print("no headers under %s" % args.root)
        return 1
    if bad:
        print("%d of %d headers without the guard ONNX_BCAST_<PATH>_ "
              "(scripts/check_header_guards.py --fix rewrites them)" % (bad, count))
        return 1
    print("%d headers, all with the guard ONNX_BCAST_<PATH>_" % count)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""verify after opt --dim says EQUAL on every export of the corpus (issue 31, "done when").

For each model of tests/fixtures/exported/manifest.json: `opt --target opencv --dim D` at the
manifest's first binding (the symbols the model's inputs declare; --allow-partial, so that a
model with nodes outside OpenCV's table is still written), then `verify MODEL OUT` with no
option: it must exit 0, say EQUAL, and name every bound symbol in its first line ("N bound to
1 by the rewritten model"), and no sample may bind one to another value.

  corpus_verify_after_opt.py CLI SOURCE_DIR SCRATCH_DIR
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import onnx


def input_symbols(path):
    model = onnx.load(str(path))
    inits = {t.name for t in model.graph.initializer}
    return {d.dim_param for i in model.graph.input if i.name not in inits
            for d in i.type.tensor_type.shape.dim if d.dim_param}


def main():
    cli, src, scratch = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    corpus = src / "tests/fixtures/exported"
    manifest = json.loads((corpus / "manifest.json").read_text())
    failures = []
    for name, entry in sorted(manifest.items()):
        model = corpus / f"{name}.onnx"
        declared = input_symbols(model)
        dims = {s: v for s, v in entry["bindings_ok"][0].items() if s in declared}
        out = scratch / f"{name}.opencv.onnx"
        args = [cli, "opt", str(model), "-o", str(out), "--target", "opencv", "--allow-partial",
                "--quiet"]
        if dims:
            args += ["--dim", ",".join(f"{s}={v}" for s, v in sorted(dims.items()))]
        opt = subprocess.run(args, capture_output=True, text=True)
        if opt.returncode != 0:
            failures.append(f"{name}: opt exit {opt.returncode}: {opt.stderr.strip()}")
            continue
        verify = subprocess.run([cli, "verify", str(model), str(out), "--quiet"],
                                capture_output=True, text=True)
        first = verify.stdout.split("\n", 1)[0]
        print(f"{name} ({', '.join(f'{s}={v}' for s, v in sorted(dims.items()))}): {first}")
        if verify.returncode != 0 or ": EQUAL (" not in first:
            failures.append(f"{name}: verify exit {verify.returncode}: {verify.stdout[:2000]}"
                            f"{verify.stderr.strip()}")
            continue
        for symbol, value in dims.items():
            if f"{symbol} bound to {value} by the rewritten model" not in first:
                failures.append(f"{name}: the first line does not say {symbol} is bound: {first}")
            other = re.search(rf"\b{re.escape(symbol)}=(\d+)", verify.stdout)
            if other and int(other.group(1)) != value:
                failures.append(f"{name}: a sample binds {symbol}={other.group(1)}")
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    print(f"{len(manifest) - len(failures)} of {len(manifest)} models verify EQUAL after opt")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

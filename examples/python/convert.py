#!/usr/bin/env python3
"""The broadcast step of a Python conversion script, through the onnx_bcast module: refuse a
model whose broadcasts are wrong, rewrite it for the engine's target, prove the rewrite computes
the same outputs, then save it.

Usage: convert.py MODEL TARGET OUT    (exit 0 converted, 1 broadcast error or mismatch)
"""
import sys

import onnx
import onnx_bcast


def convert(src: str, target: str, dst: str) -> int:
    model = onnx.load(src)

    # 1. A verdict for every broadcasting node (the dict is `onnx-bcast check --json`'s
    #    document); broadcast errors are data naming node, op and shapes.
    report = onnx_bcast.check(model)
    errors = [n["message"] for n in report["nodes"] if n["verdict"] == "error"]
    if report["contradiction"]:
        errors.append(report["contradiction"])
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    print(f"check: {report['summary']}")

    # 2. Rewrite for the engine: a ModelProto in, a new ModelProto out, with the report
    #    `onnx-bcast opt --report` writes.
    rewritten, opt = onnx_bcast.optimize(model, target=target)
    for p in opt["passes"]:
        print(f"{p['pass']}: {p['nodes_inserted']} inserted, {p['nodes_removed']} removed")
    onnx.checker.check_model(rewritten)

    # 3. Run both on the bundled executor and compare every output; with the report, a
    #    divergence names the pass that caused it.
    result = onnx_bcast.verify(model, rewritten, report=opt)
    if not result["match"]:
        print(result["text"], file=sys.stderr)
        return 1
    print(f"verify: equal, max abs error {result['max_abs_error']:g}, "
          f"max ULP {result['max_ulp']}")

    onnx.save(rewritten, dst)
    print(f"wrote {dst}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: convert.py MODEL TARGET OUT")
    sys.exit(convert(*sys.argv[1:]))

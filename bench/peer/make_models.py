#!/usr/bin/python3
"""Writes the single-node ONNX models of the peer comparison (bench/peer/compare.sh).

Usage: make_models.py OUT_DIR CASES_JSON
CASES_JSON lists {"id", "op", "dtype", "a", "b"} (shapes as lists); each case becomes
OUT_DIR/<id>.onnx with inputs A, B and output C. Uses Debian's python3-onnx only.
"""
import json
import sys

import onnx
from onnx import TensorProto, helper

DTYPES = {"float32": TensorProto.FLOAT, "int32": TensorProto.INT32, "bool": TensorProto.BOOL}


def broadcast(a, b):
    rank = max(len(a), len(b))
    a = [1] * (rank - len(a)) + list(a)
    b = [1] * (rank - len(b)) + list(b)
    return [y if x == 1 else x for x, y in zip(a, b)]


def main():
    out_dir, cases_path = sys.argv[1], sys.argv[2]
    with open(cases_path) as f:
        cases = json.load(f)
    for case in cases:
        elem = DTYPES[case["dtype"]]
        out_elem = elem
        graph = helper.make_graph(
            [helper.make_node(case["op"], ["A", "B"], ["C"], name="op")],
            case["id"],
            [helper.make_tensor_value_info("A", elem, case["a"]),
             helper.make_tensor_value_info("B", elem, case["b"])],
            [helper.make_tensor_value_info("C", out_elem, broadcast(case["a"], case["b"]))])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        onnx.save(model, f"{out_dir}/{case['id']}.onnx")


if __name__ == "__main__":
    main()

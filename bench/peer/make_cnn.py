#!/usr/bin/python3
"""Writes a small CNN (conv blocks with explicit per-channel broadcasts) for the end-to-end
comparison of bench/peer/compare.sh: x[1,16,64,64] -> 2 x (Conv 3x3, Mul by a per-channel
scale, Add a per-channel shift, Relu) with a residual Add, MaxPool, GlobalAveragePool,
Flatten, Gemm to 10 classes. Weights are seeded, so every run times the same model.

Usage: make_cnn.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    rng = np.random.default_rng(7)
    c = 32
    inits, nodes = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    x = "x"
    cin = 16
    for k in range(2):
        w = const(f"w{k}", rng.normal(0, 0.1, (c, cin, 3, 3)))
        b = const(f"b{k}", rng.normal(0, 0.1, (c,)))
        s = const(f"s{k}", rng.uniform(0.5, 1.5, (1, c, 1, 1)))
        t = const(f"t{k}", rng.normal(0, 0.1, (1, c, 1, 1)))
        nodes += [
            helper.make_node("Conv", [x, w, b], [f"conv{k}"], pads=[1, 1, 1, 1]),
            helper.make_node("Mul", [f"conv{k}", s], [f"mul{k}"]),
            helper.make_node("Add", [f"mul{k}", t], [f"add{k}"]),
            helper.make_node("Relu", [f"add{k}"], [f"relu{k}"]),
        ]
        x, cin = f"relu{k}", c
    nodes += [
        helper.make_node("Add", ["relu0", "relu1"], ["res"]),
        helper.make_node("MaxPool", ["res"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["pool"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"]),
        helper.make_node("Gemm", ["flat", const("fc_w", rng.normal(0, 0.1, (10, c))),
                                  const("fc_b", rng.normal(0, 0.1, (10,)))], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "cnn_64", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 64, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[1])


if __name__ == "__main__":
    main()

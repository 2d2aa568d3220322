#!/usr/bin/python3
"""Regenerates the small example models in this folder (see README.md for what each exercises).

Run with Debian's python3 (python3-onnx, python3-numpy): /usr/bin/python3 models/make_models.py
The output is deterministic; the models are checked in so nothing needs Python at build time.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(7)


def const(name, shape, dtype=np.float32):
    return numpy_helper.from_array(RNG.standard_normal(shape).astype(dtype), name)


def save(model, name, check=True):
    model.producer_name = "onnx-bcast models/make_models.py"
    if check:
        onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(HERE, name))


def cnn_block():
    # Conv -> per-channel bias Add (lower rank [8,1,1]) -> PRelu with a [8,1,1] slope ->
    # inner-axis row Mul ([16], aligned to W) -> GlobalAveragePool -> Flatten ->
    # Gemm with a vector C [10] -> outer-axis column Add with [N,1].
    nodes = [
        # kernel_shape written out, as exporters do (ncnn's onnx2ncnn reads the kernel size
        # from it only: without it the converted Convolution divides by zero at load).
        helper.make_node("Conv", ["x", "w"], ["conv"], name="conv", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["conv", "bias"], ["biased"], name="bias_add"),
        helper.make_node("PRelu", ["biased", "slope"], ["act"], name="prelu"),
        helper.make_node("Mul", ["act", "row_scale"], ["scaled"], name="row_mul"),
        helper.make_node("GlobalAveragePool", ["scaled"], ["pooled"], name="gap"),
        helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc"),
        helper.make_node("ReduceMax", ["logits"], ["peak"], name="peak", axes=[1], keepdims=1),
        helper.make_node("Sub", ["logits", "peak"], ["y"], name="center"),
    ]
    graph = helper.make_graph(
        nodes, "cnn_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
        [const("w", (8, 3, 3, 3)), const("bias", (8, 1, 1)), const("slope", (8, 1, 1)),
         const("row_scale", (16,)), const("fc_w", (8, 10)), const("fc_b", (10,))])
    graph.doc_string = "A small CNN block with the common broadcast classes."
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    helper.set_model_props(model, {"purpose": "onnx-bcast example"})
    save(model, "cnn_block.onnx")


def legacy_axis():
    # Opset-6 Add with broadcast=1, axis=1: B [3] lines up with A's axis 1, not the last axis.
    node = helper.make_node("Add", ["a", "b"], ["c"], name="legacy_add", broadcast=1, axis=1)
    graph = helper.make_graph(
        [node], "legacy_axis",
        # IR 3 lists initializers among the graph inputs.
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 3, 4, 5]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, 3, 4, 5])],
        [numpy_helper.from_array(np.array([1.0, 10.0, 100.0], np.float32), "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 6)])
    model.ir_version = 3
    save(model, "legacy_axis.onnx")


def external_weights():
    # The weights live in weights/mlp.bin beside the model, referenced with offsets.
    folder = os.path.join(HERE, "external")
    os.makedirs(os.path.join(folder, "weights"), exist_ok=True)
    w1 = RNG.standard_normal((64, 32)).astype(np.float32)
    b1 = RNG.standard_normal((32,)).astype(np.float32)
    blob = w1.tobytes() + b1.tobytes()
    with open(os.path.join(folder, "weights", "mlp.bin"), "wb") as f:
        f.write(blob)
    inits = []
    offset = 0
    for name, arr in (("w1", w1), ("b1", b1)):
        t = onnx.TensorProto()
        t.name = name
        t.data_type = TensorProto.FLOAT
        t.dims.extend(arr.shape)
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "weights/mlp.bin"), ("offset", str(offset)),
                     ("length", str(arr.nbytes))):
            e = t.external_data.add()
            e.key, e.value = k, v
        offset += arr.nbytes
        inits.append(t)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm"),
        helper.make_node("Add", ["h", "b1"], ["y"], name="bias_add"),
    ]
    graph = helper.make_graph(
        nodes, "external_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", 32])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    model.producer_name = "onnx-bcast models/make_models.py"
    onnx.save(model, os.path.join(folder, "mlp.onnx"))


if __name__ == "__main__":
    cnn_block()
    legacy_axis()
    external_weights()

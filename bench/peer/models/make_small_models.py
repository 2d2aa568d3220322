#!/usr/bin/python3
"""Models that are run small in practice, for the size sweep of compare_models.sh (issues #32, #46).

  detector_head_crop.onnx  a detector's backbone and head on an image crop [1, 3, H, W]: four
                           stride-2 3x3 convs (3->16->32->64->96), a two-conv 3x3 head of 96
                           maps and 1x1 class and box outputs (9 anchors x 4 classes, 9 x 4
                           box deltas). On a 64x80 crop the head runs on 4x5 maps.
  kws_dscnn.onnx           a keyword-spotting DS-CNN on one second of audio features
                           [1, 1, 49, 10] (49 frames of 10 MFCCs, 20 ms hop): a 10x4 stride-2
                           conv to 64 maps, four depthwise-separable blocks, average pooling
                           and a 12-way classifier (the "Hello Edge" small DS-CNN's shape).
  squeezenet_fire.onnx     a small classification CNN of fire modules [1, 3, H, W] (issue #46
                           item 2): SqueezeNet 1.1's layout at half its width (stem 3->32 3x3
                           stride 2, max pools, eight fire modules: a 1x1 squeeze, then 1x1
                           and 3x3 expands joined by Concat), a 1x1 conv to 100 classes and
                           global average pooling.

Weights are seeded (He-scaled normals), so the files are reproducible:
  /usr/bin/python3 bench/peer/models/make_small_models.py [OUT_DIR]
Needs only onnx and numpy (Debian's python3-onnx, python3-numpy).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def weight(self, shape, fan_in):
        w = self.rng.standard_normal(shape).astype(np.float32) * np.float32(np.sqrt(2.0 / fan_in))
        n = self.name("w")
        self.inits.append(numpy_helper.from_array(w, n))
        return n

    def bias(self, m):
        b = (self.rng.standard_normal(m) * 0.01).astype(np.float32)
        n = self.name("b")
        self.inits.append(numpy_helper.from_array(b, n))
        return n

    def conv(self, x, c, m, k, stride=1, pad=None, group=1, relu=True, name=None):
        kh, kw = (k, k) if isinstance(k, int) else k
        sh, sw = (stride, stride) if isinstance(stride, int) else stride
        if pad is None:
            pad = [kh // 2, kw // 2, kh // 2, kw // 2]
        w = self.weight([m, c // group, kh, kw], (c // group) * kh * kw)
        y = name or self.name("conv")
        self.nodes.append(helper.make_node(
            "Conv", [x, w, self.bias(m)], [y], name=y, kernel_shape=[kh, kw],
            strides=[sh, sw], pads=pad, group=group))
        if not relu:
            return y
        r = self.name("relu")
        self.nodes.append(helper.make_node("Relu", [y], [r], name=r))
        return r


def detector_head():
    b = Builder(3201)
    x = "crop"
    h = b.conv(x, 3, 16, 3, 2)
    h = b.conv(h, 16, 32, 3, 2)
    h = b.conv(h, 32, 64, 3, 2)
    h = b.conv(h, 64, 96, 3, 2)
    h = b.conv(h, 96, 96, 3)
    h = b.conv(h, 96, 96, 3)
    cls = b.conv(h, 96, 36, 1, pad=[0, 0, 0, 0], relu=False, name="cls_logits")
    box = b.conv(h, 96, 36, 1, pad=[0, 0, 0, 0], relu=False, name="box_deltas")
    graph = helper.make_graph(
        b.nodes, "detector_head_crop",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 3, "H", "W"])],
        [helper.make_tensor_value_info(cls, TensorProto.FLOAT, [1, 36, "h", "w"]),
         helper.make_tensor_value_info(box, TensorProto.FLOAT, [1, 36, "h", "w"])],
        b.inits)
    return graph


def kws_dscnn():
    b = Builder(3202)
    x = "mfcc"
    # 49x10 -> 25x5 (pads 4,1,5,2 as TF's SAME for a 10x4 kernel at stride 2).
    h = b.conv(x, 1, 64, (10, 4), (2, 2), pad=[4, 1, 5, 2])
    for _ in range(4):
        h = b.conv(h, 64, 64, 3, group=64)  # depthwise
        h = b.conv(h, 64, 64, 1, pad=[0, 0, 0, 0])  # pointwise
    p = b.name("pool")
    b.nodes.append(helper.make_node("GlobalAveragePool", [h], [p], name=p))
    f = b.name("flat")
    b.nodes.append(helper.make_node("Flatten", [p], [f], name=f, axis=1))
    w = b.weight([12, 64], 64)
    out = "keyword_logits"
    b.nodes.append(helper.make_node("Gemm", [f, w, b.bias(12)], [out], name="fc", transB=1))
    graph = helper.make_graph(
        b.nodes, "kws_dscnn",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 1, 49, 10])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 12])],
        b.inits)
    return graph


def squeezenet_fire():
    b = Builder(3203)
    x = "image"

    def pool(h):
        p = b.name("maxpool")
        b.nodes.append(helper.make_node("MaxPool", [h], [p], name=p, kernel_shape=[3, 3],
                                        strides=[2, 2], ceil_mode=1))
        return p

    def fire(h, c, squeeze, expand):
        s = b.conv(h, c, squeeze, 1, pad=[0, 0, 0, 0])
        e1 = b.conv(s, squeeze, expand, 1, pad=[0, 0, 0, 0])
        e3 = b.conv(s, squeeze, expand, 3)
        y = b.name("fire")
        b.nodes.append(helper.make_node("Concat", [e1, e3], [y], name=y, axis=1))
        return y, 2 * expand

    h = pool(b.conv(x, 3, 32, 3, 2, pad=[0, 0, 0, 0]))
    c = 32
    for i, (squeeze, expand) in enumerate(
            ((8, 32), (8, 32), (16, 64), (16, 64), (24, 96), (24, 96), (32, 128), (32, 128))):
        h, c = fire(h, c, squeeze, expand)
        if i in (1, 3):
            h = pool(h)
    h = b.conv(h, c, 100, 1, pad=[0, 0, 0, 0])
    p = b.name("pool")
    b.nodes.append(helper.make_node("GlobalAveragePool", [h], [p], name=p))
    out = "class_logits"
    b.nodes.append(helper.make_node("Flatten", [p], [out], name=out, axis=1))
    graph = helper.make_graph(
        b.nodes, "squeezenet_fire",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 3, "H", "W"])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 100])],
        b.inits)
    return graph


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name, make in (("detector_head_crop", detector_head), ("kws_dscnn", kws_dscnn),
                       ("squeezenet_fire", squeezenet_fire)):
        model = helper.make_model(make(), opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="make_small_models.py")
        model.ir_version = 7
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, f"{name}.onnx"))
        print(f"{name}.onnx: {os.path.getsize(os.path.join(out, name + '.onnx'))} bytes")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Two models that are run small in practice, for the size sweep of compare_models.sh (issue #32).

  detector_head_crop.onnx  a detector's backbone and head on an image crop [1, 3, H, W]: four
                           stride-2 3x3 convs (3->16->32->64->96), a two-conv 3x3 head of 96
                           maps and 1x1 class and box outputs (9 anchors x 4 classes, 9 x 4
                           box deltas). On a 64x80 crop the head runs on 4x5 maps.
  kws_dscnn.onnx           a keyword-spotting DS-CNN on one second of audio features
                           [1, 1, 49, 10] (49 frames of 10 MFCCs, 20 ms hop): a 10x4 stride-2
                           conv to 64 maps, four depthwise-separable blocks, average pooling
                           and a 12-way classifier (the "Hello Edge" small DS-CNN's shape).

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


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name, make in (("detector_head_crop", detector_head), ("kws_dscnn", kws_dscnn)):
        model = helper.make_model(make(), opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="make_small_models.py")
        model.ir_version = 7
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, f"{name}.onnx"))
        print(f"{name}.onnx: {os.path.getsize(os.path.join(out, name + '.onnx'))} bytes")


if __name__ == "__main__":
    main()

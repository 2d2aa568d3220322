"""Runs the Python example of docs/embedding.md, examples/python/convert.py, as a user would: on a
good model it writes a rewritten model that passes onnx.checker; on a model with a broadcast error
it exits 1 naming the node."""
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

import onnx
from onnx import TensorProto, helper

SOURCE_DIR = pathlib.Path(os.environ.get(
    "BCAST_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
CONVERT = SOURCE_DIR / "examples" / "python" / "convert.py"


def convert(*args):
    return subprocess.run([sys.executable, str(CONVERT), *map(str, args)],
                          capture_output=True, text=True, timeout=120)


class ConvertExampleTest(unittest.TestCase):
    def test_converts_and_verifies(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp) / "legacy_explicit.onnx"
            r = convert(SOURCE_DIR / "models" / "legacy_axis.onnx", "explicit", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("upgrade-legacy-broadcast", r.stdout)
            self.assertIn("verify: equal", r.stdout)
            rewritten = onnx.load(str(out))
            onnx.checker.check_model(rewritten, full_check=True)
            self.assertGreater(rewritten.opset_import[0].version, 6)

            # A target with run-time shapes: cnn_block keeps its symbolic batch N.
            out = pathlib.Path(tmp) / "cnn_canonical.onnx"
            r = convert(SOURCE_DIR / "models" / "cnn_block.onnx", "canonical", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(out.exists())

    def test_refuses_a_broadcast_error(self):
        graph = helper.make_graph(
            [helper.make_node("Mul", ["a", "b"], ["y"], name="bad_mul")], "g",
            [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
             helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
        with tempfile.TemporaryDirectory() as tmp:
            src = pathlib.Path(tmp) / "bad.onnx"
            onnx.save(model, str(src))
            out = pathlib.Path(tmp) / "out.onnx"
            r = convert(src, "explicit", out)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("bad_mul", r.stderr)
            self.assertFalse(out.exists())


if __name__ == "__main__":
    unittest.main()

"""Tests of the onnx_bcast Python module (python/module.cc) with Debian's python3-onnx and
python3-numpy: every function on ModelProto, bytes and path arguments, real results checked
against onnx.checker and numpy, and the exceptions raised for bad input."""
import os
import pathlib
import tempfile
import threading
import unittest

import numpy as np
import onnx
import onnx.parser
from onnx import TensorProto, helper, numpy_helper

import onnx_bcast

SOURCE_DIR = pathlib.Path(os.environ.get(
    "BCAST_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
MODELS = SOURCE_DIR / "models"


def add_model(a_shape, b_shape, out_shape, opset=15):
    """y = Add(a, b), built with onnx.helper as a converter would."""
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"], name="the_add")], "add",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, a_shape),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, b_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


class CheckTest(unittest.TestCase):
    def test_bad_broadcast_is_an_error_verdict_naming_the_node(self):
        result = onnx_bcast.check(add_model([2, 3], [4], [2, 3]))
        self.assertEqual(result["summary"]["error"], 1)
        (node,) = result["nodes"]
        self.assertEqual(node["verdict"], "error")
        self.assertEqual(node["node"], "the_add")
        self.assertEqual(node["op"], "Add")
        self.assertEqual([i["shape"] for i in node["inputs"]], [[2, 3], [4]])
        self.assertEqual([i["name"] for i in node["inputs"]], ["a", "b"])
        self.assertIn("the_add", node["message"])

    def test_good_model_from_proto_bytes_and_path_agree(self):
        path = MODELS / "cnn_block.onnx"
        model = onnx.load(str(path))
        results = [onnx_bcast.check(model), onnx_bcast.check(model.SerializeToString()),
                   onnx_bcast.check(path), onnx_bcast.check(str(path))]
        for r in results:
            self.assertEqual(r["summary"]["error"], 0)
            self.assertEqual(r["summary"], results[0]["summary"])
            self.assertEqual([n["verdict"] for n in r["nodes"]],
                             [n["verdict"] for n in results[0]["nodes"]])
        prelu = [n for n in results[0]["nodes"] if n["op"] == "PRelu"]
        self.assertEqual(len(prelu), 1)
        self.assertEqual(prelu[0]["inputs"][1]["shape"], [8, 1, 1])
        self.assertIn("cnn_block.onnx", results[2]["text"])

    def test_symbolic_dims_give_a_condition(self):
        result = onnx_bcast.check(add_model(["N", 3], ["M", 3], ["N", 3]))
        (node,) = result["nodes"]
        self.assertEqual(node["verdict"], "conditional")
        self.assertIn("M", node["condition"]["text"])
        self.assertTrue(node["condition"]["clauses"])
        self.assertIsNotNone(result["combined_condition"])

    def test_dims_evaluate_the_analysis_at_those_values(self):
        model = add_model(["N", 3], [5, 3], [5, 3])
        result = onnx_bcast.check(model, dims={"N": 3})
        (node,) = result["nodes"]
        self.assertEqual(node["condition"]["symbols"], ["N"])
        self.assertEqual(node["condition"]["sets"]["N"]["text"], "N ∈ {1, 5}")
        self.assertEqual(node["at_dims"]["outcome"], "fails")
        self.assertEqual(node["at_dims"]["inputs"], [[3, 3], [5, 3]])
        self.assertEqual(node["at_dims"]["message"],
                         "Add 'the_add': A [3,3] and B [5,3] are not broadcastable "
                         "(numpy rule, axis 0: 3 vs 5)")
        self.assertEqual(result["at_dims"]["bindings"], {"N": 3})
        self.assertEqual(result["at_dims"]["fails"], 1)
        self.assertEqual(result["at_dims"]["first_failure"]["node"], "the_add")
        self.assertIn("At N=3: 1 fail", result["text"])
        imposed = result["combined_condition"]["per_symbol"]["N"]["imposed_by"]
        self.assertEqual([p["node"] for p in imposed], ["the_add"])
        ok = onnx_bcast.check(model, dims={"N": 5})
        self.assertEqual(ok["nodes"][0]["at_dims"]["outcome"], "holds")
        self.assertIsNone(ok["at_dims"]["first_failure"])
        self.assertNotIn("at_dims", onnx_bcast.check(model))
        with self.assertRaises(ValueError) as cm:
            onnx_bcast.check(model, dims={"Q": 2})
        self.assertIn("its symbols: N", str(cm.exception))
        with self.assertRaises(ValueError):
            onnx_bcast.check(model, dims={"N": 0})

    def test_errors_are_python_exceptions(self):
        with self.assertRaises(FileNotFoundError) as cm:
            onnx_bcast.check("/nonexistent/model.onnx")
        self.assertIn("/nonexistent/model.onnx", str(cm.exception))
        with self.assertRaises(ValueError):
            onnx_bcast.check(b"\xff\xff not a model")
        with self.assertRaises(TypeError):
            onnx_bcast.check(42)


class OptimizeTest(unittest.TestCase):
    def test_legacy_axis_is_upgraded_and_passes_the_checker(self):
        model = onnx.load(str(MODELS / "legacy_axis.onnx"))
        rewritten, report = onnx_bcast.optimize(model, target="explicit")
        self.assertIsInstance(rewritten, onnx.ModelProto)
        self.assertGreater(report["summary"]["rewrites"], 0)
        self.assertEqual(report["target"], "explicit")
        self.assertEqual(report["passes"][0]["pass"], "upgrade-legacy-broadcast")
        self.assertGreater(len(report["passes"][0]["rewrites"]), 0)
        self.assertEqual(report["summary"]["before"]["opset"], 6)
        self.assertGreater(report["summary"]["after"]["opset"], 6)
        onnx.checker.check_model(rewritten, full_check=True)
        for node in rewritten.graph.node:
            self.assertNotIn("axis", [a.name for a in node.attribute])
        # The input proto is not modified.
        self.assertEqual(model.opset_import[0].version, 6)
        self.assertTrue(onnx_bcast.verify(model, rewritten)["match"])

    def test_the_engine_judges_the_result_as_in_the_cli(self):
        # Issue 42: the library runs the written model on the target's engine as opt does,
        # and says so in the report; without the engine (or turned off) it says why not.
        model = onnx.load(str(MODELS / "cnn_block.onnx"))
        _, report = onnx_bcast.optimize(model, target="opencv", dims={"N": 1})
        engine = report["engine"]
        if engine["outcome"] is None:
            self.assertIn("this build has no opencv adapter", engine["note"])
        else:
            self.assertEqual(engine["outcome"], "ran")
            self.assertTrue(engine["line"].startswith("opencv: runs, max abs "))
            self.assertEqual(engine["dims"], "N=1")
        _, report = onnx_bcast.optimize(model, target="opencv", dims={"N": 1},
                                        verify_engine=False)
        self.assertIsNone(report["engine"]["outcome"])
        self.assertIn("not run on opencv", report["engine"]["note"])
        with self.assertRaises(ValueError):
            onnx_bcast.optimize(model, target="explicit", require_engine=True)

    def test_bytes_in_bytes_out_and_output_path(self):
        data = (MODELS / "cnn_block.onnx").read_bytes()
        rewritten, report = onnx_bcast.optimize(data, passes=["align-ranks"])
        self.assertIsInstance(rewritten, bytes)
        self.assertGreater(report["passes"][0]["nodes_inserted"]
                           + report["passes"][0]["initializers_rewritten"], 0)
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp) / "out.onnx"
            # ncnn has no batch axis: its measured table holds at a batch of 1.
            report = onnx_bcast.optimize(MODELS / "cnn_block.onnx", target="ncnn", output=out,
                                         dims={"N": 1})
            self.assertEqual(report["output"], str(out))
            onnx.checker.check_model(onnx.load(str(out)))
            self.assertTrue(onnx_bcast.verify(MODELS / "cnn_block.onnx", out)["match"])

    def test_dims_make_the_model_static(self):
        fpn = SOURCE_DIR / "tests" / "fixtures" / "exported" / "fpn_op11.onnx"
        model = onnx.load(str(fpn))
        rewritten, report = onnx_bcast.optimize(model, target="ncnn",
                                                dims={"N": 1, "H": 64, "W": 64})
        self.assertEqual(report["dims"], {"H": 64, "N": 1, "W": 64})
        dims = [d.dim_value for d in rewritten.graph.input[0].type.tensor_type.shape.dim]
        self.assertEqual(dims, [1, 3, 64, 64])
        self.assertNotIn("Shape", {n.op_type for n in rewritten.graph.node})
        same, _ = onnx_bcast.optimize(model, target="ncnn",
                                      input_shapes={"x": [1, 3, 64, 64]})
        self.assertEqual(same.SerializeToString(), rewritten.SerializeToString())
        with self.assertRaises(ValueError) as cm:
            onnx_bcast.optimize(model, target="ncnn", dims={"Q": 2})
        self.assertIn("Q", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            onnx_bcast.optimize(model, target="ncnn", dims={"N": 1, "H": 24, "W": 32})
        self.assertIn("not broadcastable", str(cm.exception))

    def test_bad_options_and_bad_models_raise(self):
        model = onnx.load(str(MODELS / "cnn_block.onnx"))
        with self.assertRaises(ValueError) as cm:
            onnx_bcast.optimize(model, passes=["no-such-pass"])
        self.assertIn("no-such-pass", str(cm.exception))
        with self.assertRaises(ValueError):
            onnx_bcast.optimize(model, target="tpu9000")
        with self.assertRaises(ValueError):
            onnx_bcast.optimize(model, target="ncnn", passes=["align-ranks"])
        with self.assertRaises(ValueError) as cm:
            onnx_bcast.optimize(add_model([2, 3], [4], [2, 3]),
                                passes=["materialize-broadcast"])
        self.assertIn("the_add", str(cm.exception))

    def test_tables(self):
        self.assertIn("align-ranks", [name for name, _ in onnx_bcast.list_passes()])
        self.assertIn("ncnn", [name for name, _ in onnx_bcast.list_targets()])
        self.assertTrue(onnx_bcast.__version__)


class RunTest(unittest.TestCase):
    def test_broadcast_add_matches_numpy(self):
        rng = np.random.default_rng(0)
        a = rng.standard_normal((2, 3, 4)).astype(np.float32)
        b = rng.standard_normal((3, 1)).astype(np.float32)
        outputs = onnx_bcast.run(add_model([2, 3, 4], [3, 1], [2, 3, 4]), {"a": a, "b": b})
        self.assertEqual(list(outputs), ["y"])
        self.assertEqual(outputs["y"].dtype, np.float32)
        np.testing.assert_array_equal(outputs["y"], a + b)

    def test_non_contiguous_inputs_are_accepted(self):
        a = np.arange(12, dtype=np.float32).reshape(3, 4).T  # (4, 3), Fortran order
        b = np.array([1, 2, 3], dtype=np.float32)
        outputs = onnx_bcast.run(add_model([4, 3], [3], [4, 3]), {"a": a, "b": b})
        np.testing.assert_array_equal(outputs["y"], a + b)

    def test_random_inputs_are_seeded(self):
        path = MODELS / "cnn_block.onnx"
        first = onnx_bcast.run(path, random=True, dims={"N": 2})
        second = onnx_bcast.run(path, random=True, dims={"N": 2})
        other = onnx_bcast.run(path, random=True, dims={"N": 2}, seed=5)
        (name,) = first
        self.assertEqual(first[name].shape, (2, 10))
        np.testing.assert_array_equal(first[name], second[name])
        self.assertFalse(np.array_equal(first[name], other[name]))

    def test_model_with_initializers_matches_numpy(self):
        w = np.arange(6, dtype=np.float32).reshape(2, 3)
        graph = helper.make_graph(
            [helper.make_node("Mul", ["x", "w"], ["m"]),
             helper.make_node("Sub", ["m", "x"], ["y"])], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
            [numpy_helper.from_array(w, "w")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
        np.testing.assert_array_equal(onnx_bcast.run(model, {"x": x})["y"], x * w - x)

    def test_input_errors(self):
        model = add_model([2, 3], [3], [2, 3])
        a = np.zeros((2, 3), np.float32)
        with self.assertRaises(ValueError) as cm:
            onnx_bcast.run(model, {"a": a})
        self.assertIn("b", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            onnx_bcast.run(model, {"a": a, "b": np.zeros(3, np.float64)})
        self.assertIn("float64", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            onnx_bcast.run(model, {"a": a, "b": np.zeros(4, np.float32)})
        self.assertIn("[4]", str(cm.exception))
        with self.assertRaises(ValueError):
            onnx_bcast.run(model, {"a": a, "b": np.zeros(3, np.complex64)})

    def test_symbols_bind_alike_across_inputs(self):
        # The CLI's check (runtime/exec/input_check.h): one N for a [N,3] and b [N,1].
        model = add_model(["N", 3], ["N", 1], ["N", 3])
        a = np.zeros((2, 3), np.float32)
        with self.assertRaises(ValueError) as cm:
            onnx_bcast.run(model, {"a": a, "b": np.zeros((5, 1), np.float32)})
        self.assertIn("N is 5 here but 2 in input 'a'", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            onnx_bcast.run(model, {"a": a}, random=True, dims={"N": 4})
        self.assertIn("N is 2 here but dims N=4", str(cm.exception))
        # A given input sizes the random ones.
        self.assertEqual(onnx_bcast.run(model, {"a": a}, random=True)["y"].shape, (2, 3))

    def test_runs_in_threads(self):
        # The GIL is released during runs: concurrent calls work and give the same results.
        model = add_model([64, 64], [64], [64, 64]).SerializeToString()
        a = np.ones((64, 64), np.float32)
        b = np.arange(64, dtype=np.float32)
        results = []

        def work():
            results.append(onnx_bcast.run(model, {"a": a, "b": b})["y"])

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(len(results), 4)
        for r in results:
            np.testing.assert_array_equal(r, a + b)


class VerifyTest(unittest.TestCase):
    def test_detects_an_altered_model(self):
        model = onnx.load(str(MODELS / "cnn_block.onnx"))
        altered = onnx.ModelProto()
        altered.CopyFrom(model)
        init = next(t for t in altered.graph.initializer
                    if t.data_type == TensorProto.FLOAT and np.prod(t.dims) > 1)
        values = numpy_helper.to_array(init).copy()
        values.flat[0] += 0.5
        init.CopyFrom(numpy_helper.from_array(values, init.name))

        same = onnx_bcast.verify(model, model)
        self.assertTrue(same["match"])
        self.assertEqual(same["max_abs_error"], 0)

        result = onnx_bcast.verify(model, altered, samples=2)
        self.assertFalse(result["match"])
        self.assertGreater(result["max_abs_error"], 0)
        self.assertEqual(result["schema_version"], 1)
        bad = [o for s in result["samples"] for o in s["outputs"] if not o["match"]]
        self.assertTrue(bad)
        self.assertGreater(bad[0]["mismatches"], 0)
        self.assertIn("DIFFERENT", result["text"])
        self.assertIsNotNone(result["divergence"])

    def test_binds_what_the_rewritten_model_declares(self):
        # issue 31: verify after optimize(dims=...) samples only inputs both models accept.
        vit = SOURCE_DIR / "tests" / "fixtures" / "exported" / "torchvision_vit_op14.onnx"
        rewritten, _ = onnx_bcast.optimize(onnx.load(str(vit)), target="opencv", dims={"N": 1})
        result = onnx_bcast.verify(vit, rewritten)
        self.assertTrue(result["match"], result["text"])
        self.assertEqual(result["bound"],
                         [{"symbol": "N", "value": 1, "by": "the rewritten model"}])
        self.assertIn("N bound to 1 by the rewritten model", result["text"].split("\n")[0])
        with self.assertRaises(ValueError) as cm:
            onnx_bcast.verify(vit, rewritten, dims={"N": 2})
        self.assertIn("verify(dims=...): N=2: the rewritten model accepts only N=1",
                      str(cm.exception))
        explicit = onnx_bcast.verify(vit, vit, dims={"N": 2}, samples=1)
        self.assertEqual(explicit["bound"], [{"symbol": "N", "value": 2, "by": "dims="}])

    def test_messages_speak_python(self):
        # issue 31 item 7: the keyword argument, not the CLI's flag or the C++ field.
        fpn = SOURCE_DIR / "tests" / "fixtures" / "exported" / "fpn_op11.onnx"
        model = onnx.load(str(fpn))
        for call in (lambda: onnx_bcast.optimize(model, target="ncnn", dims={"batch": 1}),
                     lambda: onnx_bcast.check(model, dims={"batch": 1}),
                     lambda: onnx_bcast.verify(model, model, dims={"batch": 1})):
            with self.assertRaises(ValueError) as cm:
                call()
            message = str(cm.exception)
            self.assertNotIn("--dim", message)
            self.assertNotIn("Options", message)
            self.assertIn("(dims=...): batch", message)
        with self.assertRaises(ValueError) as cm:
            onnx_bcast.optimize(model, target="ncnn", input_shapes={"nope": [1]})
        self.assertIn("optimize(input_shapes=...): nope", str(cm.exception))

    def test_tolerance_and_errors(self):
        model = onnx.load(str(MODELS / "cnn_block.onnx"))
        result = onnx_bcast.verify(model, model, rtol=1e-2, atol=1e-5)
        self.assertTrue(result["match"])
        self.assertAlmostEqual(result["tolerance"]["rtol"], 1e-2)
        self.assertFalse(result["tolerance"]["exact"])
        with self.assertRaises(ValueError):
            onnx_bcast.verify(model, model, samples=0)
        with self.assertRaises(FileNotFoundError):
            onnx_bcast.verify("/nonexistent.onnx", model)


# The hostile catalogue's structural refusals (and crash rows) through the module: it runs the
# same checks as the CLI before anything (issue 14: a recursive model-local function overflowed
# the stack in check()).
STRUCTURAL = {
    "cycle": ("""<ir_version: 8, opset_import: ["" : 17]>
        g (float[2] x) => (float[2] y) { a = Add(x, b)  b = Relu(a)  y = Identity(b) }""",
              "cycle"),
    "undefined": ("""<ir_version: 8, opset_import: ["" : 17]>
        g (float[2] x) => (float[2] y) { y = Add(x, nowhere) }""", "defined nowhere"),
    "defined_twice": ("""<ir_version: 8, opset_import: ["" : 17]>
        g (float[2] x) => (float[2] y) { y = Relu(x)  y = Neg(x) }""", "defined twice"),
    "unproduced_output": ("""<ir_version: 8, opset_import: ["" : 17]>
        g (float[2] x) => (float[2] y, float[2] z) { y = Relu(x) }""", "produced by no node"),
    "two_initializers": ("""<ir_version: 8, opset_import: ["" : 17]>
        g (float[2] x) => (float[2] y) <float[2] w = {1, 2}, float[2] w = {3, 4}> {
          y = Add(x, w)
        }""", "value 'w' is defined twice"),
    "recursive": ("""<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
        g (float[2] x) => (float[2] y) { y = local.F(x) }
        <domain: "local", opset_import: ["" : 17, "local" : 1]>
        F (a) => (b) { b = local.F(a) }""", "is recursive"),
    "mutually_recursive": ("""<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
        g (float[2] x) => (float[2] y) { y = local.F(x) }
        <domain: "local", opset_import: ["" : 17, "local" : 1]>
        F (a) => (b) { b = local.G(a) }
        <domain: "local", opset_import: ["" : 17, "local" : 1]>
        G (a) => (b) { t = Relu(a)  b = local.F(t) }""", "is recursive"),
}


class FrontDoorTest(unittest.TestCase):
    def test_structural_refusals_through_every_function(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name, (text, message) in STRUCTURAL.items():
                path = pathlib.Path(tmp) / (name + ".onnxtxt")
                path.write_text(text)
                calls = {
                    "check": lambda m: onnx_bcast.check(m),
                    "optimize": lambda m: onnx_bcast.optimize(m, target="none",
                                                              output=pathlib.Path(tmp) / "o"),
                    "run": lambda m: onnx_bcast.run(m, random=True),
                    "verify": lambda m: onnx_bcast.verify(m, m),
                }
                for call, fn in calls.items():
                    with self.subTest(model=name, call=call):
                        with self.assertRaises(ValueError) as cm:
                            fn(path)
                        self.assertIn(message, str(cm.exception))
                        self.assertTrue(str(cm.exception).startswith(str(path) + ": "),
                                        str(cm.exception))
            # nothing written beside the models
            self.assertEqual(sorted(os.listdir(tmp)), sorted(n + ".onnxtxt" for n in STRUCTURAL))

    def test_recursive_function_in_memory_and_bytes(self):
        model = onnx.parser.parse_model(STRUCTURAL["recursive"][0])
        for arg in (model, model.SerializeToString()):
            for fn in (onnx_bcast.check, lambda m: onnx_bcast.optimize(m, target="none"),
                       lambda m: onnx_bcast.run(m, random=True),
                       lambda m: onnx_bcast.verify(m, m)):
                with self.assertRaises(ValueError) as cm:
                    fn(arg)
                self.assertIn("function 'local.F' is recursive", str(cm.exception))

    def test_crash_rows_are_exceptions_not_signals(self):
        d2s = onnx.parser.parse_model("""<ir_version: 8, opset_import: ["" : 13]>
            g (float[1,4,2,2] x) => (float[1,1,4,4] y) {
              y = DepthToSpace<blocksize = 4294967296>(x)
            }""")
        self.assertEqual(onnx_bcast.check(d2s)["summary"]["error"], 0)
        with self.assertRaises(ValueError) as cm:
            onnx_bcast.run(d2s, random=True)
        self.assertIn("blocksize 4294967296", str(cm.exception))
        with self.assertRaises(ValueError):
            onnx_bcast.run(d2s, random=True, threads=100000)


if __name__ == "__main__":
    unittest.main()

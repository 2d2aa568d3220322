"""Issue 44 in Python: optimize() decides as `onnx-bcast opt` does (the same exit code as an
exception, the same nodes outside the target's form, the same engine verdict and refusal), its
refusals carry their reasons as data (TargetNotMetError.violations, .report), messages speak
the keyword arguments (dims=, never --dim; "model", never <memory>), and input_ranges= steers
random inputs of run(), verify() and optimize()'s engine check.

BCAST_CLI names the onnx-bcast binary whose `opt --report` the dicts are compared with.
"""
import json
import os
import pathlib
import subprocess
import tempfile
import unittest

import numpy as np
import onnx
import onnx.parser

import onnx_bcast

SOURCE_DIR = pathlib.Path(os.environ.get(
    "BCAST_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
MODELS = SOURCE_DIR / "models"
FIXTURES = SOURCE_DIR / "tests" / "fixtures"
ENGINES = {name for name, _ in onnx_bcast.list_targets()}


def cli_opt(args, tmp):
    """(exit code, the --report dict or None) of `onnx-bcast opt ARGS`."""
    exe = os.environ.get("BCAST_CLI")
    if not exe:
        raise unittest.SkipTest("BCAST_CLI is not set")  # never the case under ctest
    report = pathlib.Path(tmp) / "cli.json"
    if report.exists():
        report.unlink()
    done = subprocess.run([exe, "opt", *map(str, args), "-o", str(pathlib.Path(tmp) / "cli.onnx"),
                           "--report", str(report)], capture_output=True, text=True, timeout=300)
    return done.returncode, json.loads(report.read_text()) if report.exists() else None


def py_opt(model, tmp, **options):
    """(the CLI's exit code for what optimize() did, its report dict or the exception's)."""
    try:
        report = onnx_bcast.optimize(model, output=pathlib.Path(tmp) / "py.onnx", **options)
        return 0, report
    except onnx_bcast.TargetNotMetError as e:
        return 3, e.report
    except onnx_bcast.EngineCheckError as e:
        return 1, e.report
    except ValueError:
        return 1, None  # a binding that breaks a broadcast (opt: exit 1, nothing passes)


def verdicts(report):
    """What both must agree on: the decisions, not the words (Python names its keywords)."""
    if report is None:
        return None
    return {
        "refused_exit": report.get("refused", {}).get("exit"),
        "violations": [(d["graph"], d["node"], d["op"], d["shapes"], d["cannot_prove"],
                        d["hint"] is None) for d in report.get("violation_details", [])],
        # OpenCV 4.6 given a model whose input dims are symbolic reads shapes it never set:
        # it refuses or dies of SIGFPE depending on the process's memory; a failed engine check
        # is compared as such.
        "engine": {"refused": "failed", "crashed": "failed"}.get(
            (report.get("engine") or {}).get("outcome"), (report.get("engine") or {}).get("outcome")),
        "waived": len(report.get("waived", [])),
        "rewrites": report["summary"]["rewrites"],
    }


class OptimizeAlikeCliTest(unittest.TestCase):
    def test_same_model_same_options_same_verdict(self):
        cases = [
            (MODELS / "cnn_block.onnx", "explicit", None),
            (MODELS / "cnn_block.onnx", "ncnn", None),
            (MODELS / "cnn_block.onnx", "ncnn", {"N": 1}),
            (FIXTURES / "opt" / "unknown_rank.onnxtxt", "ncnn", None),
            (FIXTURES / "newcomer" / "unet_skip_op13.onnx", "none", None),
            (FIXTURES / "newcomer" / "googlenet_like_op13.onnx", "opencv", None),
            (FIXTURES / "newcomer" / "unet_skip_op13.onnx", "opencv", {"N": 1, "H": 32, "W": 32}),
        ]
        with tempfile.TemporaryDirectory() as tmp:
            for model, target, dims in cases:
                with self.subTest(model=model.name, target=target, dims=dims):
                    args = [model, "--target", target]
                    if dims:
                        args += ["--dim", ",".join(f"{k}={v}" for k, v in dims.items())]
                    cli_exit, cli_report = cli_opt(args, tmp)
                    py_exit, py_report = py_opt(model, tmp, target=target, dims=dims)
                    self.assertEqual(py_exit, cli_exit)
                    self.assertEqual(verdicts(py_report), verdicts(cli_report))
                    if cli_exit == 0:
                        self.assertEqual((pathlib.Path(tmp) / "py.onnx").read_bytes(),
                                         (pathlib.Path(tmp) / "cli.onnx").read_bytes())

    def test_a_binding_that_breaks_a_broadcast_refuses_both(self):
        model = FIXTURES / "check" / "symbolic_batch.onnxtxt"
        with tempfile.TemporaryDirectory() as tmp:
            cli_exit, cli_report = cli_opt([model, "--dim", "N=3"], tmp)
            self.assertEqual(cli_exit, 1)
            self.assertEqual(cli_report["refused"]["exit"], 1)
            with self.assertRaises(ValueError) as raised:
                onnx_bcast.optimize(model, output=pathlib.Path(tmp) / "p.onnx", dims={"N": 3})
            self.assertIn("Add 'Add#0'", str(raised.exception))


class RefusalsAreDataTest(unittest.TestCase):
    def test_target_not_met_carries_the_violations(self):
        model = onnx.load(str(MODELS / "cnn_block.onnx"))
        with self.assertRaises(onnx_bcast.TargetNotMetError) as raised:
            onnx_bcast.optimize(model, target="ncnn", live_probe=False, verify_engine=False)
        e = raised.exception
        self.assertIsInstance(e, NotImplementedError)  # what callers caught before
        (v,) = e.violations
        self.assertEqual(set(v), {"graph", "node", "op", "shapes", "rule", "cannot_prove", "hint"})
        self.assertEqual((v["graph"], v["node"], v["op"], v["shapes"]),
                         ("main", "center", "Sub", "[N,10] and [N,1]"))
        self.assertEqual(v["hint"], "bind N with dims=")
        self.assertEqual(e.report["refused"]["exit"], 3)
        # The keyword argument's words, never the CLI's flag or the layers' label.
        for text in (str(e), json.dumps(e.report)):
            self.assertNotIn("--dim", text)
            self.assertNotIn("<memory>", text)
        self.assertTrue(str(e).startswith("model: target ncnn not met"), str(e))
        self.assertIn("bind N with dims=", str(e))

    @unittest.skipUnless("opencv" in ENGINES, "no opencv target")
    def test_engine_refusal_carries_the_engine_verdict(self):
        model = FIXTURES / "newcomer" / "googlenet_like_op13.onnx"
        try:
            onnx_bcast.optimize(onnx.load(str(model)), target="opencv", require_engine=True)
        except ValueError:
            self.skipTest("this build has no OpenCV adapter")
        except onnx_bcast.EngineCheckError as e:
            self.assertIsInstance(e, RuntimeError)
            self.assertIn(e.engine["outcome"], ("refused", "crashed"))  # see verdicts()
            self.assertIn("H, N, W unbound: chosen by opt", e.engine["dims"])
            self.assertNotIn("--dim", e.engine["dims"])
            self.assertEqual(e.report["refused"]["exit"], 1)
        else:
            self.fail("optimize() wrote a model OpenCV does not run")


IDENTITY = """<ir_version: 8, opset_import: ["" : 15]>
g (int64[N,6] ids, float[N,6] mask) => (int64[N,6] a, float[N,6] b) {
  a = Identity(ids)
  b = Identity(mask)
}
"""


class InputRangesTest(unittest.TestCase):
    def test_run_takes_ranges_as_pairs_and_strings(self):
        model = onnx.parser.parse_model(IDENTITY)
        out = onnx_bcast.run(model, random=True, dims={"N": 50},
                             input_ranges={"ids": (3, 4), "mask": "0:1:int"})
        self.assertEqual(set(out["a"].ravel().tolist()), {3, 4})
        self.assertEqual(set(out["b"].ravel().tolist()), {0.0, 1.0})
        out = onnx_bcast.run(model, random=True, dims={"N": 50}, input_ranges={"mask": (0, 1)})
        self.assertTrue(np.all((out["b"] >= 0) & (out["b"] <= 1)))
        self.assertGreater(len(set(out["b"].ravel().tolist())), 100)

    def test_bad_ranges_raise_value_error_in_python_words(self):
        model = onnx.parser.parse_model(IDENTITY)
        for ranges, words in (({"idz": (0, 1)}, "run(input_ranges=...): idz=0:1: the model has "
                                                "no input 'idz'"),
                              ({"ids": (0.5, 3)}, "'ids' is int64, which takes whole numbers"),
                              ({"ids": "3"}, "expected (lo, hi) or 'LO:HI'")):
            with self.subTest(ranges=ranges):
                with self.assertRaises(ValueError) as raised:
                    onnx_bcast.run(model, random=True, input_ranges=ranges)
                self.assertIn(words, str(raised.exception))

    def test_verify_feeds_the_range_to_both_models(self):
        relu = onnx.parser.parse_model("""<ir_version: 8, opset_import: ["" : 15]>
g (float[N,8] x) => (float[N,8] y) { y = Relu(x) }""")
        ident = onnx.parser.parse_model("""<ir_version: 8, opset_import: ["" : 15]>
g (float[N,8] x) => (float[N,8] y) { y = Identity(x) }""")
        self.assertFalse(onnx_bcast.verify(relu, ident)["match"])
        self.assertTrue(onnx_bcast.verify(relu, ident, input_ranges={"x": (0, 1)})["match"])


if __name__ == "__main__":
    unittest.main()

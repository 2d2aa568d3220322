"""Tests of the onnx_bcast package as users and tools see it: inspect.signature and the type
stubs (present, and in step with the extension's signatures and docstrings), optimize returning
what it was given, verify(report=...), and report dicts keyed exactly like the CLI's JSON.

Run from the build tree (PYTHONPATH=build/python) and, by venv_install_test.py, against the
package pip installed into a fresh virtual environment. BCAST_CLI names the onnx-bcast binary
whose JSON the dicts are compared with.
"""
import ast
import copy
import inspect
import json
import os
import pathlib
import subprocess
import tempfile
import unittest

import onnx
from onnx import TensorProto, numpy_helper

import onnx_bcast

SOURCE_DIR = pathlib.Path(os.environ.get(
    "BCAST_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
MODELS = SOURCE_DIR / "models"
PACKAGE_DIR = pathlib.Path(onnx_bcast.__file__).parent
PUBLIC = ["check", "optimize", "run", "verify", "list_passes", "list_targets"]


def stub_functions():
    """{name: [FunctionDef, ...]} of the installed __init__.pyi (several for an overload)."""
    tree = ast.parse((PACKAGE_DIR / "__init__.pyi").read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            out.setdefault(node.name, []).append(node)
    return out


def stub_parameters(fn):
    """[(name, kind, default)] of a stub function; default is inspect.Parameter.empty or a
    Python value."""
    a = fn.args
    params = []
    positional = a.posonlyargs + a.args
    defaults = [inspect.Parameter.empty] * (len(positional) - len(a.defaults)) + [
        ast.literal_eval(d) for d in a.defaults]
    for arg, default in zip(positional, defaults):
        params.append((arg.arg, inspect.Parameter.POSITIONAL_OR_KEYWORD, default))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        params.append((arg.arg, inspect.Parameter.KEYWORD_ONLY,
                       inspect.Parameter.empty if default is None else ast.literal_eval(default)))
    return params


def stub_typeddicts():
    """{TypedDict name: (required keys, optional keys)} of __init__.pyi, bases included (the
    class form, with total=False, and the functional form TypedDict("N", {...}))."""
    tree = ast.parse((PACKAGE_DIR / "__init__.pyi").read_text())
    own, bases = {}, {}
    for node in tree.body:
        # Exception classes (TargetNotMetError(NotImplementedError), ...) are no TypedDicts.
        if isinstance(node, ast.ClassDef) and any(
                getattr(b, "id", "").endswith("Error") for b in node.bases):
            continue
        if isinstance(node, ast.ClassDef):
            total = all(not (k.arg == "total" and ast.literal_eval(k.value) is False)
                        for k in node.keywords)
            keys = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign)}
            own[node.name] = (keys, set()) if total else (set(), keys)
            bases[node.name] = [b.id for b in node.bases if b.id != "TypedDict"]
        elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
              and getattr(node.value.func, "id", "") == "TypedDict"):
            keys = {ast.literal_eval(k) for k in node.value.args[1].keys}
            own[node.targets[0].id] = (keys, set())
            bases[node.targets[0].id] = []

    def resolve(name):
        required, optional = set(own[name][0]), set(own[name][1])
        for base in bases[name]:
            r, o = resolve(base)
            required |= r
            optional |= o
        return required, optional

    return {name: resolve(name) for name in own}


def runtime_parameters(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def key_tree(value):
    """The keys of every dict in a JSON-like value, nested; lists contribute their elements'
    key trees (all of them, so that one odd element shows)."""
    if isinstance(value, dict):
        return {k: key_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        trees = [key_tree(v) for v in value]
        return [t for t in trees if t not in (None, [])] or None
    return None


def cli(*args):
    exe = os.environ.get("BCAST_CLI")
    if not exe:
        raise unittest.SkipTest("BCAST_CLI is not set")  # never the case under ctest
    return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=120)


class SignatureAndStubTest(unittest.TestCase):
    def test_stubs_and_marker_ship_with_the_package(self):
        self.assertTrue((PACKAGE_DIR / "__init__.pyi").is_file(), PACKAGE_DIR)
        self.assertTrue((PACKAGE_DIR / "py.typed").is_file(), PACKAGE_DIR)
        self.assertEqual(sorted(stub_functions()), sorted(PUBLIC))

    def test_inspect_signature_matches_the_stubs(self):
        stubs = stub_functions()
        for name in PUBLIC:
            with self.subTest(function=name):
                fn = getattr(onnx_bcast, name)
                runtime = runtime_parameters(fn)  # raises ValueError without a text signature
                for overload in stubs[name]:
                    stub = stub_parameters(overload)
                    self.assertEqual([(n, k) for n, k, _ in stub], [(n, k) for n, k, _ in runtime])
                # The first stub (the only one, or the first overload) carries the defaults.
                self.assertEqual(stub_parameters(stubs[name][0]), runtime)

    def test_docstrings_match_the_stubs(self):
        stubs = stub_functions()
        for name in PUBLIC:
            with self.subTest(function=name):
                doc = inspect.getdoc(getattr(onnx_bcast, name))
                self.assertTrue(doc)
                self.assertEqual(ast.get_docstring(stubs[name][0]), doc)

    def test_signature_names_are_the_extension_argument_names(self):
        # Every parameter passed by keyword with its documented default: a name the extension
        # (py::arg) does not know raises TypeError.
        model = onnx.load(str(MODELS / "cnn_block.onnx"))
        required = {"model": model, "original": model, "rewritten": model}
        for name in PUBLIC:
            with self.subTest(function=name):
                kwargs = {}
                for p in inspect.signature(getattr(onnx_bcast, name)).parameters.values():
                    kwargs[p.name] = required[p.name] if p.default is p.empty else p.default
                if name == "run":
                    kwargs["random"] = True
                    kwargs["dims"] = {"N": 1}
                getattr(onnx_bcast, name)(**kwargs)
        with self.assertRaises(TypeError):
            onnx_bcast.check(model, no_such_option=True)


class OptimizeReturnsWhatItWasGivenTest(unittest.TestCase):
    def test_proto_bytes_and_path(self):
        path = MODELS / "legacy_axis.onnx"
        model = onnx.load(str(path))
        rewritten, report = onnx_bcast.optimize(model, target="explicit")
        self.assertIsInstance(rewritten, onnx.ModelProto)
        self.assertGreater(rewritten.opset_import[0].version, 6)
        self.assertEqual(model.opset_import[0].version, 6)  # the argument is untouched

        data, report_b = onnx_bcast.optimize(path.read_bytes(), target="explicit")
        self.assertIsInstance(data, bytes)
        self.assertEqual(data, rewritten.SerializeToString())

        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(TypeError) as cm:
                onnx_bcast.optimize(path, target="explicit")
            self.assertIn("output=", str(cm.exception))
            out = pathlib.Path(tmp) / "out.onnx"
            report_p = onnx_bcast.optimize(path, target="explicit", output=out)
            self.assertIsInstance(report_p, dict)
            self.assertEqual(report_p["output"], str(out))
            self.assertEqual(onnx.load(str(out)), rewritten)
            # An in-memory model with output= comes back and is saved too.
            out2 = pathlib.Path(tmp) / "out2.onnx"
            again, _ = onnx_bcast.optimize(model, target="explicit", output=out2)
            self.assertIsInstance(again, onnx.ModelProto)
            self.assertEqual(onnx.load(str(out2)), rewritten)
        for r in (report, report_b, report_p):
            self.assertEqual([p["pass"] for p in r["passes"]],
                             ["upgrade-legacy-broadcast", "align-ranks"])


def tampered(model, report):
    """A copy of the rewritten model with one value changed in the initializer the report's
    first rewrite touched: verify must diverge at that rewrite's node."""
    bad = copy.deepcopy(model)
    for init in bad.graph.initializer:
        if init.data_type == TensorProto.FLOAT:
            values = numpy_helper.to_array(init).copy()
            values.flat[0] += 1.0
            init.CopyFrom(numpy_helper.from_array(values, init.name))
            return bad
    raise AssertionError("no float initializer")


class VerifyReportTest(unittest.TestCase):
    def setUp(self):
        self.model = onnx.load(str(MODELS / "legacy_axis.onnx"))
        self.rewritten, self.report = onnx_bcast.optimize(self.model, target="explicit")
        self.bad = tampered(self.rewritten, self.report)

    def test_report_dict_and_file_name_the_pass(self):
        plain = onnx_bcast.verify(self.model, self.bad, samples=1)
        self.assertFalse(plain["match"])
        self.assertIsNone(plain["divergence"]["pass"])
        node = plain["divergence"]["node"]
        expected = next(p["pass"] for p in self.report["passes"]
                        if any(r["node"] == node for r in p["rewrites"]))

        with_dict = onnx_bcast.verify(self.model, self.bad, samples=1, report=self.report)
        self.assertEqual(with_dict["divergence"]["pass"], expected)
        self.assertTrue(with_dict["divergence"]["rewrite"])
        with tempfile.TemporaryDirectory() as tmp:
            path = pathlib.Path(tmp) / "report.json"
            r = cli("opt", MODELS / "legacy_axis.onnx", "--target", "explicit",
                    "-o", pathlib.Path(tmp) / "o.onnx", "--report", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            with_file = onnx_bcast.verify(self.model, self.bad, samples=1, report=path)
            self.assertEqual(with_file["divergence"]["pass"], expected)
            self.assertEqual(with_file["divergence"]["rewrite"],
                             with_dict["divergence"]["rewrite"])

    def test_bad_reports_raise(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(FileNotFoundError):
                onnx_bcast.verify(self.model, self.rewritten, report=pathlib.Path(tmp) / "none")
            garbage = pathlib.Path(tmp) / "garbage.json"
            garbage.write_text("{not json")
            with self.assertRaises(ValueError):
                onnx_bcast.verify(self.model, self.rewritten, report=garbage)
        with self.assertRaises(ValueError):
            onnx_bcast.verify(self.model, self.rewritten, report={"nodes": []})
        with self.assertRaises(TypeError):
            onnx_bcast.verify(self.model, self.rewritten, report=42)


class OneSchemaTest(unittest.TestCase):
    """The dicts are the CLI's JSON documents: same keys at every level, same values (bar the
    timings), plus 'text'."""

    def test_check_dict_is_check_json(self):
        for name, lint in (("cnn_block.onnx", False), ("cnn_block.onnx", True),
                           ("legacy_axis.onnx", False)):
            with self.subTest(model=name, lint=lint):
                path = MODELS / name
                r = cli("check", path, "--json", "-", *(["--lint"] if lint else []))
                self.assertIn(r.returncode, (0, 1), r.stderr)
                expected = json.loads(r.stdout)
                got = onnx_bcast.check(path, lint=lint)
                self.assertEqual(got.pop("text").splitlines()[0].split(":")[0], str(path))
                self.assertEqual(key_tree(got), key_tree(expected))
                self.assertEqual(got, expected)
                self.assertIn("node", got["nodes"][0])
                self.assertNotIn("name", got["nodes"][0])

    def test_optimize_dict_is_opt_report(self):
        path = MODELS / "legacy_axis.onnx"
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp) / "out.onnx"
            report_path = pathlib.Path(tmp) / "report.json"
            r = cli("opt", path, "--target", "explicit", "-o", out, "--report", report_path)
            self.assertEqual(r.returncode, 0, r.stderr)
            expected = json.loads(report_path.read_text())
            got = onnx_bcast.optimize(path, target="explicit", output=out)
        self.assertIn("upgrade-legacy-broadcast", got.pop("text"))
        self.assertEqual(key_tree(got), key_tree(expected))
        for report in (got, expected):
            for p in report["passes"]:
                self.assertGreaterEqual(p.pop("seconds"), 0)
        self.assertEqual(got, expected)
        self.assertEqual(got["passes"][0]["pass"], "upgrade-legacy-broadcast")

    def test_in_memory_models_have_the_same_keys(self):
        model = onnx.load(str(MODELS / "cnn_block.onnx"))
        from_path = onnx_bcast.check(MODELS / "cnn_block.onnx")
        in_memory = onnx_bcast.check(model)
        self.assertEqual(key_tree(in_memory), key_tree(from_path))
        self.assertEqual(in_memory["nodes"], from_path["nodes"])
        _, report = onnx_bcast.optimize(model, target="ncnn", dims={"N": 1})
        with tempfile.TemporaryDirectory() as tmp:
            report_p = onnx_bcast.optimize(MODELS / "cnn_block.onnx", target="ncnn",
                                           output=pathlib.Path(tmp) / "o.onnx", dims={"N": 1})
        self.assertEqual(key_tree(report), key_tree(report_p))

    def test_stub_typeddicts_spell_the_real_keys(self):
        # Every report dict has every required key of its TypedDict and no key it lacks.
        fields = stub_typeddicts()
        checked = 0

        def expect(value, name):
            nonlocal checked
            required, optional = fields[name]
            self.assertLessEqual(required, set(value), name)
            self.assertLessEqual(set(value), required | optional, name)
            checked += 1

        def expect_each(items, name, inner, inner_name):
            # Each of `items` is a `name`, and each entry of its list `inner` an `inner_name`.
            for item in items:
                expect(item, name)
                for sub in item[inner]:
                    expect(sub, inner_name)

        for lint in (False, True):
            report = onnx_bcast.check(MODELS / "cnn_block.onnx", lint=lint)
            expect(report, "CheckReport")
            expect(report["summary"], "CheckSummary")
            expect_each(report["nodes"], "NodeVerdict", "inputs", "NodeInput")
        conditional = onnx_bcast.check(MODELS / "legacy_axis.onnx")
        expect(conditional, "CheckReport")
        _, report = onnx_bcast.optimize(onnx.load(str(MODELS / "legacy_axis.onnx")),
                                        target="explicit")
        expect(report, "OptimizeReport")
        expect(report["summary"], "OptimizeSummary")
        expect(report["summary"]["before"], "ModelStats")
        expect_each(report["passes"], "PassReport", "rewrites", "Rewrite")
        model = onnx.load(str(MODELS / "legacy_axis.onnx"))
        for result in (onnx_bcast.verify(model, model, samples=2),
                       onnx_bcast.verify(model, tampered(*onnx_bcast.optimize(model, target="explicit")),
                                         samples=1)):
            expect(result, "VerifyReport")
            expect(result["tolerance"], "Tolerance")
            expect_each(result["samples"], "Sample", "outputs", "OutputComparison")
            if result["divergence"] is not None:
                expect(result["divergence"], "Divergence")
                expect(result["divergence"]["comparison"], "Comparison")
        self.assertGreater(checked, 30)

    def test_shapes_are_the_cli_lists(self):
        node = next(n for n in onnx_bcast.check(MODELS / "cnn_block.onnx")["nodes"]
                    if n["op"] == "PRelu")
        self.assertEqual(node["inputs"][1]["shape"], [8, 1, 1])
        self.assertEqual(node["output"][0], "N")


if __name__ == "__main__":
    unittest.main()

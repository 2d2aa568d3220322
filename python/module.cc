// The extension `onnx_bcast._core` (pybind11) over the public C++ API, re-exported by the
// package onnx_bcast: check, optimize, run and verify taking an onnx.ModelProto, serialized bytes
// or a path, and returning plain Python data (tensors as numpy arrays). The reports of check,
// optimize and verify are the CLI's JSON documents (CheckResult::json, OptimizeReport::json,
// VerifyResult::json, written by the same code as `check --json`, `opt --report` and `verify
// --json`) loaded as dicts, so both speak one schema (docs/report-schema.md).
// Errors become ValueError, FileNotFoundError, NotImplementedError, ... with the API's one-line
// message. The GIL is released while the library works.
//
// Each docstring opens with the function's text signature ("name(args)\n--\n\n"), which is
// how CPython gives builtins an inspect.signature; python/onnx_bcast/__init__.pyi carries the
// same signatures with types, and the same docstrings (tests/python/test_package.py keeps the
// three in step: py::arg names, text signatures, stubs).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/cord.h"
#include "onnx_bcast/onnx_bcast.h"

namespace py = pybind11;

namespace {

// The API names its option fields ("OptimizeOptions::dims N: ..."); Python users passed a
// keyword argument: the message says `optimize(dims=...)` (issue 31 item 7).
std::string PythonWords(std::string text) {
  static const std::pair<const char*, const char*> kWords[] = {
      {"with OptimizeOptions::dims", "with dims="},
      {"no OptimizeOptions::dims binds", "no dims= binds"},
      {"OptimizeOptions::allow_partial", "allow_partial=True"},
      {"OptimizeOptions::verify_engine off", "verify_engine=False"},
      {"by VerifyOptions::dims", "by dims="},
      {"\"VerifyOptions::dims\"", "\"dims=\""},
      {"OptimizeOptions::dims ", "optimize(dims=...): "},
      {"OptimizeOptions::input_shapes ", "optimize(input_shapes=...): "},
      {"OptimizeOptions::input_ranges ", "optimize(input_ranges=...): "},
      {"RunOptions::input_ranges ", "run(input_ranges=...): "},
      {"VerifyOptions::input_ranges ", "verify(input_ranges=...): "},
      {"CheckOptions::dims ", "check(dims=...): "},
      {"VerifyOptions::dims ", "verify(dims=...): "},
      {"OptimizeOptions: ", "optimize(): "},
      {"VerifyOptions: ", "verify(): "},
  };
  for (const auto& [api, python] : kWords) {
    const std::string from(api), to(python);
    for (size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }
  return text;
}

// optimize()'s refusals, with the refused rewrite's report as data (issue 44 item 9):
// TargetNotMetError (a NotImplementedError, as before) for a target not met, EngineCheckError (a
// RuntimeError) for a result the target's engine does not run correctly. Created at import.
PyObject* g_target_not_met = nullptr;
PyObject* g_engine_check = nullptr;

// Raises one of the two above when `status` carries the report (kOptReportPayload): the
// exception has .report (the dict), .violations (its "violation_details", each {'graph',
// 'node', 'op', 'shapes', 'rule', 'cannot_prove', 'hint'}) and .engine (its "engine" or None).
void RaiseRefusal(const absl::Status& status, const std::string& message) {
  const absl::optional<absl::Cord> payload = status.GetPayload(onnx_bcast::kOptReportPayload);
  if (!payload.has_value()) return;
  PyObject* type = status.code() == absl::StatusCode::kUnimplemented ? g_target_not_met
                   : status.code() == absl::StatusCode::kAborted     ? g_engine_check
                                                                     : nullptr;
  if (type == nullptr) return;
  py::dict report =
      py::module_::import("json").attr("loads")(py::str(PythonWords(std::string(*payload))));
  py::object error = py::reinterpret_borrow<py::object>(type)(message);
  error.attr("report") = report;
  error.attr("violations") = report.contains("violation_details")
                                 ? py::object(report["violation_details"])
                                 : py::object(py::list());
  error.attr("engine") =
      report.contains("engine") ? py::object(report["engine"]) : py::object(py::none());
  PyErr_SetObject(type, error.ptr());
  throw py::error_already_set();
}

// Raises the Python exception matching the status code; returns normally for OK.
void Raise(const absl::Status& status) {
  if (status.ok()) return;
  const std::string message = PythonWords(std::string(status.message()));
  RaiseRefusal(status, message);
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      PyErr_SetString(PyExc_FileNotFoundError, message.c_str());
      break;
    case absl::StatusCode::kPermissionDenied:
      PyErr_SetString(PyExc_PermissionError, message.c_str());
      break;
    case absl::StatusCode::kUnimplemented:
      PyErr_SetString(PyExc_NotImplementedError, message.c_str());
      break;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kDataLoss:
      PyErr_SetString(PyExc_ValueError, message.c_str());
      break;
    default:
      PyErr_SetString(PyExc_RuntimeError, message.c_str());
      break;
  }
  throw py::error_already_set();
}

template <class T>
T Take(absl::StatusOr<T> result) {
  if (!result.ok()) Raise(result.status());
  return *std::move(result);
}

// A model argument: a path, or the serialized bytes of an in-memory model.
struct ModelArg {
  enum class Kind { kPath, kBytes, kProto } kind = Kind::kPath;
  std::string path;
  std::string bytes;
  py::object proto_type;  ///< type(model) for kProto, to build the result of the same class
};

ModelArg ToModelArg(const py::handle& obj, const char* what) {
  ModelArg arg;
  if (py::hasattr(obj, "SerializeToString")) {
    arg.kind = ModelArg::Kind::kProto;
    arg.bytes = obj.attr("SerializeToString")().cast<std::string>();
    arg.proto_type = py::type::of(obj);
  } else if (py::isinstance<py::bytes>(obj) || py::isinstance<py::bytearray>(obj) ||
             py::isinstance<py::memoryview>(obj)) {
    arg.kind = ModelArg::Kind::kBytes;
    arg.bytes = py::bytes(py::module_::import("builtins").attr("bytes")(obj)).cast<std::string>();
  } else if (py::isinstance<py::str>(obj) || py::hasattr(obj, "__fspath__")) {
    arg.kind = ModelArg::Kind::kPath;
    arg.path = py::module_::import("os").attr("fspath")(obj).cast<std::string>();
  } else {
    throw py::type_error(std::string(what) +
                         ": expected an onnx.ModelProto, bytes or a path, got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  }
  return arg;
}

// Parses an in-memory argument (GIL released by the caller).
absl::StatusOr<onnx::ModelProto> Parse(const ModelArg& arg, const onnx_bcast::LoadOptions& load) {
  return onnx_bcast::ParseModel(arg.bytes, load);
}

// input_ranges={'mask': (0, 1), 'ids': '0:9', 'm': '0:1:int'}: each a (lo, hi) pair or the
// CLI's "LO:HI[:int]" (the library checks the values: finite, lo <= hi, whole with :int).
std::map<std::string, onnx_bcast::InputRange> ToInputRanges(const std::optional<py::dict>& ranges,
                                                            const char* function) {
  std::map<std::string, onnx_bcast::InputRange> out;
  if (!ranges.has_value()) return out;
  for (const auto& [key, value] : *ranges) {
    const std::string name = py::str(key);
    onnx_bcast::InputRange r;
    bool ok = false;
    if (py::isinstance<py::str>(value)) {
      const std::string text = py::str(value);
      std::vector<std::string> parts;
      for (size_t start = 0;;) {
        const size_t colon = text.find(':', start);
        parts.push_back(text.substr(start, colon - start));
        if (colon == std::string::npos) break;
        start = colon + 1;
      }
      if ((parts.size() == 2 || (parts.size() == 3 && parts[2] == "int")) && !parts[0].empty() &&
          !parts[1].empty()) {
        try {
          size_t used_lo = 0, used_hi = 0;
          r.lo = std::stod(parts[0], &used_lo);
          r.hi = std::stod(parts[1], &used_hi);
          r.integers = parts.size() == 3;
          ok = used_lo == parts[0].size() && used_hi == parts[1].size();
        } catch (const std::exception&) {
          ok = false;
        }
      }
    } else if (py::isinstance<py::sequence>(value) && py::len(value) == 2) {
      py::sequence pair = py::reinterpret_borrow<py::sequence>(value);
      r.lo = pair[0].cast<double>();
      r.hi = pair[1].cast<double>();
      ok = true;
    }
    if (!ok) {
      throw py::value_error(std::string(function) + "(input_ranges=...): " + name +
                            ": expected (lo, hi) or 'LO:HI' (or 'LO:HI:int'), got " +
                            py::repr(value).cast<std::string>());
    }
    out[name] = r;
  }
  return out;
}

// ---- check ------------------------------------------------------------------------------------

// A report document as Python data, plus the text report under "text".
py::dict ReportDict(const std::string& json, const std::string& text) {
  py::dict out = py::module_::import("json").attr("loads")(py::str(json));
  out["text"] = text;
  return out;
}

py::dict Check(const py::object& model, bool lint, const std::string& base_dir,
               const std::optional<std::map<std::string, int64_t>>& dims) {
  ModelArg arg = ToModelArg(model, "check");
  onnx_bcast::CheckOptions options;
  options.lint = lint;
  options.dims = dims.value_or(std::map<std::string, int64_t>());
  options.load.base_dir = base_dir;
  absl::StatusOr<onnx_bcast::CheckResult> result;
  {
    py::gil_scoped_release release;
    if (arg.kind == ModelArg::Kind::kPath) {
      result = onnx_bcast::Check(arg.path, options);
    } else {
      absl::StatusOr<onnx::ModelProto> proto = Parse(arg, options.load);
      result = proto.ok() ? onnx_bcast::Check(*proto, options)
                          : absl::StatusOr<onnx_bcast::CheckResult>(proto.status());
    }
  }
  onnx_bcast::CheckResult r = Take(std::move(result));
  return ReportDict(r.json, r.text);
}

// ---- optimize ---------------------------------------------------------------------------------

// Returns what it was given: (ModelProto, report) for a ModelProto, (bytes, report) for bytes,
// and for a path only the report, the model being written to `output` (required then). With
// `output` and an in-memory model the result is saved there as well.
py::object Optimize(const py::object& model, const std::optional<std::string>& target,
                    const std::optional<std::vector<std::string>>& passes,
                    const std::optional<std::string>& target_file, const py::object& output,
                    int64_t fold_limit_bytes, bool verify_each, bool external_data,
                    const std::string& base_dir, bool allow_partial,
                    const std::optional<std::map<std::string, int64_t>>& dims,
                    const std::optional<std::map<std::string, std::vector<int64_t>>>& input_shapes,
                    bool live_probe, bool verify_engine, bool require_engine,
                    const std::optional<std::string>& probe_cache,
                    const std::optional<py::dict>& input_ranges) {
  ModelArg arg = ToModelArg(model, "optimize");
  onnx_bcast::OptimizeOptions options;
  options.input_ranges = ToInputRanges(input_ranges, "optimize");
  options.target = target.value_or("");
  options.target_file = target_file.value_or("");
  options.passes = passes.value_or(std::vector<std::string>{});
  options.fold_limit_bytes = fold_limit_bytes;
  options.verify_each = verify_each;
  options.allow_partial = allow_partial;
  options.live_probe = live_probe;
  options.verify_engine = verify_engine;
  options.require_engine = require_engine;
  options.probe_cache = probe_cache.value_or("");
  if (dims.has_value()) options.dims = *dims;
  if (input_shapes.has_value()) options.input_shapes = *input_shapes;
  options.load.base_dir = base_dir;
  std::string output_path;
  if (!output.is_none()) {
    output_path = py::module_::import("os").attr("fspath")(output).cast<std::string>();
  }
  if (arg.kind == ModelArg::Kind::kPath && output_path.empty()) {
    throw py::type_error(
        "optimize: output= is required when the model is a path (the "
        "rewritten model is written there; pass a ModelProto or bytes to get "
        "it back in memory)");
  }
  onnx_bcast::SaveOptions save;
  save.external_data = external_data;
  save.base_dir = base_dir;

  absl::StatusOr<onnx_bcast::OptimizeReport> report;
  std::string bytes;
  {
    py::gil_scoped_release release;
    report = [&]() -> absl::StatusOr<onnx_bcast::OptimizeReport> {
      if (arg.kind == ModelArg::Kind::kPath) {
        return onnx_bcast::Optimize(arg.path, output_path, options, save);
      }
      absl::StatusOr<onnx::ModelProto> proto = Parse(arg, options.load);
      if (!proto.ok()) return proto.status();
      absl::StatusOr<onnx_bcast::OptimizeReport> r = onnx_bcast::Optimize(&*proto, options);
      if (!r.ok()) return r;
      if (!output_path.empty()) {
        if (absl::Status s = onnx_bcast::SaveModel(*proto, output_path, save); !s.ok()) return s;
      }
      absl::StatusOr<std::string> serialized = onnx_bcast::SerializeModel(*proto);
      if (!serialized.ok()) return serialized.status();
      bytes = *std::move(serialized);
      return r;
    }();
  }
  onnx_bcast::OptimizeReport r = Take(std::move(report));
  py::dict report_dict = ReportDict(PythonWords(r.json), PythonWords(r.text));
  if (arg.kind == ModelArg::Kind::kPath) return report_dict;
  if (arg.kind == ModelArg::Kind::kProto) {
    py::object result = arg.proto_type();
    result.attr("ParseFromString")(py::bytes(bytes));
    return py::make_tuple(result, report_dict);
  }
  return py::make_tuple(py::bytes(bytes), report_dict);
}

// ---- run --------------------------------------------------------------------------------------

// numpy dtype <-> DataType. bfloat16 has no numpy dtype: it travels as uint16 bit patterns.
onnx_bcast::DataType FromNumpy(const py::dtype& dtype, const std::string& name) {
  const char kind = dtype.kind();
  const py::ssize_t size = dtype.itemsize();
  using D = onnx_bcast::DataType;
  if (kind == 'f' && size == 4) return D::kFloat;
  if (kind == 'f' && size == 8) return D::kDouble;
  if (kind == 'f' && size == 2) return D::kFloat16;
  if (kind == 'b' && size == 1) return D::kBool;
  if (kind == 'i' && size == 1) return D::kInt8;
  if (kind == 'i' && size == 2) return D::kInt16;
  if (kind == 'i' && size == 4) return D::kInt32;
  if (kind == 'i' && size == 8) return D::kInt64;
  if (kind == 'u' && size == 1) return D::kUInt8;
  if (kind == 'u' && size == 2) return D::kUInt16;
  if (kind == 'u' && size == 4) return D::kUInt32;
  if (kind == 'u' && size == 8) return D::kUInt64;
  throw py::value_error("input '" + name + "': numpy dtype " + py::repr(dtype).cast<std::string>() +
                        " has no ONNX tensor type here");
}

py::dtype ToNumpy(onnx_bcast::DataType dtype) {
  using D = onnx_bcast::DataType;
  switch (dtype) {
    case D::kFloat:
      return py::dtype("float32");
    case D::kDouble:
      return py::dtype("float64");
    case D::kFloat16:
      return py::dtype("float16");
    case D::kBFloat16:
      return py::dtype("uint16");
    case D::kBool:
      return py::dtype("bool");
    case D::kInt8:
      return py::dtype("int8");
    case D::kInt16:
      return py::dtype("int16");
    case D::kInt32:
      return py::dtype("int32");
    case D::kInt64:
      return py::dtype("int64");
    case D::kUInt8:
      return py::dtype("uint8");
    case D::kUInt16:
      return py::dtype("uint16");
    case D::kUInt32:
      return py::dtype("uint32");
    case D::kUInt64:
      return py::dtype("uint64");
  }
  throw py::value_error("unknown output data type");
}

py::dict Run(const py::object& model, const std::optional<py::dict>& inputs, bool random,
             uint64_t seed, const std::optional<std::map<std::string, int64_t>>& dims, int threads,
             const std::string& base_dir, const std::optional<py::dict>& input_ranges) {
  ModelArg arg = ToModelArg(model, "run");
  onnx_bcast::TensorMap feeds;
  if (inputs.has_value()) {
    for (const auto& [key, value] : *inputs) {
      const std::string name = py::str(key);
      py::array array = py::array::ensure(value, py::array::c_style);
      if (!array) {
        throw py::type_error("input '" + name + "': expected a numpy array");
      }
      onnx_bcast::Tensor t;
      t.dtype = FromNumpy(array.dtype(), name);
      t.dims.assign(array.shape(), array.shape() + array.ndim());
      t.data.assign(static_cast<const char*>(array.data()), static_cast<size_t>(array.nbytes()));
      feeds.emplace(name, std::move(t));
    }
  }
  onnx_bcast::RunOptions options;
  options.random_missing_inputs = random;
  options.seed = seed;
  options.input_ranges = ToInputRanges(input_ranges, "run");
  if (dims.has_value()) options.dims = *dims;
  options.threads = threads;
  options.load.base_dir = base_dir;
  absl::StatusOr<onnx_bcast::NamedTensors> outputs;
  {
    py::gil_scoped_release release;
    if (arg.kind == ModelArg::Kind::kPath) {
      outputs = onnx_bcast::Run(arg.path, feeds, options);
    } else {
      absl::StatusOr<onnx::ModelProto> proto = Parse(arg, options.load);
      outputs = proto.ok() ? onnx_bcast::Run(*proto, feeds, options)
                           : absl::StatusOr<onnx_bcast::NamedTensors>(proto.status());
    }
  }
  py::dict out;
  for (auto& [name, tensor] : Take(std::move(outputs))) {
    std::vector<py::ssize_t> shape(tensor.dims.begin(), tensor.dims.end());
    py::array array(ToNumpy(tensor.dtype), shape);
    if (!tensor.data.empty())
      std::memcpy(array.mutable_data(), tensor.data.data(), tensor.data.size());
    out[py::str(name)] = array;
  }
  return out;
}

// ---- verify -----------------------------------------------------------------------------------

py::dict Verify(const py::object& original, const py::object& rewritten, int samples, uint64_t seed,
                std::optional<double> rtol, std::optional<double> atol, bool edge_cases, bool local,
                const std::optional<std::vector<std::string>>& test_data, int threads,
                const py::object& report, const std::string& base_dir,
                const std::optional<std::map<std::string, int64_t>>& dims,
                const std::optional<py::dict>& input_ranges) {
  ModelArg a = ToModelArg(original, "verify");
  ModelArg b = ToModelArg(rewritten, "verify");
  onnx_bcast::VerifyOptions options;
  options.input_ranges = ToInputRanges(input_ranges, "verify");
  options.samples = samples;
  options.seed = seed;
  options.rtol = rtol;
  options.atol = atol;
  options.edge_cases = edge_cases;
  options.local = local;
  options.test_data = test_data.value_or(std::vector<std::string>{});
  options.dims = dims.value_or(std::map<std::string, int64_t>());
  // report=: an `opt --report` file, or the report dict optimize() returned.
  if (py::isinstance<py::dict>(report)) {
    py::dict document = py::reinterpret_borrow<py::dict>(report);
    if (document.contains("text")) {
      document = py::dict(document);  // optimize's copy of the CLI text is not part of the JSON
      PyDict_DelItemString(document.ptr(), "text");
    }
    options.report_json = py::module_::import("json").attr("dumps")(document).cast<std::string>();
  } else if (py::isinstance<py::str>(report) || py::hasattr(report, "__fspath__")) {
    options.report_path = py::module_::import("os").attr("fspath")(report).cast<std::string>();
  } else if (!report.is_none()) {
    throw py::type_error(
        "verify: report= expects the dict optimize() returned or the path of an "
        "`opt --report` file, got " +
        std::string(py::str(py::type::of(report).attr("__name__"))));
  }
  options.threads = threads;
  options.load.base_dir = base_dir;
  absl::StatusOr<onnx_bcast::VerifyResult> result;
  {
    py::gil_scoped_release release;
    if (a.kind == ModelArg::Kind::kPath && b.kind == ModelArg::Kind::kPath) {
      result = onnx_bcast::Verify(a.path, b.path, options);
    } else {
      result = [&]() -> absl::StatusOr<onnx_bcast::VerifyResult> {
        auto load = [&](const ModelArg& arg) {
          return arg.kind == ModelArg::Kind::kPath ? onnx_bcast::LoadModel(arg.path, options.load)
                                                   : Parse(arg, options.load);
        };
        absl::StatusOr<onnx::ModelProto> pa = load(a);
        if (!pa.ok()) return pa.status();
        absl::StatusOr<onnx::ModelProto> pb = load(b);
        if (!pb.ok()) return pb.status();
        return onnx_bcast::Verify(*pa, *pb, options);
      }();
    }
  }
  const onnx_bcast::VerifyResult r = Take(std::move(result));
  return ReportDict(PythonWords(r.json), PythonWords(r.text));
}

py::list PassList(const std::vector<onnx_bcast::PassInfo>& infos) {
  py::list out;
  for (const onnx_bcast::PassInfo& p : infos) out.append(py::make_tuple(p.name, p.summary));
  return out;
}

// Docstrings: the text signature, "--", then the docstring python/onnx_bcast/__init__.pyi has.
constexpr char kListPassesDoc[] = R"(list_passes()
--

Every rewrite pass as (name, one-line summary), in the registry's order.)";

constexpr char kListTargetsDoc[] = R"(list_targets()
--

Every built-in target as (name, 'pass,pass,...'), the passes it runs in order.)";

constexpr char kCheckDoc[] = R"(check(model, *, lint=False, base_dir='.', dims=None)
--

Gives every broadcasting node a verdict: 'ok', 'error', 'conditional' or 'unknown'.

model is an onnx.ModelProto, serialized bytes or a path (.onnx, or .onnxtxt text form).
Returns the document of `onnx-bcast check --json` as a dict: 'model', 'nodes' (each with
'node', 'op', 'graph', 'path', 'opset', 'inputs' [{'name', 'shape'}], 'output', 'rule', 'class',
'verdict', 'condition', 'message', and 'lint' with lint=True), 'combined_condition',
'contradiction' and 'summary' {'nodes', 'ok', 'error', 'conditional', 'unknown'}; plus 'text',
the report the CLI prints. Shapes are lists of ints and symbol names (None: unknown rank).
Conditions are data: 'symbols', 'clauses' of atoms {'lhs', 'rhs', 'symbols'}, exact one-symbol
'sets'; combined_condition adds 'per_symbol' with the nodes imposing each part.
dims={'H': 32, ...} evaluates every node at those symbol values, as `check --dim`: each node
gets 'at_dims' {'outcome' ('holds'|'fails'|'conditional'|'unknown'), 'inputs', 'message',
'unbound'} and the document 'at_dims' {'bindings', 'holds', 'fails', 'conditional', 'unknown',
'unbound', 'combined', 'first_failure'}; a name that is not a symbol of the model, or a value
below 1, raises ValueError listing the model's symbols.
Broadcast errors are data (summary['error'] > 0); an unreadable model raises ValueError or
FileNotFoundError.)";

constexpr char kOptimizeDoc[] =
    "optimize(model, *, target=None, passes=None, target_file=None, output=None, "
    "fold_limit_bytes=4096, verify_each=False, external_data=False, base_dir='.', "
    "allow_partial=False, dims=None, input_shapes=None, live_probe=True, verify_engine=True, "
    "require_engine=False, probe_cache=None, input_ranges=None)\n--\n\n"
    R"(Rewrites the broadcasts for a target (list_targets(); default "explicit") or a list of passes
(list_passes(); ["none"]: load and save only).

Returns what it was given: (ModelProto, report) for an onnx.ModelProto (the argument is not
modified), (bytes, report) for serialized bytes; for a path the rewritten model is written to
output= (required then) and only the report is returned. With output= an in-memory result is
saved there too. The report is the document of `onnx-bcast opt --report` as a dict: 'model',
'output', 'target', 'passes' (each with 'pass', 'seconds', 'nodes_inserted', 'nodes_removed',
'initializers_rewritten', 'bytes_added', 'rewrites'), 'summary' {'rewrites', 'before', 'after',
'violations', 'error'}; plus 'text', the lines the CLI prints. Pass it to verify(report=...) to
name the pass behind a divergence. An unknown pass or target raises ValueError; a node left
outside the target's form raises TargetNotMetError (a NotImplementedError) naming every such
node, unless allow_partial=True (then summary['violations'] lists them); the exception's
.violations lists them as dicts {'graph', 'node', 'op', 'shapes', 'rule', 'cannot_prove',
'hint'} and .report is the refused rewrite's report.
dims={'H': 640, ...} and input_shapes={'x': [1, 3, 640, 640]} bind symbolic dims before the
passes, as `opt --dim` and `--input-shape`: the result has those numbers in its declared shapes
(report 'dims'); an unknown name, a rank mismatch, or a binding that breaks a broadcast raises
ValueError naming it.
The target's engine decides as in the CLI where this module was built with it: live_probe runs
broadcast forms on it at their exact shapes; verify_engine runs the result on it before
returning (report 'engine' {'outcome', 'line', 'dims', 'divergence', 'note'}), and a result it
refuses or computes wrongly raises EngineCheckError (a RuntimeError) naming the first node that
differs, with .engine and .report;
require_engine=True raises ValueError where the build has no such engine (else 'engine' 'note'
says it was not run). input_ranges={'mask': (0, 1)} sets the values of the engine check's random
inputs, as run(input_ranges=...).)";

constexpr char kRunDoc[] =
    "run(model, inputs=None, *, random=False, seed=0, dims=None, threads=1, "
    "base_dir='.', input_ranges=None)\n--\n\n"
    R"(Runs the model on the bundled reference executor.

inputs maps input names to numpy arrays, checked against the declared types and shapes, each
symbol bound to one value across inputs (and dims=). With random=True, inputs not given are
seeded random values (symbolic dims bound from dims=, then from the given inputs, else 1):
floats in [-1, 1), integers 0..9, or per input_ranges={'mask': (0, 1), 'ids': '0:99'}: floats
in [lo, hi], integers and bools whole numbers in it ('LO:HI:int' gives floats whole numbers).
Returns {output name: numpy array} in graph order (bfloat16 as uint16 bit patterns).)";

constexpr char kVerifyDoc[] =
    "verify(original, rewritten, *, samples=3, seed=0, rtol=None, atol=None, "
    "edge_cases=False, local=False, test_data=None, threads=1, report=None, base_dir='.', "
    "dims=None, input_ranges=None)\n--\n\n"
    R"(Runs both models on the same inputs and compares every output.

Inputs are seeded random samples, or the ONNX test_data_set directories of test_data, and only
inputs both models accept: a dim one model declares as a number (optimize(dims=...) wrote it)
is bound to it in both ('bound' says so), and dims={'N': 2, ...} binds symbols explicitly. A
name neither model has, a value a declaration contradicts, or two models that accept no common
input raise ValueError naming the dims. Without
rtol and atol the comparison is bit-exact when only data-movement ops changed, else rtol 1e-3,
atol 1e-7. report is the dict optimize() returned or the path of an `opt --report` file; it
names the pass behind a divergence (a report that cannot be read or parsed raises). Returns
the document of `onnx-bcast verify --json` as a dict: 'match', 'mode', 'tolerance',
'samples' (each with its 'outputs' compared), 'max_abs_error', 'max_ulp', 'divergence' (with
'pass' and 'rewrite' from the report), 'local', ...; plus 'text', the lines the CLI prints. A
mismatch is match=False, not an exception; a sample whose inputs the original rejects is listed
with 'skipped' True and the original's error in 'note'. input_ranges={'mask': (0, 1)} sets the
random inputs' values, as run(input_ranges=...).)";

}  // namespace

PYBIND11_MODULE(_core, m) {
  // The text signatures above replace pybind11's own (which inspect.signature cannot read).
  py::options options;
  options.disable_function_signatures();
  m.doc() =
      "onnx-bcast: check, rewrite, run and verify the broadcasts of ONNX models.\n\n"
      "Every function takes a model as an onnx.ModelProto, serialized bytes or a path.";
  m.attr("__version__") = onnx_bcast::Version();
  g_target_not_met = PyErr_NewExceptionWithDoc(
      "onnx_bcast.TargetNotMetError",
      "optimize() left nodes outside the target's form (allow_partial=False): .violations "
      "lists them as dicts, .report is the refused rewrite's report.",
      PyExc_NotImplementedError, nullptr);
  g_engine_check = PyErr_NewExceptionWithDoc(
      "onnx_bcast.EngineCheckError",
      "optimize()'s result does not run correctly on the target's engine: .engine is the "
      "engine check's dict, .report the refused rewrite's report.",
      PyExc_RuntimeError, nullptr);
  if (g_target_not_met == nullptr || g_engine_check == nullptr) throw py::error_already_set();
  m.attr("TargetNotMetError") = py::reinterpret_borrow<py::object>(g_target_not_met);
  m.attr("EngineCheckError") = py::reinterpret_borrow<py::object>(g_engine_check);

  m.def(
      "list_passes", [] { return PassList(onnx_bcast::ListPasses()); }, kListPassesDoc);
  m.def(
      "list_targets", [] { return PassList(onnx_bcast::ListTargets()); }, kListTargetsDoc);

  m.def("check", &Check, py::arg("model"), py::kw_only(), py::arg("lint") = false,
        py::arg("base_dir") = ".", py::arg("dims") = py::none(), kCheckDoc);

  m.def("optimize", &Optimize, py::arg("model"), py::kw_only(), py::arg("target") = py::none(),
        py::arg("passes") = py::none(), py::arg("target_file") = py::none(),
        py::arg("output") = py::none(), py::arg("fold_limit_bytes") = 4096,
        py::arg("verify_each") = false, py::arg("external_data") = false, py::arg("base_dir") = ".",
        py::arg("allow_partial") = false, py::arg("dims") = py::none(),
        py::arg("input_shapes") = py::none(), py::arg("live_probe") = true,
        py::arg("verify_engine") = true, py::arg("require_engine") = false,
        py::arg("probe_cache") = py::none(), py::arg("input_ranges") = py::none(), kOptimizeDoc);

  m.def("run", &Run, py::arg("model"), py::arg("inputs") = py::none(), py::kw_only(),
        py::arg("random") = false, py::arg("seed") = 0, py::arg("dims") = py::none(),
        py::arg("threads") = 1, py::arg("base_dir") = ".", py::arg("input_ranges") = py::none(),
        kRunDoc);

  m.def("verify", &Verify, py::arg("original"), py::arg("rewritten"), py::kw_only(),
        py::arg("samples") = 3, py::arg("seed") = 0, py::arg("rtol") = py::none(),
        py::arg("atol") = py::none(), py::arg("edge_cases") = false, py::arg("local") = false,
        py::arg("test_data") = py::none(), py::arg("threads") = 1, py::arg("report") = py::none(),
        py::arg("base_dir") = ".", py::arg("dims") = py::none(),
        py::arg("input_ranges") = py::none(), kVerifyDoc);
}

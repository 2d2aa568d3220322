// The public API (api/include/onnx_bcast/onnx_bcast.h) over the library layers: each function
// loads or admits a model through driver/, calls the same sequence as the CLI command of the
// same name (driver::Check, driver::OptimizeAtDims, driver::Run, driver::Verify), and converts
// between the public plain structs and the layers' types; it adds no step of its own.
#include "onnx_bcast/onnx_bcast.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/dim_evaluation.h"
#include "analysis/shape_propagation.h"
#include "driver/driver.h"
#include "driver/opt_text.h"
#include "driver/run.h"
#include "driver/verify.h"
#include "passes/pass_manager.h"
#include "passes/registry.h"
#include "proto/graph_structure.h"
#include "proto/model_io.h"
#include "report/check_report.h"
#include "report/opt_report.h"
#include "support/status_macros.h"
#include "targets/targets.h"
#include "verify/verify.h"

namespace onnx_bcast {
namespace {

constexpr char kMemoryLabel[] = "<memory>";

// The layers word their messages for the command line ("bind H, W with --dim") and label an
// in-memory model "<memory>" (its proto::Model path, which must never name a file: outputs are
// checked against it). A library caller set fields of an options struct and passed a model:
// every message and report text leaves the API in those words (issue 44 item 7).
std::string ApiText(std::string text) {
  static const std::pair<std::string, std::string> kWords[] = {
      {"<memory>", "model"},
      {"<original>", "original model"},
      {"<rewritten>", "rewritten model"},
      {"with --dim", "with OptimizeOptions::dims"},
      {"no --dim binds", "no OptimizeOptions::dims binds"},
      {"raise --fold-limit", "raise OptimizeOptions::constant_fold_limit_bytes"},
      {"--allow-partial", "OptimizeOptions::allow_partial"},
      {"give it with --input", "give it in the inputs"},
      {"(--no-verify-engine)", "(OptimizeOptions::verify_engine off)"},
  };
  for (const auto& [cli, api] : kWords) {
    for (size_t at = text.find(cli); at != std::string::npos;
         at = text.find(cli, at + api.size())) {
      text.replace(at, cli.size(), api);
    }
  }
  return text;
}

absl::Status InApiWords(const absl::Status& s) {
  if (s.ok()) return s;
  std::string message = ApiText(std::string(s.message()));
  if (message == s.message()) return s;
  absl::Status out(s.code(), message);
  s.ForEachPayload(
      [&out](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}
template <class T>
absl::StatusOr<T> InApiWords(absl::StatusOr<T> result) {
  if (result.ok()) return result;
  return InApiWords(result.status());
}

// The layers convert protobuf and libonnx exceptions already; this catches whatever is left
// (std::bad_alloc above all) so that nothing crosses the API, and words every error for it.
template <class F>
auto Guard(const char* what, F&& body) -> decltype(body()) {
  try {
    return InApiWords(body());
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(what, ": out of memory"));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(what, ": ", e.what()));
  } catch (...) {
    return absl::InternalError(absl::StrCat(what, ": unknown exception"));
  }
}

proto::Limits ToLimits(const LoadOptions& o) {
  proto::Limits limits;
  limits.max_file_bytes = o.max_file_bytes;
  limits.max_nesting = o.max_nesting;
  limits.max_nodes = o.max_nodes;
  limits.max_tensor_elements = o.max_tensor_elements;
  return limits;
}

absl::Status CheckLimits(const LoadOptions& o) {
  if (o.max_file_bytes <= 0 || o.max_nodes <= 0 || o.max_tensor_elements <= 0 ||
      o.max_nesting <= 0 || o.max_nesting > 10000) {
    return absl::InvalidArgumentError(
        "LoadOptions: limits must be positive (and max_nesting <= 10000)");
  }
  return absl::OkStatus();
}

// The one front door, shared with the CLI (driver::Load, driver::Admit): after loading and
// validation, the structural checks (a cycle, a value defined twice or nowhere, a recursive
// model-local function) refuse a broken graph before any layer walks it. Without them a
// recursive function overflowed the stack in Check() and so in the Python module (issue 14).
absl::StatusOr<proto::Model> LoadInternal(const std::string& path, const LoadOptions& options) {
  BCAST_RETURN_IF_ERROR(CheckLimits(options));
  return driver::Load(path, ToLimits(options));
}

// An in-memory model validated like a loaded file. Copies `model` (the layers own their
// proto::Model); messages name it "<memory>".
absl::StatusOr<proto::Model> Adopt(const onnx::ModelProto& model, const LoadOptions& options,
                                   const char* label = kMemoryLabel) {
  BCAST_RETURN_IF_ERROR(CheckLimits(options));
  proto::Model out;
  out.proto = model;
  out.path = label;
  out.base_dir = options.base_dir.empty() ? "." : options.base_dir;
  return driver::Admit(std::move(out), ToLimits(options));
}

// Prefixes the model's label to a layer message that does not start with it already.
// A message the CLI's layers word for the command line ("--dim N: ...") in the API's words
// ("OptimizeOptions::dims N: ..."): the caller set a field, not a flag.
std::string ApiWords(absl::string_view message, absl::string_view options) {
  static constexpr std::pair<absl::string_view, absl::string_view> kFields[] = {
      {"--dim ", "dims "}, {"--input-shape ", "input_shapes "}};
  for (const auto& [flag, field] : kFields) {
    if (absl::StartsWith(message, flag)) {
      return absl::StrCat(options, "::", field, message.substr(flag.size()));
    }
  }
  return absl::StrCat(options, ": ", message);
}

absl::Status Named(const proto::Model& model, const absl::Status& s) {
  if (s.ok() || absl::StartsWith(s.message(), model.path)) return s;
  return absl::Status(s.code(), absl::StrCat(model.path, ": ", s.message()));
}

// The public enum mirrors the rule library's one value for value (kProven is its kOk), so the
// two convert by a cast; the asserts keep them in step.
static_assert(static_cast<int>(Verdict::kProven) == static_cast<int>(broadcast::Verdict::kOk));
static_assert(static_cast<int>(Verdict::kError) == static_cast<int>(broadcast::Verdict::kError));
static_assert(static_cast<int>(Verdict::kConditional) ==
              static_cast<int>(broadcast::Verdict::kConditional));
static_assert(static_cast<int>(Verdict::kUnknown) == static_cast<int>(broadcast::Verdict::kUnknown));
Verdict ToVerdict(broadcast::Verdict v) { return static_cast<Verdict>(static_cast<int>(v)); }

CheckResult ToCheckResult(const analysis::Analysis& a, const std::string& label, bool lint,
                          const analysis::DimEvaluation* at) {
  CheckResult out;
  out.nodes.reserve(a.nodes.size());
  for (const analysis::NodeVerdict& v : a.nodes) {
    NodeVerdict n;
    n.graph = v.graph;
    n.node = v.node;
    n.op = v.op;
    n.domain = v.domain;
    n.opset = v.opset;
    n.input_names = v.input_names;
    for (const broadcast::Shape& s : v.inputs) n.input_shapes.push_back(s.ToString());
    n.output_shape = v.output.ToString();
    n.rule = std::string(broadcast::RuleName(v.rule));
    n.broadcast_class = analysis::BroadcastClassText(v);
    n.verdict = ToVerdict(v.verdict);
    if (!v.condition.empty()) {
      n.condition = v.condition.ToString();
      n.condition_symbols = v.condition.Symbols();
    }
    if (at != nullptr) {
      const analysis::NodeDimEvaluation& e = at->nodes[out.nodes.size()];
      n.at_dims = std::string(analysis::DimOutcomeName(e.outcome));
      n.at_dims_message = e.message;
    }
    n.message = v.message;
    for (const analysis::LintWarning& w : v.lints) {
      n.lints.push_back(absl::StrCat(w.lint_class, ": ", w.message));
    }
    out.nodes.push_back(std::move(n));
  }
  if (!a.combined.empty()) out.combined_condition = a.combined.ToString();
  out.contradiction = a.contradiction;
  out.inference_note = a.inference_note;
  out.text = report::FormatCheckText(a, label, lint, at);
  out.json = report::FormatCheckJson(a, label, lint, at);
  if (at != nullptr) {
    out.dims = at->bindings;
    out.first_failure_at_dims = at->first_failure;
    out.unbound_at_dims = at->unbound;
  }
  return out;
}

absl::StatusOr<CheckResult> CheckModel(const proto::Model& model, const CheckOptions& options) {
  driver::CheckRequest request;
  request.analysis.lint = options.lint;
  request.dims = options.dims;
  absl::StatusOr<driver::CheckOutcome> outcome = driver::Check(model, request);
  if (!outcome.ok()) return Named(model, outcome.status());
  if (!outcome->dims_status.ok()) {
    return Named(model, absl::Status(outcome->dims_status.code(),
                                     ApiWords(outcome->dims_status.message(), "CheckOptions")));
  }
  return ToCheckResult(outcome->analysis, model.path, options.lint,
                       outcome->at ? &*outcome->at : nullptr);
}

// The options' input ranges as the layers take them, checked as the CLI's --input-range
// (finite, lo <= hi, whole numbers with `integers`); `field` names them in messages.
absl::StatusOr<std::map<std::string, runtime::ValueRange>> ToRanges(
    const std::map<std::string, InputRange>& ranges, absl::string_view field) {
  std::map<std::string, runtime::ValueRange> out;
  for (const auto& [name, r] : ranges) {
    absl::StatusOr<runtime::ValueRange> parsed = runtime::ParseValueRange(
        absl::StrCat(absl::StrFormat("%.17g:%.17g", r.lo, r.hi), r.integers ? ":int" : ""));
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " ", name, ": ", parsed.status().message()));
    }
    out[name] = *parsed;
  }
  return out;
}

// A range's mistake found against the model ("input range NAME=LO:HI: ..."), in the API's words.
absl::Status RangeError(const absl::Status& s, absl::string_view field) {
  std::string message(s.message());
  if (absl::StartsWith(message, "input range ")) message.erase(0, std::strlen("input range "));
  return absl::Status(s.code(), absl::StrCat(field, " ", message));
}

ModelStats ToStats(const passes::ModelSummary& s) {
  return ModelStats{s.nodes, s.initializers, s.initializer_bytes, s.opset};
}

// Resolves the options' target or pass list into a pipeline: the same resolution as `opt`.
absl::StatusOr<passes::ResolvedPipeline> ResolvePipeline(const OptimizeOptions& options) {
  if (options.fold_limit_bytes < 0 || options.constant_fold_limit_bytes < 0) {
    return absl::InvalidArgumentError(
        "OptimizeOptions: fold_limit_bytes and constant_fold_limit_bytes must not be negative");
  }
  absl::StatusOr<passes::ResolvedPipeline> pipeline =
      passes::ResolvePipeline({options.target, options.target_file, options.passes});
  if (!pipeline.ok()) {
    return absl::Status(pipeline.status().code(),
                        absl::StrCat("OptimizeOptions: ", pipeline.status().message()));
  }
  return pipeline;
}

// Runs the pipeline over `model` (changed in place even on error: callers work on a copy).
absl::StatusOr<OptimizeReport> OptimizeModel(proto::Model* model, const OptimizeOptions& options,
                                             const std::string& output_path) {
  BCAST_ASSIGN_OR_RETURN(passes::ResolvedPipeline pipeline, ResolvePipeline(options));
  driver::OptSettings settings;
  settings.verify_each = options.verify_each;
  settings.fold_limit_bytes = options.fold_limit_bytes;
  settings.constant_fold_limit_bytes = options.constant_fold_limit_bytes;
  report::OptReport report;
  report.output_path = output_path;
  driver::OptimizeRequest request;
  request.bind.dims = options.dims;
  request.bind.input_shapes = options.input_shapes;
  request.allow_partial = options.allow_partial;
  request.engine.live_probe = options.live_probe;
  request.engine.verify = options.verify_engine;
  request.engine.required = options.require_engine;
  request.engine.probe_cache = options.probe_cache;
  BCAST_ASSIGN_OR_RETURN(request.engine.input_ranges,
                         ToRanges(options.input_ranges, "OptimizeOptions::input_ranges"));
  absl::StatusOr<driver::OptimizeOutcome> outcome =
      driver::OptimizeAtDims(model, pipeline, settings, request, &report);
  if (!outcome.ok()) return Named(*model, outcome.status());
  const std::string label = model->path.empty() ? std::string("model") : model->path;
  if (!outcome->engine_usage.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("OptimizeOptions: ", outcome->engine_usage));
  }
  if (absl::StartsWith(outcome->bind_usage, "input range ")) {
    return RangeError(absl::InvalidArgumentError(outcome->bind_usage),
                      "OptimizeOptions::input_ranges");
  }
  if (!outcome->bind_usage.empty()) {
    return absl::InvalidArgumentError(ApiWords(outcome->bind_usage, "OptimizeOptions"));
  }
  // A refusal carries the report as data (kOptReportPayload), as opt --report writes it then.
  auto refuse = [&report](absl::Status status, int exit) {
    report.refused_exit = exit;
    report.refused = std::string(status.message());
    status.SetPayload(kOptReportPayload, absl::Cord(ApiText(report::FormatOptJson(report))));
    return status;
  };
  if (!outcome->bind_failure.empty()) {
    return refuse(absl::InvalidArgumentError(absl::StrCat(label, ": ", outcome->bind_failure)), 1);
  }
  if (!outcome->status.ok()) return Named(*model, outcome->status);
  if (outcome->target_not_met) {
    return refuse(
        absl::UnimplementedError(absl::StrCat(
            label, ": target ", pipeline.profile->name, " not met: ", report.violations.size(),
            " node(s) not in its form (allow_partial keeps the partial rewrite): ",
            absl::StrJoin(report.violations, "; "))),
        3);
  }
  if (outcome->engine_failed) {
    return refuse(
        absl::AbortedError(absl::StrCat(
            label, ": the rewritten model does not run correctly on the target's engine (",
            report.engine_outcome, "): ", report.engine_line,
            report.engine_divergence.empty() ? "" : absl::StrCat("; ", report.engine_divergence),
            report.engine_dims.empty() ? "" : absl::StrCat("; at ", report.engine_dims))),
        1);
  }

  OptimizeReport out;
  out.target = report.target;
  out.before = ToStats(report.before);
  out.after = ToStats(report.after);
  for (const std::string& v : report.violations) out.violations.push_back(ApiText(v));
  for (const targets::TargetViolation& v : report.violation_details) {
    out.violation_details.push_back(Violation{v.graph, v.node, v.op, v.shapes, ApiText(v.why),
                                              v.cannot_prove, ApiText(v.hint)});
  }
  for (const std::string& w : report.waived) out.waived.push_back(ApiText(w));
  out.engine_outcome = report.engine_outcome;
  out.engine_line = report.engine_line;
  out.engine_dims = ApiText(report.engine_dims);
  out.engine_note = ApiText(report.engine_note);
  for (const passes::PassRun& run : report.runs) {
    PassReport p;
    p.pass = run.pass;
    p.nodes_inserted = run.stats.nodes_inserted;
    p.nodes_removed = run.stats.nodes_removed;
    p.initializers_rewritten = run.stats.initializers_rewritten;
    p.bytes_added = run.stats.bytes_added;
    p.seconds = run.seconds;
    for (const passes::Rewrite& r : run.stats.log) {
      p.rewrites.push_back(Rewrite{r.node, r.output, r.op, r.action, r.tensor, r.detail, r.before,
                                   r.after, r.bytes});
    }
    out.passes.push_back(std::move(p));
  }
  // The CLI's text, its last line saying what the target covers: given the profile's list of ops
  // its engine has no layer for, as the CLI gives it (the ops the model uses would leave a model
  // that uses none of them with the "not checked" line instead of "every op has a layer").
  const std::vector<std::string> unsupported_ops =
      pipeline.profile.has_value() ? pipeline.profile->unsupported_ops : std::vector<std::string>{};
  out.text = ApiText(driver::FormatOptText(report, model->proto.graph(), unsupported_ops,
                                           /*rewrites=*/false, /*debug=*/false,
                                           /*list_violations=*/true));
  out.json = ApiText(report::FormatOptJson(report));
  return out;
}

// Both enums carry onnx::TensorProto::DataType numbers; the public one lists the types the
// executor runs. The asserts keep the two in step.
#define BCAST_SAME_DTYPE(pub, rt_name) \
  static_assert(static_cast<int32_t>(DataType::pub) == static_cast<int32_t>(runtime::DType::rt_name))
BCAST_SAME_DTYPE(kFloat, kFloat32);
BCAST_SAME_DTYPE(kUInt8, kUInt8);
BCAST_SAME_DTYPE(kInt8, kInt8);
BCAST_SAME_DTYPE(kUInt16, kUInt16);
BCAST_SAME_DTYPE(kInt16, kInt16);
BCAST_SAME_DTYPE(kInt32, kInt32);
BCAST_SAME_DTYPE(kInt64, kInt64);
BCAST_SAME_DTYPE(kBool, kBool);
BCAST_SAME_DTYPE(kFloat16, kFloat16);
BCAST_SAME_DTYPE(kDouble, kFloat64);
BCAST_SAME_DTYPE(kUInt32, kUInt32);
BCAST_SAME_DTYPE(kUInt64, kUInt64);
BCAST_SAME_DTYPE(kBFloat16, kBFloat16);
#undef BCAST_SAME_DTYPE
DataType ToDataType(runtime::DType d) { return static_cast<DataType>(static_cast<int32_t>(d)); }
runtime::DType ToDType(DataType d) { return static_cast<runtime::DType>(static_cast<int32_t>(d)); }

// A runtime tensor from a public one (its declaration is checked on all inputs at once, by
// runtime::CheckInputs).
absl::StatusOr<runtime::Tensor> ToRuntime(const std::string& name, const Tensor& t) {
  const runtime::DType dtype = ToDType(t.dtype);
  if (!runtime::IsSupported(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", name, "': unsupported data type ", static_cast<int32_t>(t.dtype)));
  }
  for (int64_t d : t.dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", name, "': negative dim in ", runtime::ShapeToString(t.dims)));
    }
  }
  // Sizes are compared before allocating: dims that disagree with the data must not cost
  // memory.
  absl::StatusOr<int64_t> count = runtime::ShapeElementCount(t.dims);
  if (!count.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", name, "': ", count.status().message()));
  }
  const size_t element_size = runtime::DTypeSize(dtype);
  if (static_cast<uint64_t>(*count) > t.data.size() / element_size ||
      static_cast<size_t>(*count) * element_size != t.data.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input '", name, "': ", t.data.size(), " bytes of data, ", runtime::DTypeName(dtype),
        runtime::ShapeToString(t.dims), " needs ", *count, " elements of ", element_size, " bytes"));
  }
  absl::StatusOr<runtime::Tensor> tensor = runtime::Tensor::Allocate(dtype, t.dims);
  if (!tensor.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", name, "': ", tensor.status().message()));
  }
  if (!t.data.empty()) std::memcpy(tensor->raw_data(), t.data.data(), t.data.size());
  return tensor;
}

Tensor FromRuntime(const runtime::Tensor& t) {
  Tensor out;
  out.dtype = ToDataType(t.dtype());
  out.dims = t.shape();
  out.data.assign(static_cast<const char*>(t.raw_data()), t.byte_size());
  return out;
}

// The caller's tensors as runtime values, each named as a graph input or initializer.
absl::StatusOr<runtime::Feeds> ToFeeds(const proto::Model& model, const runtime::Graph& graph,
                                  const TensorMap& inputs) {
  runtime::Feeds feeds;
  for (const auto& [name, tensor] : inputs) {
    const bool is_input =
        std::find(graph.inputs.begin(), graph.inputs.end(), name) != graph.inputs.end();
    if (!is_input && graph.initializers.count(name) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(model.path, ": the model has no input or initializer '", name,
                       "' (inputs: ", absl::StrJoin(graph.inputs, ", "), ")"));
    }
    BCAST_ASSIGN_OR_RETURN(runtime::Tensor t, ToRuntime(name, tensor));
    feeds.emplace_back(name, runtime::Value::Of(std::make_shared<runtime::Tensor>(std::move(t))));
  }
  return feeds;
}

absl::StatusOr<NamedTensors> RunModel(const proto::Model& model, const TensorMap& inputs,
                                      const RunOptions& options) {
  // The CLI's bounds: one OS thread per worker.
  if (options.threads < 1 || options.threads > 1024 || options.max_tensor_elements <= 0 ||
      options.max_memory_bytes < 0) {
    return absl::InvalidArgumentError(
        "RunOptions: threads must be in 1..1024, max_tensor_elements positive and "
        "max_memory_bytes not negative");
  }
  driver::RunRequest request;
  request.executor.threads = options.threads;
  request.executor.max_tensor_elements = options.max_tensor_elements;
  request.executor.max_memory_bytes = options.max_memory_bytes;
  request.given = [&](const runtime::Graph& graph) { return ToFeeds(model, graph, inputs); };
  // Types, shapes and symbols bound alike across inputs (and to options.dims), as `run` does.
  request.inputs.dims = options.dims;
  request.inputs.dims_label = "dims";
  request.inputs.random_missing = options.random_missing_inputs;
  request.inputs.seed = options.seed;
  BCAST_ASSIGN_OR_RETURN(request.inputs.ranges,
                         ToRanges(options.input_ranges, "RunOptions::input_ranges"));
  if (absl::Status s = driver::CheckInputRanges(model.proto.graph(), request.inputs.ranges);
      !s.ok()) {
    return RangeError(s, "RunOptions::input_ranges");
  }
  absl::StatusOr<driver::RunResult> run = driver::Run(model, request);
  if (!run.ok()) return Named(model, run.status());
  NamedTensors out;
  for (size_t k = 0; k < run->outputs.size(); ++k) {
    const runtime::Value& v = run->outputs[k];
    const std::string& name = run->output_names[k];
    if (!v.is_tensor()) {
      return absl::UnimplementedError(absl::StrCat(
          model.path, ": output '", name, "' is ", v.is_sequence() ? "a sequence" : "empty",
          "; Run returns tensors only (the CLI's run --output-dir writes any value)"));
    }
    out.emplace_back(name, FromRuntime(*v.tensor));
  }
  return out;
}

absl::StatusOr<VerifyResult> VerifyModels(const proto::Model& original,
                                          const proto::Model& rewritten,
                                          const VerifyOptions& options) {
  // The CLI's bounds: every sample is held at once, one OS thread per worker.
  if (options.samples < 1 || options.samples > 100000 || options.threads < 1 ||
      options.threads > 1024) {
    return absl::InvalidArgumentError(
        "VerifyOptions: samples must be in 1..100000 and threads in 1..1024");
  }
  verify::VerifyOptions vopts;
  vopts.test_data = options.test_data;
  vopts.seed = options.seed;
  vopts.samples = options.samples;
  vopts.edge_cases = options.edge_cases;
  vopts.local = options.local;
  vopts.threads = options.threads;
  vopts.report_path = options.report_path;
  vopts.report_json = options.report_json;
  vopts.dims = options.dims;
  vopts.dims_label = "VerifyOptions::dims";
  BCAST_ASSIGN_OR_RETURN(vopts.ranges,
                         ToRanges(options.input_ranges, "VerifyOptions::input_ranges"));
  if (absl::Status s = driver::CheckInputRanges(original.proto.graph(), vopts.ranges); !s.ok()) {
    return RangeError(s, "VerifyOptions::input_ranges");
  }
  if (options.rtol.has_value() || options.atol.has_value()) {
    vopts.tolerance = runtime::Tolerance{options.rtol.value_or(1e-3), options.atol.value_or(1e-7),
                                    /*exact=*/false};
  }
  absl::StatusOr<verify::VerifyResult> r = driver::Verify(original, rewritten, {vopts});
  if (!r.ok()) return Named(original, r.status());

  VerifyResult out;
  out.match = r->match;
  out.mode = r->mode;
  out.note = r->note;
  out.rtol = r->tolerance.rtol;
  out.atol = r->tolerance.atol;
  out.exact = r->tolerance.exact;
  out.structural = r->structural;
  for (const verify::BoundDim& b : r->bound) out.bound.push_back(BoundDim{b.symbol, b.value, b.by});
  for (const verify::SampleResult& s : r->samples) {
    if (!s.error.empty()) out.sample_errors.push_back(absl::StrCat(s.label, ": ", s.error));
    if (s.skipped) out.skipped_samples.push_back(absl::StrCat(s.label, ": ", s.note));
    for (const verify::OutputResult& o : s.outputs) {
      const runtime::Comparison& c = o.comparison;
      out.outputs.push_back(OutputComparison{s.label, o.name, c.match, c.max_abs_error,
                                             c.max_rel_error, c.max_ulp, c.mismatches, c.message});
      out.max_abs_error = std::max(out.max_abs_error, c.max_abs_error);
      out.max_ulp = std::max(out.max_ulp, c.max_ulp);
    }
  }
  if (r->divergence.has_value()) {
    const verify::Divergence& d = *r->divergence;
    std::string message = d.comparison.message;
    if (!d.pass.empty())
      absl::StrAppend(&message, "; introduced by pass ", d.pass, ": ", d.rewrite);
    out.divergence = Divergence{d.sample,       d.tensor, d.node, d.node_output, d.op,
                                d.input_shapes, message,  d.pass, d.rewrite};
  }
  for (const verify::LocalResult& l : r->local) {
    out.local.push_back(LocalCheck{l.node, l.op, l.match, l.skipped, l.detail});
  }
  out.text = verify::FormatVerifyText(*r, original.path, rewritten.path);
  out.json = verify::FormatVerifyJson(*r, original.path, rewritten.path);
  return out;
}

}  // namespace

// --- Library facts ---------------------------------------------------------------------------

std::string Version() { return BCAST_VERSION; }

std::vector<PassInfo> ListPasses() {
  std::vector<PassInfo> out;
  for (const passes::PassInfo& p : passes::AllPasses()) out.push_back({p.name, p.summary});
  return out;
}

std::vector<PassInfo> ListTargets() {
  std::vector<PassInfo> out;
  for (const targets::TargetProfile& t : targets::BuiltinTargets()) {
    out.push_back({t.name, absl::StrJoin(t.passes, ",")});
  }
  return out;
}

// --- Loading and saving ----------------------------------------------------------------------

absl::StatusOr<onnx::ModelProto> LoadModel(const std::string& path, const LoadOptions& options) {
  return Guard(path.c_str(), [&]() -> absl::StatusOr<onnx::ModelProto> {
    BCAST_ASSIGN_OR_RETURN(proto::Model model, LoadInternal(path, options));
    return std::move(model.proto);
  });
}

absl::StatusOr<onnx::ModelProto> ParseModel(std::string_view bytes, const LoadOptions& options) {
  return Guard(kMemoryLabel, [&]() -> absl::StatusOr<onnx::ModelProto> {
    BCAST_RETURN_IF_ERROR(CheckLimits(options));
    BCAST_ASSIGN_OR_RETURN(proto::Model model,
                           driver::Parse(bytes, kMemoryLabel, options.base_dir, ToLimits(options)));
    return std::move(model.proto);
  });
}

absl::StatusOr<std::string> SerializeModel(const onnx::ModelProto& model) {
  return Guard(kMemoryLabel, [&] { return proto::SerializeModel(model); });
}

absl::Status SaveModel(const onnx::ModelProto& model, const std::string& path,
                       const SaveOptions& options) {
  return Guard(path.c_str(), [&]() -> absl::Status {
    proto::Model m;
    m.proto = model;
    m.path = kMemoryLabel;
    m.base_dir = options.base_dir.empty() ? "." : options.base_dir;
    proto::SaveOptions save;
    save.external_data = options.external_data;
    save.external_threshold_bytes = options.external_threshold_bytes;
    return proto::SaveModel(m, path, save);
  });
}

// --- Check -----------------------------------------------------------------------------------

const char* VerdictName(Verdict verdict) {
  // The rule library's names are string literals, so data() is NUL-terminated.
  return broadcast::VerdictName(static_cast<broadcast::Verdict>(static_cast<int>(verdict))).data();
}

int64_t CheckResult::Count(Verdict verdict) const {
  int64_t n = 0;
  for (const NodeVerdict& v : nodes) n += v.verdict == verdict ? 1 : 0;
  return n;
}

bool CheckResult::HasError() const {
  return Count(Verdict::kError) > 0 || !contradiction.empty() || first_failure_at_dims >= 0;
}

absl::Status CheckResult::ErrorStatus() const {
  if (first_failure_at_dims >= 0 && first_failure_at_dims < static_cast<int64_t>(nodes.size())) {
    return absl::InvalidArgumentError(nodes[first_failure_at_dims].at_dims_message);
  }
  for (const NodeVerdict& v : nodes) {
    if (v.verdict == Verdict::kError) return absl::InvalidArgumentError(v.message);
  }
  if (!contradiction.empty()) return absl::InvalidArgumentError(contradiction);
  return absl::OkStatus();
}

absl::StatusOr<CheckResult> Check(const onnx::ModelProto& model, const CheckOptions& options) {
  return Guard(kMemoryLabel, [&]() -> absl::StatusOr<CheckResult> {
    BCAST_ASSIGN_OR_RETURN(proto::Model m, Adopt(model, options.load));
    return CheckModel(m, options);
  });
}

absl::StatusOr<CheckResult> Check(const std::string& path, const CheckOptions& options) {
  return Guard(path.c_str(), [&]() -> absl::StatusOr<CheckResult> {
    BCAST_ASSIGN_OR_RETURN(proto::Model m, LoadInternal(path, options.load));
    return CheckModel(m, options);
  });
}

// --- Optimize --------------------------------------------------------------------------------

bool OptimizeReport::Changed() const {
  for (const PassReport& p : passes) {
    if (!p.rewrites.empty()) return true;
  }
  return false;
}

absl::StatusOr<OptimizeReport> Optimize(onnx::ModelProto* model, const OptimizeOptions& options) {
  return Guard(kMemoryLabel, [&]() -> absl::StatusOr<OptimizeReport> {
    if (model == nullptr) return absl::InvalidArgumentError("Optimize: model is null");
    // Work on a copy so that *model stays untouched on any error.
    absl::StatusOr<proto::Model> m = Adopt(*model, options.load);
    if (!m.ok()) return m.status();
    BCAST_ASSIGN_OR_RETURN(OptimizeReport report, OptimizeModel(&*m, options, ""));
    model->Swap(&m->proto);
    return report;
  });
}

absl::StatusOr<OptimizeReport> Optimize(const std::string& input_path,
                                        const std::string& output_path,
                                        const OptimizeOptions& options, const SaveOptions& save) {
  return Guard(input_path.c_str(), [&]() -> absl::StatusOr<OptimizeReport> {
    BCAST_ASSIGN_OR_RETURN(proto::Model m, LoadInternal(input_path, options.load));
    BCAST_ASSIGN_OR_RETURN(OptimizeReport report, OptimizeModel(&m, options, output_path));
    proto::SaveOptions save_options;
    save_options.external_data = save.external_data;
    save_options.external_threshold_bytes = save.external_threshold_bytes;
    BCAST_RETURN_IF_ERROR(proto::SaveModel(m, output_path, save_options));
    return report;
  });
}

// --- Run -------------------------------------------------------------------------------------

size_t DataTypeSize(DataType dtype) { return runtime::DTypeSize(ToDType(dtype)); }

const char* DataTypeName(DataType dtype) {
  // DTypeName returns views of string literals, so data() is NUL-terminated.
  return runtime::DTypeName(ToDType(dtype)).data();
}

absl::StatusOr<NamedTensors> Run(const onnx::ModelProto& model, const TensorMap& inputs,
                                 const RunOptions& options) {
  return Guard(kMemoryLabel, [&]() -> absl::StatusOr<NamedTensors> {
    BCAST_ASSIGN_OR_RETURN(proto::Model m, Adopt(model, options.load));
    return RunModel(m, inputs, options);
  });
}

absl::StatusOr<NamedTensors> Run(const std::string& path, const TensorMap& inputs,
                                 const RunOptions& options) {
  return Guard(path.c_str(), [&]() -> absl::StatusOr<NamedTensors> {
    BCAST_ASSIGN_OR_RETURN(proto::Model m, LoadInternal(path, options.load));
    return RunModel(m, inputs, options);
  });
}

// --- Verify ----------------------------------------------------------------------------------

absl::StatusOr<VerifyResult> Verify(const onnx::ModelProto& original,
                                    const onnx::ModelProto& rewritten,
                                    const VerifyOptions& options) {
  return Guard(kMemoryLabel, [&]() -> absl::StatusOr<VerifyResult> {
    BCAST_ASSIGN_OR_RETURN(proto::Model a, Adopt(original, options.load, "<original>"));
    BCAST_ASSIGN_OR_RETURN(proto::Model b, Adopt(rewritten, options.load, "<rewritten>"));
    return VerifyModels(a, b, options);
  });
}

absl::StatusOr<VerifyResult> Verify(const std::string& original_path,
                                    const std::string& rewritten_path,
                                    const VerifyOptions& options) {
  return Guard(original_path.c_str(), [&]() -> absl::StatusOr<VerifyResult> {
    BCAST_ASSIGN_OR_RETURN(proto::Model a, LoadInternal(original_path, options.load));
    BCAST_ASSIGN_OR_RETURN(proto::Model b, LoadInternal(rewritten_path, options.load));
    return VerifyModels(a, b, options);
  });
}

}  // namespace onnx_bcast

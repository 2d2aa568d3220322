// The one orchestration path. The CLI, the public C++ API (and through it the Python module),
// the benchmarks and the fuzz harnesses load, check and optimize through these functions (and
// run through driver/run.h) and repeat none of their steps, so that a check added here (a
// structural refusal, the target's promise) holds at every entry point at once.
//
// Requires: a resolved pipeline (passes::ResolvePipeline) for Optimize, so that usage mistakes
// are refused before a model is read. Guarantees: every model that reaches an analysis or a
// pass has passed the limits, validation and the structural checks (no cycle, no value defined
// twice or nowhere, no recursive or exploding function).
#ifndef ONNX_BCAST_DRIVER_DRIVER_H_
#define ONNX_BCAST_DRIVER_DRIVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/dim_evaluation.h"
#include "analysis/shape_propagation.h"
#include "driver/engine_step.h"
#include "passes/pass_manager.h"
#include "proto/dim_binding.h"
#include "proto/model_io.h"
#include "report/opt_report.h"
#include "support/progress.h"
#include "targets/form_oracle.h"

namespace onnx_bcast::driver {

/// What MODEL "-" means: standard input.
inline constexpr char kStdin[] = "-";

/// Loads `path` (kStdin: standard input, named "<stdin>"; ".onnxtxt": the text form) under
/// `limits`, then admits it (below). One step on `progress`.
absl::StatusOr<proto::Model> Load(const std::string& path, const proto::Limits& limits,
                                  support::ProgressSink* progress = nullptr);

/// Serialized model bytes (label: how messages name them; base_dir: what external-data
/// locations are relative to), parsed, validated and admitted (below).
absl::StatusOr<proto::Model> Parse(std::string_view bytes, const std::string& label,
                                   const std::string& base_dir, const proto::Limits& limits);

/// A model built in memory (its `path` is its label, e.g. "<memory>"), validated like a loaded
/// file and admitted: refused when its graph has a cycle, a value defined twice or nowhere, or
/// a model-local function that recurses or expands past the limits.
absl::StatusOr<proto::Model> Admit(proto::Model model, const proto::Limits& limits);

struct CheckRequest {
  analysis::AnalysisOptions analysis;
  /// Symbol values to evaluate every node at (check --dim); empty: none.
  std::map<std::string, int64_t> dims;
  /// Receives the model with value_info for every inferred tensor (check --annotate).
  onnx::ModelProto* annotated = nullptr;
  support::ProgressSink* progress = nullptr;
};

struct CheckOutcome {
  analysis::Analysis analysis;
  /// With CheckRequest::dims: the evaluation, or why the bindings do not fit the model
  /// (dims_status: InvalidArgument listing its symbols; the CLI's usage error).
  std::optional<analysis::DimEvaluation> at;
  absl::Status dims_status;
};

/// The broadcast analysis of `model` (and the evaluation at dims). Errors: the analysis's.
absl::StatusOr<CheckOutcome> Check(const proto::Model& model, const CheckRequest& request);

/// Dims to make static before a pipeline runs (opt --dim, --input-shape; the API's and
/// Python's `dims=` and `input_shapes=`).
struct DimBindingRequest {
  analysis::DimBindings dims;
  proto::InputShapes input_shapes;
  bool empty() const { return dims.empty() && input_shapes.empty(); }
};

struct DimBindingOutcome {
  /// Every symbol bound: the --dim ones and those --input-shape named.
  analysis::DimBindings bindings;
  /// Non-empty when a broadcasting node fails at the bindings: the one-line message check
  /// --dim gives for the first such node (the model is then left as it was).
  std::string failure;
  /// The evaluation at the bindings (as check --dim reports it).
  std::optional<analysis::DimEvaluation> at;
  /// Declared dims that became numbers.
  int64_t dims_fixed = 0;
  /// Non-empty when the request does not fit the model (a usage error, exit 64): an input or
  /// symbol the model does not have (the message lists what it has), a rank mismatch, a value
  /// below 1, a symbol bound twice. The model is then left as it was.
  std::string usage;
};

/// Binds `request` in `model`'s declared shapes so that every later analysis and pass sees
/// numbers. First the bindings are checked like `check --dim`: a request that does not fit the
/// model (`usage`) or a node that fails there (`failure`) leaves the model untouched. Errors
/// are the analysis's own.
absl::StatusOr<DimBindingOutcome> BindDims(proto::Model* model, const DimBindingRequest& request,
                                           support::ProgressSink* progress = nullptr);

struct OptSettings {
  /// passes::PassOptions::fold_limit_bytes.
  int64_t fold_limit_bytes = 4096;
  /// passes::PassOptions::constant_fold_limit_bytes (fold-constants).
  int64_t constant_fold_limit_bytes = passes::kDefaultConstantFoldLimitBytes;
  /// fold-constants computes with the executor under a deadline of its own (seconds for the
  /// whole pass): a constant subgraph is shape arithmetic or a weight transform, never minutes
  /// of work.
  double constant_fold_seconds = 120;
  /// Largest intermediate the fold may compute: 2^26 elements (256 MiB of floats) is no shape
  /// arithmetic, so the node stays, before a hostile ConstantOfShape can take the machine.
  int64_t constant_fold_max_elements = int64_t{1} << 26;
  /// Validate the graph with libonnx's checker after every pass.
  bool verify_each = false;
  support::ProgressSink* progress = nullptr;
  /// Keep each rewrite in the report (PassStats::log). Off, the report still counts them
  /// (PassStats::rewrites) but lists none: for callers that print only the counts.
  bool keep_rewrite_log = true;
  /// The target's engine at exact shapes (engines/live_probe.h): legalize-measured and the
  /// target check decide with it where shapes are static. Null: the table decides.
  targets::FormOracle* live = nullptr;
};

/// Runs `pipeline` over `model` in place and, when it has a target, checks the target's
/// promise on every broadcasting node of every graph. Fills `report`: model path, target,
/// summaries before and after, every pass run, the nodes outside the target's form
/// (violations) and the error. Returns that error (the failing pass named); violations are
/// not an error here: the caller decides (opt fails unless --allow-partial). `*model` may be
/// partly rewritten on error: callers that must keep it work on a copy.
absl::Status Optimize(proto::Model* model, const passes::ResolvedPipeline& pipeline,
                      const OptSettings& settings, report::OptReport* report);

/// What opt asks beyond the pipeline: the dims to bind before it, and whether nodes left
/// outside the target's form are acceptable.
struct OptimizeRequest {
  DimBindingRequest bind;
  /// Keep a result with nodes outside the target's form (opt --allow-partial).
  bool allow_partial = false;
  /// Called with the model as bound, before any pass runs (opt keeps its copies to verify
  /// against here); a status that is not OK stops there and comes back as `stopped`.
  std::function<absl::Status(const proto::Model&)> before_passes;
  /// The target's engine (driver/engine_step.h): live probes, the last judge of the result,
  /// and the waiver of nodes the model as given had where the engine runs it.
  EngineRequest engine;
};

struct OptimizeOutcome {
  /// The bindings refused (BindDims' `usage` and `failure`): no pass ran, the model is as it was.
  std::string bind_usage;
  std::string bind_failure;
  /// before_passes' status when it stopped: no pass ran.
  absl::Status stopped;
  /// Optimize's error (the failing pass named; the report says it too).
  absl::Status status;
  /// Nodes remain outside the target's form and allow_partial is false: the result must not be
  /// written (they are in the report's violations).
  bool target_not_met = false;
  /// EngineRequest::required and this build has no adapter for the target's engine (or the
  /// target names none): a usage error, said here; nothing ran.
  std::string engine_usage;
  /// The engine refused, crashed on or computed the written model wrongly (the report's
  /// engine_line says how, engine_divergence which node): the result must not be written.
  bool engine_failed = false;
  /// True when the pipeline ran (whatever its status).
  bool ran() const { return bind_usage.empty() && bind_failure.empty() && stopped.ok(); }
};

/// The sequence opt and the API's Optimize share: BindDims (when the request has dims; the
/// bindings go into the report), before_passes, Optimize (with a live probe on the target's
/// engine unless settings.live is given or request.engine.live_probe is off), then the target's
/// promise against allow_partial and the engine: where this build has the target's engine,
/// violations on nodes the model as given already had are waived when the engine runs and
/// matches the model as given, and the result is run on the engine (request.engine.verify);
/// one it does not run correctly sets engine_failed and names the first node that differs.
/// Errors: the binding's analysis; every other outcome is in the result.
absl::StatusOr<OptimizeOutcome> OptimizeAtDims(proto::Model* model,
                                               const passes::ResolvedPipeline& pipeline,
                                               const OptSettings& settings,
                                               const OptimizeRequest& request,
                                               report::OptReport* report);

}  // namespace onnx_bcast::driver

#endif  // ONNX_BCAST_DRIVER_DRIVER_H_

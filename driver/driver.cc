#include "driver/driver.h"

#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "driver/opt_text.h"
#include "driver/run.h"
#include "engines/engine_bisect.h"
#include "engines/lints.h"
#include "engines/live_probe.h"
#include "engines/registry.h"
#include "proto/graph_structure.h"
#include "report/check_report.h"
#include "runtime/exec/constant_eval.h"
#include "runtime/run_budget.h"
#include "support/status_macros.h"
#include "targets/targets.h"

namespace onnx_bcast::driver {

absl::StatusOr<proto::Model> Load(const std::string& path, const proto::Limits& limits,
                                  support::ProgressSink* progress) {
  const bool from_stdin = path == kStdin;
  support::ProgressStep step(progress, absl::StrCat("loading ", from_stdin ? "<stdin>" : path));
  BCAST_ASSIGN_OR_RETURN(proto::Model model,
                         from_stdin ? proto::LoadModelStream(STDIN_FILENO, "<stdin>", limits)
                                    : proto::LoadModel(path, limits));
  // libonnx's inference recurses forever on a recursive function and takes hours on one whose
  // calls expand past --max-function-inlines: refused here, for every entry point alike.
  BCAST_RETURN_IF_ERROR(proto::CheckGraphStructure(model, limits));
  step.End(absl::StrCat(support::FormatCount(model.proto.graph().node_size()), " nodes"));
  return model;
}

absl::StatusOr<proto::Model> Parse(std::string_view bytes, const std::string& label,
                                   const std::string& base_dir, const proto::Limits& limits) {
  BCAST_ASSIGN_OR_RETURN(proto::Model model,
                         proto::ParseModelBytes(bytes, label, base_dir, limits));
  BCAST_RETURN_IF_ERROR(proto::CheckGraphStructure(model, limits));
  return model;
}

absl::StatusOr<proto::Model> Admit(proto::Model model, const proto::Limits& limits) {
  if (absl::Status s = proto::ValidateModel(model, limits); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(model.path, ": ", s.message()));
  }
  BCAST_RETURN_IF_ERROR(proto::CheckGraphStructure(model, limits));
  return model;
}

absl::StatusOr<CheckOutcome> Check(const proto::Model& model, const CheckRequest& request) {
  support::ProgressStep step(request.progress, "analysis");
  analysis::AnalysisOptions options = request.analysis;
  if (options.lint && options.binary_lints.empty()) options.binary_lints = engines::EngineLints();
  // Every tensor's shape is read only by the evaluation at dims (the symbols the model has);
  // without dims the tables would be built and dropped unread (a third of check's memory at
  // 100k nodes).
  if (request.dims.empty()) options.record_shapes = false;
  BCAST_ASSIGN_OR_RETURN(analysis::Analysis analysis,
                         analysis::AnalyzeBroadcasts(model, options, request.annotated));
  step.End(absl::StrCat(support::FormatCount(static_cast<int64_t>(analysis.nodes.size())),
                        " broadcasting nodes"));
  CheckOutcome out;
  out.analysis = std::move(analysis);
  if (!request.dims.empty()) {
    absl::StatusOr<analysis::DimEvaluation> at = analysis::EvaluateAtDims(out.analysis, request.dims);
    if (at.ok()) {
      out.at = *std::move(at);
    } else {
      out.dims_status = at.status();
    }
  }
  return out;
}

absl::StatusOr<DimBindingOutcome> BindDims(proto::Model* model, const DimBindingRequest& request,
                                           support::ProgressSink* progress) {
  DimBindingOutcome out;
  out.bindings = request.dims;
  if (absl::Status s =
          proto::AddInputShapeBindings(model->proto.graph(), request.input_shapes, &out.bindings);
      !s.ok()) {
    out.usage = std::string(s.message());
    return out;
  }
  if (out.bindings.empty()) return out;
  // The same evaluation as check --dim: a binding that breaks a broadcast is found, and named,
  // before anything is rewritten.
  CheckRequest check;
  check.dims = out.bindings;
  check.progress = progress;
  BCAST_ASSIGN_OR_RETURN(CheckOutcome checked, Check(*model, check));
  if (!checked.dims_status.ok()) {
    out.usage = std::string(checked.dims_status.message());
    return out;
  }
  out.at = std::move(checked.at);
  if (out.at->Fails(checked.analysis)) {
    if (out.at->first_failure >= 0) {
      const auto i = static_cast<size_t>(out.at->first_failure);
      out.failure = report::LocatedMessage(checked.analysis.nodes[i], out.at->nodes[i].message);
    } else {
      out.failure =
          absl::StrCat("the broadcast conditions contradict: ", checked.analysis.contradiction);
    }
    return out;
  }
  out.dims_fixed = proto::ApplyDimBindings(model->proto.mutable_graph(), out.bindings);
  return out;
}

namespace {

// Nodes of `ops` in `g` and every body below it, by op.
void CountOps(const onnx::GraphProto& g, const std::set<std::string>& ops,
              std::map<std::string, int64_t>* counts) {
  for (const onnx::NodeProto& n : g.node()) {
    if (ops.count(n.op_type()) > 0) ++(*counts)[n.op_type()];
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) CountOps(a.g(), ops, counts);
      for (const onnx::GraphProto& sub : a.graphs()) CountOps(sub, ops, counts);
    }
  }
}

}  // namespace

absl::Status Optimize(proto::Model* model, const passes::ResolvedPipeline& pipeline,
                      const OptSettings& settings, report::OptReport* report) {
  const bool has_target = pipeline.profile.has_value();
  passes::PipelineOptions options;
  options.verify_each = settings.verify_each;
  options.progress = settings.progress;
  options.keep_rewrite_log = settings.keep_rewrite_log;
  options.pass_options.fold_limit_bytes = settings.fold_limit_bytes;
  options.pass_options.constant_fold_limit_bytes = settings.constant_fold_limit_bytes;
  runtime::RunBudget fold_budget;  // started at the first evaluation: a model without any costs none
  const passes::ConstantEvaluator evaluator = [&fold_budget,
                                               &settings](const proto::Model& fragment) {
    if (!fold_budget.limited()) fold_budget.SetTimeout(settings.constant_fold_seconds);
    runtime::RunOptions run;
    run.budget = &fold_budget;
    run.max_tensor_elements = settings.constant_fold_max_elements;
    return runtime::EvaluateConstantModel(fragment, run);
  };
  options.pass_options.evaluator = &evaluator;
  if (has_target) {
    options.pass_options.target = &*pipeline.profile;
    options.pass_options.live = settings.live;
  }
  report->model_path = model->path;
  report->target = has_target ? pipeline.profile->name : "";
  report->before = passes::Summarize(model->proto);
  // Violations name unnamed nodes by their index in the model as given, like the rewrites.
  const std::unordered_map<std::string, int> original_index =
      has_target ? targets::OriginalNodeIndex(model->proto.graph())
                 : std::unordered_map<std::string, int>{};
  // The analyses live across the passes and the target check, which reads the tables the
  // passes kept current.
  analysis::AnalysisManager analyses(model);
  options.analyses = &analyses;
  absl::Status status = passes::RunPipeline(model, pipeline.passes, options, &report->runs);
  report->after = passes::Summarize(model->proto);
  if (status.ok() && has_target && !pipeline.profile->unsupported_ops.empty()) {
    // Ops the engine has no layer for, named up front: the model stops there whatever its
    // broadcasts, and no broadcast rewrite changes that.
    const std::set<std::string> ops(pipeline.profile->unsupported_ops.begin(),
                                    pipeline.profile->unsupported_ops.end());
    CountOps(model->proto.graph(), ops, &report->unsupported_ops);
    for (const onnx::FunctionProto& f : model->proto.functions()) {
      for (const onnx::NodeProto& n : f.node()) {
        if (ops.count(n.op_type()) > 0) ++report->unsupported_ops[n.op_type()];
      }
    }
  }
  if (status.ok() && has_target) {
    // The target's promise covers every broadcasting node of every graph.
    support::ProgressStep step(settings.progress,
                              absl::StrCat("target check ", pipeline.profile->name));
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<targets::TargetViolation>> violations = targets::CheckTarget(
        *model, *pipeline.profile, &original_index, analyses.held(), settings.live);
    report->target_check_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (settings.live != nullptr) {
      report->decided_by = absl::StrCat("live on ", settings.live->Summary());
    }
    step.End(!violations.ok()      ? "failed"
             : violations->empty() ? "met"
                                   : absl::StrCat(violations->size(), " nodes not in its form"));
    if (violations.ok()) {
      ExplainKeptConstants(report->runs, &*violations);
      for (targets::TargetViolation& v : *violations) v.hint = ViolationHint(v.why);
      for (const targets::TargetViolation& v : *violations) {
        report->violations.push_back(v.ToString());
      }
      report->violation_details = *std::move(violations);
    } else {
      status = violations.status();
    }
  }
  if (!status.ok()) report->error = std::string(status.message());
  return status;
}

namespace {

// The violations of `report` on nodes that the model as given (`bound`) has in the same form
// (same graph, node, op and operand shapes outside the target's form there too), when `engine`
// runs `bound` and matches our reference: moved to report->waived. A model the engine ran
// before opt must still run after it, so such a node never makes opt refuse; the engine check
// of the result then judges the whole model.
void WaiveWhatAlreadyRuns(const proto::Model& bound, const targets::TargetProfile& profile,
                          const TargetEngine& engine, const std::map<std::string, int64_t>& dims,
                          const std::map<std::string, runtime::ValueRange>& ranges,
                          targets::FormOracle* live, report::OptReport* report) {
  const std::unordered_map<std::string, int> index = targets::OriginalNodeIndex(bound.proto.graph());
  absl::StatusOr<std::vector<targets::TargetViolation>> before =
      targets::CheckTarget(bound, profile, &index, nullptr, live);
  if (!before.ok()) return;
  std::set<std::string> had;
  for (const targets::TargetViolation& v : *before) had.insert(v.ToString());
  bool any = false;
  for (const targets::TargetViolation& v : report->violation_details)
    any |= had.count(v.ToString()) > 0;
  if (!any) return;
  absl::StatusOr<engines::EngineVerdict> as_given =
      engines::VerifyOnEngine(bound, bound, *engine.factory, engine.name, dims, ranges);
  if (!as_given.ok() || as_given->outcome != "ran") return;
  std::vector<targets::TargetViolation> kept;
  std::vector<std::string> kept_text;
  for (targets::TargetViolation& v : report->violation_details) {
    const std::string text = v.ToString();
    if (had.count(text) > 0) {
      report->waived.push_back(
          absl::StrCat(text, " (the model as given has this node in this form, and ", engine.name,
                       " runs that model and matches: ", as_given->line, ")"));
    } else {
      kept.push_back(std::move(v));
      kept_text.push_back(text);
    }
  }
  report->violation_details = std::move(kept);
  report->violations = std::move(kept_text);
}

// True when every graph input's shape is static: the engine check then runs the model at the
// only shapes it will ever run at.
bool AllInputsStatic(const proto::Model& model) {
  for (const onnx::ValueInfoProto& in : model.proto.graph().input()) {
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) return false;
    for (const auto& d : in.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return false;
    }
  }
  return true;
}

// The violations left of `report` when the engine runs the written model `result` itself at its
// static shapes and matches: moved to report->waived, and the run recorded as the engine's
// verdict. A node the table (or the node alone on the engine, live) puts outside the form may
// still compute right in the whole model: ncnn's converter fuses LayerNorm's Pow, which alone
// it computes wrongly for negative bases. True when the engine judged (the verdict is final).
bool WaiveWhatTheEngineRuns(const proto::Model& bound, const proto::Model& result,
                            const TargetEngine& engine, const std::map<std::string, int64_t>& dims,
                            const std::map<std::string, runtime::ValueRange>& ranges,
                            report::OptReport* report) {
  if (!AllInputsStatic(result)) return false;
  absl::StatusOr<engines::EngineVerdict> verdict =
      engines::VerifyOnEngine(bound, result, *engine.factory, engine.name, dims, ranges);
  if (!verdict.ok() || verdict->outcome != "ran") return false;
  for (const std::string& v : report->violations) {
    report->waived.push_back(absl::StrCat(
        v, " (", engine.name, " runs the written model itself and matches: ", verdict->line, ")"));
  }
  report->violations.clear();
  report->violation_details.clear();
  report->engine_line = verdict->line;
  report->engine_outcome = verdict->outcome;
  return true;
}

// The result run on the engine at `dims` (the engine as the last judge); on a wrong answer the
// first node that differs there, by bisection.
void JudgeOnEngine(const proto::Model& bound, const proto::Model& result,
                   const TargetEngine& engine, const std::map<std::string, int64_t>& dims,
                   const std::map<std::string, runtime::ValueRange>& ranges, bool allow_partial,
                   support::ProgressSink* progress, report::OptReport* report,
                   OptimizeOutcome* out) {
  support::ProgressStep step(progress, absl::StrCat("running the result on ", engine.name));
  absl::StatusOr<engines::EngineVerdict> verdict =
      engines::VerifyOnEngine(bound, result, *engine.factory, engine.name, dims, ranges);
  if (!verdict.ok()) {
    step.End("not run");
    report->engine_note = absl::StrCat("not run on ", engine.name, " at ", report->engine_dims,
                                       ": ", verdict.status().message());
    return;
  }
  report->engine_line = verdict->line;
  report->engine_outcome = verdict->outcome;
  step.End(verdict->outcome);
  if (verdict->outcome == "ran") return;
  // --allow-partial writes a model the engine may stop in (nodes outside its form); a wrong
  // answer is never written.
  out->engine_failed = verdict->outcome == "wrong" || !allow_partial;
  if (verdict->outcome != "wrong") return;
  absl::StatusOr<engines::EngineBisection> bisection =
      engines::BisectOnEngine(bound, result, *engine.factory, engine.name, dims, ranges);
  if (bisection.ok()) report->engine_divergence = bisection->Summary();
}

}  // namespace

absl::StatusOr<OptimizeOutcome> OptimizeAtDims(proto::Model* model,
                                               const passes::ResolvedPipeline& pipeline,
                                               const OptSettings& given_settings,
                                               const OptimizeRequest& request,
                                               report::OptReport* report) {
  OptimizeOutcome out;
  OptSettings settings = given_settings;
  const std::optional<TargetEngine> engine =
      pipeline.profile.has_value() ? EngineOfTarget(*pipeline.profile) : std::nullopt;
  const bool engine_built = engine.has_value() && engine->factory.has_value();
  if (request.engine.required && !engine_built) {
    out.engine_usage =
        !pipeline.profile.has_value() ? "the engine check runs a target's engine: give a target"
        : !engine.has_value() ? absl::StrCat("target ", pipeline.profile->name, " names no engine")
                              : absl::StrCat("target ", pipeline.profile->name, ": ",
                                             engines::FindEngine(engine->name).status().message());
    return out;
  }
  // Value ranges of the engine check's random inputs name inputs of this model: a mistaken
  // name is a usage error now, not a note after every pass ran.
  if (absl::Status s = CheckInputRanges(model->proto.graph(), request.engine.input_ranges);
      !s.ok()) {
    out.bind_usage = std::string(s.message());
    return out;
  }
  // The target's engine decides forms at exact shapes where this build has it.
  std::unique_ptr<engines::LiveProbe> live;
  if (settings.live == nullptr && engine_built && request.engine.live_probe) {
    absl::StatusOr<std::unique_ptr<engines::LiveProbe>> made =
        engines::MakeLiveProbe(pipeline.profile->name, request.engine.probe_cache);
    if (made.ok()) live = *std::move(made);
    settings.live = live.get();
  }
  if (!request.bind.empty()) {
    BCAST_ASSIGN_OR_RETURN(DimBindingOutcome bound,
                           BindDims(model, request.bind, settings.progress));
    out.bind_usage = std::move(bound.usage);
    out.bind_failure = std::move(bound.failure);
    if (!out.ran()) return out;
    report->bindings = bound.bindings;
    report->dims_fixed = bound.dims_fixed;
  }
  if (request.before_passes) {
    out.stopped = request.before_passes(*model);
    if (!out.stopped.ok()) return out;
  }
  const bool judge = engine_built && request.engine.verify;
  std::optional<proto::Model> bound;
  if (judge) bound = *model;
  out.status = Optimize(model, pipeline, settings, report);
  if (!out.status.ok() || !pipeline.profile.has_value()) return out;
  if (engine.has_value() && !engine_built) {
    report->engine_note =
        absl::StrCat("not run on ", engine->name, " (this build has no ", engine->name,
                     " adapter): the result follows ", engine->name, "'s measured table");
  } else if (engine.has_value() && !request.engine.verify) {
    report->engine_note =
        absl::StrCat("not run on ", engine->name, " (--no-verify-engine): the result follows ",
                     engine->name, "'s measured table");
  }
  std::map<std::string, int64_t> dims;
  bool judged = false;
  if (judge) {
    dims = EngineDims(*bound, report->bindings, &report->engine_dims);
    if (!report->violations.empty()) {
      WaiveWhatAlreadyRuns(*bound, *pipeline.profile, *engine, dims, request.engine.input_ranges,
                           settings.live, report);
    }
    if (!report->violations.empty()) {
      judged = WaiveWhatTheEngineRuns(*bound, *model, *engine, dims, request.engine.input_ranges,
                                      report);
    }
  }
  out.target_not_met = !report->violations.empty() && !request.allow_partial;
  if (judge && !judged && !out.target_not_met) {
    JudgeOnEngine(*bound, *model, *engine, dims, request.engine.input_ranges, request.allow_partial,
                  settings.progress, report, &out);
  }
  return out;
}

}  // namespace onnx_bcast::driver

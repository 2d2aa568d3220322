// Differential verification of a rewritten model against its original (see verify.h).
#include "verify/verify.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/dim_evaluation.h"
#include "analysis/shape_propagation.h"
#include "proto/dim_binding.h"
#include "proto/shapes.h"
#include "report/opt_report.h"
#include "report/report_json.h"
#include "runtime/exec/error_model.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/input_check.h"
#include "runtime/exec/load_executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/random_inputs.h"
#include "runtime/exec/test_data.h"
#include "support/status_macros.h"
#include "verify/inputs.h"
#include "verify/internal.h"

namespace onnx_bcast::verify {
namespace internal {

runtime::RunOptions RunOptionsFor(int threads, const runtime::RunBudget* budget,
                             std::shared_ptr<runtime::MemoryBudget> memory) {
  runtime::RunOptions options;
  options.threads = threads;
  options.budget = budget;
  options.memory = std::move(memory);
  return options;
}

absl::StatusOr<std::unique_ptr<runtime::Executor>> Prepare(const proto::Model& model,
                                                      const VerifyOptions& verify) {
  return runtime::LoadExecutor(model, RunOptionsFor(verify.threads, verify.budget, verify.memory));
}

std::optional<analysis::Analysis> AnalyzeOriginal(const proto::Model& original) {
  absl::StatusOr<analysis::Analysis> a =
      analysis::AnalyzeBroadcasts(original, analysis::AnalysisOptions());
  if (!a.ok()) return std::nullopt;
  return *std::move(a);
}

broadcast::ConditionSet UsableCondition(const std::optional<analysis::Analysis>& a) {
  if (!a || a->combined.contradictory()) return broadcast::ConditionSet();
  return a->combined;
}

}  // namespace internal

namespace {

using internal::AnalyzeOriginal;
using internal::Prepare;
using internal::RunOptionsFor;
using internal::UsableCondition;

// Ops that only move or copy data: a rewrite made of them must give bit-identical outputs.
const std::set<std::string>& ExactOps() {
  static const auto* const kOps = new std::set<std::string>{
      "Reshape",  "Unsqueeze", "Squeeze", "Expand", "Shape",     "Identity",
      "Constant", "Flatten",   "Tile",    "Gather", "Transpose", "Concat"};
  return *kOps;
}

std::map<std::string, int> OpCounts(const onnx::GraphProto& g) {
  std::map<std::string, int> counts;
  for (const auto& n : g.node()) ++counts[n.op_type()];
  return counts;
}

std::vector<std::string> OutputNames(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  for (const auto& o : g.output()) names.push_back(o.name());
  return names;
}

// A copy of `model` whose main graph also outputs `extra` (for bisecting intermediates).
std::shared_ptr<const runtime::Model> WithExtraOutputs(const runtime::Model& model,
                                                  const std::vector<std::string>& extra) {
  auto graph = std::make_shared<runtime::Graph>(*model.main);
  for (const std::string& name : extra) graph->outputs.push_back(name);
  auto copy = std::make_shared<runtime::Model>(model);
  copy->main = graph;
  return copy;
}

std::string ShapeOf(const runtime::Value& v) {
  if (v.is_tensor()) return runtime::ShapeToString(v.tensor->shape());
  if (v.is_sequence()) return absl::StrCat("sequence(", v.sequence.size(), ")");
  return "none";
}

// The opt report: options.report, or parsed from report_path or report_json; null when none
// is given.
absl::StatusOr<std::optional<report::OptReport>> LoadReport(const VerifyOptions& options) {
  if (options.report != nullptr) return std::optional<report::OptReport>(*options.report);
  std::string text = options.report_json;
  std::string label = "the given report";
  if (!options.report_path.empty()) {
    label = absl::StrCat("report '", options.report_path, "'");
    absl::StatusOr<std::string> bytes = proto::ReadFileBytes(options.report_path);
    if (!bytes.ok()) {
      return absl::Status(bytes.status().code(),
                          absl::StrCat(label, ": cannot be read: ", bytes.status().message()));
    }
    text = *std::move(bytes);
  } else if (text.empty()) {
    return std::optional<report::OptReport>();
  }
  absl::StatusOr<report::OptReport> report = report::ParseOptReport(text);
  if (!report.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": ", report.status().message()));
  }
  return std::optional<report::OptReport>(*std::move(report));
}

// Finds the pass and rewrite the report says touched the divergent node: by its first output,
// which insertions do not shift (positional labels of unnamed nodes do), or by name for a report
// written before outputs were recorded.
void Attribute(const report::OptReport& report, Divergence* d) {
  for (const passes::PassRun& run : report.runs) {
    for (const passes::Rewrite& rw : run.stats.log) {
      // The executor labels an unnamed node by its position in the rewritten graph, which
      // is not the report's; the first output is the same in both.
      const bool by_output = !d->node_output.empty() && rw.output == d->node_output;
      if (!by_output && rw.node != d->node) continue;
      d->node = rw.node;
      d->pass = run.pass;
      d->rewrite = absl::StrCat(rw.action, " ", rw.tensor, " ", rw.before, " -> ", rw.after, ": ",
                                rw.detail);
      return;
    }
  }
}

// ---------------------------------------------------------------- bisect

// `original`: the original model as a proto, for a float64 reference of the intermediates when
// `error_model` (null: compared with `tolerance`).
std::optional<Divergence> Bisect(const runtime::Model& a, const runtime::Model& b, const runtime::Feeds& feeds,
                                 const runtime::Tolerance& tolerance, const std::string& label,
                                 const report::OptReport* report, int threads,
                                 const runtime::RunBudget* budget,
                                 std::shared_ptr<runtime::MemoryBudget> memory,
                                 const proto::Model* original, const runtime::ErrorModel* error_model) {
  std::unordered_map<std::string, const runtime::Node*> producer_b;
  for (const runtime::Node& n : b.main->nodes) {
    for (const std::string& o : n.outputs) {
      if (!o.empty()) producer_b[o] = &n;
    }
  }
  std::vector<std::string> common;
  for (const runtime::Node& n : a.main->nodes) {
    for (const std::string& o : n.outputs) {
      if (!o.empty() && producer_b.count(o) > 0) common.push_back(o);
    }
  }
  // Every intermediate of b, so the diverging node's input shapes can be reported.
  std::vector<std::string> all_b;
  for (const auto& [name, node] : producer_b) all_b.push_back(name);
  const runtime::RunOptions options = RunOptionsFor(threads, budget, std::move(memory));
  absl::StatusOr<std::unique_ptr<runtime::Executor>> ea =
      runtime::Executor::Create(WithExtraOutputs(a, common), options);
  absl::StatusOr<std::unique_ptr<runtime::Executor>> eb =
      runtime::Executor::Create(WithExtraOutputs(b, all_b), options);
  if (!ea.ok() || !eb.ok()) return std::nullopt;
  absl::StatusOr<std::vector<runtime::Value>> va = (*ea)->Run(feeds);
  absl::StatusOr<std::vector<runtime::Value>> vb = (*eb)->Run(feeds);
  if (!va.ok() || !vb.ok()) return std::nullopt;
  const size_t base_a = a.main->outputs.size(), base_b = b.main->outputs.size();
  std::unordered_map<std::string, const runtime::Value*> values_b;
  for (size_t i = 0; i < all_b.size(); ++i) values_b[all_b[i]] = &(*vb)[base_b + i];
  for (const auto& [name, value] : feeds) values_b.emplace(name, &value);
  // The float64 reference of every common intermediate, when comparing under the error model.
  std::optional<runtime::Reference> reference;
  if (original != nullptr && error_model != nullptr) {
    runtime::ReferenceOptions ro;
    ro.run = options;
    ro.model = *error_model;
    ro.extra_outputs = common;
    absl::StatusOr<runtime::Reference> r = runtime::ComputeReference(*original, feeds, ro);
    if (r.ok() && r->fallback.empty()) reference = *std::move(r);
  }
  for (size_t i = 0; i < common.size(); ++i) {
    const runtime::Value& x = (*va)[base_a + i];
    const runtime::Value& y = *values_b[common[i]];
    runtime::Comparison c;
    if (reference.has_value()) {
      const size_t at = a.main->outputs.size() + i;
      if (at >= reference->outputs.size()) continue;
      c = runtime::CompareToReference(y, reference->outputs[at], reference->model);
      if (!c.match) c.message = absl::StrCat("output '", common[i], "': ", c.message);
    } else {
      c = runtime::CompareValues(y, x, common[i], tolerance);
    }
    if (c.match) continue;
    Divergence d;
    d.sample = label;
    d.tensor = common[i];
    const runtime::Node* node = producer_b[common[i]];
    d.node = node->name;
    d.node_output = node->outputs.empty() ? "" : node->outputs[0];
    d.op = node->op_type;
    for (const std::string& in : node->inputs) {
      if (in.empty()) continue;
      std::string shape = "?";
      if (auto it = values_b.find(in); it != values_b.end()) {
        shape = ShapeOf(*it->second);
      } else if (auto init = b.main->initializers.find(in); init != b.main->initializers.end()) {
        shape = runtime::ShapeToString(init->second->shape());
      }
      d.input_shapes.push_back(absl::StrCat(in, " ", shape));
    }
    d.comparison = std::move(c);
    if (report != nullptr) Attribute(*report, &d);
    return d;
  }
  return std::nullopt;
}

// Graph outputs one model has and the other lacks.
std::vector<std::string> StructuralDifferences(const std::vector<std::string>& outs_a,
                                               const std::vector<std::string>& outs_b) {
  std::vector<std::string> differences;
  for (const std::string& n : outs_a) {
    if (std::find(outs_b.begin(), outs_b.end(), n) == outs_b.end()) {
      differences.push_back(absl::StrCat("output '", n, "' is missing from the rewritten model"));
    }
  }
  for (const std::string& n : outs_b) {
    if (std::find(outs_a.begin(), outs_a.end(), n) == outs_a.end()) {
      differences.push_back(absl::StrCat("output '", n, "' is not in the original model"));
    }
  }
  return differences;
}

// A labelled input set of a whole-model run.
struct InputSet {
  std::string label;
  runtime::Feeds feeds;
};

// The whole-model verification of two models whose dims are already bound: prepare both, make
// the input sets, run each on both and compare; node by node (local mode) where the whole
// model cannot run. Each step that can end the verification returns its result.
class WholeModelRun {
 public:
  WholeModelRun(const proto::Model& original, const proto::Model& rewritten,
                const VerifyOptions& options, std::map<std::string, int64_t> bound_values,
                const report::OptReport* report, VerifyResult r)
      : original_(original),
        rewritten_(rewritten),
        options_(options),
        bound_values_(std::move(bound_values)),
        report_(report),
        r_(std::move(r)),
        outs_a_(OutputNames(original.proto.graph())),
        outs_b_(OutputNames(rewritten.proto.graph())) {}

  absl::StatusOr<VerifyResult> Go() {
    r_.structural = StructuralDifferences(outs_a_, outs_b_);
    if (!r_.structural.empty()) r_.match = false;
    if (options_.local) return Local("--local");
    if (std::optional<absl::StatusOr<VerifyResult>> done = PrepareBoth()) return *std::move(done);
    r_.mode = "whole-model";
    std::vector<InputSet> sets;
    if (std::optional<absl::StatusOr<VerifyResult>> done = MakeInputSets(&sets)) {
      return *std::move(done);
    }
    for (size_t k = 0; k < sets.size(); ++k) {
      support::ProgressStep step(
          options_.progress, absl::StrCat("verify ", k + 1, "/", sets.size(), ": ", sets[k].label));
      if (must_fail_ == k) {
        BCAST_RETURN_IF_ERROR(RunExpectedFailure(sets[k], &step));
      } else if (std::optional<absl::StatusOr<VerifyResult>> done = RunSample(sets[k], &step)) {
        return *std::move(done);
      }
    }
    if (ran_ == 0) {
      if (!options_.test_data.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("the original model fails on every input: ", first_failure_));
      }
      return Local(absl::StrCat("the original model rejects random inputs (", first_failure_,
                                "); give --test-data for a whole-model check"));
    }
    return std::move(r_);
  }

 private:
  absl::StatusOr<VerifyResult> Local(const std::string& why) {
    r_.mode = "local";
    r_.note = why;
    r_.local = internal::LocalVerify(original_, rewritten_, options_, r_.tolerance);
    // Runs cut by the deadline fail as if mismatched: report the deadline instead.
    if (options_.budget != nullptr) BCAST_RETURN_IF_ERROR(options_.budget->Check());
    for (const LocalResult& l : r_.local) r_.match &= l.match;
    return std::move(r_);
  }

  // Loads both models for the executor. The result where that ends the verification: node by
  // node when the original cannot run or the rewritten one uses an op we lack, a failed "load"
  // sample when the rewritten model is refused otherwise.
  std::optional<absl::StatusOr<VerifyResult>> PrepareBoth() {
    // Steps do not nest: each path out of this one ends it before Local starts its own.
    support::ProgressStep step(options_.progress, "preparing both models for the executor");
    absl::StatusOr<std::unique_ptr<runtime::Executor>> ea = Prepare(original_, options_);
    if (!ea.ok()) {
      step.End("the original cannot run");
      if (ea.status().code() == absl::StatusCode::kUnimplemented ||
          ea.status().code() == absl::StatusCode::kResourceExhausted) {
        return Local(absl::StrCat("the whole model cannot run: ", ea.status().message()));
      }
      return ea.status();
    }
    absl::StatusOr<std::unique_ptr<runtime::Executor>> eb = Prepare(rewritten_, options_);
    step.End(eb.ok() ? "" : "the rewritten model cannot run");
    if (!eb.ok()) {
      if (eb.status().code() == absl::StatusCode::kUnimplemented) {
        return Local(absl::StrCat("the rewritten model cannot run: ", eb.status().message()));
      }
      r_.match = false;
      SampleResult load;
      load.label = "load";
      load.match = false;
      load.error = std::string(eb.status().message());
      r_.samples.push_back(std::move(load));
      return std::move(r_);
    }
    ea_ = *std::move(ea);
    eb_ = *std::move(eb);
    return std::nullopt;
  }

  // The input sets: --test-data folders, or random samples of the free dims (with the
  // --edge-cases sample outside the combined condition, on which both models must fail).
  std::optional<absl::StatusOr<VerifyResult>> MakeInputSets(std::vector<InputSet>* sets) {
    if (!options_.test_data.empty()) {
      BCAST_RETURN_IF_ERROR(TestDataSets(sets));
      return std::nullopt;
    }
    support::ProgressStep step(options_.progress, "choosing samples (analysis)");
    const std::set<std::string> symbols = InputSymbols(ea_->graph());
    const std::optional<analysis::Analysis> analysis = AnalyzeOriginal(original_);
    const broadcast::ConditionSet condition = UsableCondition(analysis);
    std::vector<Bindings> bindings =
        SampleBindings(symbols, options_.samples, options_.edge_cases, condition);
    if (options_.edge_cases) {
      if (std::optional<Bindings> bad = ViolatingBinding(symbols, condition); bad) {
        must_fail_why_ = WhyItMustFail(*analysis, condition, *bad);
        must_fail_ = bindings.size();
        bindings.push_back(*bad);
      }
    }
    for (size_t k = 0; k < bindings.size(); ++k) {
      runtime::RandomInputOptions random;
      random.seed = options_.seed + k;
      random.dims = bindings[k];
      random.default_dim = 2;
      random.ranges = options_.ranges;
      absl::StatusOr<runtime::Feeds> feeds = runtime::RandomInputs(ea_->graph(), random);
      if (!feeds.ok()) {
        step.End("failed");
        // A range the model cannot take is the caller's mistake, not a reason to go local.
        if (feeds.status().code() == absl::StatusCode::kInvalidArgument) {
          return UsageError(std::string(feeds.status().message()));
        }
        return Local(std::string(feeds.status().message()));
      }
      sets->push_back({SampleLabel(k, bindings[k]), *std::move(feeds)});
    }
    if (step.active()) step.End(absl::StrCat(sets->size(), " input sets"));
    return std::nullopt;
  }

  absl::Status TestDataSets(std::vector<InputSet>* sets) const {
    for (const std::string& dir : options_.test_data) {
      BCAST_ASSIGN_OR_RETURN(runtime::TestDataSet set, runtime::LoadTestDataSet(original_, dir));
      // An input a model's declaration refuses is never fed: `run` refuses it too.
      const std::pair<const char*, const runtime::Model*> both[] = {{"original", &ea_->model()},
                                                               {"rewritten", &eb_->model()}};
      for (const auto& [which, loaded] : both) {
        absl::StatusOr<runtime::SymbolValues> fits =
            runtime::CheckInputs(*loaded->main, set.feeds, bound_values_, options_.dims_label);
        if (!fits.ok()) {
          return BadInputError(absl::InvalidArgumentError(
              absl::StrCat(dir, ": the ", which,
                           " model does not accept this input: ", fits.status().message())));
        }
      }
      sets->push_back({dir, std::move(set.feeds)});
    }
    return absl::OkStatus();
  }

  // The node check says fails at `bad` (the symbols the analysis knows), or the condition.
  static std::string WhyItMustFail(const analysis::Analysis& analysis,
                                   const broadcast::ConditionSet& condition, const Bindings& bad) {
    const std::vector<std::string> known = analysis::AnalysisSymbols(analysis);
    analysis::DimBindings at;
    for (const auto& [s, v] : bad) {
      if (std::binary_search(known.begin(), known.end(), s)) at[s] = v;
    }
    absl::StatusOr<analysis::DimEvaluation> eval = analysis::EvaluateAtDims(analysis, at);
    return eval.ok() && eval->first_failure >= 0
               ? eval->nodes[eval->first_failure].message
               : absl::StrCat(condition.ToString(), " does not hold");
  }

  std::string SampleLabel(size_t k, const Bindings& bindings) const {
    if (must_fail_ == k) {
      return absl::StrCat("edge case outside the broadcast condition (", BindingsToString(bindings),
                          ")");
    }
    // --edge-cases' sample of empty tensors: every symbol 0 (no random sample binds one to 0).
    const bool all_zero =
        options_.edge_cases && !bindings.empty() &&
        std::all_of(bindings.begin(), bindings.end(), [](const auto& b) { return b.second == 0; });
    if (all_zero) {
      return absl::StrCat("edge case: every dim 0 (", BindingsToString(bindings),
                          "; empty tensors)");
    }
    return absl::StrCat("random sample ", k, " (",
                        bindings.empty() && !r_.bound.empty() ? std::string("every dim bound")
                                                              : BindingsToString(bindings),
                        ")");
  }

  // check says a node fails at these dims: a model that runs contradicts the analysis (or
  // hides a broadcast the rewrite should have kept).
  absl::Status RunExpectedFailure(const InputSet& set, support::ProgressStep* step) {
    SampleResult sample;
    sample.label = set.label;
    sample.expect_failure = true;
    for (int which = 0; which < 2; ++which) {
      absl::StatusOr<std::vector<runtime::Value>> v = (which == 0 ? ea_ : eb_)->Run(set.feeds);
      if (!v.ok() && EndsVerification(v.status())) return v.status();
      if (v.ok()) {
        sample.match = false;
        absl::StrAppend(&sample.error, sample.error.empty() ? "" : "; ", "the ",
                        which == 0 ? "original" : "rewritten",
                        " model runs where check says it must fail (", must_fail_why_, ")");
      } else if (which == 0) {
        sample.note = absl::StrCat("check: ", must_fail_why_, "; original: ", v.status().message());
      }
    }
    if (sample.match) sample.note = absl::StrCat("both models fail, as expected; ", sample.note);
    step->End(sample.match ? "both models fail, as expected" : "DIFFERENT");
    r_.match &= sample.match;
    r_.samples.push_back(std::move(sample));
    return absl::OkStatus();
  }

  // One input set on both models, compared output by output; the first mismatch is bisected.
  std::optional<absl::StatusOr<VerifyResult>> RunSample(const InputSet& set,
                                                        support::ProgressStep* step) {
    absl::StatusOr<std::vector<runtime::Value>> va = ea_->Run(set.feeds);
    if (!va.ok() && EndsVerification(va.status())) return va.status();
    if (!va.ok()) {
      if (va.status().code() == absl::StatusCode::kUnimplemented) {
        step->End("the whole model cannot run");  // steps do not nest: the local one follows
        return Local(absl::StrCat("the whole model cannot run: ", va.status().message()));
      }
      if (first_failure_.empty()) first_failure_ = std::string(va.status().message());
      step->End("skipped: the original rejects these inputs");
      // Inputs the original itself rejects say nothing about the rewrite: listed as skipped,
      // with the original's error, so that a user sees which samples ran.
      SampleResult skipped;
      skipped.label = set.label;
      skipped.skipped = true;
      skipped.note = absl::StrCat("the original rejects these inputs: ", va.status().message());
      r_.samples.push_back(std::move(skipped));
      return std::nullopt;
    }
    ++ran_;
    SampleResult sample;
    sample.label = set.label;
    absl::StatusOr<std::vector<runtime::Value>> vb = eb_->Run(set.feeds);
    if (!vb.ok() && EndsVerification(vb.status())) return vb.status();
    if (!vb.ok()) {
      sample.match = false;
      sample.error = absl::StrCat("the rewritten model fails where the original runs: ",
                                  vb.status().message());
    } else {
      std::optional<runtime::Reference> reference = ReferenceFor(set, *va);
      for (size_t i = 0; i < outs_a_.size(); ++i) {
        auto it = std::find(outs_b_.begin(), outs_b_.end(), outs_a_[i]);
        if (it == outs_b_.end()) continue;
        OutputResult o;
        o.name = outs_a_[i];
        const runtime::Value& got = (*vb)[it - outs_b_.begin()];
        if (reference.has_value() && i < reference->outputs.size()) {
          o.comparison = runtime::CompareToReference(got, reference->outputs[i], reference->model);
          if (!o.comparison.match) {
            o.comparison.message = absl::StrCat("output '", o.name, "': ", o.comparison.message);
          }
        } else {
          o.comparison = runtime::CompareValues(got, (*va)[i], o.name, r_.tolerance);
        }
        sample.match &= o.comparison.match;
        sample.outputs.push_back(std::move(o));
      }
    }
    if (!sample.match && !r_.divergence) {
      r_.divergence =
          Bisect(ea_->model(), eb_->model(), set.feeds, r_.tolerance, set.label, report_,
                 options_.threads, options_.budget, options_.memory,
                 r_.error_model ? &original_ : nullptr, r_.error_model ? &r_.model : nullptr);
    }
    step->End(sample.match ? "equal" : "DIFFERENT");
    r_.match &= sample.match;
    r_.samples.push_back(std::move(sample));
    return std::nullopt;
  }

  // The error model's reference for one input set (the original's float32 outputs `computed`
  // reused); nullopt when comparing with a tolerance, or when no float64 run is possible (the
  // result's reference_note says why; the tolerance rtol 1e-3, atol 1e-7 then applies).
  std::optional<runtime::Reference> ReferenceFor(const InputSet& set,
                                            const std::vector<runtime::Value>& computed) {
    if (!r_.error_model) return std::nullopt;
    runtime::ReferenceOptions ro;
    ro.run = RunOptionsFor(options_.threads, options_.budget, options_.memory);
    ro.model = r_.model;
    ro.computed = &computed;
    absl::StatusOr<runtime::Reference> ref = runtime::ComputeReference(original_, set.feeds, ro);
    if (!ref.ok() || !ref->fallback.empty()) {
      if (r_.reference_note.empty()) {
        r_.reference_note = ref.ok() ? ref->fallback : std::string(ref.status().message());
      }
      return std::nullopt;
    }
    return *std::move(ref);
  }

  // A run that must end the verification instead of counting as a mismatch or a skipped
  // sample: past the deadline, or refused by the memory budget (other ResourceExhausted
  // refusals, such as --max-tensor-elements, are the inputs' doing).
  bool EndsVerification(const absl::Status& s) const {
    const runtime::MemoryBudget* memory = options_.memory.get();
    return s.code() == absl::StatusCode::kDeadlineExceeded ||
           (s.code() == absl::StatusCode::kResourceExhausted && memory != nullptr &&
            memory->refusals() > 0);
  }

  const proto::Model& original_;
  const proto::Model& rewritten_;
  const VerifyOptions& options_;
  const std::map<std::string, int64_t> bound_values_;
  const report::OptReport* report_;
  VerifyResult r_;
  const std::vector<std::string> outs_a_, outs_b_;
  std::unique_ptr<runtime::Executor> ea_, eb_;
  std::optional<size_t> must_fail_;  // the --edge-cases set, on which both must fail
  std::string must_fail_why_;
  int ran_ = 0;  // sets the original ran on
  std::string first_failure_;
};

}  // namespace

bool OnlyExactOpsChanged(const proto::Model& original, const proto::Model& rewritten) {
  const std::map<std::string, int> a = OpCounts(original.proto.graph());
  const std::map<std::string, int> b = OpCounts(rewritten.proto.graph());
  std::set<std::string> ops;
  for (const auto& [op, n] : a) ops.insert(op);
  for (const auto& [op, n] : b) ops.insert(op);
  for (const std::string& op : ops) {
    const int na = a.count(op) ? a.at(op) : 0, nb = b.count(op) ? b.at(op) : 0;
    if (na != nb && ExactOps().count(op) == 0) return false;
  }
  return true;
}

absl::StatusOr<VerifyResult> Verify(const proto::Model& original_given,
                                    const proto::Model& rewritten_given,
                                    const VerifyOptions& given) {
  // One memory budget for every run of the verification (both models are held at once).
  VerifyOptions options = given;
  if (options.memory == nullptr) {
    if (options.max_memory_bytes <= 0) {
      return absl::InvalidArgumentError("the memory budget must be positive");
    }
    options.memory = std::make_shared<runtime::MemoryBudget>(options.max_memory_bytes);
  }
  BCAST_ASSIGN_OR_RETURN(const std::optional<report::OptReport> report, LoadReport(options));
  VerifyResult r;
  // Only inputs both models accept say anything: a dim one declares as a number (opt --dim
  // wrote it) is that number in both, and the samples vary only the dims both leave free.
  BCAST_ASSIGN_OR_RETURN(r.bound, CommonInputBindings(original_given, rewritten_given, options.dims,
                                                      options.dims_label));
  std::map<std::string, int64_t> bound_values = BoundValues(r.bound);
  // Copies only when something is bound: a large model is not copied for nothing.
  std::optional<proto::Model> bound_a, bound_b;
  if (!bound_values.empty()) {
    bound_a = original_given;
    bound_b = rewritten_given;
    proto::ApplyDimBindings(bound_a->proto.mutable_graph(), bound_values);
    proto::ApplyDimBindings(bound_b->proto.mutable_graph(), bound_values);
  }
  const proto::Model& original = bound_a ? *bound_a : original_given;
  const proto::Model& rewritten = bound_b ? *bound_b : rewritten_given;
  if (options.tolerance) {
    r.tolerance = *options.tolerance;
  } else {
    r.tolerance.exact = OnlyExactOpsChanged(original, rewritten);
    r.error_model = !r.tolerance.exact;
  }
  WholeModelRun run(original, rewritten, options, std::move(bound_values),
                    report.has_value() ? &*report : nullptr, std::move(r));
  return run.Go();
}

}  // namespace onnx_bcast::verify

// Engine bisection (see engine_bisect.h).
#include "engines/engine_bisect.h"

#include <algorithm>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engines/isolated_run.h"
#include "runtime/exec/error_model.h"
#include "runtime/exec/load_executor.h"
#include "runtime/exec/random_inputs.h"
#include "support/status_macros.h"

namespace onnx_bcast::engines {
namespace {

std::string ShapeOf(const runtime::Value& v) {
  return v.is_tensor() ? runtime::ShapeToString(v.tensor->shape()) : std::string("?");
}

}  // namespace

std::string EngineDivergence::Line() const {
  const std::string who =
      node.empty() ? absl::StrCat("unnamed ", op) : absl::StrCat(op, " '", node, "'");
  return absl::StrCat(who, " (inputs ", absl::StrJoin(input_shapes, ", "), "): tensor '", tensor,
                      "': ", comparison.message);
}

std::string EngineBisection::Summary() const {
  if (outcome != "ran") return absl::StrCat(outcome, ": ", why);
  if (divergence) return absl::StrCat("first node that differs: ", divergence->Line());
  return absl::StrCat("no tensor differs (", compared, " compared, at most ",
                      absl::StrFormat("%.2g", worst_ratio), " x the error model's bound; ",
                      unavailable, " not held by the converted model)");
}

absl::StatusOr<EngineBisection> BisectOnEngine(
    const proto::Model& reference_model, const proto::Model& engine_model,
    const EngineFactory& make_engine, const std::string& engine,
    const std::map<std::string, int64_t>& dims,
    const std::map<std::string, runtime::ValueRange>& ranges) {
  (void)engine;
  BCAST_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Executor> exec, runtime::LoadExecutor(reference_model));
  runtime::RandomInputOptions random;
  random.seed = 7;
  random.dims = dims;
  random.ranges = ranges;  // the inputs VerifyOnEngine fed, so the bisection sees its failure
  BCAST_ASSIGN_OR_RETURN(runtime::Feeds feeds, runtime::RandomInputs(exec->graph(), random));
  exec.reset();
  // Tensors both models compute, in the reference's node order.
  std::set<std::string> in_engine_model;
  std::unordered_map<std::string, const onnx::NodeProto*> producer;
  for (const onnx::NodeProto& n : engine_model.proto.graph().node()) {
    for (const std::string& o : n.output()) {
      if (!o.empty()) {
        in_engine_model.insert(o);
        producer[o] = &n;
      }
    }
  }
  std::set<std::string> graph_outputs;
  for (const onnx::ValueInfoProto& o : reference_model.proto.graph().output()) {
    graph_outputs.insert(o.name());
  }
  std::vector<std::string> candidates;
  for (const onnx::NodeProto& n : reference_model.proto.graph().node()) {
    for (const std::string& o : n.output()) {
      if (!o.empty() && in_engine_model.count(o) > 0 && graph_outputs.count(o) == 0) {
        candidates.push_back(o);
      }
    }
  }
  for (const onnx::ValueInfoProto& o : reference_model.proto.graph().output()) {
    if (in_engine_model.count(o.name()) > 0) candidates.push_back(o.name());
  }
  runtime::ReferenceOptions options;
  options.extra_outputs = candidates;
  BCAST_ASSIGN_OR_RETURN(runtime::Reference ref, runtime::ComputeReference(reference_model, feeds, options));
  std::unordered_map<std::string, const runtime::OutputReference*> by_name;
  for (const runtime::OutputReference& o : ref.outputs) by_name.emplace(o.name, &o);
  EngineJob job;
  BCAST_ASSIGN_OR_RETURN(job.model_bytes, proto::SerializeSelfContained(engine_model));
  for (const auto& [name, value] : feeds) job.inputs.emplace_back(name, value.tensor->Clone());
  job.output_names = candidates;
  job.available_only = true;
  std::vector<EngineJob> jobs;
  jobs.push_back(std::move(job));
  IsolationOptions isolation;
  isolation.parallel = 1;
  isolation.timeout = absl::Seconds(120);
  BCAST_ASSIGN_OR_RETURN(std::vector<EngineOutcome> outcomes,
                         RunIsolated(make_engine, jobs, isolation));
  const EngineOutcome& o = outcomes.front();
  EngineBisection b;
  b.outcome = std::string(OutcomeKindName(o.kind));
  if (o.kind != OutcomeKind::kRan) {
    b.why = absl::StrCat(o.stage, ": ", o.message);
    return b;
  }
  std::unordered_map<std::string, const runtime::Tensor*> returned;
  for (const auto& [name, t] : o.outputs) returned.emplace(name, &t);
  runtime::CompareOptions compare;
  compare.engine_representation = true;
  std::set<std::string> matched;
  for (const std::string& name : candidates) {
    auto got = returned.find(name);
    auto want = by_name.find(name);
    if (got == returned.end() || want == by_name.end()) {
      ++b.unavailable;
      continue;
    }
    ++b.compared;
    runtime::Comparison c =
        runtime::CompareToReference(runtime::Value::Of(std::make_shared<runtime::Tensor>(got->second->Clone())),
                               *want->second, ref.model, compare);
    if (c.match) {
      matched.insert(name);
      b.worst_ratio = std::max(b.worst_ratio, c.bound_ratio);
      continue;
    }
    EngineDivergence d;
    d.tensor = name;
    const onnx::NodeProto* n = producer.at(name);
    d.node = n->name();
    d.op = n->op_type();
    for (const std::string& in : n->input()) {
      if (in.empty()) continue;
      auto v = by_name.find(in);
      std::string shape = "?";
      if (v != by_name.end()) {
        shape = ShapeOf(v->second->computed);
      } else {
        for (const auto& [fname, fvalue] : feeds) {
          if (fname == in) shape = ShapeOf(fvalue);
        }
        for (const onnx::TensorProto& t : engine_model.proto.graph().initializer()) {
          if (t.name() == in) shape = absl::StrCat("[", absl::StrJoin(t.dims(), ","), "] constant");
        }
      }
      // Whether the engine agreed on the input: a divergence whose inputs it does not hold
      // may start upstream.
      const bool computed = by_name.count(in) > 0 && in_engine_model.count(in) > 0;
      const char* status = !computed                ? ""
                           : matched.count(in) > 0  ? " (matches)"
                           : returned.count(in) > 0 ? ""
                                                    : " (not held by the converted model)";
      d.input_shapes.push_back(absl::StrCat(in, " ", shape, status));
    }
    d.comparison = std::move(c);
    b.divergence = std::move(d);
    break;
  }
  return b;
}

}  // namespace onnx_bcast::engines

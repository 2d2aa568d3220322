// opt's engine steps (see engine_step.h).
#include "driver/engine_step.h"

#include <set>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/shape_propagation.h"
#include "engines/registry.h"
#include "proto/dim_binding.h"
#include "verify/inputs.h"

namespace onnx_bcast::driver {

std::optional<TargetEngine> EngineOfTarget(const targets::TargetProfile& profile) {
  const std::string name = profile.name.substr(0, profile.name.find('-'));
  TargetEngine out;
  out.name = name;
  for (const std::string& built : engines::EngineNames()) {
    if (built != name) continue;
    absl::StatusOr<engines::EngineFactory> factory = engines::FindEngine(built);
    if (factory.ok()) out.factory = *std::move(factory);
    return out;
  }
  // Not built here: a target measured on an engine still names it (the report says the result
  // was not run there).
  if (absl::StrContains(profile.description, "probe-engine")) return out;
  return std::nullopt;
}

std::map<std::string, int64_t> EngineDims(const proto::Model& model,
                                          const std::map<std::string, int64_t>& bound,
                                          std::string* text) {
  std::map<std::string, int64_t> dims = bound;
  const std::vector<std::string> unbound = proto::UnboundInputSymbols(model.proto.graph());
  // Symbols at the leading axis of an input: a batch, deployed as 1.
  std::set<std::string> leading;
  for (const onnx::ValueInfoProto& in : model.proto.graph().input()) {
    const auto& shape = in.type().tensor_type().shape();
    if (shape.dim_size() > 0 && shape.dim(0).has_dim_param()) {
      leading.insert(shape.dim(0).dim_param());
    }
  }
  std::vector<std::string> picked;
  std::set<std::string> free;
  for (const std::string& s : unbound) {
    if (dims.count(s) > 0) continue;
    dims[s] = leading.count(s) > 0 ? 1 : 32;
    free.insert(s);
  }
  if (!free.empty()) {
    // Inside the broadcast condition when the choice above breaks it (past + seq = total).
    absl::StatusOr<analysis::Analysis> analysis =
        analysis::AnalyzeBroadcasts(model, analysis::AnalysisOptions());
    if (analysis.ok() && !analysis->combined.contradictory() &&
        analysis->combined.Evaluate(dims) == false) {
      const std::vector<verify::Bindings> samples =
          verify::SampleBindings(free, 2, false, analysis->combined);
      if (samples.size() > 1) {
        for (const auto& [s, v] : samples[1]) {
          if (free.count(s) > 0) dims[s] = v;
        }
      }
    }
    for (const std::string& s : free) picked.push_back(s);
  }
  std::vector<std::string> every;
  for (const auto& [s, v] : dims) every.push_back(absl::StrCat(s, "=", v));
  if (text != nullptr) {
    *text = absl::StrJoin(every, ", ");
    if (!picked.empty()) {
      absl::StrAppend(text, " (", absl::StrJoin(picked, ", "), " unbound: chosen by opt)");
    }
  }
  return dims;
}

absl::StatusOr<engines::EngineBisection> BisectOnNamedEngine(
    const proto::Model& reference, const proto::Model& on_engine, const std::string& engine,
    const std::map<std::string, int64_t>& dims, std::string* dims_text,
    const std::map<std::string, runtime::ValueRange>& ranges) {
  absl::StatusOr<engines::EngineFactory> factory = engines::FindEngine(engine);
  if (!factory.ok()) return factory.status();
  // The dims given are bound in both models, as opt --dim writes them: a static engine sees
  // numbers there (the ones chosen for the others stay symbolic in the model, as given).
  proto::Model bound_reference = reference, bound_engine = on_engine;
  proto::ApplyDimBindings(bound_reference.proto.mutable_graph(), dims);
  proto::ApplyDimBindings(bound_engine.proto.mutable_graph(), dims);
  const std::map<std::string, int64_t> at = EngineDims(bound_engine, dims, dims_text);
  return engines::BisectOnEngine(bound_reference, bound_engine, *factory, engine, at, ranges);
}

}  // namespace onnx_bcast::driver

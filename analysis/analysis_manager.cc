// The pass manager's analyses (see analysis_manager.h).
#include "analysis/analysis_manager.h"

#include <utility>

#include "analysis/shape_propagation.h"
#include "support/status_macros.h"

namespace onnx_bcast::analysis {

void ApplyDeclaredElems(const onnx::GraphProto& graph, bool interface, ShapeTables* tables) {
  if (interface) {
    auto declared = [&](const onnx::ValueInfoProto& vi) {
      if (vi.type().has_tensor_type() && vi.type().tensor_type().elem_type() != 0) {
        tables->SetElem(vi.name(), vi.type().tensor_type().elem_type());
      }
    };
    for (const auto& vi : graph.input()) declared(vi);
    for (const auto& vi : graph.output()) declared(vi);
  }
  for (const auto& t : graph.initializer()) tables->SetElem(t.name(), t.data_type());
}

absl::StatusOr<ShapeTables> ComputeShapeTables(
    const proto::Model& model, absl::flat_hash_map<std::string, KnownValue>* values) {
  ShapeTables tables;
  AnalysisOptions shapes_only;
  shapes_only.verdicts = false;
  shapes_only.main_tables = &tables;
  shapes_only.main_values = values;
  BCAST_ASSIGN_OR_RETURN(Analysis analysis, AnalyzeBroadcasts(model, shapes_only));
  ApplyDeclaredElems(model.proto.graph(), /*interface=*/true, &tables);
  return tables;
}

absl::StatusOr<ShapeTables> AnalysisManager::Take() {
  if (held_) {
    ShapeTables out = std::move(*held_);
    held_.reset();
    return out;
  }
  ++computations_;
  return ComputeShapeTables(*model_);
}

void AnalysisManager::Return(ShapeTables tables) { held_ = std::move(tables); }

}  // namespace onnx_bcast::analysis

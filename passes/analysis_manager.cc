// The pass manager's analyses (see analysis_manager.h).
#include "passes/analysis_manager.h"

#include <utility>

#include "passes/shape_propagation.h"

namespace onnx_bcast::passes {

absl::StatusOr<ShapeTables> ComputeShapeTables(const proto::Model& model) {
  AnalysisOptions shapes_only;
  shapes_only.verdicts = false;
  absl::StatusOr<Analysis> analysis = AnalyzeBroadcasts(model, shapes_only);
  if (!analysis.ok()) return analysis.status();
  ShapeTables tables;
  if (auto it = analysis->shapes.find("main"); it != analysis->shapes.end()) {
    tables.shapes = std::move(it->second);
  }
  tables.elems = std::move(analysis->elems);
  // Declared types of the interface and initializers take precedence, as in the model.
  const onnx::GraphProto& g = model.proto.graph();
  auto elem = [&](const onnx::ValueInfoProto& vi) {
    if (vi.type().has_tensor_type() && vi.type().tensor_type().elem_type() != 0) {
      tables.elems[vi.name()] = vi.type().tensor_type().elem_type();
    }
  };
  for (const auto& vi : g.input()) elem(vi);
  for (const auto& vi : g.output()) elem(vi);
  for (const auto& t : g.initializer()) tables.elems[t.name()] = t.data_type();
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

}  // namespace onnx_bcast::passes

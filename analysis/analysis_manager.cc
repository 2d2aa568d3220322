// The pass manager's analyses (see analysis_manager.h).
#include "analysis/analysis_manager.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
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

namespace {

// The shapes-only analysis of `model`, recording the main graph's tables into `main` (the
// declared element types of its interface and initializers taking precedence) and, with
// `values`, its tensors known as numbers.
absl::StatusOr<Analysis> AnalyzeShapes(const proto::Model& model, ShapeTables* main,
                                       absl::flat_hash_map<std::string, KnownValue>* values) {
  AnalysisOptions shapes_only;
  shapes_only.verdicts = false;
  shapes_only.main_tables = main;
  shapes_only.main_values = values;
  BCAST_ASSIGN_OR_RETURN(Analysis analysis, AnalyzeBroadcasts(model, shapes_only));
  ApplyDeclaredElems(model.proto.graph(), /*interface=*/true, main);
  return analysis;
}

}  // namespace

absl::StatusOr<ShapeTables> ComputeShapeTables(
    const proto::Model& model, absl::flat_hash_map<std::string, KnownValue>* values) {
  ShapeTables tables;
  BCAST_RETURN_IF_ERROR(AnalyzeShapes(model, &tables, values).status());
  return tables;
}

absl::StatusOr<ModelTables> ComputeModelTables(const proto::Model& model) {
  ModelTables tables;
  BCAST_ASSIGN_OR_RETURN(Analysis analysis, AnalyzeShapes(model, &tables.main, nullptr));
  for (auto& [path, shapes] : analysis.shapes) {
    if (path == "main") continue;  // recorded in tables.main
    ShapeTables& t = tables.graphs[path];
    t.Reserve(shapes.size());
    for (auto& [name, shape] : shapes) t.SetShape(name, std::move(shape));
  }
  return tables;
}

absl::Status CompareShapeTables(const ShapeTables& kept, const ShapeTables& fresh, bool elems) {
  // Every tensor the fresh analysis knows, in name order (the first difference is reported);
  // entries of tensors a pass removed may linger in the kept tables (nothing reads them).
  std::vector<std::pair<std::string_view, const broadcast::Shape*>> order;
  fresh.ForEachShape([&](std::string_view name, const broadcast::Shape& shape) {
    order.emplace_back(name, &shape);
  });
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  // A size that depends on data is a symbol named after its node's label, "<op>#<index>" when
  // the node is unnamed, and an insertion before the node shifts that index in a new analysis:
  // the tables agree when they agree up to a one-to-one renaming of symbols, learned from the
  // dims that are one symbol on both sides.
  std::map<std::string, broadcast::Expr> rename;  // fresh symbol -> kept symbol
  std::map<std::string, std::string> renamed_from;
  for (const auto& [name, fresh_shape] : order) {
    const broadcast::Shape* kept_shape = kept.FindShape(name);
    if (kept_shape == nullptr || !fresh_shape->rank_known || !kept_shape->rank_known ||
        fresh_shape->rank() != kept_shape->rank()) {
      continue;
    }
    for (size_t i = 0; i < fresh_shape->dims.size(); ++i) {
      const broadcast::Dim& f = fresh_shape->dims[i];
      const broadcast::Dim& k = kept_shape->dims[i];
      if (!f.is_symbol() || !k.is_symbol() || f.symbol() == k.symbol()) continue;
      if (rename.count(f.symbol()) == 0 && renamed_from.count(k.symbol()) == 0) {
        rename.emplace(f.symbol(), broadcast::Expr::Symbol(k.symbol()));
        renamed_from.emplace(k.symbol(), f.symbol());
      }
    }
  }
  for (const auto& [name, fresh_shape] : order) {
    const broadcast::Shape* kept_shape = kept.FindShape(name);
    const broadcast::Shape shape = Substitute(*fresh_shape, rename);
    if (kept_shape == nullptr || !(*kept_shape == shape)) {
      return absl::InternalError(
          absl::StrCat("tensor '", std::string(name), "': kept shape ",
                       kept_shape == nullptr ? std::string("none") : kept_shape->ToString(),
                       ", a fresh analysis gives ", fresh_shape->ToString()));
    }
  }
  if (!elems) return absl::OkStatus();
  absl::Status elems_agree = absl::OkStatus();
  fresh.ForEachElem([&](std::string_view name, int32_t elem) {
    const int32_t kept_elem = kept.ElemOf(name);
    if (elems_agree.ok() && kept_elem != elem) {
      elems_agree =
          absl::InternalError(absl::StrCat("tensor '", std::string(name), "': kept element type ",
                                           kept_elem, ", a fresh analysis gives ", elem));
    }
  });
  if (!elems_agree.ok()) return elems_agree;
  return absl::OkStatus();
}

absl::StatusOr<ShapeTables> AnalysisManager::Take() {
  if (held_) {
    ShapeTables out = std::move(*held_);
    held_.reset();
    graphs_.reset();  // the pass keeps the main graph's current only
    return out;
  }
  graphs_.reset();
  ++computations_;
  return ComputeShapeTables(*model_);
}

void AnalysisManager::Return(ShapeTables tables) {
  held_ = std::move(tables);
  graphs_.reset();
}

absl::StatusOr<ModelTables> AnalysisManager::TakeModel() {
  if (held_ && graphs_) {
    ModelTables out{std::move(*held_), std::move(*graphs_)};
    Invalidate();
    return out;
  }
  Invalidate();
  ++computations_;
  return ComputeModelTables(*model_);
}

void AnalysisManager::ReturnModel(ModelTables tables) {
  held_ = std::move(tables.main);
  graphs_ = std::move(tables.graphs);
}

}  // namespace onnx_bcast::analysis

// The value folds of fold-constants on one round's graph (fold_graph.h): Shape and Size of
// static dims, values the shape analysis knows, and cones of nodes with only constant inputs,
// computed by the evaluator (the executor's own kernels) up to the fold limit.
#ifndef ONNX_BCAST_PASSES_FOLD_VALUES_H_
#define ONNX_BCAST_PASSES_FOLD_VALUES_H_

#include <optional>

#include "absl/status/statusor.h"
#include "analysis/analysis_manager.h"
#include "passes/fold_graph.h"

namespace onnx_bcast::passes::fold {

/// Folds every value it can into an initializer; true when it changed the graph. The shape
/// analysis it runs (with the known values the same walk records) lands in `analysis_out`, so
/// that a round that edits nothing after it hands it to the next pass as it is.
absl::StatusOr<bool> FoldValues(FoldGraph& fg, std::optional<analysis::ShapeTables>* analysis_out);

}  // namespace onnx_bcast::passes::fold

#endif  // ONNX_BCAST_PASSES_FOLD_VALUES_H_

// The structural folds of fold-constants on one round's graph (fold_graph.h): Constant nodes to
// initializers, trailing empty inputs, Identity and inference Dropout, If of a constant
// condition, and what is dead afterwards. Each returns whether it changed the graph.
#ifndef ONNX_BCAST_PASSES_FOLD_CLEANUPS_H_
#define ONNX_BCAST_PASSES_FOLD_CLEANUPS_H_

#include "absl/status/statusor.h"
#include "passes/fold_graph.h"

namespace onnx_bcast::passes::fold {

/// Constant nodes (of a type the target loads, not graph outputs) become initializers.
bool ConstantNodesToInitializers(FoldGraph& fg);

/// An omitted optional input may be written as an empty name or left out; an engine's
/// importer may look an empty trailing name up as a constant and refuse the model (PyTorch's
/// Pad without a value), so trailing empty names go.
void TrimTrailingEmptyInputs(FoldGraph& fg);

/// Identity nodes, and Dropout at inference, are removed: their readers read the input, or,
/// when the output is a graph output, the input's producer produces it.
bool RemoveIdentities(FoldGraph& fg);

/// Replaces each If whose condition is an initializer by the branch it takes.
absl::StatusOr<bool> FoldIfs(FoldGraph& fg);

/// Removes nodes nothing reads (graph outputs, live nodes and subgraphs count), then
/// initializers nothing reads and value_info of names that no longer exist.
bool RemoveDead(FoldGraph& fg);

}  // namespace onnx_bcast::passes::fold

#endif  // ONNX_BCAST_PASSES_FOLD_CLEANUPS_H_

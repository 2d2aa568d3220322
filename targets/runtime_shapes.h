// Run-time shape computation, as a target with `runtime_shapes = false` (a static engine, whose
// converter takes shapes only as constants) must not receive it: the nodes of a model that
// compute a shape while it runs (Shape, Size), take a shape, extent or index input that is not a
// constant (Reshape, Expand, Tile, Resize, Slice, ConstantOfShape, ...), or have only constant
// inputs (fold-constants would have folded them). Each is named with what would make it static: the
// graph-input symbols to bind with --dim, or the data-dependent node it comes from when no binding
// can.
#ifndef ONNX_BCAST_TARGETS_RUNTIME_SHAPES_H_
#define ONNX_BCAST_TARGETS_RUNTIME_SHAPES_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/shape_tables.h"
#include "proto/model_io.h"

namespace onnx_bcast::targets {

struct TargetViolation;

/// Every node of `model` (main graph, and If/Loop/Scan bodies at any depth) that computes a
/// shape at run time, as violations of `target`'s promise; `why` says what the node computes
/// and how to make it static ("bind H, W with --dim", "depends on data at node 'nz'", "raise
/// --fold-limit"). `tables`: the pipeline's kept main-graph shapes (null: analysed here).
absl::StatusOr<std::vector<TargetViolation>> FindRuntimeShapeNodes(
    const proto::Model& model, const std::string& target,
    const std::unordered_map<std::string, int>* original_index = nullptr,
    const analysis::ShapeTables* tables = nullptr);

/// The node a symbol the analysis made for an extent it cannot know comes from: "<node>" of
/// a fresh data-dependent symbol "<node>:<output>:<axis>" (NonZero, TopK, a Loop's count),
/// `at` (the node being decided) for an opaque one (`opaque#<n>`). For hints that say
/// "depends on data at node N" instead of asking to bind a symbol no user can bind.
std::string DataSymbolNode(const std::string& symbol, const std::string& at);

}  // namespace onnx_bcast::targets

#endif  // ONNX_BCAST_TARGETS_RUNTIME_SHAPES_H_

// Structural checks of a model's graphs that loading does not make (load keeps any graph it can
// hold, so tools can still inspect broken ones): every value defined once and before use, no
// cycle, every graph output produced, and no model-local function that calls itself. The CLI
// runs them before any command, so `check`, `opt` and `run` refuse a broken graph alike instead
// of analysing, rewriting or recursing through it.
#ifndef ONNX_BCAST_PROTO_GRAPH_STRUCTURE_H_
#define ONNX_BCAST_PROTO_GRAPH_STRUCTURE_H_

#include "absl/status/status.h"
#include "proto/limits.h"
#include "proto/model_io.h"

namespace onnx_bcast::proto {

/// InvalidArgument naming the graph, node and value at fault: a node input or graph output
/// defined nowhere (inputs, initializers, node outputs, enclosing scopes of a subgraph), a
/// value produced twice, a cycle, or a (mutually) recursive model-local function.
/// ResourceExhausted when inlining the model's function calls would exceed
/// `limits.max_function_inlines` (CheckFunctionInlines). Linear in the size of the model.
absl::Status CheckGraphStructure(const Model& model, const Limits& limits = {});

/// True when every node of `model` sits in its main graph: no model-local function and no
/// node with a graph attribute (If/Loop/Scan or any other).
bool IsSingleGraph(const onnx::ModelProto& model);

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_GRAPH_STRUCTURE_H_

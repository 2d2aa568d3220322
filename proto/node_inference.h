// libonnx's type and shape inference one node at a time, the fallback of the analysis's single
// walk (passes/shape_propagation): the caller walks every graph, keeps the types, and asks only
// for what its own rules and shape functions leave unknown, so no whole-graph InferShapes (and
// its per-node map building) runs.
// Semantics match libonnx 1.12's InferShapes for a flat graph: the op schema's inference
// function sees the input types, the constant inputs (initializers and Constant values), the
// node's attributes; the result is merged into any declared type as libonnx merges it.
#ifndef ONNX_BCAST_PROTO_NODE_INFERENCE_H_
#define ONNX_BCAST_PROTO_NODE_INFERENCE_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "proto/onnx.h"

namespace onnx_bcast::proto {

class NodeInference {
 public:
  /// Resolves schemas against `model`'s opset imports.
  explicit NodeInference(const onnx::ModelProto& model);

  /// True when libonnx has a schema with an inference function for `node` (default domain
  /// only; other domains and function-only schemas are the caller's to handle). Subgraph ops
  /// (If/Loop/Scan) fail in Infer: the caller walks their bodies itself.
  bool Supported(const onnx::NodeProto& node);

  /// Runs the schema's inference function. `input_types[i]` / `input_data[i]` may be null
  /// (unknown type, not a constant). `outputs` gets one TypeProto per node output (VALUE_NOT_SET
  /// where nothing was inferred). InvalidArgument with libonnx's message when it fails.
  absl::Status Infer(const onnx::NodeProto& node,
                     absl::Span<const onnx::TypeProto* const> input_types,
                     absl::Span<const onnx::TensorProto* const> input_data,
                     std::vector<onnx::TypeProto>* outputs);

  /// libonnx's merge of an inferred type into a declared one: an unset element type and dims
  /// without a value take the inferred ones. InvalidArgument when they conflict (element
  /// type, rank or a dim value).
  static absl::Status MergeInto(const onnx::TypeProto& inferred, onnx::TypeProto* existing);

 private:
  const void* Schema(const onnx::NodeProto& node);

  int default_opset_ = 0;
  std::unordered_map<std::string, const void*> schemas_;  // op_type -> OpSchema (or null)
};

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_NODE_INFERENCE_H_

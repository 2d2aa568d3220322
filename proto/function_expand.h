// Function expansion: the bodies libonnx defines for ops as functions (NegativeLogLikelihoodLoss,
// Celu, Range...) and the inlining of a function call (model-local or schema) into plain nodes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/onnx.h"

namespace onnx_bcast::proto {

/// A function body for one call: the body and the call with the schema's attribute defaults
/// filled in (so that ref_attr_name references bind even when the call omits them).
struct FunctionBody {
  onnx::FunctionProto body;
  onnx::NodeProto call;
};

/// The body libonnx's schema of `call.op_type()` in `domain` at `opset` defines, built for this
/// call; context-dependent bodies see `input_types` (a default TypeProto means unknown).
/// NotFound when the op has no schema or no function at that opset; libonnx errors become
/// InvalidArgument.
absl::StatusOr<FunctionBody> SchemaFunctionBody(const onnx::NodeProto& call,
                                                const std::string& domain, int64_t opset,
                                                const std::vector<onnx::TypeProto>& input_types);

/// The body's nodes with the call bound: formal inputs and outputs become the call's actual
/// names (omitted ones: "" for inputs, a fresh name for outputs), every other value defined in
/// the body is renamed "<prefix><name>", attributes with ref_attr_name take the call's value
/// (and are dropped when the call has none), and the same renaming applies inside subgraphs.
std::vector<onnx::NodeProto> InlineCall(const onnx::NodeProto& call,
                                        const onnx::FunctionProto& body, const std::string& prefix);

}  // namespace onnx_bcast::proto

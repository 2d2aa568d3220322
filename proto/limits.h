// Resource limits applied while loading a model; defaults admit every real model and refuse
// the blow-ups that hostile files use to exhaust memory.
#ifndef ONNX_BCAST_PROTO_LIMITS_H_
#define ONNX_BCAST_PROTO_LIMITS_H_

#include <cstdint>

namespace onnx_bcast::proto {

/// Default of Limits::max_function_inlines: real models with local functions (exporters emit one
/// per module) inline a few thousand calls.
inline constexpr int64_t kDefaultMaxFunctionInlines = 100'000;

/// Limits checked before or while a model is parsed. All are inclusive maxima.
struct Limits {
  /// Size of the .onnx file itself. Protobuf cannot parse a message of 2 GiB or more.
  int64_t max_file_bytes = (int64_t{2} << 30) - 1;
  /// Protobuf message nesting (each subgraph level costs about three).
  int max_nesting = 100;
  /// Nodes in the whole model, subgraphs and functions included.
  int64_t max_nodes = 20'000'000;
  /// Elements of any one tensor declared in the model (initializer, constant, external).
  int64_t max_tensor_elements = int64_t{1} << 36;
  /// Model-local function calls that inlining the whole model performs, nested calls counted
  /// at every level (a call inside a function called 4 times counts 4 times). Depth alone does
  /// not bound this: 16 levels of 4 calls each are 4^16 inlines from a 2 KB file.
  int64_t max_function_inlines = kDefaultMaxFunctionInlines;
};

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_LIMITS_H_

// Turns a loaded ONNX model (proto::Model) into the executor's graph form: decoded attributes and
// initializers, subgraphs, per-node opsets, and function calls inlined (model-local functions and
// ops libonnx defines as functions when no kernel is registered for them).
#ifndef ONNX_BCAST_RUNTIME_EXEC_MODEL_LOADER_H_
#define ONNX_BCAST_RUNTIME_EXEC_MODEL_LOADER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "proto/limits.h"
#include "proto/model_io.h"
#include "proto/tensor_codec.h"
#include "runtime/graph.h"
#include "runtime/tensor.h"

namespace onnx_bcast::runtime {

/// How to load.
struct LoadOptions {
  /// Inline calls of ops without a kernel that libonnx defines as functions.
  bool expand_schema_functions = true;
  /// Refuse initializers and constant attributes with more elements than this.
  int64_t max_tensor_elements = int64_t{1} << 32;
  /// Refuse (ResourceExhausted, before converting anything) models whose model-local function
  /// calls expand to more inlined calls than this (proto::CheckFunctionInlines).
  int64_t max_function_inlines = proto::kDefaultMaxFunctionInlines;
};

/// Converts `model`. Graph inputs that have an initializer are left out of Graph::inputs (they
/// stay overridable by name). Unnamed nodes are named "<op>#<index>". Errors: InvalidArgument
/// for malformed models, Unimplemented for data types the runtime cannot hold (strings).
absl::StatusOr<std::shared_ptr<const Model>> LoadRuntimeModel(const proto::Model& model,
                                                              const LoadOptions& options = {});

/// A runtime tensor holding a decoded TensorProto's elements.
absl::StatusOr<Tensor> TensorFromRaw(const proto::RawTensor& raw);

/// The tensor as a decoded TensorProto named `name`.
proto::RawTensor RawFromTensor(const Tensor& tensor, const std::string& name);

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_EXEC_MODEL_LOADER_H_

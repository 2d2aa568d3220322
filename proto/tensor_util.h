// Size facts about TensorProto payloads: element sizes per data type and checked element counts.
#ifndef ONNX_BCAST_PROTO_TENSOR_UTIL_H_
#define ONNX_BCAST_PROTO_TENSOR_UTIL_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "proto/onnx.h"

namespace onnx_bcast::proto {

/// Bits per element of an ONNX data type; 0 for STRING, UNDEFINED and types this build does
/// not know (newer IR versions), whose payload sizes are then not checked.
int ElementBits(int32_t data_type);

/// Product of dims, refusing negative dims and int64 overflow; `limit` caps the result.
absl::StatusOr<int64_t> CheckedElementCount(const onnx::TensorProto& tensor, int64_t limit);

/// Bytes the raw encoding of `count` elements of `data_type` takes (sub-byte types packed).
int64_t RawByteSize(int32_t data_type, int64_t count);

/// Entries in the typed field ONNX stores `data_type` in: float_data (FLOAT, COMPLEX64: two
/// per element), double_data (DOUBLE, COMPLEX128), int64_data, uint64_data (UINT32, UINT64),
/// string_data (STRING), int32_data (every other type).
int64_t TypedFieldSize(const onnx::TensorProto& tensor, int32_t data_type);

/// Human-readable "[2,3,4]" of the tensor's dims.
std::string DimsToString(const onnx::TensorProto& tensor);

/// A Constant node named `node_name` whose one output `output` holds `value` (its name cleared:
/// a Constant's value is named by the output).
onnx::NodeProto ConstantNode(std::string node_name, std::string output, onnx::TensorProto value);

/// Calls `fn` on every tensor of the model that can carry a payload: initializers, sparse
/// initializers, Constant and other tensor attributes, in subgraphs, functions and training_info
/// graphs too.
void ForEachModelTensor(onnx::ModelProto* model, const std::function<void(onnx::TensorProto*)>& fn);

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_TENSOR_UTIL_H_

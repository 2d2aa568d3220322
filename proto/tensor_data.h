// Raw payload access for initializers and constant broadcasting (folding Expand/Reshape-like
// rewrites into constants): read the little-endian bytes of a tensor whatever its encoding,
// broadcast a constant to a target shape, find axes along which it is uniform, slice them to 1.
#ifndef ONNX_BCAST_PROTO_TENSOR_DATA_H_
#define ONNX_BCAST_PROTO_TENSOR_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/onnx.h"

namespace onnx_bcast::proto {

/// True for data types whose elements are at least one byte wide (not STRING, not packed).
bool HasFixedWidthPayload(int32_t data_type);

/// The tensor's elements packed little-endian (typed fields, raw_data or external data read
/// relative to `base_dir`). Refuses more than `max_bytes` and payloads that disagree with dims.
absl::StatusOr<std::string> ReadRawBytes(const onnx::TensorProto& tensor,
                                         const std::string& base_dir, int64_t max_bytes);

/// `tensor` broadcast (numpy, one way) to `target`, as a new raw_data tensor named `name`.
absl::StatusOr<onnx::TensorProto> BroadcastTensorTo(const onnx::TensorProto& tensor,
                                                    const std::vector<int64_t>& target,
                                                    const std::string& name,
                                                    const std::string& base_dir, int64_t max_bytes);

/// Axes (extent > 1) along which every slice of `tensor` holds the same values.
absl::StatusOr<std::vector<int64_t>> UniformAxes(const onnx::TensorProto& tensor,
                                                 const std::string& base_dir, int64_t max_bytes);

/// `tensor` with `axes` sliced to their first index (extent 1).
absl::StatusOr<onnx::TensorProto> SliceToOne(const onnx::TensorProto& tensor,
                                             const std::vector<int64_t>& axes,
                                             const std::string& base_dir, int64_t max_bytes);

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_TENSOR_DATA_H_

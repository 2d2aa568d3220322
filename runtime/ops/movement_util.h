// Internal to the movement and sequence op families: the kernel functions their tables list,
// and helpers shared by them (reading index tensors, normalizing axes, typed arithmetic).
#ifndef ONNX_BCAST_RUNTIME_OPS_MOVEMENT_UTIL_H_
#define ONNX_BCAST_RUNTIME_OPS_MOVEMENT_UTIL_H_

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/dtype.h"
#include "runtime/kernels/element_values.h"
#include "runtime/ops/op.h"
#include "runtime/tensor.h"

namespace onnx_bcast::runtime::movement {

/// The values of a numeric tensor as int64 (floats truncated toward zero and saturated, NaN
/// as 0). Used for shapes, axes, indices, repeats and pads.
std::vector<int64_t> ReadInt64s(const Tensor& t);

/// Reads input `i` as int64 values; InvalidArgument when it is missing or not numeric.
absl::StatusOr<std::vector<int64_t>> InputInt64s(const OpContext& ctx, int i);

/// `axis` in [-rank, rank) mapped to [0, rank), or InvalidArgument naming `what`.
absl::StatusOr<int64_t> NormalizeAxis(const OpContext& ctx, int64_t axis, int64_t rank,
                                      const std::string& what = "axis");

/// The product of `dims`, or InvalidArgument on a negative dim or int64 overflow.
absl::StatusOr<int64_t> Product(const OpContext& ctx, const std::vector<int64_t>& dims);

/// The element bytes of `value` converted to `dtype` (saturating for integers).
std::vector<std::byte> ScalarBytes(DType dtype, double value);

/// Sets output `i` to a view of input `from`'s storage under `shape` (same element count): no
/// copy. The view holds the input's tensor, so the storage lives as long as the view; the
/// executor keeps no view between runs, so the producer's buffer stays its own to reuse.
/// Consumers never write to their inputs, which is what makes sharing safe.
absl::Status ShareToOutput(OpContext& ctx, int i, int from, std::vector<int64_t> shape);

/// Allocates output `i` as a copy of `src` with shape `shape` (same element count).
absl::StatusOr<Tensor*> CopyToOutput(OpContext& ctx, int i, const Tensor& src,
                                     std::vector<int64_t> shape);

/// A value widened for arithmetic (float16/bfloat16 to float) and stored back.
template <class T>
auto Widen(T v) {
  return LoadCompute(v);
}
template <class T, class W>
T Narrow(W v) {
  return StoreCompute<T>(v);
}
// Element arithmetic lives with the kernels (Scatter reductions use it too).
using kernels::AddValues;
using kernels::LessValues;
using kernels::MulValues;

// Kernels, one per op (movement_shape.cc, movement_copy.cc, movement_index.cc).
absl::Status Reshape(OpContext& ctx);
absl::Status Squeeze(OpContext& ctx);
absl::Status Unsqueeze(OpContext& ctx);
absl::Status Flatten(OpContext& ctx);
absl::Status Shape(OpContext& ctx);
absl::Status Size(OpContext& ctx);
absl::Status Identity(OpContext& ctx);
absl::Status Constant(OpContext& ctx);
absl::Status ConstantOfShape(OpContext& ctx);
absl::Status EyeLike(OpContext& ctx);
absl::Status Range(OpContext& ctx);
absl::Status Expand(OpContext& ctx);
absl::Status Transpose(OpContext& ctx);
absl::Status Concat(OpContext& ctx);
absl::Status Split(OpContext& ctx);
absl::Status Slice(OpContext& ctx);
absl::Status Tile(OpContext& ctx);
absl::Status Pad(OpContext& ctx);
absl::Status DepthToSpace(OpContext& ctx);
absl::Status SpaceToDepth(OpContext& ctx);
absl::Status ReverseSequence(OpContext& ctx);
absl::Status Trilu(OpContext& ctx);
absl::Status Gather(OpContext& ctx);
absl::Status GatherElements(OpContext& ctx);
absl::Status GatherND(OpContext& ctx);
absl::Status ScatterElements(OpContext& ctx);
absl::Status ScatterND(OpContext& ctx);
absl::Status OneHot(OpContext& ctx);
absl::Status Compress(OpContext& ctx);
absl::Status NonZero(OpContext& ctx);
absl::Status TopK(OpContext& ctx);
absl::Status Unique(OpContext& ctx);
absl::Status CumSum(OpContext& ctx);

}  // namespace onnx_bcast::runtime::movement

#endif  // ONNX_BCAST_RUNTIME_OPS_MOVEMENT_UTIL_H_

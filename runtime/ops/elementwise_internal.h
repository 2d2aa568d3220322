// Shared by the elementwise op files: each contributes rows that ElementwiseOps() (in
// elementwise.cc) joins into one table, plus small helpers for output buffers.
#ifndef ONNX_BCAST_RUNTIME_OPS_ELEMENTWISE_INTERNAL_H_
#define ONNX_BCAST_RUNTIME_OPS_ELEMENTWISE_INTERNAL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "runtime/ops/op.h"

namespace onnx_bcast::runtime::elementwise_internal {

/// Broadcasting binary ops, variadic Sum/Mean/Max/Min, Where, PRelu (elementwise.cc).
absl::Span<const OpRegistration> BinaryRows();
/// Unary math and activations, Clip, Cast, CastLike, Dropout (elementwise_unary.cc).
absl::Span<const OpRegistration> UnaryRows();
/// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear (elementwise_quantize.cc).
absl::Span<const OpRegistration> QuantizeRows();

/// A kernel's failure as the node's error: InvalidArgument messages get the node's label;
/// other codes pass through.
absl::Status AsNodeError(const OpContext& ctx, const absl::Status& status);

}  // namespace onnx_bcast::runtime::elementwise_internal

#endif  // ONNX_BCAST_RUNTIME_OPS_ELEMENTWISE_INTERNAL_H_

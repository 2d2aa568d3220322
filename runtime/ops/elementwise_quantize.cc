// Elementwise quantization ops: QuantizeLinear and DequantizeLinear (per-tensor, and per-axis
// from opset 13) and DynamicQuantizeLinear, over runtime/kernels/unary_quantize.h.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/kernels/unary_quantize.h"
#include "runtime/ops/elementwise_internal.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {
namespace {

using elementwise_internal::AsNodeError;

// Elements per channel run: all of x for a one-element scale; for a 1-D scale the product of
// x's dims after `axis` (the scale's length must equal that dim).
absl::StatusOr<int64_t> ChannelInner(const OpContext& ctx, const Tensor& x, const Tensor& scale,
                                     const Tensor* zero_point) {
  if (zero_point != nullptr && zero_point->shape() != scale.shape()) {
    return ctx.Error(absl::StrCat("zero point shape ", ShapeToString(zero_point->shape()),
                                  " differs from scale shape ", ShapeToString(scale.shape())));
  }
  if (scale.num_elements() == 1 && scale.rank() <= 1) return std::max<int64_t>(1, x.num_elements());
  if (ctx.opset() < 13 || scale.rank() != 1) {
    return ctx.Error(absl::StrCat("scale must be a scalar", ctx.opset() >= 13 ? " or 1-D" : "",
                                  ", got shape ", ShapeToString(scale.shape())));
  }
  int64_t axis = ctx.node().GetInt("axis", 1);
  if (axis < 0) axis += x.rank();
  if (axis < 0 || axis >= x.rank()) {
    return ctx.Error(absl::StrCat("axis ", ctx.node().GetInt("axis", 1), " is out of range for ",
                                  ShapeToString(x.shape())));
  }
  if (x.shape()[axis] != scale.num_elements()) {
    return ctx.Error(absl::StrCat("scale has ", scale.num_elements(), " elements, axis ", axis,
                                  " of ", ShapeToString(x.shape()), " has ", x.shape()[axis]));
  }
  int64_t inner = 1;
  for (int64_t k = axis + 1; k < x.rank(); ++k) inner *= x.shape()[k];
  return std::max<int64_t>(1, inner);
}

absl::Status RunQuantizeLinear(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequireInput(1));
  const Tensor* zero_point = ctx.input(2);
  const DType y_type = zero_point != nullptr ? zero_point->dtype() : DType::kUInt8;
  if (y_type != DType::kUInt8 && y_type != DType::kInt8) {
    return ctx.Unsupported(absl::StrCat("quantizing to ", DTypeName(y_type)));
  }
  BCAST_ASSIGN_OR_RETURN(int64_t inner, ChannelInner(ctx, *x, *scale, zero_point));
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, y_type, x->shape()));
  return AsNodeError(
      ctx, QuantizeLinear(*x, *scale, zero_point, inner, y, ctx.ThreadedOptions<UnaryOptions>()));
}

absl::Status RunDequantizeLinear(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(const Tensor* scale, ctx.RequireInput(1));
  const Tensor* zero_point = ctx.input(2);
  BCAST_ASSIGN_OR_RETURN(int64_t inner, ChannelInner(ctx, *x, *scale, zero_point));
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, scale->dtype(), x->shape()));
  return AsNodeError(
      ctx, DequantizeLinear(*x, *scale, zero_point, inner, y, ctx.ThreadedOptions<UnaryOptions>()));
}

absl::Status RunDynamicQuantizeLinear(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  if (x->dtype() != DType::kFloat32) {
    return ctx.Error(absl::StrCat("x must be float32, got ", DTypeName(x->dtype())));
  }
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, DType::kUInt8, x->shape()));
  BCAST_ASSIGN_OR_RETURN(auto* scale, ctx.Allocate(1, DType::kFloat32, {}));
  BCAST_ASSIGN_OR_RETURN(auto* zero_point, ctx.Allocate(2, DType::kUInt8, {}));
  return AsNodeError(ctx, DynamicQuantizeLinear(*x, y, scale, zero_point));
}

constexpr OpRegistration kQuantizeRows[] = {
    {"", "QuantizeLinear", 10, RunQuantizeLinear},
    {"", "DequantizeLinear", 10, RunDequantizeLinear},
    {"", "DynamicQuantizeLinear", 11, RunDynamicQuantizeLinear},
};

}  // namespace

namespace elementwise_internal {
absl::Span<const OpRegistration> QuantizeRows() { return kQuantizeRows; }
}  // namespace elementwise_internal

}  // namespace onnx_bcast::runtime

// Fast linear quantization kernels (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear):
// per-tensor or per-channel scale and zero point, flat loops over contiguous channel blocks.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_UNARY_QUANTIZE_H_
#define ONNX_BCAST_RUNTIME_KERNELS_UNARY_QUANTIZE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "runtime/kernels/unary.h"
#include "runtime/tensor.h"

namespace onnx_bcast::runtime {

/// y[i] = saturate(round_half_even(x[i] / scale[c]) + zero_point[c]) with the channel
/// c = (i / inner) % scale.num_elements(), computed in float. x is a floating-point type or
/// int32; scale is floating point; zero_point (nullptr = 0) has y's integer dtype.
absl::Status QuantizeLinear(const Tensor& x, const Tensor& scale, const Tensor* zero_point,
                            int64_t inner, Tensor* y, const UnaryOptions& opts = {});

/// y[i] = (x[i] - zero_point[c]) * scale[c] in float, c as above; y has scale's dtype and x
/// an integer dtype; zero_point (nullptr = 0) has x's dtype.
absl::Status DequantizeLinear(const Tensor& x, const Tensor& scale, const Tensor* zero_point,
                              int64_t inner, Tensor* y, const UnaryOptions& opts = {});

/// uint8 quantization of float32 x over the range [min(x, 0), max(x, 0)]: scale = range / 255,
/// zero point = saturate(round(-min / scale)). A range of 0 gives scale 0, zero point 0 and
/// y = 0. `y` (uint8, x's shape), `scale` (float32 []) and `zero_point` (uint8 []) are
/// allocated by the caller.
absl::Status DynamicQuantizeLinear(const Tensor& x, Tensor* y, Tensor* scale, Tensor* zero_point);

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_KERNELS_UNARY_QUANTIZE_H_

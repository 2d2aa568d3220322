// Reference linear quantization kernels: per element, unravel the index to find its channel;
// the oracle for runtime/kernels/unary_quantize.h (same float arithmetic, no blocking).
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_UNARY_QUANTIZE_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_UNARY_QUANTIZE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "runtime/tensor.h"

namespace onnx_bcast::runtime::reference {

/// As runtime::QuantizeLinear, with the channel axis given as `axis` of x (ignored for a
/// one-element scale).
absl::Status QuantizeLinear(const Tensor& x, const Tensor& scale, const Tensor* zero_point,
                            int64_t axis, Tensor* y);

/// As runtime::DequantizeLinear, with the channel axis given as `axis` of x.
absl::Status DequantizeLinear(const Tensor& x, const Tensor& scale, const Tensor* zero_point,
                              int64_t axis, Tensor* y);

}  // namespace onnx_bcast::runtime::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_UNARY_QUANTIZE_H_

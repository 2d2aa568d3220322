// Reference unary kernels, Clip and Cast: the oracle for runtime/kernels/unary.h. Floating
// point is computed in double with the textbook formulas and rounded once to the output type.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_UNARY_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_UNARY_H_

#include <cstdint>

#include "absl/status/status.h"
#include "runtime/kernels/unary_ops.h"
#include "runtime/tensor.h"

namespace onnx_bcast::runtime::reference {

/// out = op(x); `out` pre-allocated with x's shape and UnaryOutputDType(op, x.dtype()).
absl::Status Unary(UnaryKind op, const UnaryParams& params, const Tensor& x, Tensor* out);

/// numpy.clip(x, lo, hi); null bounds are absent.
absl::Status Clip(const Tensor& x, const Tensor* lo, const Tensor* hi, Tensor* out);

/// Converts x to out->dtype() with the same semantics as runtime::Cast.
absl::Status Cast(const Tensor& x, Tensor* out);

/// Rounds d to the nearest binary16 (ties to even) by scaling to its quantum; returns bits.
uint16_t RoundToHalfBits(long double d);

/// Rounds d to the nearest bfloat16 (ties to even) by scaling to its quantum; returns bits.
uint16_t RoundToBFloat16Bits(long double d);

}  // namespace onnx_bcast::runtime::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_UNARY_H_

// Fast unary elementwise kernels: math and activations (UnaryKind), Clip and Cast, for every
// dtype ONNX allows. Flat contiguous loops, split across threads only for large tensors.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_UNARY_H_
#define ONNX_BCAST_RUNTIME_KERNELS_UNARY_H_

#include <cstdint>

#include "absl/status/status.h"
#include "runtime/dtype.h"
#include "runtime/kernels/unary_ops.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

namespace onnx_bcast::runtime {

/// How to run a unary kernel.
struct UnaryOptions {
  /// Threads to use (the caller counts as one); <= 1 runs on the caller only.
  int threads = 1;
  /// Pool for the extra threads; nullptr means ThreadPool::Default().
  ThreadPool* pool = nullptr;
  /// Tensors with fewer elements run on one thread: a hand-off costs microseconds.
  int64_t parallel_threshold = int64_t{1} << 16;
};

/// out = op(x) elementwise. `out` is allocated by the caller with x's shape and
/// UnaryOutputDType(op, x.dtype()); it may alias x when the dtypes agree. InvalidArgument
/// when ONNX does not define `op` on x's dtype or the shapes differ.
absl::Status Unary(UnaryKind op, const UnaryParams& params, const Tensor& x, Tensor* out,
                   const UnaryOptions& opts = {});

/// out = min(max(x, lo), hi) (numpy.clip: hi wins when lo > hi; NaN stays NaN). `lo`/`hi`
/// are one-element tensors of x's dtype, or nullptr for no bound. Any numeric dtype.
absl::Status Clip(const Tensor& x, const Tensor* lo, const Tensor* hi, Tensor* out,
                  const UnaryOptions& opts = {});

/// Converts x to out->dtype() (any pair of supported dtypes; out has x's shape). Float to
/// integer truncates toward zero and saturates (NaN -> 0); integer to integer wraps; to bool
/// is `!= 0` (NaN -> true); float16/bfloat16 targets round to nearest even (from float64
/// without double rounding).
absl::Status Cast(const Tensor& x, Tensor* out, const UnaryOptions& opts = {});

/// Copies x into out (same dtype and element count; shapes may differ).
absl::Status Copy(const Tensor& x, Tensor* out);

/// float64 -> binary16 bits, rounded once to nearest even.
uint16_t DoubleToHalfBits(double d);
/// float64 -> bfloat16 bits, rounded once to nearest even.
uint16_t DoubleToBFloat16Bits(double d);

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_KERNELS_UNARY_H_

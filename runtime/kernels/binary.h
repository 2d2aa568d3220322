// Fast broadcasting binary kernels (Add, Pow, Mod, comparisons, ...) and Where, for every
// dtype ONNX allows. Shape work lives in BroadcastPlan; the loops here are flat.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_BINARY_H_
#define ONNX_BCAST_RUNTIME_KERNELS_BINARY_H_

#include <cstdint>

#include "absl/status/status.h"
#include "runtime/broadcast_plan.h"
#include "runtime/dtype.h"
#include "runtime/kernels/elementwise_ops.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

namespace onnx_bcast::rt {

/// Attributes plus how to run.
struct BinaryOptions {
  /// Mod's fmod and BitShift's direction.
  BinaryAttributes attrs;
  /// Threads to use (the caller counts as one); <= 1 runs on the caller only.
  int threads = 1;
  /// Pool for the extra threads; nullptr means ThreadPool::Default().
  ThreadPool* pool = nullptr;
  /// Outputs with fewer elements run on one thread: a hand-off costs microseconds.
  int64_t parallel_threshold = int64_t{1} << 16;
  /// Outputs of at least this many bytes are written with non-temporal stores, a cache
  /// line at a time: they would not stay in cache anyway, and bypassing it saves the
  /// read-for-ownership of every output line. 0 streams everything
  /// (tests), INT64_MAX nothing.
  int64_t streaming_threshold_bytes = int64_t{8} << 20;
};

/// The output dtype of `op` for inputs of dtype `a` (bool for comparisons and logic).
DType BinaryOutputDType(OpKind op, DType a);

/// out = op(a, b) with multidirectional broadcasting. `out` is allocated by the caller with
/// the broadcast shape and BinaryOutputDType(op, a.dtype()); it may alias `a` or `b` when
/// that input has the output's shape (for Sum/Mean/Max/Min chains). Integer Div and Mod by
/// zero give 0; see elementwise_ops.h for the other edge cases.
absl::Status BinaryOp(OpKind op, const Tensor& a, const Tensor& b, Tensor* out,
                      const BinaryOptions& opts = {});

/// As above with a plan prepared for (a.shape(), b.shape()) -> out->shape(), so callers can
/// cache the plan per shape tuple.
absl::Status BinaryOp(OpKind op, const BroadcastPlan& plan, const Tensor& a, const Tensor& b,
                      Tensor* out, const BinaryOptions& opts = {});

/// out = cond ? x : y, broadcasting all three. cond is bool; x, y and out share a dtype.
absl::Status Where(const Tensor& cond, const Tensor& x, const Tensor& y, Tensor* out,
                   const BinaryOptions& opts = {});

/// As above with a plan prepared for (cond, x, y) -> out->shape().
absl::Status Where(const BroadcastPlan& plan, const Tensor& cond, const Tensor& x, const Tensor& y,
                   Tensor* out, const BinaryOptions& opts = {});

}  // namespace onnx_bcast::rt

#endif  // ONNX_BCAST_RUNTIME_KERNELS_BINARY_H_

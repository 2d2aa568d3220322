// Fast broadcasting binary kernels (Add, Pow, Mod, comparisons, ...) and Where, for every
// dtype ONNX allows. Shape work lives in BroadcastPlan; the loops here are flat.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_BINARY_H_
#define ONNX_BCAST_RUNTIME_KERNELS_BINARY_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/broadcast_plan.h"
#include "runtime/dtype.h"
#include "runtime/kernels/elementwise_ops.h"
#include "runtime/tensor.h"
#include "runtime/thread_pool.h"

namespace onnx_bcast::runtime {

namespace binary_internal {
/// A flat loop: out[i] = f(in[0][i or 0], in[1][i or 0], ...) for i in [0, n).
using InnerFn = void (*)(const void* const* in, void* out, int64_t n);

/// The loops of one op and dtype tuple, indexed by a mask whose bit k is set when input k
/// is one element repeated over the loop (stride 0). Null entries mean "not defined".
/// `stream` holds the same loops writing the output with non-temporal stores (null: use
/// `fn`); `in` must then point at three readable pointers, unused ones included.
struct InnerFns {
  InnerFn fn[8] = {};
  InnerFn stream[8] = {};
  bool ok() const { return fn[0] != nullptr; }
};
}  // namespace binary_internal

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

/// The kernel chosen for one op, one plan and the inputs' dtypes: validated and looked up
/// once (ops cache it with the plan per shape tuple), then run any number of times.
class BinaryKernel {
 public:
  /// out = op(a, b) over `plan` (2 inputs), a and b of dtypes `a`, `b`. InvalidArgument when
  /// the op is not defined on them.
  static absl::StatusOr<BinaryKernel> Create(OpKind op, BroadcastPlan plan, DType a, DType b,
                                             const BinaryAttributes& attrs = {});
  /// out = cond ? x : y over `plan` (3 inputs: bool, `dtype`, `dtype`).
  static absl::StatusOr<BinaryKernel> CreateWhere(BroadcastPlan plan, DType dtype);

  const BroadcastPlan& plan() const { return plan_; }
  DType output_dtype() const { return out_dtype_; }

  /// Runs on `inputs` (2, or 3 for Where) into `out` (allocated by the caller with the
  /// plan's output shape and output_dtype(); it may alias an input of that shape). Shapes and
  /// dtypes are checked against the plan without allocating.
  absl::Status Run(absl::Span<const Tensor* const> inputs, Tensor* out,
                   const BinaryOptions& opts = {}) const;

 private:
  BinaryKernel(BroadcastPlan plan) : plan_(std::move(plan)) {}  // NOLINT: private

  BroadcastPlan plan_;
  absl::string_view name_;
  std::vector<DType> dtypes_;
  DType out_dtype_ = DType::kUndefined;
  binary_internal::InnerFns fns_;
};

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

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_KERNELS_BINARY_H_

// Helpers shared by the NN, reduction, matrix and RNN op families: float compute views of
// float16/bfloat16 tensors, axis normalization and checked shape arithmetic.
#ifndef ONNX_BCAST_RUNTIME_OPS_NN_COMMON_H_
#define ONNX_BCAST_RUNTIME_OPS_NN_COMMON_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "runtime/dtype.h"
#include "runtime/kernels/parallel_for.h"
#include "runtime/ops/op.h"
#include "runtime/tensor.h"

namespace onnx_bcast::runtime::nn {

/// Element `i` of any numeric tensor as double.
inline double LoadAsDouble(const Tensor& t, int64_t i) {
  return VisitDType(t.dtype(), 0.0, [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    const T v = t.data<T>()[i];
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      return ToFloat(v);
    } else {
      return static_cast<double>(v);
    }
  });
}

/// Every element of an integer tensor as int64 (empty when not an integer tensor).
inline std::vector<int64_t> LoadInts(const Tensor& t) {
  std::vector<int64_t> out(static_cast<size_t>(t.num_elements()));
  VisitDType(t.dtype(), 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int64_t>(t.data<T>()[i]);
    }
    return 0;
  });
  return out;
}

/// Converts one float-like value to storage type T.
template <class T>
inline T FromFloat(double v) {
  return StoreCompute<T>(v);
}

/// A read view of a floating tensor as compute type C (float for float32/16/bfloat16, double
/// for float64): points at the tensor's data when it already is C, else at a converted copy.
template <class C>
class ComputeIn {
 public:
  explicit ComputeIn(const Tensor& t) {
    if (t.dtype() == DTypeOf<C>()) {
      data_ = t.data<C>();
      return;
    }
    copy_.resize(static_cast<size_t>(t.num_elements()));
    for (size_t i = 0; i < copy_.size(); ++i) copy_[i] = static_cast<C>(LoadAsDouble(t, i));
    data_ = copy_.data();
  }
  const C* data() const { return data_; }

 private:
  const C* data_ = nullptr;
  std::vector<C> copy_;
};

/// A write view of an output tensor as compute type C; Finish() converts back when the
/// tensor's dtype is not C.
template <class C>
class ComputeOut {
 public:
  explicit ComputeOut(Tensor* t) : t_(t) {
    if (t->dtype() == DTypeOf<C>()) {
      data_ = t->data<C>();
      return;
    }
    copy_.assign(static_cast<size_t>(t->num_elements()), C(0));
    data_ = copy_.data();
  }
  C* data() { return data_; }
  void Finish() {
    if (copy_.empty()) return;
    VisitDType(t_->dtype(), 0, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = t_->data<T>();
      for (size_t i = 0; i < copy_.size(); ++i) out[i] = FromFloat<T>(copy_[i]);
      return 0;
    });
  }

 private:
  Tensor* t_;
  C* data_ = nullptr;
  std::vector<C> copy_;
};

/// Calls fn(TypeTag<float>) for float32/float16/bfloat16 and fn(TypeTag<double>) for float64;
/// Unsupported for any other dtype.
template <class Fn>
absl::Status VisitFloat(const OpContext& ctx, DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kBFloat16:
      return fn(TypeTag<float>{});
    case DType::kFloat64:
      return fn(TypeTag<double>{});
    default:
      return ctx.Unsupported(absl::StrCat("dtype ", DTypeName(dtype), " is not supported"));
  }
}

/// The context's pool as the kernels' ParallelFor, kept in `storage`; null on one thread (the
/// kernels then split nothing).
inline const kernels::ParallelFor* KernelThreads(const OpContext& ctx,
                                                 kernels::ParallelFor* storage) {
  if (ctx.pool() == nullptr || ctx.threads() <= 1) return nullptr;
  *storage = [&ctx](int64_t tasks, const std::function<void(int64_t)>& fn) {
    ctx.pool()->ParallelFor(tasks, ctx.threads(), fn);
  };
  return storage;
}

/// Runs fn(begin, end) over [0, n) split into contiguous chunks on the context's pool when it
/// has one, more than one thread is allowed and the work (n * cost_per_item) is worth it;
/// otherwise fn(0, n) on the caller. Chunks are disjoint, so results do not depend on threads.
template <class Fn>
void ParallelChunks(const OpContext& ctx, int64_t n, int64_t cost_per_item, Fn&& fn) {
  constexpr int64_t kMinWork = 1 << 16;
  const int threads = ctx.threads();
  if (ctx.pool() == nullptr || threads <= 1 || n < 2 ||
      n * std::max<int64_t>(cost_per_item, 1) < kMinWork) {
    fn(int64_t{0}, n);
    return;
  }
  const int64_t chunks = std::min<int64_t>(n, 4 * static_cast<int64_t>(threads));
  ctx.pool()->ParallelFor(chunks, threads,
                          [&](int64_t c) { fn(n * c / chunks, n * (c + 1) / chunks); });
}

/// `axis` in [-rank, rank) made non-negative, or an error naming the op.
inline absl::StatusOr<int64_t> NormalizeAxis(const OpContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return ctx.Error(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

/// Product of dims [begin, end) of `shape` (no overflow check; shapes come from tensors).
inline int64_t Product(const std::vector<int64_t>& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i) p *= shape[i];
  return p;
}

/// a * b, or nullopt on overflow or negative operands.
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  if (a < 0 || b < 0) return std::nullopt;
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a) return std::nullopt;
  return a * b;
}

}  // namespace onnx_bcast::runtime::nn

#endif  // ONNX_BCAST_RUNTIME_OPS_NN_COMMON_H_

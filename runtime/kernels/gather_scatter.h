// Element-wise Gather and the Scatter kernels (GatherElements, ScatterElements, ScatterND): flat
// loops on typed pointers with indices already wrapped and checked by the op. Updates are
// applied in index order, so repeated indices resolve as ONNX's reference does (the last write
// wins without a reduction). Oracle: reference/gather_scatter.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_GATHER_SCATTER_H_
#define ONNX_BCAST_RUNTIME_KERNELS_GATHER_SCATTER_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/types/span.h"
#include "runtime/kernels/element_values.h"

namespace onnx_bcast::runtime::kernels {

/// ScatterElements' and ScatterND's `reduction` attribute.
enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

/// *dst = reduce(*dst, src) for one element (max/min keep *dst on ties and NaN order last).
template <class T>
void CombineValue(ScatterReduction reduction, T src, T* dst) {
  switch (reduction) {
    case ScatterReduction::kNone:
      *dst = src;
      break;
    case ScatterReduction::kAdd:
      *dst = AddValues(*dst, src);
      break;
    case ScatterReduction::kMul:
      *dst = MulValues(*dst, src);
      break;
    case ScatterReduction::kMax:
      if (LessValues(*dst, src)) *dst = src;
      break;
    case ScatterReduction::kMin:
      if (LessValues(src, *dst)) *dst = src;
      break;
  }
}

namespace gather_scatter_internal {

// Calls visit(k, offset) for each element k (row-major) of an index tensor of `index_shape`,
// where offset is the flat position, in a dense tensor of `data_shape`, of the element with
// k's coordinates but indices[k] on `axis`. Offsets advance with an odometer over the outer
// dims, so the innermost dim is a flat loop with no index arithmetic.
template <class Visit>
void ForEachAxisTarget(absl::Span<const int64_t> data_shape, absl::Span<const int64_t> index_shape,
                       int64_t axis, const int64_t* indices, Visit&& visit) {
  const int64_t rank = static_cast<int64_t>(index_shape.size());
  int64_t count = 1;
  for (int64_t d : index_shape) count *= d;
  if (count == 0) return;
  std::vector<int64_t> stride(rank, 1);
  for (int64_t j = rank - 1; j > 0; --j) stride[j - 1] = stride[j] * data_shape[j];
  const int64_t last = rank - 1, n = index_shape[last], axis_stride = stride[axis];
  std::vector<int64_t> pos(rank, 0);
  int64_t base = 0;  // the outer coordinates (all but the axis and the last) times strides
  for (int64_t row = 0; row < count / n; ++row) {
    const int64_t* idx = indices + row * n;
    if (axis == last) {
      for (int64_t i = 0; i < n; ++i) visit(row * n + i, base + idx[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) visit(row * n + i, base + i + idx[i] * axis_stride);
    }
    for (int64_t j = last - 1; j >= 0; --j) {
      if (j != axis) base += stride[j];
      if (++pos[j] < index_shape[j]) break;
      if (j != axis) base -= stride[j] * index_shape[j];
      pos[j] = 0;
    }
  }
}

// Calls fn(r) with r a std::integral_constant holding `reduction`, so that CombineValue's
// switch folds away inside the loops fn runs.
template <class Fn>
void WithReduction(ScatterReduction reduction, Fn&& fn) {
  using R = ScatterReduction;
  switch (reduction) {
    case R::kNone:
      return fn(std::integral_constant<R, R::kNone>{});
    case R::kAdd:
      return fn(std::integral_constant<R, R::kAdd>{});
    case R::kMul:
      return fn(std::integral_constant<R, R::kMul>{});
    case R::kMax:
      return fn(std::integral_constant<R, R::kMax>{});
    case R::kMin:
      return fn(std::integral_constant<R, R::kMin>{});
  }
}

}  // namespace gather_scatter_internal

/// GatherElements: `dst` (dense, `index_shape`) takes at each position the element of `src`
/// (dense, `data_shape`, same rank >= 1) with the same coordinates but indices[k] on `axis`.
/// Requires index_shape[j] <= data_shape[j] off the axis and indices in [0, data_shape[axis]).
template <class T>
void GatherElements(const T* src, absl::Span<const int64_t> data_shape,
                    absl::Span<const int64_t> index_shape, int64_t axis, const int64_t* indices,
                    T* dst) {
  gather_scatter_internal::ForEachAxisTarget(data_shape, index_shape, axis, indices,
                                             [&](int64_t k, int64_t at) { dst[k] = src[at]; });
}

/// ScatterElements, in place: `data` (dense, `data_shape`) combines updates[k] (dense,
/// `index_shape`) into the element GatherElements would read for k, in row-major order of k.
/// Same requirements as GatherElements.
template <class T>
void ScatterElements(T* data, absl::Span<const int64_t> data_shape,
                     absl::Span<const int64_t> index_shape, int64_t axis, const int64_t* indices,
                     const T* updates, ScatterReduction reduction) {
  gather_scatter_internal::WithReduction(reduction, [&](auto r) {
    gather_scatter_internal::ForEachAxisTarget(
        data_shape, index_shape, axis, indices,
        [&](int64_t k, int64_t at) { CombineValue(r(), updates[k], data + at); });
  });
}

/// ScatterND, in place: each of `tuples` index tuples (`tuple_len` entries, entry j already in
/// [0, data_shape[j])) selects the dense block of the trailing dims of `data` after the first
/// `tuple_len`; the tuple's block of `updates` (tuple-major) is combined into it, in tuple order.
template <class T>
void ScatterND(T* data, absl::Span<const int64_t> data_shape, int64_t tuples, int64_t tuple_len,
               const int64_t* indices, const T* updates, ScatterReduction reduction) {
  const int64_t rank = static_cast<int64_t>(data_shape.size());
  std::vector<int64_t> strides(rank, 1);
  for (int64_t j = rank - 1; j > 0; --j) strides[j - 1] = strides[j] * data_shape[j];
  int64_t block = 1;
  for (int64_t j = tuple_len; j < rank; ++j) block *= data_shape[j];
  if (block == 0) return;  // an empty tensor's buffer may be null
  gather_scatter_internal::WithReduction(reduction, [&](auto r) {
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t offset = 0;
      for (int64_t j = 0; j < tuple_len; ++j) offset += indices[t * tuple_len + j] * strides[j];
      const T* src = updates + t * block;
      T* dst = data + offset;
      if constexpr (decltype(r)::value == ScatterReduction::kNone) {
        std::copy(src, src + block, dst);
      } else {
        for (int64_t e = 0; e < block; ++e) CombineValue(r(), src[e], dst + e);
      }
    }
  });
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_GATHER_SCATTER_H_

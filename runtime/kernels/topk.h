// TopK along the middle axis of a dense [outer, dim, inner] view: each line copied to a
// contiguous buffer, then a partial sort of its indices. Values order as LessValues does (NaN
// above every number, so first when `largest`); equal values keep the smaller index first.
// The output is always sorted. Oracle: reference/topk.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_TOPK_H_
#define ONNX_BCAST_RUNTIME_KERNELS_TOPK_H_

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "runtime/kernels/element_values.h"

namespace onnx_bcast::runtime::kernels {

/// values/indices [outer, k, inner]: the k largest (or smallest) elements of each line
/// src[o, :, n] in order, and their positions on the axis. Requires 0 <= k <= dim.
template <class T>
void TopK(const T* src, int64_t outer, int64_t dim, int64_t inner, int64_t k, bool largest,
          T* values, int64_t* indices) {
  if (k == 0 || outer == 0 || inner == 0) return;
  std::vector<T> line(static_cast<size_t>(dim));
  std::vector<int64_t> order(static_cast<size_t>(dim));
  auto before = [&](int64_t a, int64_t b) {
    const T va = line[a], vb = line[b];
    if (largest ? LessValues(vb, va) : LessValues(va, vb)) return true;
    if (largest ? LessValues(va, vb) : LessValues(vb, va)) return false;
    return a < b;
  };
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t n = 0; n < inner; ++n) {
      const T* in = src + o * dim * inner + n;
      for (int64_t i = 0; i < dim; ++i) line[i] = in[i * inner];
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (int64_t i = 0; i < k; ++i) {
        const int64_t at = (o * k + i) * inner + n;
        values[at] = line[order[i]];
        indices[at] = order[i];
      }
    }
  }
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_TOPK_H_

// CumSum along the middle axis of a dense [outer, dim, inner] view: a running row of `inner`
// sums advanced one axis step at a time (contiguous, vectorizable), each line summed from its
// scan start in order. Integers wrap, float16/bfloat16 add through float. Oracle:
// reference/cumsum.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_CUMSUM_H_
#define ONNX_BCAST_RUNTIME_KERNELS_CUMSUM_H_

#include <cstdint>

#include "runtime/kernels/element_values.h"

namespace onnx_bcast::runtime::kernels {

/// dst[o, i, n] = the sum of src[o, j, n] over j from the scan start (0, or dim - 1 when
/// `reverse`) up to i, i itself excluded when `exclusive`. `dst` must not alias `src`.
template <class T>
void CumSum(const T* src, int64_t outer, int64_t dim, int64_t inner, bool exclusive, bool reverse,
            T* dst) {
  if (outer == 0 || dim == 0 || inner == 0) return;
  // In the order of the scan, row s is at (o * dim + i(s)) * inner with i(s) = s or dim-1-s.
  const int64_t step = reverse ? -inner : inner;
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t start = (o * dim + (reverse ? dim - 1 : 0)) * inner;
    const T* in = src + start;
    T* out = dst + start;
    if (exclusive) {
      for (int64_t n = 0; n < inner; ++n) out[n] = StoreCompute<T>(0);
      for (int64_t s = 1; s < dim; ++s) {
        for (int64_t n = 0; n < inner; ++n) out[step + n] = AddValues(out[n], in[n]);
        in += step;
        out += step;
      }
    } else {
      for (int64_t n = 0; n < inner; ++n) out[n] = AddValues(StoreCompute<T>(0), in[n]);
      for (int64_t s = 1; s < dim; ++s) {
        for (int64_t n = 0; n < inner; ++n) out[step + n] = AddValues(out[n], in[step + n]);
        in += step;
        out += step;
      }
    }
  }
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_CUMSUM_H_

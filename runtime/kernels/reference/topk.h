// Reference TopK: no sort; each element's place in its line is the number of elements that
// come before it (a better value, or an equal one at a smaller index), and places below k are
// written. Quadratic in the axis; the oracle for kernels/topk.h in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_TOPK_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_TOPK_H_

#include <cstdint>

#include "runtime/kernels/element_values.h"

namespace onnx_bcast::runtime::kernels::reference {

/// Same contract as kernels::TopK.
template <class T>
void TopK(const T* src, int64_t outer, int64_t dim, int64_t inner, int64_t k, bool largest,
          T* values, int64_t* indices) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t n = 0; n < inner; ++n) {
      auto at = [&](int64_t i) { return src[(o * dim + i) * inner + n]; };
      for (int64_t i = 0; i < dim; ++i) {
        int64_t place = 0;
        for (int64_t j = 0; j < dim; ++j) {
          const bool better = largest ? LessValues(at(i), at(j)) : LessValues(at(j), at(i));
          const bool equal = !LessValues(at(i), at(j)) && !LessValues(at(j), at(i));
          if (better || (equal && j < i)) ++place;
        }
        if (place >= k) continue;
        values[(o * k + place) * inner + n] = at(i);
        indices[(o * k + place) * inner + n] = i;
      }
    }
  }
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_TOPK_H_

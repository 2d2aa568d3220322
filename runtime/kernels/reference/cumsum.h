// Reference CumSum: every output element summed afresh over its prefix of the axis, in scan
// order from a zero start. Quadratic in the axis; the oracle for kernels/cumsum.h in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_CUMSUM_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_CUMSUM_H_

#include <cstdint>

#include "runtime/kernels/element_values.h"

namespace onnx_bcast::runtime::kernels::reference {

/// Same contract as kernels::CumSum.
template <class T>
void CumSum(const T* src, int64_t outer, int64_t dim, int64_t inner, bool exclusive, bool reverse,
            T* dst) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < dim; ++i) {
      for (int64_t n = 0; n < inner; ++n) {
        T sum = StoreCompute<T>(0);
        if (!reverse) {
          for (int64_t j = 0; j < (exclusive ? i : i + 1); ++j) {
            sum = AddValues(sum, src[(o * dim + j) * inner + n]);
          }
        } else {
          for (int64_t j = dim - 1; j > (exclusive ? i : i - 1); --j) {
            sum = AddValues(sum, src[(o * dim + j) * inner + n]);
          }
        }
        dst[(o * dim + i) * inner + n] = sum;
      }
    }
  }
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_CUMSUM_H_

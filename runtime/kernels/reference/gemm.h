// Reference GEMM: a triple loop accumulating in double. The oracle for kernels/gemm.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_GEMM_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_GEMM_H_

#include <cstdint>

namespace onnx_bcast::runtime::kernels::reference {

/// Same contract as kernels::Gemm.
template <class T>
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, double beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        sum += static_cast<double>(trans_a ? a[p * lda + i] : a[i * lda + p]) *
               static_cast<double>(trans_b ? b[j * ldb + p] : b[p * ldb + j]);
      }
      const double prev = beta == 0 ? 0.0 : beta * static_cast<double>(c[i * ldc + j]);
      c[i * ldc + j] = static_cast<T>(alpha * sum + prev);
    }
  }
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_GEMM_H_

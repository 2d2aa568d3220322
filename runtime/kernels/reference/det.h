// Reference Det (the loop DetOp held): LU with partial pivoting that swaps whole rows, a fresh
// copy per matrix. The oracle for kernels/det.h in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_DET_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_DET_H_

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace onnx_bcast::runtime::kernels::reference {

/// Same contract as kernels::Determinants.
template <class C>
void Determinants(const C* x, int64_t batch, int64_t n, C* out) {
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<double> a(x + b * n * n, x + (b + 1) * n * n);
    double det = 1;
    for (int64_t col = 0; col < n; ++col) {
      int64_t pivot = col;
      for (int64_t r = col + 1; r < n; ++r) {
        if (std::fabs(a[r * n + col]) > std::fabs(a[pivot * n + col])) pivot = r;
      }
      if (a[pivot * n + col] == 0) {
        det = 0;
        break;
      }
      if (pivot != col) {
        for (int64_t j = 0; j < n; ++j) std::swap(a[col * n + j], a[pivot * n + j]);
        det = -det;
      }
      const double p = a[col * n + col];
      det *= p;
      for (int64_t r = col + 1; r < n; ++r) {
        const double f = a[r * n + col] / p;
        for (int64_t j = col; j < n; ++j) a[r * n + j] -= f * a[col * n + j];
      }
    }
    out[b] = static_cast<C>(det);
  }
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_DET_H_

// Det: LU factorization with partial pivoting in double, one matrix at a time. Pivoting swaps
// entries of a row table instead of moving rows, with the same arithmetic as swapping them.
// Oracle: reference/det.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_DET_H_
#define ONNX_BCAST_RUNTIME_KERNELS_DET_H_

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace onnx_bcast::runtime::kernels {

/// out[b] = det(x[b]) for `batch` dense n x n matrices (1 when n is 0; 0 at the first zero
/// pivot, so a NaN column keeps going and gives NaN).
template <class C>
void Determinants(const C* x, int64_t batch, int64_t n, C* out) {
  if (batch == 0) return;
  std::vector<double> a(static_cast<size_t>(n * n));
  std::vector<int64_t> row(static_cast<size_t>(n));  // offset of the matrix's row i in `a`
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < n * n; ++i) a[i] = x[b * n * n + i];
    for (int64_t i = 0; i < n; ++i) row[i] = i * n;
    double det = 1;
    for (int64_t col = 0; col < n; ++col) {
      int64_t pivot = col;
      for (int64_t r = col + 1; r < n; ++r) {
        if (std::fabs(a[row[r] + col]) > std::fabs(a[row[pivot] + col])) pivot = r;
      }
      if (a[row[pivot] + col] == 0) {
        det = 0;
        break;
      }
      if (pivot != col) {
        std::swap(row[col], row[pivot]);
        det = -det;
      }
      const double* top = a.data() + row[col];
      const double p = top[col];
      det *= p;
      for (int64_t r = col + 1; r < n; ++r) {
        double* dst = a.data() + row[r];
        const double f = dst[col] / p;
        for (int64_t j = col; j < n; ++j) dst[j] -= f * top[j];
      }
    }
    out[b] = static_cast<C>(det);
  }
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_DET_H_

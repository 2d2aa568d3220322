// GEMM through OpenBLAS's CBLAS interface (row-major), guarding the cases BLAS handles
// badly: empty products and beta == 0 over uninitialised memory.
#include "runtime/kernels/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <mutex>
#include <type_traits>

namespace onnx_bcast::runtime::kernels {
namespace {

template <class T>
void FillScaled(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
  }
}

// BLAS requires ld >= max(1, columns) even when a dim is 0 or 1.
int Ld(int64_t ld, int64_t cols) { return static_cast<int>(std::max<int64_t>({ld, cols, 1})); }

// cblas_sgemm or cblas_dgemm behind the guards.
template <class T>
void BlasGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
              int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  // K == 0 is C = beta * C, which BLAS may leave alone. Otherwise OpenBLAS does not read C when
  // beta == 0 (GemmKernel.BetaZeroNeverReadsC: NaN in C), so C is not cleared first: that
  // was a second pass over every product's output (4% of a fire-module CNN at 320x320).
  if (k == 0) {
    FillScaled(m, n, beta, c, ldc);
    return;
  }
  const auto blas = [] {
    if constexpr (std::is_same_v<T, float>) {
      return &cblas_sgemm;
    } else {
      return &cblas_dgemm;
    }
  }();
  blas(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
       static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
       Ld(lda, trans_a ? m : k), b, Ld(ldb, trans_b ? k : n), beta, c, Ld(ldc, n));
}

}  // namespace

// OpenBLAS's own call that ends its threads (exported, not in cblas.h). Weak: a BLAS without it
// keeps its threads, asleep once openblas_set_num_threads(1) holds.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));

void KeepBlasSingleThreaded() {
  static std::once_flag once;
  std::call_once(once, [] {
    openblas_set_num_threads(1);
    if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
  });
}

namespace {

// Multiply-adds a part of a split product takes at least: above OpenBLAS's small-matrix
// kernels (1e6), and tens of microseconds of work against a few of hand-off.
constexpr int64_t kProductPartMinWork = int64_t{1} << 21;

}  // namespace

void ProductRows(const ParallelFor* parallel, int64_t m, int64_t work,
                 const std::function<void(int64_t, int64_t)>& fn) {
  // Up to 8 parts, taken from the pool's shared counter: a thread that starts late costs a
  // fraction of the product, not half.
  const int64_t parts = std::min<int64_t>({m, work / kProductPartMinWork, 8});
  if (parallel == nullptr || parts < 2) {
    fn(0, m);
    return;
  }
  (*parallel)(parts, [&](int64_t p) { fn(m * p / parts, m * (p + 1) / parts); });
}

void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  BlasGemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc) {
  BlasGemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace onnx_bcast::runtime::kernels

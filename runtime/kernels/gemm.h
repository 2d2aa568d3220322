// Matrix products: row-major C = alpha * op(A) * op(B) + beta * C through OpenBLAS for float
// and double, plain loops for integers, and batched MatMul over broadcast batch offsets.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_GEMM_H_
#define ONNX_BCAST_RUNTIME_KERNELS_GEMM_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <type_traits>

#include "runtime/kernels/matmul_fast.h"
#include "runtime/kernels/parallel_for.h"

namespace onnx_bcast::runtime::kernels {

/// Largest M, N or K (and leading dimension) the BLAS path accepts (its ints are 32-bit).
inline constexpr int64_t kMaxBlasDim = int64_t{1} << 30;

/// Makes OpenBLAS single-threaded for the rest of the process and ends the threads it started
/// when it loaded (idempotent; the executor calls it before every run). Products run on the
/// caller's threads instead (the ParallelFor of BatchedMatMul and ProductRows). Left alone,
/// OpenBLAS keeps a thread per core that spins in sched_yield for about 0.1 s after it starts
/// and after every threaded call: on a machine with as many cores as the run has threads it
/// takes a core from the run's own threads (issue #46: a 2-thread run on 2 vCPUs took 1.2-1.3 ms
/// in most runs where one thread takes 0.82).
void KeepBlasSingleThreaded();

/// Runs fn(r0, r1) over row ranges [r0, r1) covering [0, m) of a product of `work`
/// multiply-adds: as tasks of `parallel` when it is given and the product is large enough to
/// share, else fn(0, m) on the caller.
void ProductRows(const ParallelFor* parallel, int64_t m, int64_t work,
                 const std::function<void(int64_t, int64_t)>& fn);

/// Row-major GEMM: c[M,N] = alpha * op(a) * op(b) + beta * c, where op(a) is [M,K] (a is
/// [K,M] when `trans_a`) and op(b) is [K,N]; lda/ldb/ldc are row strides. With beta == 0, c
/// is only written (NaNs in it do not propagate). Dims must be <= kMaxBlasDim.
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc);

/// Integer GEMM by loops, same contract; products accumulate in 64 bits and wrap on store.
template <class T>
void GemmLoops(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
               const T* a, int64_t lda, const T* b, int64_t ldb, double beta, T* c, int64_t ldc) {
  using Acc = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      Acc sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const Acc x = static_cast<Acc>(trans_a ? a[p * lda + i] : a[i * lda + p]);
        const Acc y = static_cast<Acc>(trans_b ? b[j * ldb + p] : b[p * ldb + j]);
        sum = static_cast<Acc>(static_cast<uint64_t>(sum) +
                               static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
      }
      T& out = c[i * ldc + j];
      if (alpha == 1 && beta == 0) {
        out = static_cast<T>(sum);
      } else {
        // Scaled results saturate to T (an out-of-range cast would be undefined). int64's and
        // uint64's maxima round up to 2^63 and 2^64 as doubles: v at that bound saturates too.
        const double v =
            alpha * static_cast<double>(sum) + (beta == 0 ? 0.0 : beta * static_cast<double>(out));
        const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
        const double hi = static_cast<double>(std::numeric_limits<T>::max());
        out = v != v    ? T(0)
              : v >= hi ? std::numeric_limits<T>::max()
              : v <= lo ? std::numeric_limits<T>::lowest()
                        : static_cast<T>(v);
      }
    }
  }
}

/// Smallest m * n * k that BatchedMatMul gives to oneDNN: below it the primitive's fixed
/// cost per call (about 1 us) is not repaid.
inline constexpr int64_t kOneDnnMatMulMinWork = int64_t{1} << 15;

/// Batched matrix product: for each of `batch` products, a[a_offset[i]..] [M,K] times
/// b[b_offset[i]..] [K,N] into out + i*M*N. T is float, double or an integer type. With
/// `parallel`, a large product is split over its rows (one product) or its batch (several), each
/// part computed as a product of its own on one thread.
template <class T>
void BatchedMatMul(int64_t batch, int64_t m, int64_t n, int64_t k, const T* a,
                   const int64_t* a_offset, const T* b, const int64_t* b_offset, T* out,
                   const ParallelFor* parallel = nullptr) {
  // Every product sharing one b, with a's matrices back to back (a weight applied to a batch
  // of rows: Linear layers, Swin's windows): one [batch * m, k] x [k, n] product. A BLAS call
  // per window cost more than its arithmetic (196 calls of [16, 16] x [16, 48] in a Swin).
  if (batch > 1 && batch * m <= kMaxBlasDim) {
    bool one_product = true;
    for (int64_t i = 1; i < batch && one_product; ++i) {
      one_product = b_offset[i] == b_offset[0] && a_offset[i] == a_offset[0] + i * m * k;
    }
    if (one_product) {
      const int64_t first_a = a_offset[0], first_b = b_offset[0];
      BatchedMatMul<T>(1, batch * m, n, k, a, &first_a, b, &first_b, out, parallel);
      return;
    }
  }
  if (parallel != nullptr) {
    if (batch == 1) {
      ProductRows(parallel, m, m * n * k, [&](int64_t r0, int64_t r1) {
        const int64_t a0 = a_offset[0] + r0 * k;
        BatchedMatMul<T>(1, r1 - r0, n, k, a, &a0, b, b_offset, out + r0 * n);
      });
    } else {
      ProductRows(parallel, batch, batch * m * n * k, [&](int64_t i0, int64_t i1) {
        BatchedMatMul<T>(i1 - i0, m, n, k, a, a_offset + i0, b, b_offset + i0, out + i0 * m * n);
      });
    }
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    // One OpenMP thread in oneDNN (a split product runs a part a thread).
    if (batch == 1 && m * n * k >= kOneDnnMatMulMinWork &&
        OneDnnMatMul(m, n, k, a + a_offset[0], b + b_offset[0], out)) {
      return;
    }
    if (batch > 1 && SmallMatMuls(batch, m, n, k, a, a_offset, b, b_offset, out)) return;
  }
  for (int64_t i = 0; i < batch; ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      Gemm(false, false, m, n, k, T(1), a + a_offset[i], k, b + b_offset[i], n, T(0),
           out + i * m * n, n);
    } else {
      GemmLoops<T>(false, false, m, n, k, 1.0, a + a_offset[i], k, b + b_offset[i], n, 0.0,
                   out + i * m * n, n);
    }
  }
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_GEMM_H_

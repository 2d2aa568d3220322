// Fast paths of float MatMul that BatchedMatMul (gemm.h) tries before OpenBLAS:
//   - many small products (Swin's window attention: 392 products of [16,8] x [8,16]) by an
//     AVX2+FMA loop that keeps each output row in registers: one OpenBLAS call per product
//     cost about 0.45 us of overhead against 0.05 us of arithmetic, and oneDNN's batched
//     matmul was slower still (0.85 us per product);
//   - one large product (a Linear layer over all tokens) through oneDNN's matmul, about twice
//     OpenBLAS's speed for the narrow K and N (16-128) of the corpus' transformers.
// Both return false, leaving `out` untouched, when they do not apply; the caller then takes
// the OpenBLAS path. The reference is kernels::reference::Gemm.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_MATMUL_FAST_H_
#define ONNX_BCAST_RUNTIME_KERNELS_MATMUL_FAST_H_

#include <cstdint>

namespace onnx_bcast::runtime::kernels {

/// Largest m, n and k SmallMatMuls takes: beyond it one product's arithmetic outweighs a
/// BLAS call's overhead.
inline constexpr int64_t kSmallMatMulMaxDim = 64;

/// True when the CPU has AVX2 and FMA and BCAST_SMALL_MATMUL is not "0".
bool SmallMatMulAvailable();

/// For each i < batch: out[i*m*n ..] [m,n] = a[a_offset[i] ..] [m,k] x b[b_offset[i] ..] [k,n],
/// every dim at most kSmallMatMulMaxDim. Sums are float FMAs in order of k.
bool SmallMatMuls(int64_t batch, int64_t m, int64_t n, int64_t k, const float* a,
                  const int64_t* a_offset, const float* b, const int64_t* b_offset, float* out);

/// True when this build has oneDNN and BCAST_MATMUL_ONEDNN is not "0".
bool OneDnnMatMulAvailable();

/// c[m,n] = a[m,k] x b[k,n], all row-major and packed, through a oneDNN matmul primitive
/// cached per (thread, m, n, k); on one thread (see conv_onednn.cc for why).
bool OneDnnMatMul(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c);

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_MATMUL_FAST_H_

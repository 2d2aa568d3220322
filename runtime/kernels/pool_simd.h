// MaxPool2D's row runs for float on AVX-512 and AVX2 (strides 1 and 2 along W): the plain
// MaxPoolRowRun of pool.h gathers every tap with a stride-2 access that the baseline (SSE2)
// build turns into scalar shuffles, 5x onnxruntime's time on SqueezeNet's 3x3/2 pools. These
// fold the same taps in the same order into each output (acc = v > acc ? v : acc, which is
// what vmaxps(v, acc) computes, NaN and signed zeros included), so every output keeps the plain
// loop's bits. PoolKernel.MaxPoolVectorRowsMatchThePlainRun (ops_nn_test.cc) compares each
// with MaxPoolRowRun.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_POOL_SIMD_H_
#define ONNX_BCAST_RUNTIME_KERNELS_POOL_SIMD_H_

#include <cstdint>

namespace onnx_bcast::runtime::kernels {

/// The arguments of MaxPoolRowRun (pool.h): `len` outputs of one row whose windows are whole
/// along W, `row0` at the first window's top-left tap, `sw` 1 or 2.
struct MaxPoolRow {
  const float* row0;
  int64_t len;
  int64_t sw;
  int64_t in_w;
  int64_t kh_taps;
  int64_t dh;
  int64_t kw_taps;
  int64_t dw;
};

/// The row run on the widest of AVX-512 and AVX2 the CPU has (decided once); false (nothing
/// written) when it has neither or `sw` is not 1 or 2: the caller runs MaxPoolRowRun then.
bool MaxPoolRowRunVector(const MaxPoolRow& row, float* y);

/// Each vector kernel by itself, for tests on a CPU that has it (the Has* functions say).
bool HasAvx512ForPool();
bool HasAvx2ForPool();
void MaxPoolRowRunAvx512(const MaxPoolRow& row, float* y);
void MaxPoolRowRunAvx2(const MaxPoolRow& row, float* y);

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_POOL_SIMD_H_

// Tensors generated from their positions: Range's arithmetic progression and EyeLike's
// diagonal of ones. Flat loops on raw outputs; the ops size the output and check the inputs.
// Oracle: reference/generate.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_GENERATE_H_
#define ONNX_BCAST_RUNTIME_KERNELS_GENERATE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "runtime/dtype.h"

namespace onnx_bcast::runtime::kernels {

/// out[i] = start + i * delta for i in [0, n). Integers wrap modulo 2^bits: a running sum in
/// uint64 is that value modulo 2^64. Floating types compute each element afresh in their
/// compute type (float for the half types) and round once, so no error accumulates.
template <class T>
void Range(T start, T delta, int64_t n, T* out) {
  if constexpr (std::is_integral_v<T>) {
    uint64_t v = static_cast<uint64_t>(start);
    const uint64_t step = static_cast<uint64_t>(delta);
    for (int64_t i = 0; i < n; ++i, v += step) out[i] = static_cast<T>(v);
  } else {
    const auto s = LoadCompute(start), d = LoadCompute(delta);
    using W = decltype(s);
    for (int64_t i = 0; i < n; ++i) out[i] = StoreCompute<T>(s + static_cast<W>(i) * d);
  }
}

/// dst [rows, cols] of `elem_size`-byte elements: zero bits (zero in every dtype) except the
/// bytes of `one` at (r, r + k).
inline void Diagonal(int64_t rows, int64_t cols, int64_t k, const void* one, size_t elem_size,
                     void* dst) {
  if (rows == 0 || cols == 0) return;  // an empty buffer may be null
  auto* out = static_cast<std::byte*>(dst);
  std::memset(out, 0, static_cast<size_t>(rows * cols) * elem_size);
  // Rows whose diagonal entry is in [0, cols); k is model data, so no r + k that may overflow.
  if (k >= cols || k <= -rows) return;
  const int64_t first = std::max<int64_t>(0, -k), end = std::min(rows, cols - k);
  for (int64_t r = first; r < end; ++r) {
    std::memcpy(out + (r * cols + r + k) * elem_size, one, elem_size);
  }
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_GENERATE_H_

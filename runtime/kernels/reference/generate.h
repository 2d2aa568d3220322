// Reference generators: Range in 128-bit integers (the loop the op held) and EyeLike tested
// element by element. The oracle for kernels/generate.h in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_GENERATE_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_GENERATE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "runtime/dtype.h"

namespace onnx_bcast::runtime::kernels::reference {

/// Same contract as kernels::Range.
template <class T>
void Range(T start, T delta, int64_t n, T* out) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>) {
      out[i] = static_cast<T>(static_cast<__int128>(start) +
                              static_cast<__int128>(i) * static_cast<__int128>(delta));
    } else {
      const auto s = LoadCompute(start);
      out[i] = StoreCompute<T>(s + static_cast<decltype(s)>(i) * LoadCompute(delta));
    }
  }
}

/// Same contract as kernels::Diagonal.
inline void Diagonal(int64_t rows, int64_t cols, int64_t k, const void* one, size_t elem_size,
                     void* dst) {
  auto* out = static_cast<std::byte*>(dst);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      std::byte* e = out + (r * cols + c) * elem_size;
      if (c - r == k) {
        std::memcpy(e, one, elem_size);
      } else {
        std::memset(e, 0, elem_size);
      }
    }
  }
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_GENERATE_H_

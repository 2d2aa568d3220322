// Reference OneHot: each output element decided on its own from the index of its column. The
// oracle for kernels/one_hot.h in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_ONE_HOT_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_ONE_HOT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace onnx_bcast::runtime::kernels::reference {

/// Same contract as kernels::OneHot.
inline void OneHot(const int64_t* indices, int64_t outer, int64_t depth, int64_t inner,
                   const void* off, const void* on, size_t element_size, void* dst) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < depth; ++i) {
      for (int64_t n = 0; n < inner; ++n) {
        const int64_t index = indices[o * inner + n];
        const bool hot = index == i || index + depth == i;
        std::memcpy(static_cast<std::byte*>(dst) + ((o * depth + i) * inner + n) * element_size,
                    hot ? on : off, element_size);
      }
    }
  }
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_ONE_HOT_H_

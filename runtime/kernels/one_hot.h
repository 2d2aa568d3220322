// OneHot on an [outer, inner] index array: a fill of `off`, then `on` written at each wrapped
// index on the new middle axis of [outer, depth, inner]. Elements are opaque bytes. Oracle:
// reference/one_hot.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_ONE_HOT_H_
#define ONNX_BCAST_RUNTIME_KERNELS_ONE_HOT_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "runtime/kernels/movement.h"

namespace onnx_bcast::runtime::kernels {

/// The position an index addresses on an axis of `depth` (negative counts from the end), or
/// -1 when it lies outside [-depth, depth).
inline int64_t OneHotPosition(int64_t index, int64_t depth) {
  if (index < 0) index += depth;
  return index >= 0 && index < depth ? index : -1;
}

/// dst [outer, depth, inner] of `element_size`-byte elements: `on` at (o, indices[o, n], n),
/// `off` everywhere else (so out-of-range indices leave their column all `off`).
inline void OneHot(const int64_t* indices, int64_t outer, int64_t depth, int64_t inner,
                   const void* off, const void* on, size_t element_size, void* dst) {
  FillElements(off, outer * depth * inner, element_size, dst);
  auto* out = static_cast<std::byte*>(dst);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t n = 0; n < inner; ++n) {
      const int64_t i = OneHotPosition(indices[o * inner + n], depth);
      if (i < 0) continue;
      std::memcpy(out + ((o * depth + i) * inner + n) * element_size, on, element_size);
    }
  }
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_ONE_HOT_H_

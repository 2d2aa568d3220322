// Reference data-movement kernels: one element at a time, index unravelled from scratch.
#include "runtime/kernels/reference/movement.h"

#include <cstring>

namespace onnx_bcast::rt::reference {

void StridedCopy(const void* src, int64_t offset, absl::Span<const int64_t> strides,
                 absl::Span<const int64_t> shape, size_t elem_size, void* dst) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  const auto* in = static_cast<const std::byte*>(src);
  auto* out = static_cast<std::byte*>(dst);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat;
    int64_t pos = offset;
    for (size_t j = shape.size(); j-- > 0;) {
      pos += (rest % shape[j]) * strides[j];
      rest /= shape[j];
    }
    std::memcpy(out + flat * elem_size, in + pos * static_cast<int64_t>(elem_size), elem_size);
  }
}

void AxisMapCopy(const void* src, absl::Span<const int64_t> src_shape,
                 const std::vector<std::vector<int64_t>>& maps, size_t elem_size, const void* fill,
                 void* dst) {
  int64_t count = 1;
  for (const auto& m : maps) count *= static_cast<int64_t>(m.size());
  const auto* in = static_cast<const std::byte*>(src);
  auto* out = static_cast<std::byte*>(dst);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat;
    int64_t pos = 0;
    int64_t stride = 1;
    bool filled = false;
    for (size_t j = maps.size(); j-- > 0;) {
      const int64_t n = static_cast<int64_t>(maps[j].size());
      const int64_t k = maps[j][rest % n];
      rest /= n;
      if (k < 0) filled = true;
      pos += k * stride;
      stride *= src_shape[j];
    }
    std::memcpy(out + flat * elem_size, filled ? fill : in + pos * static_cast<int64_t>(elem_size),
                elem_size);
  }
}

}  // namespace onnx_bcast::rt::reference

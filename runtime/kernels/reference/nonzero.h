// Reference NonZero: the flat positions of the nonzero elements, each unravelled by division.
// The oracle for kernels/nonzero.h in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_NONZERO_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_NONZERO_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "runtime/dtype.h"

namespace onnx_bcast::runtime::kernels::reference {

/// The coordinates of x's nonzero elements as [rank, hits], flattened.
template <class T>
std::vector<int64_t> NonZero(const T* x, absl::Span<const int64_t> shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::vector<int64_t> flat;
  for (int64_t i = 0; i < count; ++i) {
    if (LoadCompute(x[i]) != ComputeType<T>(0)) flat.push_back(i);
  }
  const int64_t hits = static_cast<int64_t>(flat.size());
  std::vector<int64_t> out(static_cast<size_t>(rank * hits));
  for (int64_t k = 0; k < hits; ++k) {
    int64_t rest = flat[k];
    for (int64_t j = rank - 1; j >= 0; --j) {
      out[j * hits + k] = rest % shape[j];
      rest /= shape[j];
    }
  }
  return out;
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_NONZERO_H_

// NonZero in two passes over a dense tensor: a count (the op sizes its output with it), then
// the coordinates of each nonzero element, advanced with an odometer rather than divided out.
// float16/bfloat16 compare through float (so -0 is zero and NaN is not). Oracle:
// reference/nonzero.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_NONZERO_H_
#define ONNX_BCAST_RUNTIME_KERNELS_NONZERO_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "runtime/dtype.h"

namespace onnx_bcast::runtime::kernels {

/// Whether an element counts as nonzero.
template <class T>
bool IsNonZero(T v) {
  return LoadCompute(v) != ComputeType<T>{};
}

/// The number of nonzero elements among x[0, count).
template <class T>
int64_t CountNonZero(const T* x, int64_t count) {
  int64_t hits = 0;
  for (int64_t i = 0; i < count; ++i) hits += IsNonZero(x[i]) ? 1 : 0;
  return hits;
}

/// out [rank, hits]: column k holds the coordinates, in a dense tensor of `shape`, of the k-th
/// nonzero element of x in row-major order. `hits` is CountNonZero over the whole tensor.
template <class T>
void NonZeroCoordinates(const T* x, absl::Span<const int64_t> shape, int64_t hits, int64_t* out) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
  int64_t k = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (IsNonZero(x[i])) {
      for (int64_t j = 0; j < rank; ++j) out[j * hits + k] = coord[j];
      ++k;
    }
    for (int64_t j = rank - 1; j >= 0 && ++coord[j] == shape[j]; --j) coord[j] = 0;
  }
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_NONZERO_H_

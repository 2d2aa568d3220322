// Reference GatherElements / ScatterElements / ScatterND: each element's coordinates unravelled
// from its flat position and the target raveled again, one element at a time, with
// CombineValue's runtime switch. The oracle for kernels/gather_scatter.h in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_GATHER_SCATTER_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_GATHER_SCATTER_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "runtime/kernels/gather_scatter.h"

namespace onnx_bcast::runtime::kernels::reference {

/// The coordinates of flat position `flat` in a dense tensor of `shape`.
inline std::vector<int64_t> Unravel(int64_t flat, absl::Span<const int64_t> shape) {
  std::vector<int64_t> coord(shape.size());
  for (size_t j = shape.size(); j-- > 0;) {
    coord[j] = flat % shape[j];
    flat /= shape[j];
  }
  return coord;
}

/// The flat position of `coord` in a dense tensor of `shape`.
inline int64_t Ravel(const std::vector<int64_t>& coord, absl::Span<const int64_t> shape) {
  int64_t flat = 0;
  for (size_t j = 0; j < shape.size(); ++j) flat = flat * shape[j] + coord[j];
  return flat;
}

inline int64_t ElementCount(absl::Span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

/// The data position element k of an index tensor addresses (GatherElements' rule).
inline int64_t AxisTarget(int64_t k, absl::Span<const int64_t> data_shape,
                          absl::Span<const int64_t> index_shape, int64_t axis,
                          const int64_t* indices) {
  std::vector<int64_t> coord = Unravel(k, index_shape);
  coord[axis] = indices[k];
  return Ravel(coord, data_shape);
}

/// Same contract as kernels::GatherElements.
template <class T>
void GatherElements(const T* src, absl::Span<const int64_t> data_shape,
                    absl::Span<const int64_t> index_shape, int64_t axis, const int64_t* indices,
                    T* dst) {
  for (int64_t k = 0; k < ElementCount(index_shape); ++k) {
    dst[k] = src[AxisTarget(k, data_shape, index_shape, axis, indices)];
  }
}

/// Same contract as kernels::ScatterElements.
template <class T>
void ScatterElements(T* data, absl::Span<const int64_t> data_shape,
                     absl::Span<const int64_t> index_shape, int64_t axis, const int64_t* indices,
                     const T* updates, ScatterReduction reduction) {
  for (int64_t k = 0; k < ElementCount(index_shape); ++k) {
    CombineValue(reduction, updates[k],
                 data + AxisTarget(k, data_shape, index_shape, axis, indices));
  }
}

/// Same contract as kernels::ScatterND.
template <class T>
void ScatterND(T* data, absl::Span<const int64_t> data_shape, int64_t tuples, int64_t tuple_len,
               const int64_t* indices, const T* updates, ScatterReduction reduction) {
  const absl::Span<const int64_t> block_shape = data_shape.subspan(tuple_len);
  const int64_t block = ElementCount(block_shape);
  for (int64_t u = 0; u < tuples * block; ++u) {
    // The target's coordinates: the tuple's entries, then u's position inside the block.
    const int64_t t = u / block;
    std::vector<int64_t> coord(indices + t * tuple_len, indices + (t + 1) * tuple_len);
    const std::vector<int64_t> inner = Unravel(u % block, block_shape);
    coord.insert(coord.end(), inner.begin(), inner.end());
    CombineValue(reduction, updates[u], data + Ravel(coord, data_shape));
  }
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_GATHER_SCATTER_H_

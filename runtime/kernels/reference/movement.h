// Reference data-movement kernels: per-element index unravelling with no dim merging, the
// oracle the fast kernels in kernels/movement.h are tested against.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_MOVEMENT_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_MOVEMENT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace onnx_bcast::rt::reference {

/// Same contract as rt::StridedCopy.
void StridedCopy(const void* src, int64_t offset, absl::Span<const int64_t> strides,
                 absl::Span<const int64_t> shape, size_t elem_size, void* dst);

/// Same contract as rt::AxisMapCopy.
void AxisMapCopy(const void* src, absl::Span<const int64_t> src_shape,
                 const std::vector<std::vector<int64_t>>& maps, size_t elem_size, const void* fill,
                 void* dst);

/// Same contract as rt::GatherBlocks.
void GatherBlocks(const void* src, int64_t outer, int64_t dim, int64_t inner,
                  absl::Span<const int64_t> indices, size_t elem_size, void* dst);

/// Same contract as rt::GatherTuples.
void GatherTuples(const void* src, int64_t batches, absl::Span<const int64_t> dims,
                  int64_t per_batch, int64_t tuple_len, absl::Span<const int64_t> indices,
                  size_t elem_size, void* dst);

}  // namespace onnx_bcast::rt::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_MOVEMENT_H_

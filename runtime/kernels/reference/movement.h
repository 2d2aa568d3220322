// Reference data-movement kernels: per-element index unravelling with no dim merging, the
// oracle the fast kernels in kernels/movement.h are tested against.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_MOVEMENT_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_MOVEMENT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace onnx_bcast::runtime::reference {

/// Same contract as runtime::StridedCopy.
void StridedCopy(const void* src, int64_t offset, absl::Span<const int64_t> strides,
                 absl::Span<const int64_t> shape, size_t elem_size, void* dst);

/// Same contract as runtime::AxisMapCopy.
void AxisMapCopy(const void* src, absl::Span<const int64_t> src_shape,
                 const std::vector<std::vector<int64_t>>& maps, size_t elem_size, const void* fill,
                 void* dst);

/// Same contract as runtime::GatherBlocks.
void GatherBlocks(const void* src, int64_t outer, int64_t dim, int64_t inner,
                  absl::Span<const int64_t> indices, size_t elem_size, void* dst);

/// Same contract as runtime::GatherTuples.
void GatherTuples(const void* src, int64_t batches, absl::Span<const int64_t> dims,
                  int64_t per_batch, int64_t tuple_len, absl::Span<const int64_t> indices,
                  size_t elem_size, void* dst);

/// Same contract as runtime::ConcatBlocks.
void ConcatBlocks(absl::Span<const void* const> parts, absl::Span<const int64_t> blocks,
                  int64_t outer, size_t elem_size, void* dst);

/// Same contract as runtime::SplitBlocks.
void SplitBlocks(const void* src, int64_t outer, absl::Span<const int64_t> blocks, size_t elem_size,
                 absl::Span<void* const> parts);

/// Same contract as runtime::ReverseSequence.
void ReverseSequence(const void* src, int64_t batch, int64_t steps, int64_t inner, bool batch_major,
                     absl::Span<const int64_t> lens, size_t elem_size, void* dst);

/// Same contract as runtime::Trilu (dst must not be src here).
void Trilu(const void* src, int64_t mats, int64_t rows, int64_t cols, int64_t k, bool upper,
           size_t elem_size, void* dst);

}  // namespace onnx_bcast::runtime::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_MOVEMENT_H_

// Data-movement kernels: dense copies of strided views (Transpose, Expand, Slice, DepthToSpace)
// and per-axis index-map copies (Pad, Tile), block copies (Concat, Split and their sequence
// and Scan forms), ReverseSequence and Trilu. Flat loops on raw bytes; they know nothing of
// nodes, only of element sizes, shapes and strides.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_MOVEMENT_H_
#define ONNX_BCAST_RUNTIME_KERNELS_MOVEMENT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "runtime/thread_pool.h"

namespace onnx_bcast::runtime {

/// Row-major strides (in elements) of a dense tensor of `shape`.
std::vector<int64_t> DenseStrides(absl::Span<const int64_t> shape);

/// How to run a copy.
struct CopyOptions {
  /// Threads to use (the caller counts as one); <= 1 runs on the caller only.
  int threads = 1;
  /// Pool for the extra threads; nullptr means ThreadPool::Default().
  ThreadPool* pool = nullptr;
  /// Outputs with fewer elements run on one thread.
  int64_t parallel_threshold = int64_t{1} << 16;
};

/// Fills `dst` (dense, `shape`) from a strided view of `src`:
/// dst[i_0..i_k] = src[offset + sum_j i_j * strides[j]], strides in elements (0 repeats,
/// negative walks backwards). `elem_size` is the bytes per element. Dims of size 1 are
/// dropped and dims that are contiguous in both are merged before copying; an innermost
/// unit stride is copied with memcpy, and a 2-D transpose innermost is copied in tiles.
/// With threads, the outermost non-1 dim is split between them (results do not depend on it).
void StridedCopy(const void* src, int64_t offset, absl::Span<const int64_t> strides,
                 absl::Span<const int64_t> shape, size_t elem_size, void* dst,
                 const CopyOptions& opts = {});

/// Fills `dst` (dense, shape = sizes of `maps`) from `src` (dense, `src_shape`): axis j of the
/// output takes input index maps[j][i_j], or the bytes of `fill` where any map entry is -1.
/// `fill` may be null when no entry is -1.
void AxisMapCopy(const void* src, absl::Span<const int64_t> src_shape,
                 const std::vector<std::vector<int64_t>>& maps, size_t elem_size, const void* fill,
                 void* dst);

/// Gather along an axis: `src` viewed as [outer, dim, inner] elements; `dst` as
/// [outer, indices.size(), inner] takes, for each outer slice, the inner block at each index.
/// Indices must already be in [0, dim) (the op wraps negatives and refuses the rest).
void GatherBlocks(const void* src, int64_t outer, int64_t dim, int64_t inner,
                  absl::Span<const int64_t> indices, size_t elem_size, void* dst);

/// GatherND: `src` viewed as [batches, dims...] (dims: the data dims after the batch dims);
/// each batch has `per_batch` index tuples of `tuple_len` entries (in `indices`, batch-major,
/// entry j already in [0, dims[j])), and each tuple selects the dense block of the trailing
/// dims after the first `tuple_len`, copied to `dst` in tuple order.
void GatherTuples(const void* src, int64_t batches, absl::Span<const int64_t> dims,
                  int64_t per_batch, int64_t tuple_len, absl::Span<const int64_t> indices,
                  size_t elem_size, void* dst);

/// Concat along an axis: part p viewed as [outer, blocks[p]] elements; dst as
/// [outer, sum of blocks] takes, for each outer row, the rows of every part in order. Also
/// stacks equal parts along a new axis (Scan and Loop outputs). Parts may be null where their
/// block is 0.
void ConcatBlocks(absl::Span<const void* const> parts, absl::Span<const int64_t> blocks,
                  int64_t outer, size_t elem_size, void* dst);

/// Split along an axis, the inverse of ConcatBlocks: `src` viewed as [outer, sum of blocks],
/// part p ([outer, blocks[p]]) takes columns [sum of blocks before p, + blocks[p]).
void SplitBlocks(const void* src, int64_t outer, absl::Span<const int64_t> blocks, size_t elem_size,
                 absl::Span<void* const> parts);

/// ReverseSequence: `src` viewed as [batch, steps, inner] when `batch_major`, else
/// [steps, batch, inner]; in dst, step t of sequence b is step lens[b] - 1 - t of the source
/// for t < lens[b] and step t itself after it. Requires 0 <= lens[b] <= steps.
void ReverseSequence(const void* src, int64_t batch, int64_t steps, int64_t inner, bool batch_major,
                     absl::Span<const int64_t> lens, size_t elem_size, void* dst);

/// Trilu on `mats` matrices [rows, cols]: dst keeps src where j - i >= k (`upper`) or
/// j - i <= k (lower) and is zero bits (zero in every dtype) elsewhere. Any k; dst may be src.
void Trilu(const void* src, int64_t mats, int64_t rows, int64_t cols, int64_t k, bool upper,
           size_t elem_size, void* dst);

/// Copies `count` elements of `elem_size` bytes from `src` to `dst` (may be zero-size).
void CopyElements(const void* src, int64_t count, size_t elem_size, void* dst);

/// Writes `count` copies of the element at `value` to `dst`.
void FillElements(const void* value, int64_t count, size_t elem_size, void* dst);

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_KERNELS_MOVEMENT_H_

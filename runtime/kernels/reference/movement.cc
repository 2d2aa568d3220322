// Reference data-movement kernels: one element at a time, index unravelled from scratch.
#include "runtime/kernels/reference/movement.h"

#include <cstring>

namespace onnx_bcast::runtime::reference {

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

void GatherBlocks(const void* src, int64_t outer, int64_t dim, int64_t inner,
                  absl::Span<const int64_t> indices, size_t elem_size, void* dst) {
  const int64_t n = static_cast<int64_t>(indices.size());
  for (int64_t e = 0; e < outer * n * inner; ++e) {
    const int64_t o = e / (n * inner), k = (e / inner) % n, i = e % inner;
    const int64_t from = (o * dim + indices[k]) * inner + i;
    std::memcpy(static_cast<char*>(dst) + e * elem_size,
                static_cast<const char*>(src) + from * elem_size, elem_size);
  }
}

void GatherTuples(const void* src, int64_t batches, absl::Span<const int64_t> dims,
                  int64_t per_batch, int64_t tuple_len, absl::Span<const int64_t> indices,
                  size_t elem_size, void* dst) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t block = 1, batch_size = 1;
  for (int64_t j = 0; j < rank; ++j) {
    batch_size *= dims[j];
    if (j >= tuple_len) block *= dims[j];
  }
  for (int64_t e = 0; e < batches * per_batch * block; ++e) {
    const int64_t t = e / block, b = t / per_batch;
    // The element's coordinates: the tuple's entries, then e's position in the block.
    std::vector<int64_t> coord(rank);
    for (int64_t j = 0; j < tuple_len; ++j) coord[j] = indices[t * tuple_len + j];
    int64_t rem = e % block;
    for (int64_t j = rank - 1; j >= tuple_len; --j) {
      coord[j] = rem % dims[j];
      rem /= dims[j];
    }
    int64_t from = 0;
    for (int64_t j = 0; j < rank; ++j) from = from * dims[j] + coord[j];
    from += b * batch_size;
    std::memcpy(static_cast<char*>(dst) + e * elem_size,
                static_cast<const char*>(src) + from * elem_size, elem_size);
  }
}

namespace {

// The part holding column `col` of a [*, sum of blocks] row, and the column within it.
size_t PartOf(absl::Span<const int64_t> blocks, int64_t col, int64_t* within) {
  size_t p = 0;
  while (col >= blocks[p]) col -= blocks[p++];
  *within = col;
  return p;
}

}  // namespace

void ConcatBlocks(absl::Span<const void* const> parts, absl::Span<const int64_t> blocks,
                  int64_t outer, size_t elem_size, void* dst) {
  int64_t total = 0;
  for (int64_t b : blocks) total += b;
  for (int64_t e = 0; e < outer * total; ++e) {
    int64_t col = 0;
    const size_t p = PartOf(blocks, e % total, &col);
    std::memcpy(static_cast<char*>(dst) + e * elem_size,
                static_cast<const char*>(parts[p]) + ((e / total) * blocks[p] + col) * elem_size,
                elem_size);
  }
}

void SplitBlocks(const void* src, int64_t outer, absl::Span<const int64_t> blocks, size_t elem_size,
                 absl::Span<void* const> parts) {
  int64_t total = 0;
  for (int64_t b : blocks) total += b;
  for (int64_t e = 0; e < outer * total; ++e) {
    int64_t col = 0;
    const size_t p = PartOf(blocks, e % total, &col);
    std::memcpy(static_cast<char*>(parts[p]) + ((e / total) * blocks[p] + col) * elem_size,
                static_cast<const char*>(src) + e * elem_size, elem_size);
  }
}

void ReverseSequence(const void* src, int64_t batch, int64_t steps, int64_t inner, bool batch_major,
                     absl::Span<const int64_t> lens, size_t elem_size, void* dst) {
  for (int64_t e = 0; e < batch * steps * inner; ++e) {
    const int64_t outer = e / inner, i = e % inner;
    const int64_t b = batch_major ? outer / steps : outer % batch;
    const int64_t t = batch_major ? outer % steps : outer / batch;
    const int64_t from_t = t < lens[b] ? lens[b] - 1 - t : t;
    const int64_t from = (batch_major ? b * steps + from_t : from_t * batch + b) * inner + i;
    std::memcpy(static_cast<char*>(dst) + e * elem_size,
                static_cast<const char*>(src) + from * elem_size, elem_size);
  }
}

void Trilu(const void* src, int64_t mats, int64_t rows, int64_t cols, int64_t k, bool upper,
           size_t elem_size, void* dst) {
  for (int64_t e = 0; e < mats * rows * cols; ++e) {
    const int64_t i = (e / cols) % rows, j = e % cols;
    // j - i is within (-rows, cols): no overflow against any k.
    const bool keep = upper ? j - i >= k : j - i <= k;
    char* to = static_cast<char*>(dst) + e * elem_size;
    if (keep) {
      std::memcpy(to, static_cast<const char*>(src) + e * elem_size, elem_size);
    } else {
      std::memset(to, 0, elem_size);
    }
  }
}

}  // namespace onnx_bcast::runtime::reference

// Data-movement kernels: shapes normalized first (size-1 dims dropped, contiguous dims merged),
// then flat loops typed by element size; memcpy for contiguous runs, tiles for transposes.
#include "runtime/kernels/movement.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace onnx_bcast::runtime {
namespace {

// A dim of the copy: extent and strides (elements) on both sides.
struct CopyDim {
  int64_t size;
  int64_t src_stride;
  int64_t dst_stride;
};

// Calls fn(TypeTag) with an unsigned integer type of `elem_size` bytes, or with std::byte
// arrays through memcpy for other sizes.
template <size_t N>
struct Bytes {
  std::byte b[N];
};

template <class Fn>
void VisitElemSize(size_t elem_size, Fn&& fn) {
  switch (elem_size) {
    case 1:
      return fn(uint8_t{});
    case 2:
      return fn(uint16_t{});
    case 4:
      return fn(uint32_t{});
    case 8:
      return fn(uint64_t{});
    case 16:
      return fn(Bytes<16>{});
    default:
      return fn(std::byte{});  // sentinel: memcpy per element
  }
}

// One run of `n` elements: dst[i * ds] = src[i * ss].
template <class T>
void CopyRun(const std::byte* src, int64_t ss, std::byte* dst, int64_t ds, int64_t n,
             size_t elem_size) {
  if constexpr (std::is_same_v<T, std::byte>) {
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(dst + i * ds * static_cast<int64_t>(elem_size),
                  src + i * ss * static_cast<int64_t>(elem_size), elem_size);
    }
  } else {
    const T* s = reinterpret_cast<const T*>(src);
    T* d = reinterpret_cast<T*>(dst);
    for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];
  }
}

// Copies a 2-D block (rows x cols, strides per side) in square tiles so that both the reads
// and the writes stay within a few cache lines per tile.
template <class T>
void CopyTiled(const std::byte* src, int64_t src_row, int64_t src_col, std::byte* dst,
               int64_t dst_row, int64_t dst_col, int64_t rows, int64_t cols, size_t elem_size) {
  constexpr int64_t kTile = 32;
  const int64_t es = static_cast<int64_t>(elem_size);
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t r1 = std::min(rows, r0 + kTile);
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t c1 = std::min(cols, c0 + kTile);
      for (int64_t r = r0; r < r1; ++r) {
        CopyRun<T>(src + (r * src_row + c0 * src_col) * es, src_col,
                   dst + (r * dst_row + c0 * dst_col) * es, dst_col, c1 - c0, elem_size);
      }
    }
  }
}

// Longest run (bytes) that SerialStridedCopy copies through CopyShortRuns.
constexpr int64_t kShortRunBytes = 64;

// `count` runs of `bytes` (<= kShortRunBytes) bytes, `src_step`/`dst_step` bytes apart.
// Common sizes get a constant-size memcpy, which compiles to a few vector moves.
void CopyShortRuns(const std::byte* src, int64_t src_step, std::byte* dst, int64_t dst_step,
                   int64_t count, int64_t bytes) {
  auto copy = [&](auto size) {
    for (int64_t i = 0; i < count; ++i) {
      std::memcpy(dst + i * dst_step, src + i * src_step, size);
    }
  };
  switch (bytes) {
    case 4:
      return copy(std::integral_constant<size_t, 4>());
    case 8:
      return copy(std::integral_constant<size_t, 8>());
    case 16:
      return copy(std::integral_constant<size_t, 16>());
    case 32:
      return copy(std::integral_constant<size_t, 32>());
    case 64:
      return copy(std::integral_constant<size_t, 64>());
    default:
      return copy(static_cast<size_t>(bytes));
  }
}

}  // namespace

std::vector<int64_t> DenseStrides(absl::Span<const int64_t> shape) {
  // A shape with a zero dim may have other dims whose product overflows int64 (found by
  // fuzz_run through Tile); its strides address nothing, so they are computed modulo 2^64
  // rather than overflowing. A shape with elements is bounded by the tensor limits.
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t j = shape.size(); j-- > 1;) {
    strides[j - 1] =
        static_cast<int64_t>(static_cast<uint64_t>(strides[j]) * static_cast<uint64_t>(shape[j]));
  }
  return strides;
}

void CopyElements(const void* src, int64_t count, size_t elem_size, void* dst) {
  if (count > 0 && src != dst) std::memmove(dst, src, static_cast<size_t>(count) * elem_size);
}

void FillElements(const void* value, int64_t count, size_t elem_size, void* dst) {
  VisitElemSize(elem_size, [&](auto tag) {
    using T = decltype(tag);
    auto* out = static_cast<std::byte*>(dst);
    if constexpr (std::is_same_v<T, std::byte>) {
      for (int64_t i = 0; i < count; ++i) std::memcpy(out + i * elem_size, value, elem_size);
    } else {
      T v;
      std::memcpy(&v, value, sizeof(T));
      T* d = reinterpret_cast<T*>(out);
      std::fill(d, d + count, v);
    }
  });
}

namespace {

// StridedCopy on the calling thread.
void SerialStridedCopy(const void* src, int64_t offset, absl::Span<const int64_t> strides,
                       absl::Span<const int64_t> shape, size_t elem_size, void* dst) {
  const std::vector<int64_t> dst_strides = DenseStrides(shape);
  std::vector<CopyDim> dims;
  for (size_t j = 0; j < shape.size(); ++j) {
    if (shape[j] == 0) return;
    if (shape[j] == 1) continue;
    dims.push_back({shape[j], strides[j], dst_strides[j]});
  }
  // Merge an outer dim into the next inner one when both sides step through it as one run.
  std::vector<CopyDim> merged;
  for (const CopyDim& d : dims) {
    if (!merged.empty()) {
      CopyDim& prev = merged.back();
      if (prev.src_stride == d.src_stride * d.size && prev.dst_stride == d.dst_stride * d.size) {
        prev = {prev.size * d.size, d.src_stride, d.dst_stride};
        continue;
      }
    }
    merged.push_back(d);
  }
  const auto* in = static_cast<const std::byte*>(src) + offset * static_cast<int64_t>(elem_size);
  auto* out = static_cast<std::byte*>(dst);
  const int64_t es = static_cast<int64_t>(elem_size);
  if (merged.empty()) {
    std::memcpy(out, in, elem_size);
    return;
  }
  // The dims walked by the inner kernel: the innermost, plus (for a transpose) the dim that is
  // contiguous in the source, tiled against it.
  const int64_t last = static_cast<int64_t>(merged.size()) - 1;
  int64_t tile_dim = -1;
  if (merged[last].src_stride != 1 && merged[last].src_stride != 0) {
    for (int64_t j = last - 1; j >= 0; --j) {
      if (merged[j].src_stride == 1) {
        tile_dim = j;
        break;
      }
    }
  }
  std::vector<CopyDim> outer;
  for (int64_t j = 0; j < last; ++j) {
    if (j != tile_dim) outer.push_back(merged[j]);
  }
  const CopyDim inner = merged[last];
  // Short contiguous runs (attention's head dims: 8 floats in a Swin) are copied a whole outer
  // row per step: the odometer and a memcpy call per run of 32 bytes cost more than the copy.
  const int64_t run_bytes = inner.size * es;
  const bool short_runs =
      tile_dim < 0 && inner.src_stride == 1 && !outer.empty() && run_bytes <= kShortRunBytes;
  const CopyDim row = short_runs ? outer.back() : CopyDim{1, 0, 0};
  if (short_runs) outer.pop_back();
  std::vector<int64_t> index(outer.size(), 0);
  VisitElemSize(elem_size, [&](auto tag) {
    using T = decltype(tag);
    int64_t src_pos = 0;
    int64_t dst_pos = 0;
    while (true) {
      const std::byte* s = in + src_pos * es;
      std::byte* d = out + dst_pos * es;
      if (tile_dim >= 0) {
        const CopyDim& t = merged[tile_dim];
        CopyTiled<T>(s, t.src_stride, inner.src_stride, d, t.dst_stride, inner.dst_stride, t.size,
                     inner.size, elem_size);
      } else if (short_runs) {
        CopyShortRuns(s, row.src_stride * es, d, row.dst_stride * es, row.size, run_bytes);
      } else if (inner.src_stride == 1) {
        std::memcpy(d, s, static_cast<size_t>(inner.size) * elem_size);
      } else if (inner.src_stride == 0) {
        FillElements(s, inner.size, elem_size, d);
      } else {
        CopyRun<T>(s, inner.src_stride, d, 1, inner.size, elem_size);
      }
      // Odometer over the outer dims.
      int64_t j = static_cast<int64_t>(outer.size()) - 1;
      for (; j >= 0; --j) {
        src_pos += outer[j].src_stride;
        dst_pos += outer[j].dst_stride;
        if (++index[j] < outer[j].size) break;
        src_pos -= outer[j].src_stride * outer[j].size;
        dst_pos -= outer[j].dst_stride * outer[j].size;
        index[j] = 0;
      }
      if (j < 0) return;
    }
  });
}

}  // namespace

void StridedCopy(const void* src, int64_t offset, absl::Span<const int64_t> strides,
                 absl::Span<const int64_t> shape, size_t elem_size, void* dst,
                 const CopyOptions& opts) {
  for (int64_t d : shape) {
    if (d == 0) return;  // nothing to copy (and the other dims' product may overflow)
  }
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  size_t split = 0;
  while (split < shape.size() && shape[split] == 1) ++split;
  if (opts.threads <= 1 || total == 0 || total < opts.parallel_threshold || split == shape.size()) {
    SerialStridedCopy(src, offset, strides, shape, elem_size, dst);
    return;
  }
  // Leading dims before `split` are 1, so a range of dim `split` is a contiguous output block.
  const int64_t dim = shape[split];
  const int64_t block = total / dim;
  const int64_t tasks = std::min<int64_t>(opts.threads, dim);
  ThreadPool& pool = opts.pool != nullptr ? *opts.pool : ThreadPool::Default();
  pool.ParallelFor(tasks, opts.threads, [&](int64_t task) {
    const int64_t begin = dim * task / tasks;
    const int64_t end = dim * (task + 1) / tasks;
    if (begin >= end) return;
    std::vector<int64_t> part(shape.begin(), shape.end());
    part[split] = end - begin;
    SerialStridedCopy(
        src, offset + begin * strides[split], strides, part, elem_size,
        static_cast<std::byte*>(dst) + begin * block * static_cast<int64_t>(elem_size));
  });
}

void AxisMapCopy(const void* src, absl::Span<const int64_t> src_shape,
                 const std::vector<std::vector<int64_t>>& maps, size_t elem_size, const void* fill,
                 void* dst) {
  const int64_t rank = static_cast<int64_t>(maps.size());
  for (const auto& m : maps) {
    if (m.empty()) return;
  }
  const auto* in = static_cast<const std::byte*>(src);
  auto* out = static_cast<std::byte*>(dst);
  if (rank == 0) {
    std::memcpy(out, in, elem_size);
    return;
  }
  const std::vector<int64_t> src_strides = DenseStrides(src_shape);
  const std::vector<int64_t>& inner = maps[rank - 1];
  const int64_t n_inner = static_cast<int64_t>(inner.size());
  const int64_t es = static_cast<int64_t>(elem_size);
  // Source offset of each outer position; -1 when some outer map entry is the fill.
  std::vector<int64_t> index(rank - 1, 0);
  int64_t dst_pos = 0;
  VisitElemSize(elem_size, [&](auto tag) {
    using T = decltype(tag);
    while (true) {
      int64_t base = 0;
      bool filled = false;
      for (int64_t j = 0; j + 1 < rank; ++j) {
        const int64_t k = maps[j][index[j]];
        if (k < 0) filled = true;
        base += k * src_strides[j];
      }
      std::byte* d = out + dst_pos * es;
      if (filled) {
        FillElements(fill, n_inner, elem_size, d);
      } else {
        const std::byte* s = in + base * es;
        for (int64_t i = 0; i < n_inner; ++i) {
          const int64_t k = inner[i];
          if constexpr (std::is_same_v<T, std::byte>) {
            std::memcpy(d + i * es, k < 0 ? fill : s + k * es, elem_size);
          } else {
            T v;
            std::memcpy(&v, k < 0 ? fill : s + k * es, sizeof(T));
            reinterpret_cast<T*>(d)[i] = v;
          }
        }
      }
      dst_pos += n_inner;
      int64_t j = rank - 2;
      for (; j >= 0; --j) {
        if (++index[j] < static_cast<int64_t>(maps[j].size())) break;
        index[j] = 0;
      }
      if (j < 0) return;
    }
  });
}

void GatherBlocks(const void* src, int64_t outer, int64_t dim, int64_t inner,
                  absl::Span<const int64_t> indices, size_t elem_size, void* dst) {
  const auto* in = static_cast<const std::byte*>(src);
  auto* out = static_cast<std::byte*>(dst);
  const size_t block = static_cast<size_t>(inner) * elem_size;
  const int64_t n = static_cast<int64_t>(indices.size());
  // Nothing to copy; an empty tensor's buffer may be null, which memcpy must not see.
  if (block == 0 || n == 0) return;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < n; ++k) {
      std::memcpy(out + (o * n + k) * block, in + (o * dim + indices[k]) * block, block);
    }
  }
}

void GatherTuples(const void* src, int64_t batches, absl::Span<const int64_t> dims,
                  int64_t per_batch, int64_t tuple_len, absl::Span<const int64_t> indices,
                  size_t elem_size, void* dst) {
  const std::vector<int64_t> strides = DenseStrides(dims);
  int64_t block = 1, batch_size = 1;
  for (size_t j = 0; j < dims.size(); ++j) {
    batch_size *= dims[j];
    if (static_cast<int64_t>(j) >= tuple_len) block *= dims[j];
  }
  const auto* in = static_cast<const std::byte*>(src);
  auto* out = static_cast<std::byte*>(dst);
  const size_t block_bytes = static_cast<size_t>(block) * elem_size;
  if (block_bytes == 0) return;  // an empty tensor's buffer may be null
  for (int64_t t = 0; t < batches * per_batch; ++t) {
    int64_t offset = (t / per_batch) * batch_size;
    for (int64_t j = 0; j < tuple_len; ++j) offset += indices[t * tuple_len + j] * strides[j];
    std::memcpy(out + t * block_bytes, in + offset * static_cast<int64_t>(elem_size), block_bytes);
  }
}

void ConcatBlocks(absl::Span<const void* const> parts, absl::Span<const int64_t> blocks,
                  int64_t outer, size_t elem_size, void* dst) {
  int64_t total = 0;
  for (int64_t b : blocks) total += b;
  // Nothing to copy; an empty output's other dims may multiply to a huge (wrapped) outer.
  if (total == 0) return;
  auto* out = static_cast<std::byte*>(dst);
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t p = 0; p < parts.size(); ++p) {
      const size_t bytes = static_cast<size_t>(blocks[p]) * elem_size;
      if (bytes == 0) continue;  // an empty part's buffer may be null
      std::memcpy(out, static_cast<const std::byte*>(parts[p]) + o * bytes, bytes);
      out += bytes;
    }
  }
}

void SplitBlocks(const void* src, int64_t outer, absl::Span<const int64_t> blocks, size_t elem_size,
                 absl::Span<void* const> parts) {
  int64_t total = 0;
  for (int64_t b : blocks) total += b;
  if (total == 0) return;
  const auto* in = static_cast<const std::byte*>(src);
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t p = 0; p < parts.size(); ++p) {
      const size_t bytes = static_cast<size_t>(blocks[p]) * elem_size;
      if (bytes == 0) continue;
      std::memcpy(static_cast<std::byte*>(parts[p]) + o * bytes, in, bytes);
      in += bytes;
    }
  }
}

void ReverseSequence(const void* src, int64_t batch, int64_t steps, int64_t inner, bool batch_major,
                     absl::Span<const int64_t> lens, size_t elem_size, void* dst) {
  const size_t block = static_cast<size_t>(inner) * elem_size;
  if (block == 0 || batch == 0 || steps == 0) return;
  const int64_t batch_stride = batch_major ? steps : 1, step_stride = batch_major ? 1 : batch;
  const auto* in = static_cast<const std::byte*>(src);
  auto* out = static_cast<std::byte*>(dst);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
      std::memcpy(out + (b * batch_stride + t * step_stride) * block,
                  in + (b * batch_stride + from * step_stride) * block, block);
    }
  }
}

void Trilu(const void* src, int64_t mats, int64_t rows, int64_t cols, int64_t k, bool upper,
           size_t elem_size, void* dst) {
  if (mats == 0 || rows == 0 || cols == 0) return;  // an empty buffer may be null
  // Beyond these bounds nothing more changes, and i + k cannot overflow.
  k = std::clamp<int64_t>(k, -rows - 1, cols + 1);
  const auto* in = static_cast<const std::byte*>(src);
  auto* out = static_cast<std::byte*>(dst);
  const size_t row_bytes = static_cast<size_t>(cols) * elem_size;
  for (int64_t m = 0; m < mats * rows; ++m) {
    const int64_t i = m % rows;
    // Row i keeps columns [edge, cols) when upper, [0, edge) when lower.
    const size_t edge =
        static_cast<size_t>(std::clamp<int64_t>(upper ? i + k : i + k + 1, 0, cols)) * elem_size;
    const std::byte* from = in + m * row_bytes;
    std::byte* to = out + m * row_bytes;
    const size_t keep_at = upper ? edge : 0, keep = upper ? row_bytes - edge : edge;
    if (keep > 0 && from != to) std::memmove(to + keep_at, from + keep_at, keep);
    if (upper) {
      std::memset(to, 0, edge);
    } else {
      std::memset(to + edge, 0, row_bytes - edge);
    }
  }
}

}  // namespace onnx_bcast::runtime

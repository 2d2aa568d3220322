// Channel-blocked layout loops. The reorders work on tiles of 8 pixels x the block so both
// the strided side and the contiguous side stay in L1 and the inner loops vectorize.
#include "runtime/kernels/channel_blocks.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <vector>

#include "runtime/kernels/pool.h"

namespace onnx_bcast::runtime::kernels {
namespace {

constexpr int64_t kPixelTile = 8;

// One block of channels: `to_blocks` copies plain[l][s] into blocked[s][l], else back.
// kBlock 0: the block is `block` (NHWC, any channel count).
template <int kBlock, bool kToBlocks>
void ReorderBlock(const float* src, float* dst, int64_t spatial, int block_arg = kBlock) {
  const int block = kBlock != 0 ? kBlock : block_arg;
  int64_t s = 0;
  for (; s + kPixelTile <= spatial; s += kPixelTile) {
    for (int l = 0; l < block; ++l) {
      for (int64_t t = 0; t < kPixelTile; ++t) {
        if constexpr (kToBlocks) {
          dst[(s + t) * block + l] = src[l * spatial + s + t];
        } else {
          dst[l * spatial + s + t] = src[(s + t) * block + l];
        }
      }
    }
  }
  for (; s < spatial; ++s) {
    for (int l = 0; l < block; ++l) {
      if constexpr (kToBlocks) {
        dst[s * block + l] = src[l * spatial + s];
      } else {
        dst[l * spatial + s] = src[s * block + l];
      }
    }
  }
}

template <bool kToBlocks>
void Reorder(const float* x, int64_t batch, int64_t channels, int64_t spatial, int block,
             float* y) {
  const int64_t blocks = batch * (channels / block), size = block * spatial;
  for (int64_t i = 0; i < blocks; ++i) {
    if (block == 16) {
      ReorderBlock<16, kToBlocks>(x + i * size, y + i * size, spatial);
    } else if (block == 8) {
      ReorderBlock<8, kToBlocks>(x + i * size, y + i * size, spatial);
    } else {
      ReorderBlock<0, kToBlocks>(x + i * size, y + i * size, spatial, block);
    }
  }
}

// kBlock 0: the block is `block` (NHWC), with the accumulators in `acc_heap`. Force-inlined
// into a baseline and an AVX2 copy (4 doubles a vector against SSE2's 2; no FMA in the target,
// so the same bits).
template <int kBlock>
inline __attribute__((always_inline)) void AverageBlocks(const float* x, int64_t blocks,
                                                         int64_t spatial, float* y,
                                                         int block_arg = 0) {
  const int block = kBlock != 0 ? kBlock : block_arg;
  double acc_fixed[kBlock != 0 ? kBlock : 1];
  std::vector<double> acc_heap(kBlock != 0 ? 0 : block);
  double* acc = kBlock != 0 ? acc_fixed : acc_heap.data();
  for (int64_t i = 0; i < blocks; ++i) {
    const float* xp = x + i * spatial * block;
    // One accumulator per channel, each a chain of adds in pixel order: the plane sum of the
    // NCHW kernel, with the block's channels in the vector lanes.
    std::fill(acc, acc + block, 0.0);
    for (int64_t s = 0; s < spatial; ++s) {
      for (int l = 0; l < block; ++l) acc[l] += static_cast<double>(xp[s * block + l]);
    }
    for (int l = 0; l < block; ++l) {
      y[i * block + l] = static_cast<float>(acc[l] / static_cast<double>(spatial));
    }
  }
}

}  // namespace

bool ChannelBlocksFit(int64_t channels, int block) {
  return (block == 8 || block == 16 || block == channels) && channels > 0 && channels % block == 0;
}

void ToChannelBlocks(const float* x, int64_t batch, int64_t channels, int64_t spatial, int block,
                     float* y) {
  Reorder<true>(x, batch, channels, spatial, block, y);
}

void FromChannelBlocks(const float* x, int64_t batch, int64_t channels, int64_t spatial, int block,
                       float* y) {
  Reorder<false>(x, batch, channels, spatial, block, y);
}

namespace {

inline __attribute__((always_inline)) void AverageAnyBlock(const float* x, int64_t blocks,
                                                           int64_t spatial, int block, float* y) {
  if (block == 16) {
    AverageBlocks<16>(x, blocks, spatial, y);
  } else if (block == 8) {
    AverageBlocks<8>(x, blocks, spatial, y);
  } else {
    AverageBlocks<0>(x, blocks, spatial, y, block);
  }
}

void AverageBaseline(const float* x, int64_t blocks, int64_t spatial, int block, float* y) {
  AverageAnyBlock(x, blocks, spatial, block, y);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) void AverageAvx2(const float* x, int64_t blocks, int64_t spatial,
                                                 int block, float* y) {
  AverageAnyBlock(x, blocks, spatial, block, y);
}
#endif

}  // namespace

void GlobalAverageChannelBlocks(const float* x, int64_t batch, int64_t channels, int64_t spatial,
                                int block, float* y) {
  const int64_t blocks = batch * (channels / block);
  if (spatial == 0) {
    // The NCHW kernel's empty window: no taps, average 0.
    std::fill(y, y + batch * channels, 0.0f);
    return;
  }
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return AverageAvx2(x, blocks, spatial, block, y);
#endif
  AverageBaseline(x, blocks, spatial, block, y);
}

namespace {

// The baseline loop (CPUs without AVX2). kBlock 0: the block is `block` (NHWC, any channel
// count), with the accumulators in `acc_heap`.
template <int kBlock>
inline __attribute__((always_inline)) void MaxPoolBlocks(const WindowGeometry& g,
                                                         const WindowTaps& t, const float* x,
                                                         int64_t r0, int64_t r1, int block_arg,
                                                         bool blocked_out, float* y) {
  const int64_t block = kBlock != 0 ? kBlock : block_arg;
  const int64_t in_h = g.in[0], in_w = g.in[1], out_h = g.out[0], out_w = g.out[1];
  const int64_t out_hw = out_h * out_w;
  const int64_t sh = g.strides[0], sw = g.strides[1], ph = g.pads_begin[0], pw = g.pads_begin[1];
  const int64_t dh = g.dilations[0], dw = g.dilations[1];
  float acc_fixed[kBlock != 0 ? kBlock : 1];
  std::vector<float> acc_heap(kBlock != 0 ? 0 : block);
  float* acc = kBlock != 0 ? acc_fixed : acc_heap.data();
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t p = r / out_h, oh = r % out_h;
    const float* xp = x + p * in_h * in_w * block;
    float* yp = y + p * out_hw * block;
    const int64_t h0 = oh * sh - ph, khb = t.begin[0][oh], khe = t.end[0][oh];
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const int64_t w0 = ow * sw - pw, kwb = t.begin[1][ow], kwe = t.end[1][ow];
      if (khb >= khe || kwb >= kwe) {
        std::fill(acc, acc + block, 0.0f);  // the NCHW kernel's empty window
      } else {
        const float* first = xp + ((h0 + khb * dh) * in_w + w0 + kwb * dw) * block;
        std::copy(first, first + block, acc);
        for (int64_t kh = khb; kh < khe; ++kh) {
          const float* row = xp + ((h0 + kh * dh) * in_w + w0) * block;
          for (int64_t kw = kh == khb ? kwb + 1 : kwb; kw < kwe; ++kw) {
            const float* v = row + kw * dw * block;
            for (int64_t l = 0; l < block; ++l) acc[l] = v[l] > acc[l] ? v[l] : acc[l];
          }
        }
      }
      const int64_t pixel = oh * out_w + ow;
      if (blocked_out) {
        std::copy(acc, acc + block, yp + pixel * block);
      } else {
        for (int64_t l = 0; l < block; ++l) yp[l * out_hw + pixel] = acc[l];
      }
    }
  }
}

inline __attribute__((always_inline)) void MaxPoolAnyBlock(const WindowGeometry& g,
                                                           const WindowTaps& t, const float* x,
                                                           int64_t r0, int64_t r1, int block,
                                                           bool blocked_out, float* y) {
  if (block == 16) {
    MaxPoolBlocks<16>(g, t, x, r0, r1, block, blocked_out, y);
  } else if (block == 8) {
    MaxPoolBlocks<8>(g, t, x, r0, r1, block, blocked_out, y);
  } else {
    MaxPoolBlocks<0>(g, t, x, r0, r1, block, blocked_out, y);
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same on AVX2 with explicit vectors (the compiler unrolled the block loop above into
// scalar maxss): blocks of 8 and 16 keep their accumulators in kVecs registers; kVecs 0 is any
// block (NHWC), accumulated in memory 8 lanes at a time with a scalar tail. _mm256_max_ps(v,
// acc) is v > acc ? v : acc, the same bits as the loop above.
template <int kVecs>
__attribute__((target("avx2"))) void MaxPoolBlocksAvx2(const WindowGeometry& g, const WindowTaps& t,
                                                       const float* x, int64_t r0, int64_t r1,
                                                       int64_t block, bool blocked_out, float* y) {
  const int64_t in_h = g.in[0], in_w = g.in[1], out_h = g.out[0], out_w = g.out[1];
  const int64_t out_hw = out_h * out_w;
  const int64_t sh = g.strides[0], sw = g.strides[1], ph = g.pads_begin[0], pw = g.pads_begin[1];
  const int64_t dh = g.dilations[0], dw = g.dilations[1];
  __m256 acc[kVecs > 0 ? kVecs : 1];
  // NCHW output: each output row pooled into `row_out` in blocks, then written out a channel at
  // a time (contiguous stores instead of `block` scattered ones a pixel).
  std::vector<float> row_out(blocked_out ? 0 : out_w * block);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t p = r / out_h, oh = r % out_h;
    const float* xp = x + p * in_h * in_w * block;
    float* yp = y + p * out_hw * block;
    const int64_t h0 = oh * sh - ph, khb = t.begin[0][oh], khe = t.end[0][oh];
    float* out_row = blocked_out ? yp + oh * out_w * block : row_out.data();
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const int64_t w0 = ow * sw - pw, kwb = t.begin[1][ow], kwe = t.end[1][ow];
      float* out = out_row + ow * block;
      if (khb >= khe || kwb >= kwe) {
        std::fill(out, out + block, 0.0f);  // the NCHW kernel's empty window
      } else if constexpr (kVecs > 0) {
        const float* first = xp + ((h0 + khb * dh) * in_w + w0 + kwb * dw) * block;
        for (int v = 0; v < kVecs; ++v) acc[v] = _mm256_loadu_ps(first + 8 * v);
        for (int64_t kh = khb; kh < khe; ++kh) {
          const float* row = xp + ((h0 + kh * dh) * in_w + w0) * block;
          for (int64_t kw = kh == khb ? kwb + 1 : kwb; kw < kwe; ++kw) {
            const float* src = row + kw * dw * block;
            for (int v = 0; v < kVecs; ++v) {
              acc[v] = _mm256_max_ps(_mm256_loadu_ps(src + 8 * v), acc[v]);
            }
          }
        }
        for (int v = 0; v < kVecs; ++v) _mm256_storeu_ps(out + 8 * v, acc[v]);
      } else {
        const float* first = xp + ((h0 + khb * dh) * in_w + w0 + kwb * dw) * block;
        std::copy(first, first + block, out);
        for (int64_t kh = khb; kh < khe; ++kh) {
          const float* row = xp + ((h0 + kh * dh) * in_w + w0) * block;
          for (int64_t kw = kh == khb ? kwb + 1 : kwb; kw < kwe; ++kw) {
            const float* src = row + kw * dw * block;
            int64_t l = 0;
            for (; l + 8 <= block; l += 8) {
              _mm256_storeu_ps(out + l,
                               _mm256_max_ps(_mm256_loadu_ps(src + l), _mm256_loadu_ps(out + l)));
            }
            for (; l < block; ++l) out[l] = src[l] > out[l] ? src[l] : out[l];
          }
        }
      }
    }
    if (!blocked_out) {
      for (int64_t l = 0; l < block; ++l) {
        float* dst = yp + l * out_hw + oh * out_w;
        for (int64_t ow = 0; ow < out_w; ++ow) dst[ow] = out_row[ow * block + l];
      }
    }
  }
}
#endif

}  // namespace

void MaxPoolChannelBlocks(const WindowGeometry& g, const float* x, int64_t r0, int64_t r1,
                          int block, bool blocked_out, float* y) {
  const WindowTaps taps = TapsOf(g);
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) {
    if (block == 16) return MaxPoolBlocksAvx2<2>(g, taps, x, r0, r1, block, blocked_out, y);
    if (block == 8) return MaxPoolBlocksAvx2<1>(g, taps, x, r0, r1, block, blocked_out, y);
    return MaxPoolBlocksAvx2<0>(g, taps, x, r0, r1, block, blocked_out, y);
  }
#endif
  MaxPoolAnyBlock(g, taps, x, r0, r1, block, blocked_out, y);
}

void MaxPoolChannelBlocksPlain(const WindowGeometry& g, const float* x, int64_t r0, int64_t r1,
                               int block, bool blocked_out, float* y) {
  MaxPoolAnyBlock(g, TapsOf(g), x, r0, r1, block, blocked_out, y);
}

}  // namespace onnx_bcast::runtime::kernels

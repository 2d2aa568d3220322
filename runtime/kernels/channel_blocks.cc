// Channel-blocked layout loops. The reorders work on tiles of 8 pixels x the block so both
// the strided side and the contiguous side stay in L1 and the inner loops vectorize.
#include "runtime/kernels/channel_blocks.h"

#include <algorithm>
#include <cstring>
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

// Eight floats as one GCC vector: the pooling loop below is written once and compiled for the
// baseline and for AVX2 (the wrappers' targets), each in its widest registers. The compiler
// alone unrolled a 16-channel loop into scalar maxss; these keep a block in one or two vectors.
typedef float Floats8 __attribute__((vector_size(32)));
// The baseline build passes Floats8 by value only between always-inlined functions: GCC's note
// that this changes the ABI without AVX does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

inline __attribute__((always_inline)) Floats8 Load8(const float* p) {
  Floats8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline __attribute__((always_inline)) void Store8(float* p, Floats8 v) {
  std::memcpy(p, &v, sizeof v);
}

// Lane by lane v > acc ? v : acc, the NCHW kernel's fold (what vmaxps(v, acc) computes).
inline __attribute__((always_inline)) Floats8 Max8(Floats8 v, Floats8 acc) {
  return v > acc ? v : acc;
}

// The pixels of output rows [r0, r1) (see MaxPoolChannelBlocks). kVecs 1 and 2: blocks of 8 and
// 16, their accumulators in vectors; kVecs 0: any block (NHWC), accumulated in the output row
// 8 lanes at a time with a scalar tail.
template <int kVecs>
inline __attribute__((always_inline)) void MaxPoolRows(const WindowGeometry& g, const WindowTaps& t,
                                                       const float* x, int64_t r0, int64_t r1,
                                                       int64_t block, bool blocked_out, float* y) {
  const int64_t in_h = g.in[0], in_w = g.in[1], out_h = g.out[0], out_w = g.out[1];
  const int64_t out_hw = out_h * out_w;
  const int64_t sh = g.strides[0], sw = g.strides[1], ph = g.pads_begin[0], pw = g.pads_begin[1];
  const int64_t dh = g.dilations[0], dw = g.dilations[1];
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
        continue;
      }
      const float* first = xp + ((h0 + khb * dh) * in_w + w0 + kwb * dw) * block;
      Floats8 acc[kVecs > 0 ? kVecs : 1];
      if constexpr (kVecs > 0) {
        for (int v = 0; v < kVecs; ++v) acc[v] = Load8(first + 8 * v);
      } else {
        std::copy(first, first + block, out);
      }
      for (int64_t kh = khb; kh < khe; ++kh) {
        const float* row = xp + ((h0 + kh * dh) * in_w + w0) * block;
        for (int64_t kw = kh == khb ? kwb + 1 : kwb; kw < kwe; ++kw) {
          const float* src = row + kw * dw * block;
          if constexpr (kVecs > 0) {
            for (int v = 0; v < kVecs; ++v) acc[v] = Max8(Load8(src + 8 * v), acc[v]);
          } else {
            int64_t l = 0;
            for (; l + 8 <= block; l += 8) Store8(out + l, Max8(Load8(src + l), Load8(out + l)));
            for (; l < block; ++l) out[l] = src[l] > out[l] ? src[l] : out[l];
          }
        }
      }
      if constexpr (kVecs > 0) {
        for (int v = 0; v < kVecs; ++v) Store8(out + 8 * v, acc[v]);
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

inline __attribute__((always_inline)) void MaxPoolAnyBlock(const WindowGeometry& g,
                                                           const WindowTaps& t, const float* x,
                                                           int64_t r0, int64_t r1, int block,
                                                           bool blocked_out, float* y) {
  if (block == 16) {
    MaxPoolRows<2>(g, t, x, r0, r1, block, blocked_out, y);
  } else if (block == 8) {
    MaxPoolRows<1>(g, t, x, r0, r1, block, blocked_out, y);
  } else {
    MaxPoolRows<0>(g, t, x, r0, r1, block, blocked_out, y);
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) void MaxPoolAvx2(const WindowGeometry& g, const WindowTaps& t,
                                                 const float* x, int64_t r0, int64_t r1, int block,
                                                 bool blocked_out, float* y) {
  MaxPoolAnyBlock(g, t, x, r0, r1, block, blocked_out, y);
}
#endif

}  // namespace

void MaxPoolChannelBlocks(const WindowGeometry& g, const float* x, int64_t r0, int64_t r1,
                          int block, bool blocked_out, float* y) {
  const WindowTaps taps = TapsOf(g);
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return MaxPoolAvx2(g, taps, x, r0, r1, block, blocked_out, y);
#endif
  MaxPoolAnyBlock(g, taps, x, r0, r1, block, blocked_out, y);
}

void MaxPoolChannelBlocksPlain(const WindowGeometry& g, const float* x, int64_t r0, int64_t r1,
                               int block, bool blocked_out, float* y) {
  MaxPoolAnyBlock(g, TapsOf(g), x, r0, r1, block, blocked_out, y);
}

}  // namespace onnx_bcast::runtime::kernels

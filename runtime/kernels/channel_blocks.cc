// Channel-blocked layout loops. The reorders work on tiles of 8 pixels x the block so both
// the strided side and the contiguous side stay in L1 and the inner loops vectorize.
#include "runtime/kernels/channel_blocks.h"

#include <algorithm>
#include <vector>

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

}  // namespace onnx_bcast::runtime::kernels

// Reference channel-blocked layout: each element's blocked offset from the layout's formula,
// one element at a time. The oracle for runtime/kernels/channel_blocks.h in tests (the blocked
// GlobalAveragePool's oracle is reference::Pool on the NCHW tensor).
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_CHANNEL_BLOCKS_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_CHANNEL_BLOCKS_H_

#include <cstdint>

namespace onnx_bcast::runtime::kernels::reference {

/// Where NCHW element (n, c, s) lives in the blocked layout x[n][c / b][s][c % b].
inline int64_t ChannelBlockedOffset(int64_t n, int64_t c, int64_t s, int64_t channels,
                                    int64_t spatial, int64_t block) {
  return ((n * (channels / block) + c / block) * spatial + s) * block + c % block;
}

/// Same contract as kernels::ToChannelBlocks.
inline void ToChannelBlocks(const float* x, int64_t batch, int64_t channels, int64_t spatial,
                            int block, float* y) {
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t s = 0; s < spatial; ++s) {
        y[ChannelBlockedOffset(n, c, s, channels, spatial, block)] =
            x[(n * channels + c) * spatial + s];
      }
    }
  }
}

/// Same contract as kernels::FromChannelBlocks.
inline void FromChannelBlocks(const float* x, int64_t batch, int64_t channels, int64_t spatial,
                              int block, float* y) {
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t s = 0; s < spatial; ++s) {
        y[(n * channels + c) * spatial + s] =
            x[ChannelBlockedOffset(n, c, s, channels, spatial, block)];
      }
    }
  }
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_CHANNEL_BLOCKS_H_

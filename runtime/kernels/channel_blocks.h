// The channel-blocked activation layouts oneDNN's convolutions compute in: x[n][c / b][spatial]
// [c % b], with b = 8 or 16 (nChw8c, nChw16c) or b = the channel count (NHWC, which its
// brgconv kernels take). The executor keeps a convolution's output in it when every reader can
// take it (docs/performance.md, issue #32), so the reorders to and from NCHW happen only at the
// edges of a chain of convolutions. These are the loops at those edges and the readers that
// work on the blocked buffer itself. Only channel counts that are a multiple of the block use
// it, so the blocked buffer has the plain tensor's size.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_CHANNEL_BLOCKS_H_
#define ONNX_BCAST_RUNTIME_KERNELS_CHANNEL_BLOCKS_H_

#include <cstdint>

#include "runtime/kernels/conv.h"

namespace onnx_bcast::runtime::kernels {

/// True for the blocks the layout comes in (8, 16, or `channels` itself: NHWC) when
/// `channels` is a multiple of `block`.
bool ChannelBlocksFit(int64_t channels, int block);

/// y (blocked) = x [batch, channels, spatial] (NCHW); ChannelBlocksFit(channels, block).
void ToChannelBlocks(const float* x, int64_t batch, int64_t channels, int64_t spatial, int block,
                     float* y);

/// y [batch, channels, spatial] (NCHW) = x (blocked); ChannelBlocksFit(channels, block).
void FromChannelBlocks(const float* x, int64_t batch, int64_t channels, int64_t spatial, int block,
                       float* y);

/// GlobalAveragePool of a blocked x into y [batch, channels]: each channel summed in double
/// over its pixels in order and divided by `spatial`, the order of kernels::Pool on the NCHW
/// tensor, so the same bits; the block's channels are summed side by side.
void GlobalAverageChannelBlocks(const float* x, int64_t batch, int64_t channels, int64_t spatial,
                                int block, float* y);

/// MaxPool over 2 spatial dims (`g`) of a blocked x into y, for the output rows [r0, r1) of all
/// planes taken in order (row r is row r % out_h of plane r / out_h): a plane is one block of
/// channels of one batch item, [in_h, in_w, block] in x (batch * channels / block planes in
/// all). y is in the same block when `blocked_out` ([out_h, out_w, block] a plane), else NCHW
/// ([block, out_h, out_w] a plane). Each channel folds the taps of the NCHW kernel
/// (kernels::Pool without indices) in its order, so the same bits; the block's channels side by
/// side in the vector lanes.
void MaxPoolChannelBlocks(const WindowGeometry& g, const float* x, int64_t r0, int64_t r1,
                          int block, bool blocked_out, float* y);

/// The same compiled for the baseline (what CPUs without AVX2 run), for tests.
void MaxPoolChannelBlocksPlain(const WindowGeometry& g, const float* x, int64_t r0, int64_t r1,
                               int block, bool blocked_out, float* y);

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_CHANNEL_BLOCKS_H_

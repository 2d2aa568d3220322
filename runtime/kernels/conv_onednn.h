// Float 2-D convolution through oneDNN (Debian's libdnnl), in its blocked layouts (nChw8c on
// AVX2, nChw16c on AVX-512: oneDNN picks the ISA at run time) with reorders from and to NCHW.
// Optional: built only when CMake finds oneDNN (BCAST_HAVE_ONEDNN); callers fall back to the
// banded im2col + OpenBLAS kernel in conv.cc when it is absent or declines a geometry.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_CONV_ONEDNN_H_
#define ONNX_BCAST_RUNTIME_KERNELS_CONV_ONEDNN_H_

#include <cstdint>

#include "runtime/kernels/conv.h"

namespace onnx_bcast::runtime::kernels {

/// True when this build has oneDNN and BCAST_CONV_ONEDNN is not "0" in the environment.
bool OneDnnConvAvailable();

/// Same contract as Conv for a 2-D float geometry (on one thread for now: `threads` is where a
/// split over the caller's threads will go, see the .cc). Returns
/// false (y untouched) when oneDNN is unavailable or refuses the geometry; the caller then
/// computes it another way. Primitives are cached per thread and geometry.
bool OneDnnConv2D(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps,
                  int64_t group, const float* x, const float* w, const float* bias, float* y,
                  int threads);

/// A oneDNN convolution prepared once (PreparedConv, path kOneDnn): the primitive, the weights
/// reordered into its layout, and its blocked source and destination buffers. Only the
/// activations are reordered per Run. Null when oneDNN is unavailable or refuses the geometry.
/// With `threads` > 1, a large enough convolution of one image and group is also split into
/// up to two primitives a thread, over bands of output rows or slices of its maps, which Run
/// and RunBlocked hand to their ParallelFor (labels "onednn-split-rows", "onednn-split-maps",
/// "onednn-nchw-split-*"); BCAST_CONV_SPLIT=0 in the environment turns the split off.
std::unique_ptr<PreparedConv> PrepareOneDnnConv2D(const WindowGeometry& g, int64_t batch,
                                                  int64_t channels, int64_t maps, int64_t group,
                                                  const float* w, bool has_bias, int threads = 1);

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_CONV_ONEDNN_H_

// Convolution kernels over N-D spatial dims: Conv as im2col + GEMM per group, ConvTranspose as
// GEMM + col2im, and the window geometry they share with pooling.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_CONV_H_
#define ONNX_BCAST_RUNTIME_KERNELS_CONV_H_

#include <cstdint>
#include <functional>
#include <vector>

namespace onnx_bcast::rt::kernels {

/// Spatial geometry of a sliding window, one entry per spatial dim. Input coordinate of output
/// position o and kernel offset k: o * strides - pads_begin + k * dilations.
struct WindowGeometry {
  std::vector<int64_t> in, out, kernel, strides, dilations, pads_begin, pads_end;

  int64_t rank() const { return static_cast<int64_t>(in.size()); }
  int64_t in_size() const;
  int64_t out_size() const;
  int64_t kernel_size() const;
};

/// Runs fn(i) for every i in [0, n), possibly on several threads at once (tasks are
/// independent). Kernels take it so they need not know the executor's pool.
using ParallelFor = std::function<void(int64_t n, const std::function<void(int64_t)>& fn)>;

/// y[N, M, out...] = conv(x[N, C, in...], w[M, C/group, kernel...]) + bias[M] (bias may be
/// null). T is float or double. Float 2-D convolutions go through oneDNN on up to `threads`
/// threads when the build has it (conv_onednn.h), except pointwise ones and ones with more
/// weights than outputs; otherwise depthwise 2-D ones are computed directly; other 2-D ones build
/// the im2col matrix one band of output rows at a time (bands run as `parallel` tasks when given);
/// other ranks use a scratch column buffer of C/group * kernel * out values.
template <class T>
void Conv(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps, int64_t group,
          const T* x, const T* w, const T* bias, T* y, int threads = 1,
          const ParallelFor* parallel = nullptr);

/// Conv without oneDNN: the banded im2col + OpenBLAS (or direct depthwise) path, the one every
/// build has. Tests compare it and Conv with the reference kernel.
template <class T>
void ConvNoOneDnn(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps,
                  int64_t group, const T* x, const T* w, const T* bias, T* y,
                  const ParallelFor* parallel = nullptr);

/// The whole-image im2col + one GEMM per group path that Conv used for every geometry before
/// the banded one; kept for benchmarks and as a second oracle in tests.
template <class T>
void ConvIm2colWhole(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps,
                     int64_t group, const T* x, const T* w, const T* bias, T* y);

/// y[N, M, out...] = conv_transpose(x[N, C, in...], w[C, M/group, kernel...]) + bias[M]: each
/// input position i scatters into output i * strides - pads_begin + k * dilations. `g.in` is
/// x's spatial shape and `g.out` y's.
template <class T>
void ConvTranspose(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps,
                   int64_t group, const T* x, const T* w, const T* bias, T* y);

}  // namespace onnx_bcast::rt::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_CONV_H_

// Convolution kernels over N-D spatial dims: Conv as im2col + GEMM per group, ConvTranspose as
// GEMM + col2im, and the window geometry they share with pooling.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_CONV_H_
#define ONNX_BCAST_RUNTIME_KERNELS_CONV_H_

#include <cstdint>
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

/// y[N, M, out...] = conv(x[N, C, in...], w[M, C/group, kernel...]) + bias[M] (bias may be
/// null). T is float or double. Uses a scratch column buffer of C/group * kernel * out values.
template <class T>
void Conv(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps, int64_t group,
          const T* x, const T* w, const T* bias, T* y);

/// y[N, M, out...] = conv_transpose(x[N, C, in...], w[C, M/group, kernel...]) + bias[M]: each
/// input position i scatters into output i * strides - pads_begin + k * dilations. `g.in` is
/// x's spatial shape and `g.out` y's.
template <class T>
void ConvTranspose(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps,
                   int64_t group, const T* x, const T* w, const T* bias, T* y);

}  // namespace onnx_bcast::rt::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_CONV_H_

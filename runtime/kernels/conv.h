// Convolution kernels over N-D spatial dims: Conv as im2col + GEMM per group, ConvTranspose as
// GEMM + col2im, and the window geometry they share with pooling.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_CONV_H_
#define ONNX_BCAST_RUNTIME_KERNELS_CONV_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/kernels/parallel_for.h"

namespace onnx_bcast::runtime::kernels {

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

/// The small-map path: per image and group, the im2col matrix of the whole output (at most
/// kSmallMapMaxPixels columns, padded to panels of 8) is packed once and the weights are
/// streamed over it row block by row block, so each weight is read once per image. A GEMM of
/// width 6 through OpenBLAS packs all of W on every call and is bound by that copy (512 maps
/// of 3x3 over 2x3 outputs: 9.4 MB of weights per call). Float and double, 2-D only.
inline constexpr int64_t kSmallMapMaxPixels = 32;
template <class T>
void ConvSmallMap(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps,
                  int64_t group, const T* x, const T* w, const T* bias, T* y,
                  const ParallelFor* parallel = nullptr);

/// How a prepared float 2-D convolution computes.
enum class ConvPath {
  kOneDnn,    ///< oneDNN primitive with the weights reordered into its layout once
  kSmallMap,  ///< ConvSmallMap (weights read in place, nothing packed)
  kBands,     ///< ConvNoOneDnn: banded im2col + OpenBLAS, or the direct depthwise loop
};
const char* ConvPathName(ConvPath path);

/// A float 2-D convolution built once for one geometry and one constant weight tensor (the
/// executor's per-node prepared state, Practice 13's create/run split): the path is chosen and
/// the weights packed at PrepareConv2D; Run only computes. Not thread-safe (one Run at a time;
/// the executor runs one node at a time).
class PreparedConv {
 public:
  virtual ~PreparedConv() = default;
  /// y = conv(x, w) + bias for the geometry and weights it was prepared with. `w` is the same
  /// weights again (the small-map and banded paths read them in place). `bias` may be null
  /// only when prepared without one. False (y unspecified) when the backend failed at run
  /// time; the caller then computes with Conv.
  virtual bool Run(const float* x, const float* w, const float* bias, float* y,
                   const ParallelFor* parallel) = 0;
  /// Bytes the state holds (packed weights, blocked-layout buffers): the executor charges them
  /// to the run's memory budget and --profile reports them.
  virtual int64_t bytes() const = 0;
  virtual ConvPath path() const = 0;
  /// The path's name for --profile, with a variant where one path has several ("onednn-nchw":
  /// oneDNN reading the NCHW source itself, no source reorder).
  virtual const char* label() const { return ConvPathName(path()); }

  /// Channel-blocked activations (kernels/channel_blocks.h), so that consecutive
  /// convolutions skip the reorders to and from NCHW between them. The block y can be written
  /// in directly (oneDNN's own destination layout when the maps fill whole blocks), 0 when
  /// only NCHW.
  virtual int out_block() const { return 0; }
  /// True when RunBlocked reads x in channel block `block` (0: NCHW, always true).
  virtual bool takes_block(int block) const { return block == 0; }
  /// Run with x in `x_block` and y in `y_block` (0: NCHW). x_block must be 0 or one
  /// takes_block() accepts, y_block 0 or out_block(). Same values as Run, in those layouts.
  virtual bool RunBlocked(const float* x, int x_block, const float* w, const float* bias, float* y,
                          int y_block, const ParallelFor* parallel) {
    if (x_block != 0 || y_block != 0) return false;
    return Run(x, w, bias, y, parallel);
  }
};

/// How PrepareConv2D chooses the path.
enum class ConvChoice {
  kRule,     ///< the fixed rule measured with bench_conv (conv.cc, docs/performance.md)
  kMeasure,  ///< time every candidate on this geometry (twice each) and keep the fastest
};
/// BCAST_CONV_TUNE=1 in the environment: kMeasure; otherwise kRule.
ConvChoice DefaultConvChoice();

/// Prepares Conv for a 2-D float geometry with constant weights `w` ([M, C/group, kh, kw]).
/// `forced` (tests, benchmarks) takes that path when it applies; null when it does not (e.g.
/// kOneDnn without oneDNN). Without `forced`, never null (kBands always applies). `threads`:
/// the run's thread count, which a oneDNN path splits its larger convolutions for
/// (PrepareOneDnnConv2D).
std::unique_ptr<PreparedConv> PrepareConv2D(const WindowGeometry& g, int64_t batch,
                                            int64_t channels, int64_t maps, int64_t group,
                                            const float* w, bool has_bias,
                                            ConvChoice choice = ConvChoice::kRule,
                                            const ConvPath* forced = nullptr, int threads = 1);

/// y[N, M, out...] = conv_transpose(x[N, C, in...], w[C, M/group, kernel...]) + bias[M]: each
/// input position i scatters into output i * strides - pads_begin + k * dilations. `g.in` is
/// x's spatial shape and `g.out` y's.
template <class T>
void ConvTranspose(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps,
                   int64_t group, const T* x, const T* w, const T* bias, T* y);

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_CONV_H_

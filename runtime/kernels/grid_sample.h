// GridSample (2-D) on X [N, C, H, W] at a normalized grid [N, Ho, Wo, 2]: nearest, bilinear or
// bicubic taps with zeros, border or reflection padding, following PyTorch's grid_sampler.
// The taps of a grid point (source offsets and weights) are computed once and reused for every
// channel; each channel then sums them in the reference's order. Oracle: reference/grid_sample.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_GRID_SAMPLE_H_
#define ONNX_BCAST_RUNTIME_KERNELS_GRID_SAMPLE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace onnx_bcast::runtime::kernels {

enum class GridSampleMode { kBilinear, kNearest, kBicubic };
enum class GridSamplePadding { kZeros, kBorder, kReflection };

/// GridSample's attributes.
struct GridSampleOptions {
  GridSampleMode mode = GridSampleMode::kBilinear;
  GridSamplePadding padding = GridSamplePadding::kZeros;
  bool align_corners = false;
};

namespace grid_sample_internal {

// Reflects `x` into [low/2, high/2] (bounds given doubled so they stay integers).
inline double Reflect(double x, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return 0;
  const double min = twice_low / 2.0, span = (twice_high - twice_low) / 2.0;
  x = std::fabs(x - min);
  const double extra = std::fmod(x, span);
  const int64_t flips = static_cast<int64_t>(std::floor(x / span));
  return flips % 2 == 0 ? extra + min : span - extra + min;
}

}  // namespace grid_sample_internal

/// A source coordinate along a dim of `size` after border clamping or reflection.
inline double GridSampleCoord(double x, int64_t size, GridSamplePadding padding,
                              bool align_corners) {
  using grid_sample_internal::Reflect;
  if (padding == GridSamplePadding::kBorder) {
    return std::clamp(x, 0.0, static_cast<double>(size - 1));
  }
  if (padding == GridSamplePadding::kReflection) {
    x = align_corners ? Reflect(x, 0, 2 * (size - 1)) : Reflect(x, -1, 2 * size - 1);
    return std::clamp(x, 0.0, static_cast<double>(size - 1));
  }
  return x;
}

/// A grid value in [-1, 1] as a source coordinate along a dim of `size`, clamped where it
/// still samples only padding (or the border) so that integer conversions stay defined.
inline double GridSampleUnnormalize(double g, int64_t size, bool align_corners) {
  const double u = align_corners ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2;
  return std::clamp(u, -1e15, 1e15);
}

/// The bicubic convolution weight (A = -0.75) of tap k (-1..2) at fraction t.
inline double GridSampleCubic(double t, int k) {
  constexpr double kA = -0.75;
  const double d = std::fabs(t - k);
  if (d <= 1) return ((kA + 2) * d - (kA + 3)) * d * d + 1;
  if (d < 2) return ((kA * d - 5 * kA) * d + 8 * kA) * d - 4 * kA;
  return 0;
}

/// y [n, c, ho, wo] sampled from x [n, c, h, w] at grid [n, ho, wo, 2] ((x, y) pairs in
/// [-1, 1]); points with a NaN coordinate and taps outside the image give 0.
template <class C>
void GridSample(const C* x, int64_t n, int64_t c, int64_t h, int64_t w, const C* grid, int64_t ho,
                int64_t wo, const GridSampleOptions& o, C* y) {
  const bool align = o.align_corners;
  // Offset of (yy, xx) in a plane, or -1 outside it.
  auto offset = [&](int64_t yy, int64_t xx) -> int64_t {
    return yy < 0 || yy >= h || xx < 0 || xx >= w ? -1 : yy * w + xx;
  };
  int64_t off[16];
  double weight[16];
  double tx = 0, ty = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t p = 0; p < ho * wo; ++p) {
      const C* g = grid + (b * ho * wo + p) * 2;
      const bool usable =
          !std::isnan(static_cast<double>(g[0])) && !std::isnan(static_cast<double>(g[1]));
      const double ux = GridSampleUnnormalize(g[0], w, align);
      const double uy = GridSampleUnnormalize(g[1], h, align);
      if (!usable) {
        // Every channel 0.
      } else if (o.mode == GridSampleMode::kBicubic) {
        const double x0 = std::floor(ux), y0 = std::floor(uy);
        tx = ux - x0;
        ty = uy - y0;
        for (int dy = -1, k = 0; dy <= 2; ++dy) {
          for (int dx = -1; dx <= 2; ++dx, ++k) {
            const double sx = GridSampleCoord(x0 + dx, w, o.padding, align);
            const double sy = GridSampleCoord(y0 + dy, h, o.padding, align);
            off[k] = offset(static_cast<int64_t>(sy), static_cast<int64_t>(sx));
            weight[k] = GridSampleCubic(tx, dx) * GridSampleCubic(ty, dy);
          }
        }
      } else {
        const double sx = GridSampleCoord(ux, w, o.padding, align);
        const double sy = GridSampleCoord(uy, h, o.padding, align);
        if (o.mode == GridSampleMode::kNearest) {
          off[0] = offset(static_cast<int64_t>(std::nearbyint(sy)),
                          static_cast<int64_t>(std::nearbyint(sx)));
        } else {
          const double x0 = std::floor(sx), y0 = std::floor(sy);
          tx = sx - x0;
          ty = sy - y0;
          const int64_t ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0);
          off[0] = offset(iy, ix);
          off[1] = offset(iy, ix + 1);
          off[2] = offset(iy + 1, ix);
          off[3] = offset(iy + 1, ix + 1);
        }
      }
      for (int64_t ch = 0; ch < c; ++ch) {
        const C* plane = x + (b * c + ch) * h * w;
        auto at = [&](int k) { return off[k] < 0 ? 0.0 : static_cast<double>(plane[off[k]]); };
        double v = 0;
        if (!usable) {
          v = 0;
        } else if (o.mode == GridSampleMode::kBicubic) {
          for (int k = 0; k < 16; ++k) v += weight[k] * at(k);
        } else if (o.mode == GridSampleMode::kNearest) {
          v = at(0);
        } else {
          v = at(0) * (1 - tx) * (1 - ty) + at(1) * tx * (1 - ty) + at(2) * (1 - tx) * ty +
              at(3) * tx * ty;
        }
        y[(b * c + ch) * ho * wo + p] = static_cast<C>(v);
      }
    }
  }
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_GRID_SAMPLE_H_

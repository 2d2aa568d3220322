// Reference GridSample: every output element computes its own source coordinates and taps,
// channel by channel, as the op did before the kernel split. The oracle for
// kernels/grid_sample.h in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_GRID_SAMPLE_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_GRID_SAMPLE_H_

#include <cmath>
#include <cstdint>

#include "runtime/kernels/grid_sample.h"

namespace onnx_bcast::runtime::kernels::reference {

/// Same contract as kernels::GridSample.
template <class C>
void GridSample(const C* x, int64_t n, int64_t c, int64_t h, int64_t w, const C* grid, int64_t ho,
                int64_t wo, const GridSampleOptions& o, C* y) {
  const bool align = o.align_corners;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < ho; ++i) {
      for (int64_t j = 0; j < wo; ++j) {
        const C* g = grid + ((b * ho + i) * wo + j) * 2;
        for (int64_t ch = 0; ch < c; ++ch) {
          const C* plane = x + (b * c + ch) * h * w;
          auto at = [&](int64_t yy, int64_t xx) -> double {
            if (yy < 0 || yy >= h || xx < 0 || xx >= w) return 0.0;
            return static_cast<double>(plane[yy * w + xx]);
          };
          const double ux = GridSampleUnnormalize(g[0], w, align);
          const double uy = GridSampleUnnormalize(g[1], h, align);
          double v = 0;
          if (std::isnan(static_cast<double>(g[0])) || std::isnan(static_cast<double>(g[1]))) {
            v = 0;
          } else if (o.mode == GridSampleMode::kBicubic) {
            const double x0 = std::floor(ux), y0 = std::floor(uy);
            const double tx = ux - x0, ty = uy - y0;
            for (int dy = -1; dy <= 2; ++dy) {
              for (int dx = -1; dx <= 2; ++dx) {
                const double sx = GridSampleCoord(x0 + dx, w, o.padding, align);
                const double sy = GridSampleCoord(y0 + dy, h, o.padding, align);
                v += GridSampleCubic(tx, dx) * GridSampleCubic(ty, dy) *
                     at(static_cast<int64_t>(sy), static_cast<int64_t>(sx));
              }
            }
          } else {
            const double sx = GridSampleCoord(ux, w, o.padding, align);
            const double sy = GridSampleCoord(uy, h, o.padding, align);
            if (o.mode == GridSampleMode::kNearest) {
              v = at(static_cast<int64_t>(std::nearbyint(sy)),
                     static_cast<int64_t>(std::nearbyint(sx)));
            } else {
              const double x0 = std::floor(sx), y0 = std::floor(sy);
              const double tx = sx - x0, ty = sy - y0;
              const int64_t ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0);
              v = at(iy, ix) * (1 - tx) * (1 - ty) + at(iy, ix + 1) * tx * (1 - ty) +
                  at(iy + 1, ix) * (1 - tx) * ty + at(iy + 1, ix + 1) * tx * ty;
            }
          }
          y[((b * c + ch) * ho + i) * wo + j] = static_cast<C>(v);
        }
      }
    }
  }
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_GRID_SAMPLE_H_

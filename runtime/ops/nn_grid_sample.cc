// GridSample (opset 16, 2-D): samples X [N, C, H, W] at the normalized grid [N, Ho, Wo, 2]
// with nearest, bilinear or bicubic interpolation and zeros, border or reflection padding,
// following PyTorch's grid_sampler (which the ONNX op mirrors).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "runtime/ops/nn_common.h"
#include "runtime/ops/op.h"

namespace onnx_bcast::rt {
namespace {

enum class Padding { kZeros, kBorder, kReflection };

// Reflects `x` into [low/2, high/2] (bounds given doubled so they stay integers).
double Reflect(double x, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return 0;
  const double min = twice_low / 2.0, span = (twice_high - twice_low) / 2.0;
  x = std::fabs(x - min);
  const double extra = std::fmod(x, span);
  const int64_t flips = static_cast<int64_t>(std::floor(x / span));
  return flips % 2 == 0 ? extra + min : span - extra + min;
}

// Applies border clamping or reflection to a source coordinate along a dim of `size`.
double ComputeCoord(double x, int64_t size, Padding padding, bool align_corners) {
  if (padding == Padding::kBorder) return std::clamp(x, 0.0, static_cast<double>(size - 1));
  if (padding == Padding::kReflection) {
    x = align_corners ? Reflect(x, 0, 2 * (size - 1)) : Reflect(x, -1, 2 * size - 1);
    return std::clamp(x, 0.0, static_cast<double>(size - 1));
  }
  return x;
}

double Unnormalize(double g, int64_t size, bool align_corners) {
  return align_corners ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2;
}

double CubicCoeff(double t, int k) {
  constexpr double kA = -0.75;
  const double d = std::fabs(t - k);
  if (d <= 1) return ((kA + 2) * d - (kA + 3)) * d * d + 1;
  if (d < 2) return ((kA * d - 5 * kA) * d + 8 * kA) * d - 4 * kA;
  return 0;
}

}  // namespace

absl::Status GridSampleOp(OpContext& ctx) {
  absl::StatusOr<const Tensor*> xs = ctx.RequireInput(0);
  if (!xs.ok()) return xs.status();
  absl::StatusOr<const Tensor*> gs = ctx.RequireInput(1);
  if (!gs.ok()) return gs.status();
  const Tensor &x = **xs, &grid = **gs;
  if (x.rank() != 4 || grid.rank() != 4 || grid.shape()[3] != 2 ||
      grid.shape()[0] != x.shape()[0]) {
    return ctx.Unsupported("only 2-D GridSample (X [N,C,H,W], grid [N,Ho,Wo,2])");
  }
  const std::string mode = ctx.node().GetString("mode", "bilinear");
  const std::string pad_name = ctx.node().GetString("padding_mode", "zeros");
  const bool align = ctx.node().GetInt("align_corners", 0) != 0;
  const Padding padding = pad_name == "border"       ? Padding::kBorder
                          : pad_name == "reflection" ? Padding::kReflection
                                                     : Padding::kZeros;
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") {
    return ctx.Unsupported("mode '" + mode + "'");
  }
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t ho = grid.shape()[1], wo = grid.shape()[2];
  absl::StatusOr<Tensor*> y = ctx.Allocate(0, x.dtype(), {n, c, ho, wo});
  if (!y.ok()) return y.status();
  return nn::VisitFloat(ctx, x.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> xv(x), gv(grid);
    nn::ComputeOut<C> yv(*y);
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t i = 0; i < ho; ++i) {
        for (int64_t j = 0; j < wo; ++j) {
          const C* g = gv.data() + ((b * ho + i) * wo + j) * 2;
          // Huge coordinates are clamped where they still sample only padding (or the
          // border), so the integer conversions below stay defined; NaN samples nothing.
          const bool usable =
              !std::isnan(static_cast<double>(g[0])) && !std::isnan(static_cast<double>(g[1]));
          const double ux = std::clamp(Unnormalize(g[0], w, align), -1e15, 1e15);
          const double uy = std::clamp(Unnormalize(g[1], h, align), -1e15, 1e15);
          for (int64_t ch = 0; ch < c; ++ch) {
            const C* plane = xv.data() + (b * c + ch) * h * w;
            auto at = [&](int64_t yy, int64_t xx) -> double {
              if (yy < 0 || yy >= h || xx < 0 || xx >= w) return 0.0;
              return static_cast<double>(plane[yy * w + xx]);
            };
            double v = 0;
            if (!usable) {
              v = 0;
            } else if (mode == "bicubic") {
              const double x0 = std::floor(ux), y0 = std::floor(uy);
              const double tx = ux - x0, ty = uy - y0;
              for (int dy = -1; dy <= 2; ++dy) {
                for (int dx = -1; dx <= 2; ++dx) {
                  const double sx = ComputeCoord(x0 + dx, w, padding, align);
                  const double sy = ComputeCoord(y0 + dy, h, padding, align);
                  v += CubicCoeff(tx, dx) * CubicCoeff(ty, dy) *
                       at(static_cast<int64_t>(sy), static_cast<int64_t>(sx));
                }
              }
            } else {
              const double sx = ComputeCoord(ux, w, padding, align);
              const double sy = ComputeCoord(uy, h, padding, align);
              if (mode == "nearest") {
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
            yv.data()[((b * c + ch) * ho + i) * wo + j] = static_cast<C>(v);
          }
        }
      }
    }
    yv.Finish();
    return absl::OkStatus();
  });
}

}  // namespace onnx_bcast::rt

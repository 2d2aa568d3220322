// RoiAlign (opset 10, 16): average or max of bilinear samples on a regular grid inside each
// output bin of each region of interest, as the ONNX reference and onnxruntime compute it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "runtime/ops/nn_common.h"
#include "runtime/ops/op.h"

namespace onnx_bcast::rt {
namespace {

// Bilinear sample of a [h, w] plane at (y, x) with RoiAlign's edge rules; 0 outside.
template <class C>
double Sample(const C* plane, int64_t h, int64_t w, double y, double x, bool max_mode,
              double* max_term) {
  // Written so that NaN (from a NaN roi or scale) counts as outside, like onnxruntime's
  // bounds test; casting it to an index is undefined (found by fuzz_run).
  if (!(y >= -1.0 && y <= h && x >= -1.0 && x <= w)) {
    *max_term = 0;
    return 0;
  }
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
  if (y0 >= h - 1) {
    y0 = y1 = h - 1;
    y = static_cast<double>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= w - 1) {
    x0 = x1 = w - 1;
    x = static_cast<double>(x0);
  } else {
    x1 = x0 + 1;
  }
  const double ly = y - y0, lx = x - x0, hy = 1 - ly, hx = 1 - lx;
  const double t1 = hy * hx * plane[y0 * w + x0], t2 = hy * lx * plane[y0 * w + x1];
  const double t3 = ly * hx * plane[y1 * w + x0], t4 = ly * lx * plane[y1 * w + x1];
  if (max_mode) *max_term = std::max({t1, t2, t3, t4});
  return t1 + t2 + t3 + t4;
}

}  // namespace

absl::Status RoiAlignOp(OpContext& ctx) {
  std::vector<const Tensor*> in(3);
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<const Tensor*> t = ctx.RequireInput(i);
    if (!t.ok()) return t.status();
    in[i] = *t;
  }
  const Tensor &x = *in[0], &rois = *in[1];
  if (x.rank() != 4 || rois.rank() != 2 || rois.shape()[1] != 4 ||
      in[2]->num_elements() != rois.shape()[0]) {
    return ctx.Error("expects X [N,C,H,W], rois [R,4], batch_indices [R]");
  }
  const Node& node = ctx.node();
  const int64_t oh = node.GetInt("output_height", 1), ow = node.GetInt("output_width", 1);
  const int64_t ratio = node.GetInt("sampling_ratio", 0);
  const double scale = node.GetFloat("spatial_scale", 1.0f);
  const bool max_mode = node.GetString("mode", "avg") == "max";
  const bool half_pixel = ctx.opset() >= 16 && node.GetString("coordinate_transformation_mode",
                                                              "half_pixel") == "half_pixel";
  if (oh <= 0 || ow <= 0 || ratio < 0 || oh > (1 << 20) || ow > (1 << 20)) {
    return ctx.Error("output_height/output_width must be positive, sampling_ratio >= 0");
  }
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t r = rois.shape()[0];
  std::vector<int64_t> batch = nn::LoadInts(*in[2]);
  for (int64_t b : batch) {
    if (b < 0 || b >= n) return ctx.Error("batch index out of range");
  }
  absl::StatusOr<Tensor*> y = ctx.Allocate(0, x.dtype(), {r, c, oh, ow});
  if (!y.ok()) return y.status();
  return nn::VisitFloat(ctx, x.dtype(), [&](auto tag) -> absl::Status {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> xv(x), rv(rois);
    nn::ComputeOut<C> yv(*y);
    const double offset = half_pixel ? 0.5 : 0.0;
    for (int64_t i = 0; i < r; ++i) {
      const C* roi = rv.data() + i * 4;
      for (int k = 0; k < 4; ++k) {
        if (!std::isfinite(static_cast<double>(roi[k])) || std::fabs(roi[k] * scale) > 1e9) {
          return ctx.Error("rois must be finite and below 1e9 after spatial_scale");
        }
      }
      const double sw = roi[0] * scale - offset, sh = roi[1] * scale - offset;
      double rw = roi[2] * scale - offset - sw, rh = roi[3] * scale - offset - sh;
      if (!half_pixel) {
        rw = std::max(rw, 1.0);
        rh = std::max(rh, 1.0);
      }
      const double bh = rh / oh, bw = rw / ow;
      const int64_t gh = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / oh));
      const int64_t gw = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / ow));
      if (gh > (1 << 16) || gw > (1 << 16)) return ctx.Error("sampling grid too large");
      const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
      for (int64_t ch = 0; ch < c; ++ch) {
        const C* plane = xv.data() + (batch[i] * c + ch) * h * w;
        for (int64_t py = 0; py < oh; ++py) {
          for (int64_t px = 0; px < ow; ++px) {
            double sum = 0, best = -INFINITY;
            for (int64_t iy = 0; iy < gh; ++iy) {
              const double yy = sh + py * bh + (iy + 0.5) * bh / gh;
              for (int64_t ix = 0; ix < gw; ++ix) {
                const double xx = sw + px * bw + (ix + 0.5) * bw / gw;
                double term = 0;
                sum += Sample(plane, h, w, yy, xx, max_mode, &term);
                best = std::max(best, term);
              }
            }
            yv.data()[((i * c + ch) * oh + py) * ow + px] =
                static_cast<C>(max_mode ? (gh * gw > 0 ? best : 0.0) : sum / count);
          }
        }
      }
    }
    yv.Finish();
    return absl::OkStatus();
  });
}

}  // namespace onnx_bcast::rt

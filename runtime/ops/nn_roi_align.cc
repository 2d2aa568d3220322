// RoiAlign (opset 10, 16): reads the attributes and checks the regions (finite, bounded
// sampling grids); the pooling of bilinear samples is kernels/roi_align.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/kernels/roi_align.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/op.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {

absl::Status RoiAlignOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const std::vector<const Tensor*> in, ctx.RequireInputs(3));
  const Tensor &x = *in[0], &rois = *in[1];
  if (x.rank() != 4 || rois.rank() != 2 || rois.shape()[1] != 4 ||
      in[2]->num_elements() != rois.shape()[0]) {
    return ctx.Error("expects X [N,C,H,W], rois [R,4], batch_indices [R]");
  }
  const Node& node = ctx.node();
  kernels::RoiAlignOptions opts;
  opts.output_height = node.GetInt("output_height", 1);
  opts.output_width = node.GetInt("output_width", 1);
  opts.sampling_ratio = node.GetInt("sampling_ratio", 0);
  opts.spatial_scale = node.GetFloat("spatial_scale", 1.0f);
  opts.max_mode = node.GetString("mode", "avg") == "max";
  opts.half_pixel = ctx.opset() >= 16 &&
                    node.GetString("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  const int64_t oh = opts.output_height, ow = opts.output_width;
  if (oh <= 0 || ow <= 0 || opts.sampling_ratio < 0 || oh > (1 << 20) || ow > (1 << 20)) {
    return ctx.Error("output_height/output_width must be positive, sampling_ratio >= 0");
  }
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t r = rois.shape()[0];
  std::vector<int64_t> batch = nn::LoadInts(*in[2]);
  for (int64_t b : batch) {
    if (b < 0 || b >= n) return ctx.Error("batch index out of range");
  }
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, x.dtype(), {r, c, oh, ow}));
  return nn::VisitFloat(ctx, x.dtype(), [&](auto tag) -> absl::Status {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> xv(x), rv(rois);
    for (int64_t i = 0; i < r; ++i) {
      const C* roi = rv.data() + i * 4;
      for (int k = 0; k < 4; ++k) {
        if (!std::isfinite(static_cast<double>(roi[k])) ||
            std::fabs(roi[k] * opts.spatial_scale) > 1e9) {
          return ctx.Error("rois must be finite and below 1e9 after spatial_scale");
        }
      }
      const kernels::RoiBins bins = kernels::RoiAlignBins(roi, opts);
      if (bins.grid_h > (1 << 16) || bins.grid_w > (1 << 16)) {
        return ctx.Error("sampling grid too large");
      }
    }
    nn::ComputeOut<C> yv(y);
    if (h == 0 || w == 0) {
      // An empty image: every sample lies outside it and counts 0, in both modes (the kernel's
      // clamped bilinear taps would read its first pixel, which does not exist).
      std::fill(yv.data(), yv.data() + r * c * oh * ow, C(0));
      yv.Finish();
      return absl::OkStatus();
    }
    kernels::RoiAlign(xv.data(), c, h, w, rv.data(), batch.data(), r, opts, yv.data());
    yv.Finish();
    return absl::OkStatus();
  });
}

}  // namespace onnx_bcast::runtime

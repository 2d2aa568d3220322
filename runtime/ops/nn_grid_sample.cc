// GridSample (opset 16, 2-D): samples X [N, C, H, W] at the normalized grid [N, Ho, Wo, 2]
// with nearest, bilinear or bicubic interpolation and zeros, border or reflection padding,
// following PyTorch's grid_sampler (which the ONNX op mirrors). The op validates and reads
// attributes; the sampling is kernels/grid_sample.h.
#include <cstdint>
#include <string>

#include "runtime/kernels/grid_sample.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/op.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {

absl::Status GridSampleOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* xs, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(const Tensor* gs, ctx.RequireInput(1));
  const Tensor &x = *xs, &grid = *gs;
  if (x.rank() != 4 || grid.rank() != 4 || grid.shape()[3] != 2 ||
      grid.shape()[0] != x.shape()[0]) {
    return ctx.Unsupported("only 2-D GridSample (X [N,C,H,W], grid [N,Ho,Wo,2])");
  }
  const std::string mode = ctx.node().GetString("mode", "bilinear");
  const std::string pad_name = ctx.node().GetString("padding_mode", "zeros");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") {
    return ctx.Unsupported("mode '" + mode + "'");
  }
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t ho = grid.shape()[1], wo = grid.shape()[2];
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, x.dtype(), {n, c, ho, wo}));
  kernels::GridSampleOptions opts;
  opts.mode = mode == "nearest"   ? kernels::GridSampleMode::kNearest
              : mode == "bicubic" ? kernels::GridSampleMode::kBicubic
                                  : kernels::GridSampleMode::kBilinear;
  opts.padding = pad_name == "border"       ? kernels::GridSamplePadding::kBorder
                 : pad_name == "reflection" ? kernels::GridSamplePadding::kReflection
                                            : kernels::GridSamplePadding::kZeros;
  opts.align_corners = ctx.node().GetInt("align_corners", 0) != 0;
  return nn::VisitFloat(ctx, x.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> xv(x), gv(grid);
    nn::ComputeOut<C> yv(y);
    kernels::GridSample(xv.data(), n, c, h, w, gv.data(), ho, wo, opts, yv.data());
    yv.Finish();
    return absl::OkStatus();
  });
}

}  // namespace onnx_bcast::runtime

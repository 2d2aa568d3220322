// Op family table: neural-network ops. Convolutions and pooling (window geometry from
// kernel_shape/strides/dilations/pads/auto_pad, then kernels/conv.h and pool.h) and the
// normalizations; Resize/Upsample live in nn_resize.cc, GridSample in nn_grid_sample.cc,
// RoiAlign in nn_roi_align.cc, NonMaxSuppression in nn_nms.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "broadcast/view.h"
#include "runtime/checked_int.h"
#include "runtime/kernels/channel_blocks.h"
#include "runtime/kernels/conv.h"
#include "runtime/kernels/movement.h"
#include "runtime/kernels/norm.h"
#include "runtime/kernels/pool.h"
#include "runtime/kernels/qlinear.h"
#include "runtime/kernels/unary.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/registry.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {

// nn_resize.cc.
absl::Status ResizeOp(OpContext& ctx);
absl::Status UpsampleOp(OpContext& ctx);
// nn_grid_sample.cc.
absl::Status GridSampleOp(OpContext& ctx);
// nn_roi_align.cc.
absl::Status RoiAlignOp(OpContext& ctx);
// nn_nms.cc.
absl::Status NonMaxSuppressionOp(OpContext& ctx);

namespace {

using kernels::WindowGeometry;

// Window geometry of a conv or pool over `in` with `kernel`; `ceil_mode` for pooling.
absl::StatusOr<WindowGeometry> MakeGeometry(const OpContext& ctx, const std::vector<int64_t>& in,
                                            const std::vector<int64_t>& kernel, bool ceil_mode) {
  const Node& node = ctx.node();
  const size_t rank = in.size();
  WindowGeometry g;
  g.in = in;
  g.kernel = kernel;
  g.strides = node.GetInts("strides", std::vector<int64_t>(rank, 1));
  g.dilations = node.GetInts("dilations", std::vector<int64_t>(rank, 1));
  std::vector<int64_t> pads = node.GetInts("pads", std::vector<int64_t>(2 * rank, 0));
  if (kernel.size() != rank || g.strides.size() != rank || g.dilations.size() != rank ||
      pads.size() != 2 * rank) {
    return ctx.Error(
        absl::StrCat("kernel_shape/strides/dilations/pads do not match ", rank, " spatial dims"));
  }
  const std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  for (size_t d = 0; d < rank; ++d) {
    if (g.strides[d] <= 0 || g.dilations[d] <= 0 || kernel[d] <= 0 || pads[d] < 0 ||
        pads[d + rank] < 0) {
      return ctx.Error("strides, dilations and kernel must be positive, pads non-negative");
    }
    constexpr int64_t kLimit = int64_t{1} << 31;
    if (kernel[d] > kLimit || g.dilations[d] > kLimit || g.strides[d] > kLimit ||
        pads[d] > kLimit || pads[d + rank] > kLimit) {
      return ctx.Error("kernel, dilation, stride or pad above 2^31");
    }
    const int64_t ek = (kernel[d] - 1) * g.dilations[d] + 1;
    const int64_t s = g.strides[d];
    int64_t pb = pads[d], pe = pads[d + rank], out;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out = (in[d] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + ek - in[d]);
      pb = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else if (auto_pad == "VALID") {
      pb = pe = 0;
      out = in[d] >= ek ? (in[d] - ek) / s + 1 : 0;
    } else if (auto_pad == "NOTSET" || auto_pad.empty()) {
      const int64_t span = in[d] + pb + pe - ek;
      if (span < 0) {
        out = 0;
      } else if (ceil_mode) {
        out = (span + s - 1) / s + 1;
        // The last window must start inside the input or the left padding.
        if ((out - 1) * s >= in[d] + pb) --out;
      } else {
        out = span / s + 1;
      }
    } else {
      return ctx.Error("unknown auto_pad '" + auto_pad + "'");
    }
    g.pads_begin.push_back(pb);
    g.pads_end.push_back(pe);
    g.out.push_back(out);
  }
  // Each output dim fits int64, but pads up to 2^31 on every side of several dims make their
  // product overflow (UBSan in WindowGeometry::out_size); kernel_shape is an attribute too.
  if (!CheckedProduct(g.out).has_value()) {
    return ctx.Error(
        absl::StrCat("output spatial dims ", ShapeToString(g.out), " multiply past int64"));
  }
  if (!CheckedProduct(g.kernel).has_value()) {
    return ctx.Error(
        absl::StrCat("kernel_shape ", ShapeToString(g.kernel), " multiplies past int64"));
  }
  return g;
}

// The spatial dims of an [N, C, spatial...] tensor, or an error.
absl::StatusOr<std::vector<int64_t>> Spatial(const OpContext& ctx, const Tensor& x) {
  if (x.rank() < 3) {
    return ctx.Error("input " + ShapeToString(x.shape()) + " must be [N, C, spatial...]");
  }
  return std::vector<int64_t>(x.shape().begin() + 2, x.shape().end());
}

std::vector<int64_t> OutShape(int64_t n, int64_t c, const std::vector<int64_t>& spatial) {
  std::vector<int64_t> s = {n, c};
  s.insert(s.end(), spatial.begin(), spatial.end());
  return s;
}

absl::Status ConvCompute(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* xs, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(const Tensor* ws, ctx.RequireInput(1));
  const Tensor &x = *xs, &w = *ws;
  const Tensor* b = ctx.input(2);
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> in, Spatial(ctx, x));
  const int64_t group = ctx.node().GetInt("group", 1);
  if (w.rank() != x.rank()) return ctx.Error("W must have the rank of X");
  const int64_t n = x.shape()[0], c = x.shape()[1], m = w.shape()[0];
  if (group <= 0 || nn::CheckedMul(w.shape()[1], group) != c || m % group != 0) {
    return ctx.Error(absl::StrCat("channels do not match: X ", ShapeToString(x.shape()), " W ",
                                  ShapeToString(w.shape()), " group ", group));
  }
  if (b != nullptr && b->num_elements() != m) return ctx.Error("B must have M elements");
  if (x.dtype() != w.dtype()) return ctx.Error("X and W dtypes differ");
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  if (ctx.node().Has("kernel_shape") && ctx.node().GetInts("kernel_shape") != kernel) {
    return ctx.Error("kernel_shape does not match W");
  }
  BCAST_ASSIGN_OR_RETURN(WindowGeometry g, MakeGeometry(ctx, in, kernel, false));
  if (std::optional<int64_t> col = nn::CheckedMul(c / group * g.kernel_size(), g.out_size());
      !col || *col > ctx.options().max_tensor_elements) {
    return absl::ResourceExhaustedError(ctx.node().Label() + ": im2col buffer too large");
  }
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, x.dtype(), OutShape(n, m, g.out)));
  if (y->num_elements() == 0) return absl::OkStatus();
  kernels::ParallelFor parallel_for;
  const kernels::ParallelFor* parallel = nn::KernelThreads(ctx, &parallel_for);
  // Constant float weights of a 2-D convolution: path chosen and weights packed once per node
  // and shape (issue #32); a run only computes. Weights fed by the run are packed per call.
  if (x.dtype() == DType::kFloat32 && g.rank() == 2 && ctx.input_constant(1) &&
      (b == nullptr || b->dtype() == DType::kFloat32)) {
    const float* wd = w.data<float>();
    kernels::PreparedConv* prepared = ctx.Prepared<kernels::PreparedConv>(wd, [&] {
      return kernels::PrepareConv2D(g, n, c, m, group, wd, b != nullptr,
                                    kernels::DefaultConvChoice(), nullptr, ctx.threads());
    });
    if (prepared != nullptr) {
      // Channel-blocked activations in and out where the path and the executor allow them
      // (kernels/channel_blocks.h): no reorder between consecutive oneDNN convolutions.
      int x_block = ctx.input_block();
      if (!prepared->takes_block(x_block)) {
        BCAST_RETURN_IF_ERROR(ctx.UnblockInput());
        x_block = 0;
      }
      const int y_block = ctx.output_block_allowed() ? prepared->out_block() : 0;
      if (prepared->RunBlocked(ctx.input(0)->data<float>(), x_block, wd,
                               b != nullptr ? b->data<float>() : nullptr, y->data<float>(),
                               y_block, parallel)) {
        ctx.set_output_block(y_block);
        return absl::OkStatus();
      }
    }
  }
  // The paths below read NCHW; unblocking replaces input 0, so it is looked up again.
  BCAST_RETURN_IF_ERROR(ctx.UnblockInput());
  const Tensor& xu = *ctx.input(0);
  return nn::VisitFloat(ctx, x.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> xv(xu), wv(w);
    std::optional<nn::ComputeIn<C>> bv;
    if (b != nullptr) bv.emplace(*b);
    nn::ComputeOut<C> yv(y);
    kernels::Conv<C>(g, n, c, m, group, xv.data(), wv.data(), bv ? bv->data() : nullptr, yv.data(),
                     ctx.threads(), parallel);
    yv.Finish();
    return absl::OkStatus();
  });
}

absl::Status ConvOp(OpContext& ctx) {
  if (absl::Status s = ConvCompute(ctx); !s.ok() || !ctx.fused_relu()) return s;
  // The Relu the executor runs inside this node (OpContext::fused_relu): its own kernel, in
  // place on the output the convolution just wrote (still in cache), so the same bits.
  Tensor* y = ctx.output(0);
  if (y == nullptr) return ctx.Error("fused Relu without an output");
  return Unary(UnaryKind::kRelu, UnaryParams{}, *y, y, ctx.ThreadedOptions<UnaryOptions>());
}

// An 8-bit tensor minus its zero point (scalar, or per `channel_axis` slice) as double.
// `t` is int8 or uint8 (the ops check).
absl::StatusOr<std::vector<double>> CenterInts(const OpContext& ctx, const Tensor& t,
                                               const Tensor* zp) {
  std::vector<int64_t> z = zp != nullptr ? nn::LoadInts(*zp) : std::vector<int64_t>{0};
  if (z.empty()) z = {0};
  if (z.size() > 1 && (t.rank() == 0 || static_cast<int64_t>(z.size()) != t.shape()[0])) {
    return ctx.Error("zero point size does not match");
  }
  // Checked first: a per-channel zero point of a [0, ...] tensor divided by zero here.
  const int64_t per = z.size() > 1 ? t.num_elements() / t.shape()[0] : 1;
  const kernels::SliceParam<int64_t> param{z.data(), static_cast<int64_t>(z.size()), per};
  std::vector<double> out(static_cast<size_t>(t.num_elements()));
  if (t.dtype() == DType::kInt8) {
    kernels::SubtractZeroPoint(t.data<int8_t>(), t.num_elements(), param, out.data());
  } else {
    kernels::SubtractZeroPoint(t.data<uint8_t>(), t.num_elements(), param, out.data());
  }
  return out;
}

// What ConvInteger and QLinearConv both derive from X and W: batch, channels, feature maps,
// group, and the window geometry of the spatial dims.
struct IntegerConvShape {
  int64_t n, c, m, group;
  WindowGeometry geometry;
};

absl::StatusOr<IntegerConvShape> IntegerConvGeometry(OpContext& ctx, const Tensor& x,
                                                     const Tensor& w) {
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> spatial, Spatial(ctx, x));
  const int64_t group = ctx.node().GetInt("group", 1);
  if (w.rank() != x.rank()) return ctx.Error("W must have the rank of X");
  const int64_t n = x.shape()[0], c = x.shape()[1], m = w.shape()[0];
  if (group <= 0 || nn::CheckedMul(w.shape()[1], group) != c || m % group != 0) {
    return ctx.Error("channels do not match");
  }
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  BCAST_ASSIGN_OR_RETURN(WindowGeometry g, MakeGeometry(ctx, spatial, kernel, false));
  return IntegerConvShape{n, c, m, group, std::move(g)};
}

absl::Status ConvIntegerOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* xs, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(const Tensor* ws, ctx.RequireInput(1));
  const Tensor &x = *xs, &w = *ws;
  for (const Tensor* t : {&x, &w}) {
    if (t->dtype() != DType::kInt8 && t->dtype() != DType::kUInt8) {
      return ctx.Error("ConvInteger takes int8 or uint8 inputs");
    }
  }
  BCAST_ASSIGN_OR_RETURN(IntegerConvShape shape, IntegerConvGeometry(ctx, x, w));
  const int64_t n = shape.n, c = shape.c, m = shape.m, group = shape.group;
  const WindowGeometry* g = &shape.geometry;
  const Tensor* xz = ctx.input(2);
  if (xz != nullptr && xz->num_elements() > 1) {
    return ctx.Unsupported("per-channel x_zero_point");
  }
  BCAST_ASSIGN_OR_RETURN(std::vector<double> xv, CenterInts(ctx, x, xz));
  BCAST_ASSIGN_OR_RETURN(std::vector<double> wv, CenterInts(ctx, w, ctx.input(3)));
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, DType::kInt32, OutShape(n, m, g->out)));
  std::vector<double> out(static_cast<size_t>(y->num_elements()));
  if (!out.empty()) {
    kernels::Conv<double>(*g, n, c, m, group, xv.data(), wv.data(), nullptr, out.data());
  }
  kernels::RoundToInt32(out.data(), y->num_elements(), y->data<int32_t>());
  return absl::OkStatus();
}

absl::Status QLinearConvOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const std::vector<const Tensor*> in, ctx.RequireInputs(8));
  const Tensor &x = *in[0], &w = *in[3], &y_zp = *in[7];
  const Tensor* bias = ctx.input(8);
  for (const Tensor* t : {&x, &w, &y_zp}) {
    if (t->dtype() != DType::kInt8 && t->dtype() != DType::kUInt8) {
      return ctx.Error("QLinearConv takes int8 or uint8 tensors");
    }
  }
  BCAST_ASSIGN_OR_RETURN(IntegerConvShape shape, IntegerConvGeometry(ctx, x, w));
  const int64_t n = shape.n, c = shape.c, m = shape.m, group = shape.group;
  const WindowGeometry* g = &shape.geometry;
  if (in[2]->num_elements() > 1) return ctx.Unsupported("per-channel x_zero_point");
  if (bias != nullptr && bias->num_elements() != m) return ctx.Error("B must have M elements");
  BCAST_ASSIGN_OR_RETURN(std::vector<double> xv, CenterInts(ctx, x, in[2]));
  BCAST_ASSIGN_OR_RETURN(std::vector<double> wv, CenterInts(ctx, w, in[5]));
  const Tensor& w_scale = *in[4];
  if (w_scale.num_elements() != 1 && w_scale.num_elements() != m) {
    return ctx.Error("w_scale must be a scalar or have M elements");
  }
  const double x_scale = nn::LoadAsDouble(*in[1], 0), y_scale = nn::LoadAsDouble(*in[6], 0);
  if (y_scale == 0) return ctx.Error("y_scale is zero");
  const int64_t zp = static_cast<int64_t>(nn::LoadAsDouble(y_zp, 0));
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, y_zp.dtype(), OutShape(n, m, g->out)));
  std::vector<double> acc(static_cast<size_t>(y->num_elements()));
  if (acc.empty()) return absl::OkStatus();
  std::vector<double> b(static_cast<size_t>(m), 0.0);
  if (bias != nullptr) {
    for (int64_t i = 0; i < m; ++i) b[i] = nn::LoadAsDouble(*bias, i);
  }
  kernels::Conv<double>(*g, n, c, m, group, xv.data(), wv.data(), b.data(), acc.data());
  std::vector<double> ws(static_cast<size_t>(w_scale.num_elements()));
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = nn::LoadAsDouble(w_scale, i);
  // Output [n, m, spatial...]: w_scale per feature map m (or one value).
  const kernels::SliceParam<double> xs{&x_scale},
      per_map{ws.data(), w_scale.num_elements(), g->out_size()};
  const int64_t count = static_cast<int64_t>(acc.size());
  if (y_zp.dtype() == DType::kUInt8) {
    kernels::Requantize(acc.data(), count, xs, per_map, y_scale, zp, y->data<uint8_t>());
  } else {
    kernels::Requantize(acc.data(), count, xs, per_map, y_scale, zp, y->data<int8_t>());
  }
  return absl::OkStatus();
}

// Python-style floor division (ConvTranspose pads may come out negative).
int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

absl::Status ConvTransposeOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* xs, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(const Tensor* ws, ctx.RequireInput(1));
  const Tensor &x = *xs, &w = *ws;
  const Tensor* b = ctx.input(2);
  const Node& node = ctx.node();
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> in, Spatial(ctx, x));
  const size_t rank = in.size();
  const int64_t group = node.GetInt("group", 1);
  if (w.rank() != x.rank() || group <= 0) return ctx.Error("W must have the rank of X");
  const std::optional<int64_t> maps = nn::CheckedMul(w.shape()[1], group);
  if (!maps) return ctx.Error("group too large");
  const int64_t n = x.shape()[0], c = x.shape()[1], m = *maps;
  if (w.shape()[0] != c || c % group != 0) return ctx.Error("channels do not match");
  if (b != nullptr && b->num_elements() != m) return ctx.Error("B must have M elements");
  if (x.dtype() != w.dtype()) return ctx.Error("X and W dtypes differ");
  WindowGeometry g;
  g.in = in;
  g.kernel.assign(w.shape().begin() + 2, w.shape().end());
  g.strides = node.GetInts("strides", std::vector<int64_t>(rank, 1));
  g.dilations = node.GetInts("dilations", std::vector<int64_t>(rank, 1));
  std::vector<int64_t> pads = node.GetInts("pads", std::vector<int64_t>(2 * rank, 0));
  std::vector<int64_t> out_pad = node.GetInts("output_padding", std::vector<int64_t>(rank, 0));
  std::vector<int64_t> out_shape = node.GetInts("output_shape");
  if (out_shape.size() == rank + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  const std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  if (g.strides.size() != rank || g.dilations.size() != rank || pads.size() != 2 * rank ||
      out_pad.size() != rank || (!out_shape.empty() && out_shape.size() != rank)) {
    return ctx.Error("attributes do not match the spatial rank");
  }
  for (size_t d = 0; d < rank; ++d) {
    constexpr int64_t kLimit = int64_t{1} << 31;
    // Compared both ways, not through std::abs: |INT64_MIN| overflows (UBSan, issue 14).
    auto within = [](int64_t v) { return v >= -kLimit && v <= kLimit; };
    if (g.strides[d] <= 0 || g.dilations[d] <= 0 || g.kernel[d] <= 0 || g.strides[d] > kLimit ||
        g.dilations[d] > kLimit || g.kernel[d] > kLimit || !within(pads[d]) ||
        !within(pads[d + rank]) || !within(out_pad[d]) ||
        (!out_shape.empty() && !within(out_shape[d]))) {
      return ctx.Error("strides, dilations and kernel must be positive and below 2^31");
    }
    const int64_t ek = (g.kernel[d] - 1) * g.dilations[d] + 1;
    // Every term is below 2^62 but the input extent, which the stride multiplies.
    int64_t full = 0, upsampled = 0;
    if (__builtin_mul_overflow(g.strides[d], g.in[d] - 1, &full) ||
        __builtin_add_overflow(full, out_pad[d] + ek, &full) ||
        __builtin_mul_overflow(g.in[d], g.strides[d], &upsampled)) {
      return ctx.Error(absl::StrCat("output extent of spatial axis ", d, " overflows int64"));
    }
    int64_t out, pb, pe;
    if (!out_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out = !out_shape.empty() ? out_shape[d] : upsampled;
      const int64_t total = full - out;
      if (auto_pad == "SAME_UPPER") {
        pb = FloorDiv(total, 2);
        pe = total - pb;
      } else {
        pe = FloorDiv(total, 2);
        pb = total - pe;
      }
    } else {
      pb = auto_pad == "VALID" ? 0 : pads[d];
      pe = auto_pad == "VALID" ? 0 : pads[d + rank];
      out = full - pb - pe;
    }
    if (out < 0) return ctx.Error("negative output size");
    g.out.push_back(out);
    g.pads_begin.push_back(pb);
    g.pads_end.push_back(pe);
  }
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, x.dtype(), OutShape(n, m, g.out)));
  if (y->num_elements() == 0) return absl::OkStatus();
  if (std::optional<int64_t> col = nn::CheckedMul(m / group * g.kernel_size(), g.in_size());
      !col || *col > ctx.options().max_tensor_elements) {
    return absl::ResourceExhaustedError(ctx.node().Label() + ": column buffer too large");
  }
  return nn::VisitFloat(ctx, x.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> xv(x), wv(w);
    std::optional<nn::ComputeIn<C>> bv;
    if (b != nullptr) bv.emplace(*b);
    nn::ComputeOut<C> yv(y);
    kernels::ConvTranspose<C>(g, n, c, m, group, xv.data(), wv.data(), bv ? bv->data() : nullptr,
                              yv.data());
    yv.Finish();
    return absl::OkStatus();
  });
}

// Runs `fn(const C* x, C* y)` with compute views for float types, or on the data itself for
// 8-bit integers (max pooling only: its values are copies, exact in any type; ONNX types the
// other pools float only).
template <kernels::PoolKind kKind, class Fn>
absl::Status WithPoolData(OpContext& ctx, const Tensor& x, Tensor* y, Fn&& fn) {
  const bool eight_bit = x.dtype() == DType::kInt8 || x.dtype() == DType::kUInt8;
  if (eight_bit && kKind != kernels::PoolKind::kMax) {
    return ctx.Unsupported("dtype " + std::string(DTypeName(x.dtype())));
  }
  if (x.dtype() == DType::kInt8) {
    fn(x.data<int8_t>(), y->data<int8_t>());
    return absl::OkStatus();
  }
  if (x.dtype() == DType::kUInt8) {
    fn(x.data<uint8_t>(), y->data<uint8_t>());
    return absl::OkStatus();
  }
  return nn::VisitFloat(ctx, x.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> xv(x);
    nn::ComputeOut<C> yv(y);
    fn(xv.data(), yv.data());
    yv.Finish();
    return absl::OkStatus();
  });
}

// The window of a pooling node over x, its taps bounded before starting: one plane of a huge
// window cannot be interrupted.
absl::StatusOr<WindowGeometry> PoolWindow(OpContext& ctx, const Tensor& x) {
  const Node& node = ctx.node();
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> in, Spatial(ctx, x));
  std::vector<int64_t> kernel = node.GetInts("kernel_shape");
  if (kernel.empty()) return ctx.Error("kernel_shape is required");
  BCAST_ASSIGN_OR_RETURN(WindowGeometry g,
                         MakeGeometry(ctx, in, kernel, node.GetInt("ceil_mode", 0)));
  const int64_t n = x.shape()[0], c = x.shape()[1];
  int64_t taps = 0;
  if (__builtin_mul_overflow(n * c, g.out_size(), &taps) ||
      __builtin_mul_overflow(taps, g.kernel_size(), &taps) || taps > ctx.options().max_node_work) {
    return absl::ResourceExhaustedError(
        absl::StrCat(node.Label(), ": ", n * c, " planes of ", g.out_size(), " outputs of a ",
                     g.kernel_size(), "-element window are more than ", ctx.options().max_node_work,
                     " steps, the work limit of one node"));
  }
  return g;
}

// MaxPool of a float input the executor passed in channel blocks (a convolution's blocked
// output): pooled in the blocks, so the convolution before writes them without a reorder, and
// written in the same blocks when every reader of the output takes them (else in NCHW), with
// the NCHW kernel's bits. False (nothing done) where it does not apply; the caller then makes
// the input NCHW.
absl::StatusOr<bool> MaxPoolBlocked(OpContext& ctx) {
  const Tensor* x = ctx.input(0);
  const int block = ctx.input_block();
  if (x == nullptr || x->dtype() != DType::kFloat32 || x->rank() != 4 || ctx.output_wanted(1) ||
      !kernels::ChannelBlocksFit(x->shape()[1], block)) {
    return false;
  }
  BCAST_ASSIGN_OR_RETURN(WindowGeometry g, PoolWindow(ctx, *x));
  const int64_t n = x->shape()[0], c = x->shape()[1];
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, x->dtype(), OutShape(n, c, g.out)));
  const float* xv = x->data<float>();
  float* yv = y->data<float>();
  const bool blocked_out = ctx.output_block_allowed();
  // Split over output rows, not planes: few channels make one plane (NHWC, or a block of 8).
  nn::ParallelChunks(ctx, n * (c / block) * g.out[0], g.out[1] * g.kernel_size() * block,
                     [&](int64_t r0, int64_t r1) {
                       kernels::MaxPoolChannelBlocks(g, xv, r0, r1, block, blocked_out, yv);
                     });
  if (blocked_out) ctx.set_output_block(block);
  return true;
}

template <kernels::PoolKind kKind>
absl::Status PoolOp(OpContext& ctx) {
  if (ctx.input_block() != 0) {
    // Only MaxPool reads blocked inputs (the executor's FindBlocks).
    if constexpr (kKind == kernels::PoolKind::kMax) {
      BCAST_ASSIGN_OR_RETURN(const bool done, MaxPoolBlocked(ctx));
      if (done) return absl::OkStatus();
    }
    BCAST_RETURN_IF_ERROR(ctx.UnblockInput());
  }
  BCAST_ASSIGN_OR_RETURN(const Tensor* xs, ctx.RequireInput(0));
  const Tensor& x = *xs;
  const Node& node = ctx.node();
  BCAST_ASSIGN_OR_RETURN(WindowGeometry g, PoolWindow(ctx, x));
  kernels::PoolOptions opt;
  opt.kind = kKind;
  opt.count_include_pad = node.GetInt("count_include_pad", 0) != 0;
  if (kKind == kernels::PoolKind::kLp) {
    const Attribute* p = node.Find("p");
    opt.p = p == nullptr ? 2.0 : (p->type == Attribute::Type::kFloat ? p->f : p->i);
  }
  opt.column_major_indices = node.GetInt("storage_order", 0) != 0;
  const int64_t n = x.shape()[0], c = x.shape()[1];
  const std::vector<int64_t> out_shape = OutShape(n, c, g.out);
  const int64_t in_size = g.in_size(), out_size = g.out_size();
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, x.dtype(), out_shape));
  int64_t* indices = nullptr;
  if (kKind == kernels::PoolKind::kMax && ctx.output_wanted(1)) {
    BCAST_ASSIGN_OR_RETURN(auto* idx, ctx.Allocate(1, DType::kInt64, out_shape));
    indices = idx->data<int64_t>();
  }
  if (x.dtype() != DType::kFloat32 && x.dtype() != DType::kFloat64 &&
      x.dtype() != DType::kFloat16 && x.dtype() != DType::kBFloat16 && x.dtype() != DType::kInt8 &&
      x.dtype() != DType::kUInt8) {
    return ctx.Unsupported("dtype " + std::string(DTypeName(x.dtype())));
  }
  return WithPoolData<kKind>(ctx, x, y, [&](const auto* xv, auto* yv) {
    nn::ParallelChunks(ctx, n * c, out_size * g.kernel_size(), [&](int64_t p0, int64_t p1) {
      kernels::PoolOptions chunk = opt;
      chunk.index_base = p0 * in_size;  // indices count from the tensor's first plane
      kernels::Pool(chunk, g, p1 - p0, xv + p0 * in_size, yv + p0 * out_size,
                    indices == nullptr ? nullptr : indices + p0 * out_size);
    });
  });
}

// GlobalAveragePool of a float input the executor passed in channel blocks (the blocked
// output of a convolution): pooled in place of a reorder back to NCHW, with the same bits.
absl::Status GlobalAverageBlocked(OpContext& ctx, const Tensor& x) {
  const int64_t n = x.shape()[0], c = x.shape()[1];
  const std::vector<int64_t> spatial(x.shape().begin() + 2, x.shape().end());
  BCAST_ASSIGN_OR_RETURN(
      Tensor * y,
      ctx.Allocate(0, x.dtype(), OutShape(n, c, std::vector<int64_t>(spatial.size(), 1))));
  kernels::GlobalAverageChannelBlocks(x.data<float>(), n, c, CheckedProduct(spatial).value_or(0),
                                      ctx.input_block(), y->data<float>());
  return absl::OkStatus();
}

template <kernels::PoolKind kKind>
absl::Status GlobalPoolOp(OpContext& ctx) {
  if (ctx.input_block() != 0) {
    const Tensor* xb = ctx.input(0);
    if (kKind == kernels::PoolKind::kAverage && xb != nullptr && xb->dtype() == DType::kFloat32 &&
        xb->rank() >= 3 && kernels::ChannelBlocksFit(xb->shape()[1], ctx.input_block())) {
      return GlobalAverageBlocked(ctx, *xb);
    }
    BCAST_RETURN_IF_ERROR(ctx.UnblockInput());
  }
  BCAST_ASSIGN_OR_RETURN(const Tensor* xs, ctx.RequireInput(0));
  const Tensor& x = *xs;
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> in, Spatial(ctx, x));
  WindowGeometry g;
  g.in = in;
  g.kernel = in;
  g.out.assign(in.size(), 1);
  g.strides.assign(in.size(), 1);
  g.dilations.assign(in.size(), 1);
  g.pads_begin.assign(in.size(), 0);
  g.pads_end.assign(in.size(), 0);
  kernels::PoolOptions opt;
  opt.kind = kKind;
  opt.p = static_cast<double>(ctx.node().GetInt("p", 2));
  const int64_t n = x.shape()[0], c = x.shape()[1];
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, x.dtype(), OutShape(n, c, g.out)));
  return WithPoolData<kKind>(
      ctx, x, y, [&](const auto* xv, auto* yv) { kernels::Pool(opt, g, n * c, xv, yv, nullptr); });
}

absl::Status MaxUnpoolOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* xs, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(const Tensor* is, ctx.RequireInput(1));
  const Tensor &x = *xs, &indices = *is;
  const Node& node = ctx.node();
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> in, Spatial(ctx, x));
  if (indices.shape() != x.shape()) return ctx.Error("I must have the shape of X");
  const size_t rank = in.size();
  // Indices refer to the shape the pooling would have unpooled to (from the attributes);
  // an explicit output_shape only re-places them (PyTorch export semantics).
  std::vector<int64_t> kernel = node.GetInts("kernel_shape");
  std::vector<int64_t> strides = node.GetInts("strides", std::vector<int64_t>(rank, 1));
  std::vector<int64_t> pads = node.GetInts("pads", std::vector<int64_t>(2 * rank, 0));
  if (kernel.size() != rank || strides.size() != rank || pads.size() != 2 * rank) {
    return ctx.Error("kernel_shape/strides/pads do not match the spatial rank");
  }
  std::vector<int64_t> inferred = {x.shape()[0], x.shape()[1]};
  for (size_t d = 0; d < rank; ++d) {
    // Attributes are model data: checked arithmetic, no overflow (UBSan).
    int64_t size = 0;
    if (__builtin_mul_overflow(in[d] - 1, strides[d], &size) ||
        __builtin_add_overflow(size, kernel[d], &size) ||
        __builtin_sub_overflow(size, pads[d], &size) ||
        __builtin_sub_overflow(size, pads[d + rank], &size)) {
      return ctx.Error(absl::StrCat("output extent of spatial axis ", d, " overflows int64"));
    }
    inferred.push_back(size);
    if (inferred.back() < 0) return ctx.Error("negative output size");
  }
  std::vector<int64_t> out_shape = inferred;
  if (const Tensor* os = ctx.input(2); os != nullptr) {
    out_shape = nn::LoadInts(*os);
    if (out_shape.size() != rank + 2 || out_shape[0] != inferred[0] ||
        out_shape[1] != inferred[1]) {
      return ctx.Error("output_shape must be [N, C, spatial...] of X's rank");
    }
  }
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, x.dtype(), out_shape));
  std::vector<int64_t> idx = nn::LoadInts(indices);
  const int64_t in_plane = nn::Product(inferred, 2, inferred.size());
  const int64_t planes = inferred[0] * inferred[1];
  for (int64_t i : idx) {
    if (i < 0 || i >= planes * in_plane) return ctx.Error("index out of range");
  }
  kernels::MaxUnpool(x.raw_data(), idx.data(), static_cast<int64_t>(idx.size()),
                     std::vector<int64_t>(inferred.begin() + 2, inferred.end()),
                     std::vector<int64_t>(out_shape.begin() + 2, out_shape.end()), planes,
                     x.element_size(), y->raw_data());
  return absl::OkStatus();
}

// X's [N, C, rest] layout, which BatchNormalization, InstanceNormalization and LRN compute
// over: N images of C channels of `inner` elements each. Callers copy the fields into plain
// locals: their lambdas read them, and C++17 lambdas cannot capture structured bindings.
struct ChannelLayout {
  int64_t n = 0, c = 0, inner = 0;
};

absl::StatusOr<ChannelLayout> ReadChannelLayout(const OpContext& ctx, const Tensor& x) {
  if (x.rank() < 2) return ctx.Error("X must have rank >= 2");
  return ChannelLayout{x.shape()[0], x.shape()[1], nn::Product(x.shape(), 2, x.rank())};
}

absl::Status BatchNormOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const std::vector<const Tensor*> in, ctx.RequireInputs(5));
  const Tensor& x = *in[0];
  BCAST_ASSIGN_OR_RETURN(const ChannelLayout layout, ReadChannelLayout(ctx, x));
  const int64_t n = layout.n, c = layout.c, inner = layout.inner;
  for (int i = 1; i < 5; ++i) {
    if (in[i]->num_elements() != c) {
      return ctx.Unsupported("parameters must have C elements (spatial=0 is not supported)");
    }
  }
  const double eps = ctx.node().GetFloat("epsilon", 1e-5f);
  const double momentum = ctx.node().GetFloat("momentum", 0.9f);
  const bool training = ctx.opset() >= 14 && ctx.node().GetInt("training_mode", 0) != 0;
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, x.dtype(), x.shape()));
  std::vector<double> mean(c), var(c), inv_std(c);
  for (int64_t ch = 0; ch < c; ++ch) {
    mean[ch] = nn::LoadAsDouble(*in[3], ch);
    var[ch] = nn::LoadAsDouble(*in[4], ch);
  }
  if (training) {
    // Outputs 1 and 2 are the running statistics.
    Tensor* running[2] = {nullptr, nullptr};
    for (int o = 1; o <= 2; ++o) {
      if (!ctx.output_wanted(o)) continue;
      BCAST_ASSIGN_OR_RETURN(running[o - 1], ctx.Allocate(o, in[3]->dtype(), in[3]->shape()));
    }
    std::vector<double> batch_mean(c), batch_var(c);
    auto moments = [&](auto tag) {
      using C = typename decltype(tag)::type;
      nn::ComputeIn<C> xv(x);
      kernels::ChannelMoments<C>(xv.data(), n, c, inner, batch_mean.data(), batch_var.data());
      return absl::OkStatus();
    };
    BCAST_RETURN_IF_ERROR(nn::VisitFloat(ctx, x.dtype(), moments));
    for (int64_t ch = 0; ch < c; ++ch) {
      const double stat[2] = {mean[ch] * momentum + batch_mean[ch] * (1 - momentum),
                              var[ch] * momentum + batch_var[ch] * (1 - momentum)};
      mean[ch] = batch_mean[ch];
      var[ch] = batch_var[ch];
      for (int o = 0; o < 2; ++o) {
        if (running[o] == nullptr) continue;
        VisitDType(running[o]->dtype(), 0, [&](auto tag) {
          using T = typename decltype(tag)::type;
          running[o]->data<T>()[ch] = nn::FromFloat<T>(stat[o]);
          return 0;
        });
      }
    }
  }
  for (int64_t ch = 0; ch < c; ++ch) inv_std[ch] = 1.0 / std::sqrt(var[ch] + eps);
  return nn::VisitFloat(ctx, x.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> xv(x), sv(*in[1]), bv(*in[2]);
    nn::ComputeOut<C> yv(y);
    kernels::NormalizeChannels<C>(xv.data(), n, c, inner, mean.data(), inv_std.data(), sv.data(),
                                  bv.data(), yv.data(), false);
    yv.Finish();
    return absl::OkStatus();
  });
}

absl::Status InstanceNormOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const std::vector<const Tensor*> in, ctx.RequireInputs(3));
  const Tensor& x = *in[0];
  BCAST_ASSIGN_OR_RETURN(const ChannelLayout layout, ReadChannelLayout(ctx, x));
  const int64_t n = layout.n, c = layout.c, inner = layout.inner;
  if (in[1]->num_elements() != c || in[2]->num_elements() != c) {
    return ctx.Error("scale and B must have C elements");
  }
  const double eps = ctx.node().GetFloat("epsilon", 1e-5f);
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, x.dtype(), x.shape()));
  return nn::VisitFloat(ctx, x.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> xv(x), sv(*in[1]), bv(*in[2]);
    std::vector<double> mean(n * c), inv_std(n * c);
    kernels::PlaneMoments<C>(xv.data(), n * c, inner, eps, mean.data(), inv_std.data());
    nn::ComputeOut<C> yv(y);
    kernels::NormalizeChannels<C>(xv.data(), n, c, inner, mean.data(), inv_std.data(), sv.data(),
                                  bv.data(), yv.data(), true);
    yv.Finish();
    return absl::OkStatus();
  });
}

// LayerNormalization's shape work, cached per input signature: the row layout and where each
// normalized element reads the (broadcast) scale and bias.
struct LayerNormPlan {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> stat_shape;
  std::vector<int64_t> scale_offsets, bias_offsets;  ///< bias_offsets empty without a bias
};

absl::StatusOr<LayerNormPlan> PlanLayerNorm(const OpContext& ctx, const Tensor& x,
                                            const Tensor& scale, const Tensor* bias) {
  const int64_t rank = x.rank();
  BCAST_ASSIGN_OR_RETURN(int64_t axis, nn::NormalizeAxis(ctx, ctx.node().GetInt("axis", -1), rank));
  LayerNormPlan plan;
  plan.rows = nn::Product(x.shape(), 0, axis);
  const std::vector<int64_t> norm_shape(x.shape().begin() + axis, x.shape().end());
  plan.cols = nn::Product(norm_shape, 0, norm_shape.size());
  plan.stat_shape = x.shape();
  for (int64_t d = axis; d < rank; ++d) plan.stat_shape[d] = 1;
  // Scale and bias broadcast (numpy, right-aligned) to the normalized shape.
  for (const Tensor* t : {&scale, bias}) {
    if (t == nullptr) continue;
    if (t->rank() > static_cast<int64_t>(norm_shape.size())) {
      return ctx.Error("parameter rank exceeds the normalized rank");
    }
    absl::StatusOr<broadcast::BroadcastView> view =
        broadcast::BroadcastView::Create(t->shape(), norm_shape);
    if (!view.ok()) {
      return ctx.Error("parameter " + ShapeToString(t->shape()) + " does not broadcast to " +
                       ShapeToString(norm_shape));
    }
    (t == &scale ? plan.scale_offsets : plan.bias_offsets) = view->Offsets(0);
  }
  return plan;
}

// `v` (`size` elements) read at `offsets` (a parameter broadcast through its view); zeros when
// offsets is empty.
template <class C>
std::vector<C> Gathered(const C* v, int64_t size, const std::vector<int64_t>& offsets,
                        int64_t count) {
  std::vector<C> out(static_cast<size_t>(count), C(0));
  if (offsets.empty()) return out;
  // One element per index: GatherBlocks with a single outer row and unit blocks.
  GatherBlocks(v, 1, size, 1, offsets, sizeof(C), out.data());
  return out;
}

absl::Status LayerNormOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* xs, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(const Tensor* ss, ctx.RequireInput(1));
  const Tensor &x = *xs, &scale = *ss;
  const Tensor* bias = ctx.input(2);
  BCAST_ASSIGN_OR_RETURN(const LayerNormPlan* planned, ctx.CachedPlan<LayerNormPlan>([&] {
    return PlanLayerNorm(ctx, x, scale, bias);
  }));
  const LayerNormPlan& plan = *planned;
  const double eps = ctx.node().GetFloat("epsilon", 1e-5f);
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, x.dtype(), x.shape()));
  const DType stash = static_cast<DType>(ctx.node().GetInt("stash_type", 1));
  Tensor* stats[2] = {nullptr, nullptr};  // mean, inverse standard deviation
  for (int o = 1; o <= 2; ++o) {
    if (!ctx.output_wanted(o)) continue;
    BCAST_ASSIGN_OR_RETURN(
        stats[o - 1], ctx.Allocate(o, IsFloatingPoint(stash) ? stash : x.dtype(), plan.stat_shape));
  }
  return nn::VisitFloat(ctx, x.dtype(), [&](auto tag) -> absl::Status {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> xv(x), sv(scale);
    const std::vector<C> scale_cols =
        Gathered(sv.data(), scale.num_elements(), plan.scale_offsets, plan.cols);
    std::vector<C> bias_cols(static_cast<size_t>(plan.cols), C(0));
    if (bias != nullptr) {
      nn::ComputeIn<C> bv(*bias);
      bias_cols = Gathered(bv.data(), bias->num_elements(), plan.bias_offsets, plan.cols);
    }
    std::vector<double> moments[2];
    for (int o = 0; o < 2; ++o) {
      if (stats[o] != nullptr) moments[o].resize(static_cast<size_t>(plan.rows));
    }
    nn::ComputeOut<C> yv(y);
    kernels::LayerNormRows<C>(xv.data(), plan.rows, plan.cols, scale_cols.data(), bias_cols.data(),
                              eps, yv.data(), stats[0] != nullptr ? moments[0].data() : nullptr,
                              stats[1] != nullptr ? moments[1].data() : nullptr);
    for (int o = 0; o < 2; ++o) {
      if (stats[o] == nullptr) continue;
      VisitDType(stats[o]->dtype(), 0, [&](auto tt) {
        using T = typename decltype(tt)::type;
        for (int64_t r = 0; r < plan.rows; ++r) {
          stats[o]->data<T>()[r] = nn::FromFloat<T>(moments[o][r]);
        }
        return 0;
      });
    }
    yv.Finish();
    return absl::OkStatus();
  });
}

absl::Status LrnOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* xs, ctx.RequireInput(0));
  const Tensor& x = *xs;
  BCAST_ASSIGN_OR_RETURN(const ChannelLayout layout, ReadChannelLayout(ctx, x));
  const int64_t n = layout.n, c = layout.c, inner = layout.inner;
  const Node& node = ctx.node();
  const int64_t size = node.GetInt("size", 0);
  if (size <= 0) return ctx.Error("size must be positive");
  const double alpha = node.GetFloat("alpha", 1e-4f), beta = node.GetFloat("beta", 0.75f);
  const double bias = node.GetFloat("bias", 1.0f);
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, x.dtype(), x.shape()));
  return nn::VisitFloat(ctx, x.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> xv(x);
    nn::ComputeOut<C> yv(y);
    kernels::Lrn<C>(xv.data(), n, c, inner, size, alpha, beta, bias, yv.data());
    yv.Finish();
    return absl::OkStatus();
  });
}

absl::Status MvnOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* xs, ctx.RequireInput(0));
  const Tensor& x = *xs;
  const int64_t rank = x.rank();
  std::vector<bool> reduce(rank, false);
  for (int64_t a : ctx.node().GetInts("axes", {0, 2, 3})) {
    BCAST_ASSIGN_OR_RETURN(int64_t axis, nn::NormalizeAxis(ctx, a, rank));
    reduce[axis] = true;
  }
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, x.dtype(), x.shape()));
  return nn::VisitFloat(ctx, x.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> xv(x);
    nn::ComputeOut<C> yv(y);
    kernels::MeanVarianceNormalize<C>(xv.data(), x.shape(), reduce, yv.data());
    yv.Finish();
    return absl::OkStatus();
  });
}

constexpr OpRegistration kNnOps[] = {
    {"", "Conv", 1, ConvOp},
    {"", "ConvInteger", 10, ConvIntegerOp},
    {"", "QLinearConv", 10, QLinearConvOp},
    {"", "ConvTranspose", 1, ConvTransposeOp},
    {"", "MaxPool", 1, PoolOp<kernels::PoolKind::kMax>},
    {"", "AveragePool", 1, PoolOp<kernels::PoolKind::kAverage>},
    {"", "LpPool", 1, PoolOp<kernels::PoolKind::kLp>},
    {"", "GlobalMaxPool", 1, GlobalPoolOp<kernels::PoolKind::kMax>},
    {"", "GlobalAveragePool", 1, GlobalPoolOp<kernels::PoolKind::kAverage>},
    {"", "GlobalLpPool", 1, GlobalPoolOp<kernels::PoolKind::kLp>},
    {"", "MaxUnpool", 9, MaxUnpoolOp},
    {"", "BatchNormalization", 1, BatchNormOp},
    {"", "InstanceNormalization", 1, InstanceNormOp},
    {"", "LayerNormalization", 17, LayerNormOp},
    {"", "LRN", 1, LrnOp},
    {"", "MeanVarianceNormalization", 9, MvnOp},
    {"", "Resize", 10, ResizeOp},
    {"", "Upsample", 1, UpsampleOp},
    {"", "GridSample", 16, GridSampleOp},
    {"", "RoiAlign", 10, RoiAlignOp},
    {"", "NonMaxSuppression", 10, NonMaxSuppressionOp},
};

}  // namespace

absl::Span<const OpRegistration> NnOps() { return kNnOps; }

}  // namespace onnx_bcast::runtime

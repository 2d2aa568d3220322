// Resize (opset 10, 11, 13+) and Upsample (1, 7, 9): output size from scales or sizes, then the
// separable interpolation in kernels/resize.h with per-dim taps from the coordinate mode.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/kernels/resize.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/op.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {
namespace {

using kernels::ResizeTaps;

struct ResizeAttrs {
  std::string mode = "nearest";
  std::string coord = "half_pixel";
  std::string nearest = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0;
};

// The source coordinate of output index `x` along one dim.
double SourceCoord(const ResizeAttrs& a, int64_t x, double scale, int64_t in, double roi_start,
                   double roi_end) {
  const double xf = static_cast<double>(x);
  // align_corners and tf_crop_and_resize divide by the unrounded resized length in * scale
  // (equal to the output size when sizes were given), as the ONNX reference does.
  const double resized = static_cast<double>(in) * scale;
  if (a.coord == "half_pixel") return (xf + 0.5) / scale - 0.5;
  if (a.coord == "pytorch_half_pixel") return resized > 1 ? (xf + 0.5) / scale - 0.5 : 0.0;
  if (a.coord == "align_corners") {
    return resized == 1 ? 0.0 : xf * static_cast<double>(in - 1) / (resized - 1);
  }
  if (a.coord == "tf_half_pixel_for_nn") return (xf + 0.5) / scale;
  if (a.coord == "tf_crop_and_resize") {
    const double len = static_cast<double>(in - 1);
    return resized != 1 ? roi_start * len + xf * (roi_end - roi_start) * len / (resized - 1)
                        : 0.5 * (roi_start + roi_end) * len;
  }
  return xf / scale;  // asymmetric
}

int64_t NearestIndex(const std::string& mode, double x) {
  if (mode == "floor") return static_cast<int64_t>(std::floor(x));
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  const double f = std::floor(x);
  if (x - f == 0.5) return static_cast<int64_t>(mode == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

double CubicWeight(double a, double d) {
  d = std::fabs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

// Taps of one dim: for each output index, (input index, weight) pairs or "extrapolate".
ResizeTaps DimTaps(const ResizeAttrs& a, int64_t in, int64_t out, double scale, double roi_start,
                   double roi_end) {
  ResizeTaps taps;
  taps.begin.push_back(0);
  for (int64_t x = 0; x < out; ++x) {
    double src = SourceCoord(a, x, scale, in, roi_start, roi_end);
    const bool outside =
        a.coord == "tf_crop_and_resize" && (std::isnan(src) || src < 0 || src > in - 1);
    // Model data (scales, roi) can put the coordinate anywhere: casting a NaN or a double
    // past int64 to int64, or adding the cubic taps to an index near INT64_MAX, is undefined
    // (UBSan). Past +-2^52 a double is a whole number, and every index is clamped to the
    // input anyway, so clamping the coordinate there changes no result.
    src = std::isnan(src) ? 0.0 : std::clamp(src, -0x1p52, 0x1p52);
    taps.extrapolate.push_back(outside);
    if (!outside && in > 0) {
      if (a.mode == "nearest") {
        const int64_t i = std::clamp<int64_t>(NearestIndex(a.nearest, src), 0, in - 1);
        taps.index.push_back(i);
        taps.weight.push_back(1.0);
      } else if (a.mode == "linear") {
        const double s = std::clamp(src, 0.0, static_cast<double>(in - 1));
        const int64_t i0 = static_cast<int64_t>(std::floor(s));
        const int64_t i1 = std::min(i0 + 1, in - 1);
        const double w = s - static_cast<double>(i0);
        taps.index.push_back(i0);
        taps.weight.push_back(1 - w);
        if (w != 0) {
          taps.index.push_back(i1);
          taps.weight.push_back(w);
        }
      } else {
        const int64_t i0 = static_cast<int64_t>(std::floor(src));
        const double t = src - static_cast<double>(i0);
        double total = 0;
        const size_t first = taps.weight.size();
        for (int64_t k = -1; k <= 2; ++k) {
          const int64_t i = i0 + k;
          double w = CubicWeight(a.cubic_a, static_cast<double>(k) - t);
          if (a.exclude_outside && (i < 0 || i >= in)) w = 0;
          if (w == 0) continue;
          taps.index.push_back(std::clamp<int64_t>(i, 0, in - 1));
          taps.weight.push_back(w);
          total += w;
        }
        if (a.exclude_outside && total != 0) {
          for (size_t j = first; j < taps.weight.size(); ++j) taps.weight[j] /= total;
        }
      }
    }
    taps.begin.push_back(static_cast<int64_t>(taps.index.size()));
  }
  return taps;
}

// Resizes x to `out_shape` with per-dim `scales` (used by the coordinate modes) and `roi`.
absl::Status RunResize(OpContext& ctx, const ResizeAttrs& a, const Tensor& x,
                       const std::vector<int64_t>& out_shape, const std::vector<double>& scales,
                       const std::vector<double>& roi) {
  const int64_t rank = x.rank();
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic") {
    return ctx.Error("unknown mode '" + a.mode + "'");
  }
  // Check the output size before building per-index taps for it.
  absl::StatusOr<int64_t> count = ShapeElementCount(out_shape);
  if (!count.ok()) return ctx.Error(std::string(count.status().message()));
  if (*count > ctx.options().max_tensor_elements) {
    return absl::ResourceExhaustedError(ctx.node().Label() + ": output " +
                                        ShapeToString(out_shape) + " too large");
  }
  std::vector<ResizeTaps> taps;
  for (int64_t d = 0; d < rank; ++d) {
    if (out_shape[d] < 0) return ctx.Error("negative output size");
    const double start = roi.size() == 2 * static_cast<size_t>(rank) ? roi[d] : 0.0;
    const double end = roi.size() == 2 * static_cast<size_t>(rank) ? roi[d + rank] : 1.0;
    if (out_shape[d] == x.shape()[d] && scales[d] == 1.0 && a.coord != "tf_crop_and_resize") {
      taps.push_back(ResizeTaps::Identity(out_shape[d]));
    } else {
      taps.push_back(DimTaps(a, x.shape()[d], out_shape[d], scales[d], start, end));
    }
  }
  BCAST_ASSIGN_OR_RETURN(auto* y, ctx.Allocate(0, x.dtype(), out_shape));
  if (y->num_elements() == 0) return absl::OkStatus();
  if (x.num_elements() == 0) return ctx.Error("cannot resize an empty input to a non-empty one");
  if (IsInteger(x.dtype())) {
    VisitDType(x.dtype(), 0, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<T>) {
        kernels::ResizeIntegers<T>(x.shape(), taps, a.extrapolation, a.mode != "nearest",
                                   x.data<T>(), y->data<T>());
      }
      return 0;
    });
    return absl::OkStatus();
  }
  return nn::VisitFloat(ctx, x.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    nn::ComputeIn<C> xv(x);
    nn::ComputeOut<C> yv(y);
    kernels::Resize<C>(x.shape(), taps, a.extrapolation, xv.data(), yv.data());
    yv.Finish();
    return absl::OkStatus();
  });
}

std::vector<double> LoadDoubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = nn::LoadAsDouble(t, i);
  return v;
}

// Output dims floor(in * scale), times the roi extent (end - start) when `roi` is given.
absl::StatusOr<std::vector<int64_t>> ScaledShape(const OpContext& ctx, const Tensor& x,
                                                 const std::vector<double>& scales,
                                                 const std::vector<double>& roi = {}) {
  if (scales.size() != static_cast<size_t>(x.rank())) {
    return ctx.Error(absl::StrCat("scales has ", scales.size(), " values for rank ", x.rank()));
  }
  std::vector<int64_t> out;
  for (int64_t d = 0; d < x.rank(); ++d) {
    const double extent = roi.size() == 2 * scales.size() ? roi[d + scales.size()] - roi[d] : 1.0;
    const double v = std::floor(static_cast<double>(x.shape()[d]) * extent * scales[d]);
    if (!(scales[d] > 0) || v > 9e15) return ctx.Error("scales must be positive and finite");
    out.push_back(static_cast<int64_t>(v));
  }
  return out;
}

}  // namespace

absl::Status ResizeOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* xs, ctx.RequireInput(0));
  const Tensor& x = *xs;
  const Node& node = ctx.node();
  ResizeAttrs a;
  a.mode = node.GetString("mode", "nearest");
  const bool v10 = ctx.opset() < 11;
  a.coord = v10 ? "asymmetric" : node.GetString("coordinate_transformation_mode", "half_pixel");
  a.nearest = v10 ? "floor" : node.GetString("nearest_mode", "round_prefer_floor");
  a.cubic_a = node.GetFloat("cubic_coeff_a", -0.75f);
  a.exclude_outside = node.GetInt("exclude_outside", 0) != 0;
  a.extrapolation = node.GetFloat("extrapolation_value", 0.0f);
  if (node.GetInt("antialias", 0) != 0) return ctx.Unsupported("antialias");
  if (node.Has("axes")) return ctx.Unsupported("axes");
  std::vector<double> roi;
  const Tensor* scales_t = ctx.input(v10 ? 1 : 2);
  const Tensor* sizes_t = v10 ? nullptr : ctx.input(3);
  if (!v10 && ctx.input(1) != nullptr) roi = LoadDoubles(*ctx.input(1));
  if (scales_t != nullptr && scales_t->num_elements() == 0) scales_t = nullptr;
  if (sizes_t != nullptr && sizes_t->num_elements() == 0) sizes_t = nullptr;
  const int64_t rank = x.rank();
  std::vector<double> scales;
  std::vector<int64_t> out_shape;
  if (sizes_t != nullptr) {
    if (scales_t != nullptr) return ctx.Error("only one of scales and sizes may be given");
    out_shape = nn::LoadInts(*sizes_t);
    if (out_shape.size() != static_cast<size_t>(rank)) return ctx.Error("sizes rank mismatch");
    for (int64_t d = 0; d < rank; ++d) {
      scales.push_back(x.shape()[d] == 0 ? 1.0 : static_cast<double>(out_shape[d]) / x.shape()[d]);
    }
  } else if (scales_t != nullptr) {
    scales = LoadDoubles(*scales_t);
    BCAST_ASSIGN_OR_RETURN(
        out_shape,
        ScaledShape(ctx, x, scales, a.coord == "tf_crop_and_resize" ? roi : std::vector<double>{}));
  } else {
    return ctx.Error("one of scales and sizes is required");
  }
  return RunResize(ctx, a, x, out_shape, scales, roi);
}

absl::Status UpsampleOp(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* xs, ctx.RequireInput(0));
  const Tensor& x = *xs;
  ResizeAttrs a;
  a.mode = ctx.node().GetString("mode", "nearest");
  if (a.mode == "bilinear") a.mode = "linear";
  a.coord = "asymmetric";
  a.nearest = "floor";
  std::vector<double> scales;
  if (ctx.opset() >= 9) {
    BCAST_ASSIGN_OR_RETURN(const Tensor* s, ctx.RequireInput(1));
    scales = LoadDoubles(*s);
  } else if (ctx.opset() >= 7) {
    for (float f : ctx.node().GetFloats("scales")) scales.push_back(f);
  } else {
    // Upsample-1: NCHW with height_scale and width_scale attributes.
    if (x.rank() != 4) return ctx.Error("Upsample-1 takes a 4-D NCHW input");
    scales = {1.0, 1.0, ctx.node().GetFloat("height_scale", 1.0f),
              ctx.node().GetFloat("width_scale", 1.0f)};
  }
  BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> out_shape, ScaledShape(ctx, x, scales));
  return RunResize(ctx, a, x, out_shape, scales, {});
}

}  // namespace onnx_bcast::runtime

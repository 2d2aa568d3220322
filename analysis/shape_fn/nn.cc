// Symbolic shape functions, neural-network ops: convolutions, pools, Resize and Upsample,
// normalizations, recurrent ops, DepthToSpace/SpaceToDepth, GridSample.
// What they require and guarantee: analysis/shape_functions.cc.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/shape_fn/internal.h"
#include "broadcast/expr.h"
#include "broadcast/rules.h"
#include "proto/shapes.h"

namespace onnx_bcast::analysis::shape_fn {

// Reads and validates the window attributes for `n` spatial axes; nullopt when malformed.
std::optional<Window> ReadWindow(const Op& op, size_t n, const std::vector<Elem>* kernel_from_w) {
  Window w;
  if (std::optional<std::vector<int64_t>> k = op.Ints("kernel_shape")) {
    if (k->size() != n) return std::nullopt;
    for (int64_t v : *k) {
      if (v < 1 || v > kMaxAttr) return std::nullopt;
      w.kernel.push_back(C(v));
    }
  } else if (kernel_from_w != nullptr) {
    w.kernel = *kernel_from_w;
  } else {
    return std::nullopt;
  }
  w.strides = op.Ints("strides").value_or(std::vector<int64_t>(n, 1));
  w.dilations = op.Ints("dilations").value_or(std::vector<int64_t>(n, 1));
  w.pads = op.Ints("pads").value_or(std::vector<int64_t>(2 * n, 0));
  if (w.strides.size() != n || w.dilations.size() != n || w.pads.size() != 2 * n) {
    return std::nullopt;
  }
  for (size_t i = 0; i < n; ++i) {
    if (w.strides[i] < 1 || w.strides[i] > kMaxAttr || w.dilations[i] < 1 ||
        w.dilations[i] > kMaxAttr) {
      return std::nullopt;
    }
  }
  for (int64_t p : w.pads) {
    if (p < 0 || p > kMaxAttr) return std::nullopt;
  }
  w.auto_pad = op.String("auto_pad", "NOTSET");
  if (w.auto_pad.empty()) w.auto_pad = "NOTSET";
  if (w.auto_pad != "NOTSET" && w.auto_pad != "VALID" && w.auto_pad != "SAME_UPPER" &&
      w.auto_pad != "SAME_LOWER") {
    return std::nullopt;
  }
  w.ceil_mode = op.Int("ceil_mode", 0) != 0;
  return w;
}

// Output extent of one windowed axis, as the executor computes it for valid inputs.
Elem WindowOut(const Elem& d, const Window& w, size_t i, size_t n) {
  const Elem k = w.kernel[i];
  const int64_t s = w.strides[i];
  const Elem ek = Add(Mul(C(w.dilations[i]), Sub(k, C(1))), C(1));
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") return CeilDiv(d, C(s));
  if (w.auto_pad == "VALID") return Add(FloorDiv(Sub(d, ek), C(s)), C(1));
  const int64_t pb = w.pads[i], pe = w.pads[i + n];
  const Elem span = Sub(Add(d, C(pb + pe)), ek);
  if (!w.ceil_mode) return Add(FloorDiv(span, C(s)), C(1));
  const Elem out = Add(CeilDiv(span, C(s)), C(1));
  // The last window must start inside the input or the left padding: drop it when
  // (out - 1) * s >= d + pb. With (out - 1) * s = span + ((-span) mod s), that is
  // e = pe - ek + ((-span) mod s) >= 0, and [e >= 0] = min(max(e + 1, 0), 1).
  const Elem e = Add(Sub(C(pe), ek), ModOf(Sub(C(0), span), C(s), false));
  if (!e) return std::nullopt;
  if (const std::optional<int64_t> hi = e->UpperBound(); hi && *hi < 0) return out;
  if (NonNegative(*e)) return Sub(out, C(1));
  return Sub(out, Min(Max(Add(e, C(1)), C(0)), C(1)));
}

Outputs ConvFn(const Op& op) {
  const Shape* x = op.InShape(0);
  const Shape* w = op.InShape(1);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  if (x == nullptr || x->rank() < 3) return Fit(op, One(std::move(t)));
  if (w != nullptr && w->rank() != x->rank()) return Fit(op, One(std::move(t)));
  const size_t n = static_cast<size_t>(x->rank() - 2);
  std::vector<Elem> wk;
  for (size_t i = 0; i < n; ++i) wk.push_back(w != nullptr ? ElemOf(w->dims[i + 2]) : Elem());
  const int64_t group = op.Int("group", 1);
  if (group < 1 || group > kMaxAttr) return Fit(op, One(std::move(t)));
  const std::optional<Window> win = ReadWindow(op, n, &wk);
  if (!win) return Fit(op, One(std::move(t)));
  std::vector<Dim> dims = {x->dims[0], w != nullptr ? w->dims[0] : Dim::Unknown()};
  const bool transpose = op.type() == "ConvTranspose";
  if (transpose) {
    dims[1] = w != nullptr ? DimOf(Mul(ElemOf(w->dims[1]), C(group))) : Dim::Unknown();
    std::vector<int64_t> out_pad = op.Ints("output_padding").value_or(std::vector<int64_t>(n, 0));
    if (out_pad.size() != n) return Fit(op, One(std::move(t)));
    for (int64_t p : out_pad) {
      if (p < 0 || p > kMaxAttr) return Fit(op, One(std::move(t)));
    }
    if (std::optional<std::vector<int64_t>> os = op.Ints("output_shape")) {
      if (os->size() < n) return Fit(op, One(std::move(t)));
      for (size_t i = 0; i < n; ++i) {
        const int64_t v = (*os)[os->size() - n + i];
        dims.push_back(v >= 0 ? Dim::Value(v) : Dim::Unknown());
      }
    } else {
      for (size_t i = 0; i < n; ++i) {
        const Elem d = ElemOf(x->dims[i + 2]);
        const int64_t s = win->strides[i];
        if (win->auto_pad == "SAME_UPPER" || win->auto_pad == "SAME_LOWER") {
          dims.push_back(DimOf(Mul(d, C(s))));
          continue;
        }
        const int64_t pads = win->auto_pad == "VALID" ? 0 : win->pads[i] + win->pads[i + n];
        const Elem ek = Add(Mul(C(win->dilations[i]), Sub(win->kernel[i], C(1))), C(1));
        dims.push_back(DimOf(Sub(Add(Add(Mul(C(s), Sub(d, C(1))), C(out_pad[i])), ek), C(pads))));
      }
    }
  } else {
    for (size_t i = 0; i < n; ++i)
      dims.push_back(DimOf(WindowOut(ElemOf(x->dims[i + 2]), *win, i, n)));
  }
  t.shape = Shape::FromDims(std::move(dims));
  return Fit(op, One(std::move(t)));
}

Outputs PoolFn(const Op& op) {
  const Shape* x = op.InShape(0);
  Outputs out = op.Unknown(op.InElem(0));
  if (out.size() > 1) out[1].elem = onnx::TensorProto::INT64;  // MaxPool's Indices
  if (x == nullptr || x->rank() < 3) return out;
  const size_t n = static_cast<size_t>(x->rank() - 2);
  const std::optional<Window> win = ReadWindow(op, n, nullptr);
  if (!win) return out;
  std::vector<Dim> dims = {x->dims[0], x->dims[1]};
  for (size_t i = 0; i < n; ++i)
    dims.push_back(DimOf(WindowOut(ElemOf(x->dims[i + 2]), *win, i, n)));
  for (SymTensor& t : out) t.shape = Shape::FromDims(dims);
  return out;
}

Outputs GlobalPoolFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  if (x != nullptr && x->rank() >= 2) {
    std::vector<Dim> dims = {x->dims[0], x->dims[1]};
    dims.resize(x->dims.size(), Dim::Value(1));
    t.shape = Shape::FromDims(std::move(dims));
  }
  return Fit(op, One(std::move(t)));
}

// ---------------------------------------------------------------------------------------------
// Resize and Upsample.

// floor(d * s) for a float scale s, as the executor computes it in double: exact for integer
// scales, reciprocals of integers (when the float rounds up, so d * s never falls just below
// an integer) and dyadic fractions p / 2^j; a fresh symbol otherwise.
Dim ScaledDim(const Op& op, const Dim& d, double s, int axis) {
  if (!(s > 0) || !std::isfinite(s) || s > 1e9) return Dim::Unknown();
  if (d.is_value()) {
    const double v = std::floor(static_cast<double>(d.value()) * s);
    return v <= 9e15 ? Dim::Value(static_cast<int64_t>(v)) : Dim::Unknown();
  }
  const Elem e = ElemOf(d);
  if (!e) return Dim::Unknown();
  if (s == std::floor(s)) return DimOf(Mul(e, C(static_cast<int64_t>(s))));
  for (int j = 1; j <= 16; ++j) {
    const double p = std::ldexp(s, j);
    if (p == std::floor(p))
      return DimOf(FloorDiv(Mul(e, C(static_cast<int64_t>(p))), C(int64_t{1} << j)));
  }
  const double k = std::round(1.0 / s);
  if (k >= 2 && k <= kMaxAttr && s == static_cast<double>(static_cast<float>(1.0 / k)) &&
      s * k >= 1.0) {
    return DimOf(FloorDiv(e, C(static_cast<int64_t>(k))));
  }
  return op.Fresh(0, axis);
}

// Scales or sizes applied to `x` (on `axes` when given).
// Scales or sizes applied to `x` (on `axes` when given). An element of `scales`/`sizes` that is
// not known (computed from data or float arithmetic we cannot express: torchvision's
// min(320 / min(H, W), ...) scale) gives a fresh symbol named after the node, as does the
// whole output when neither is known: equal sources still give equal extents downstream.
Outputs ResizeFrom(const Op& op, const Shape& x,
                   const std::optional<std::vector<std::optional<double>>>& scales,
                   const std::optional<std::vector<Dim>>& sizes, bool crop) {
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  const int64_t r = x.rank();
  std::vector<int64_t> axes;
  if (std::optional<std::vector<int64_t>> a = op.Ints("axes")) {
    const std::optional<std::vector<int64_t>> norm = NormAxes(*a, r);
    if (!norm) return Fit(op, One(std::move(t)));
    axes = *norm;
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  std::vector<Dim> dims = x.dims;
  if (sizes) {
    if (sizes->size() != axes.size()) return Fit(op, One(std::move(t)));
    const std::string policy = op.String("keep_aspect_ratio_policy", "stretch");
    for (size_t i = 0; i < axes.size(); ++i) {
      const Dim& s = (*sizes)[i];
      dims[static_cast<size_t>(axes[i])] =
          policy == "stretch" && !s.is_unknown() ? s : op.Fresh(0, static_cast<int>(axes[i]));
    }
  } else if (scales) {
    if (scales->size() != axes.size()) return Fit(op, One(std::move(t)));
    for (size_t i = 0; i < axes.size(); ++i) {
      Dim& d = dims[static_cast<size_t>(axes[i])];
      const std::optional<double>& s = (*scales)[i];
      if (s && *s == 1.0 && !crop) continue;
      d = s && !crop ? ScaledDim(op, d, *s, static_cast<int>(axes[i]))
                     : op.Fresh(0, static_cast<int>(axes[i]));
    }
  } else {
    for (size_t i = 0; i < dims.size(); ++i) dims[i] = op.Fresh(0, static_cast<int>(i));
  }
  t.shape = Shape::FromDims(std::move(dims));
  return Fit(op, One(std::move(t)));
}

// Resize/Upsample scales as far as they are known: constants, constant rationals of float
// arithmetic, or (length known) unknown elements; nullopt when not even the length is known.
std::optional<std::vector<std::optional<double>>> PartialScales(const Op& op, int i) {
  const SymTensor* t = op.In(i);
  if (t == nullptr) return std::nullopt;
  std::vector<std::optional<double>> out;
  if (t->float_value) {
    out.assign(t->float_value->begin(), t->float_value->end());
    return out;
  }
  if (t->float_exprs) {
    for (const Rat& q : *t->float_exprs) {
      const std::optional<int64_t> c = q.num ? q.num->AsConst() : std::nullopt;
      out.push_back(c ? std::optional<double>(static_cast<double>(*c) / static_cast<double>(q.den))
                      : std::nullopt);
    }
    return out;
  }
  if (t->shape.rank_known && t->shape.rank() == 1 && t->shape.dims[0].is_value() &&
      t->shape.dims[0].value() <= kMaxRank) {
    out.assign(static_cast<size_t>(t->shape.dims[0].value()), std::nullopt);
    return out;
  }
  return std::nullopt;
}

Outputs ResizeFn(const Op& op) {
  const Shape* x = op.InShape(0);
  if (x == nullptr) return op.Unknown(op.InElem(0));
  const bool crop = op.String("coordinate_transformation_mode", "") == "tf_crop_and_resize";
  if (op.opset() < 11) return ResizeFrom(op, *x, PartialScales(op, 1), std::nullopt, false);
  std::optional<std::vector<std::optional<double>>> scales =
      op.Has(2) ? PartialScales(op, 2) : std::nullopt;
  if (scales && scales->empty()) scales.reset();  // "not given"
  std::optional<std::vector<Dim>> sizes;
  if (op.Has(3)) {
    const Shape* s = op.InShape(3);
    if (s == nullptr || s->NumElements() != 0) {
      sizes = ShapeFromTensor(op, 3);
      if (!sizes) return ResizeFrom(op, *x, std::nullopt, std::nullopt, crop);
    }
  }
  return ResizeFrom(op, *x, sizes ? std::nullopt : scales, sizes, crop);
}

Outputs UpsampleFn(const Op& op) {
  const Shape* x = op.InShape(0);
  if (x == nullptr) return op.Unknown(op.InElem(0));
  std::optional<std::vector<std::optional<double>>> scales;
  if (op.opset() >= 9) {
    scales = PartialScales(op, 1);
  } else if (std::optional<std::vector<float>> f = op.Floats("scales")) {
    scales.emplace(f->begin(), f->end());
  } else if (x->rank() == 4) {
    scales = std::vector<std::optional<double>>{1.0, 1.0, op.Float("height_scale").value_or(1.0f),
                                                op.Float("width_scale").value_or(1.0f)};
  }
  return ResizeFrom(op, *x, scales, std::nullopt, false);
}

Outputs LayerNormFn(const Op& op) {
  const Shape* x = op.InShape(0);
  Outputs out = op.Unknown(op.InElem(0));
  const int32_t stash = static_cast<int32_t>(op.Int("stash_type", onnx::TensorProto::FLOAT));
  for (size_t i = 1; i < out.size(); ++i) out[i].elem = stash;
  if (x == nullptr || out.empty()) return out;
  out[0].shape = *x;
  const std::optional<int64_t> axis = NormAxis(op.Int("axis", -1), x->rank());
  if (!axis) return out;
  std::vector<Dim> dims(x->dims.begin(), x->dims.begin() + *axis);
  dims.resize(x->dims.size(), Dim::Value(1));
  for (size_t i = 1; i < out.size(); ++i) out[i].shape = Shape::FromDims(dims);
  return out;
}

Outputs BatchNormFn(const Op& op) {
  const Shape* x = op.InShape(0);
  Outputs out = op.Unknown(op.InElem(0));
  if (x == nullptr || out.empty()) return out;
  out[0].shape = *x;
  Dim c = x->rank() >= 2 ? x->dims[1] : Dim::Unknown();
  if (const Shape* s = op.InShape(1); s != nullptr && s->rank() == 1) c = Better(c, s->dims[0]);
  const int32_t stats = op.InElem(3) != 0 ? op.InElem(3) : out[0].elem;
  for (size_t i = 1; i < out.size(); ++i) {
    out[i].shape = Shape::FromDims({c});
    out[i].elem = stats;
  }
  return out;
}

// LSTM/GRU/RNN: Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]),
// Y_h and Y_c [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]).
Outputs RnnFn(const Op& op) {
  const Shape* x = op.InShape(0);
  Outputs out = op.Unknown(op.InElem(0));
  if (x == nullptr || x->rank() != 3) return out;
  const std::string direction = op.String("direction", "forward");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") return out;
  const bool batch_first = op.Int("layout", 0) != 0;
  const Dim seq = x->dims[batch_first ? 1 : 0];
  const Dim batch = x->dims[batch_first ? 0 : 1];
  Dim hidden;
  if (std::optional<int64_t> h = op.Int("hidden_size")) {
    if (*h < 1 || *h > kMaxAttr) return out;
    hidden = Dim::Value(*h);
  } else if (const Shape* r = op.InShape(2); r != nullptr && r->rank() == 3) {
    hidden = r->dims[2];  // R is [dirs, gates*hidden, hidden]
  }
  const Dim nd = Dim::Value(dirs);
  if (!out.empty()) {
    out[0].shape = batch_first ? Shape::FromDims({batch, seq, nd, hidden})
                               : Shape::FromDims({seq, nd, batch, hidden});
  }
  for (size_t i = 1; i < out.size() && i < 3; ++i) {
    out[i].shape =
        batch_first ? Shape::FromDims({batch, nd, hidden}) : Shape::FromDims({nd, batch, hidden});
  }
  return out;
}

Outputs DepthSpaceFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  const int64_t b = op.Int("blocksize", 0);
  if (x == nullptr || x->rank() != 4 || b < 1 || b > (int64_t{1} << 15)) {
    return Fit(op, One(std::move(t)));
  }
  const Elem c = ElemOf(x->dims[1]), h = ElemOf(x->dims[2]), w = ElemOf(x->dims[3]);
  if (op.type() == "DepthToSpace") {
    t.shape = Shape::FromDims(
        {x->dims[0], DimOf(DivisibleDiv(c, C(b * b))), DimOf(Mul(h, C(b))), DimOf(Mul(w, C(b)))});
  } else {
    t.shape = Shape::FromDims({x->dims[0], DimOf(Mul(c, C(b * b))), DimOf(DivisibleDiv(h, C(b))),
                               DimOf(DivisibleDiv(w, C(b)))});
  }
  return Fit(op, One(std::move(t)));
}

Outputs GridSampleFn(const Op& op) {
  const Shape* x = op.InShape(0);
  const Shape* g = op.InShape(1);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  if (x == nullptr || g == nullptr || x->rank() < 3 || g->rank() != x->rank()) {
    return Fit(op, One(std::move(t)));
  }
  std::vector<Dim> dims = {Better(x->dims[0], g->dims[0]), x->dims[1]};
  dims.insert(dims.end(), g->dims.begin() + 1, g->dims.end() - 1);
  t.shape = Shape::FromDims(std::move(dims));
  return Fit(op, One(std::move(t)));
}

}  // namespace onnx_bcast::analysis::shape_fn

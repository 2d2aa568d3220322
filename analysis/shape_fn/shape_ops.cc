// Symbolic shape functions, shape tensors and the ops that build or reshape them: Shape, Size,
// Cast, Gather, Slice, Concat, Squeeze, Unsqueeze, ConstantOfShape, Range, Reshape, Expand, Tile.
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

// ---------------------------------------------------------------------------------------------
// Value-carrying ops.

Outputs ShapeFn(const Op& op) {
  SymTensor t = Tensor(onnx::TensorProto::INT64, Shape::FromDims({Dim::Unknown()}));
  const Shape* x = op.InShape(0);
  if (x == nullptr) return Fit(op, One(std::move(t)));
  const int64_t r = x->rank();
  int64_t start = op.Int("start", 0), end = op.Int("end", r);
  if (start < 0) start = std::max<int64_t>(start + r, 0);
  if (end < 0) end = std::max<int64_t>(end + r, 0);
  start = std::min(start, r);
  end = std::clamp(end, start, r);
  t.shape = Shape::Of({end - start});
  Elems e;
  for (int64_t i = start; i < end; ++i) e.push_back(ElemOf(x->dims[static_cast<size_t>(i)]));
  SetValue(&t, e);
  return Fit(op, One(std::move(t)));
}

Outputs SizeFn(const Op& op) {
  SymTensor t = Tensor(onnx::TensorProto::INT64, Shape::Of({}));
  if (const Shape* x = op.InShape(0)) {
    const Elem n = Product(x->dims, 0, x->dims.size());
    if (n) SetValue(&t, {n});
  }
  return Fit(op, One(std::move(t)));
}

Outputs CastFn(const Op& op) {
  const SymTensor* x = op.In(0);
  int32_t to = static_cast<int32_t>(op.Int("to", 0));
  if (op.type() == "CastLike") to = op.InElem(1);
  SymTensor t = Tensor(to, x == nullptr ? Shape::UnknownRank() : x->shape);
  if (x == nullptr) return Fit(op, One(std::move(t)));
  if (IsIntegerElem(to) && !x->value && !x->float_value && x->float_exprs &&
      to != onnx::TensorProto::BOOL) {
    // Float to integer truncates toward zero: floor where the value cannot be negative.
    Elems e;
    for (const Rat& r : *x->float_exprs) {
      if (!r.num) {
        e.push_back(std::nullopt);
      } else if (r.den == 1) {
        e.push_back(*r.num);
      } else {
        e.push_back(NonNegative(*r.num) ? FloorDiv(*r.num, C(r.den)) : std::nullopt);
      }
    }
    SetValue(&t, e);
  } else if (IsIntegerElem(to)) {
    if (std::optional<Elems> v = ValueOf(x, /*any_rank=*/true)) {
      if (to == onnx::TensorProto::BOOL) {
        for (Elem& e : *v) e = Truth(Flag(e));
      }
      SetValue(&t, *v);
    } else if (x->float_value) {
      // Float constants to integers truncate toward zero.
      Elems e;
      for (double f : *x->float_value) {
        if (!std::isfinite(f) || std::fabs(f) >= 9.2e18) {
          e.push_back(std::nullopt);
        } else {
          e.push_back(C(to == onnx::TensorProto::BOOL ? (f != 0) : static_cast<int64_t>(f)));
        }
      }
      SetValue(&t, e);
    }
  } else if (IsFloatElem(to)) {
    if (x->float_value) {
      t.float_value = x->float_value;
    } else if (std::optional<std::vector<int64_t>> c = ConstValues(x)) {
      t.float_value.emplace(c->begin(), c->end());
    } else if (x->float_exprs) {
      SetFloatExprs(&t, *x->float_exprs);
    } else if (std::optional<Elems> v = ValueOf(x)) {
      Rats r;
      for (const Elem& e : *v) r.push_back({e, 1});
      SetFloatExprs(&t, std::move(r));
    }
  }
  return Fit(op, One(std::move(t)));
}

// Gather: data[:axis] + indices + data[axis+1:]; a tracked rank-1 data picks its elements.
Outputs GatherFn(const Op& op) {
  const Shape* data = op.InShape(0);
  const Shape* idx = op.InShape(1);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  if (data == nullptr || idx == nullptr || data->rank() == 0) return Fit(op, One(std::move(t)));
  const std::optional<int64_t> axis = NormAxis(op.Int("axis", 0), data->rank());
  if (!axis) return Fit(op, One(std::move(t)));
  std::vector<Dim> dims(data->dims.begin(), data->dims.begin() + *axis);
  dims.insert(dims.end(), idx->dims.begin(), idx->dims.end());
  dims.insert(dims.end(), data->dims.begin() + *axis + 1, data->dims.end());
  if (static_cast<int64_t>(dims.size()) > kMaxRank) return Fit(op, One(std::move(t)));
  t.shape = Shape::FromDims(std::move(dims));
  const std::optional<Elems> v = op.Value(0);
  const std::optional<std::vector<int64_t>> ix = ConstValues(op.In(1));
  if (v && ix && data->rank() == 1 && idx->rank() <= 1) {
    const int64_t n = static_cast<int64_t>(v->size());
    Elems e;
    for (int64_t i : *ix) {
      if (i < -n || i >= n) return Fit(op, One(std::move(t)));
      e.push_back((*v)[static_cast<size_t>(i < 0 ? i + n : i)]);
    }
    SetValue(&t, e);
  }
  return Fit(op, One(std::move(t)));
}

// One slice bound clamped for a dim `d` (spec: [0, d] for positive steps, [0, d-1] for the
// start and [-1, d-1] for the end of negative steps); nullopt when the bound's sign is unknown.
Elem ClampBound(const Elem& b, const Elem& d, bool start, int64_t step) {
  if (!b || !d) return std::nullopt;
  const Elem lo = step > 0 || start ? C(0) : C(-1);
  const Elem hi = step > 0 ? d : Sub(d, C(1));
  if (const std::optional<int64_t> c = b->AsConst()) {
    if (*c >= kToEnd) return hi;
    if (*c <= -kToEnd) return lo;
    if (*c == 0) return step > 0 ? C(0) : Min(C(0), hi);
    if (*c > 0) return Min(*b, hi);
    return Max(Add(d, *b), lo);
  }
  if (NonNegative(*b)) return Min(*b, hi);
  if (const std::optional<int64_t> up = b->UpperBound(); up && *up < 0) return Max(Add(d, *b), lo);
  return std::nullopt;
}

Elem SliceLength(const Elem& d, const Elem& start, const Elem& end, const Elem& step_e) {
  const std::optional<int64_t> step = ConstOf(step_e);
  if (!step || *step == 0 || *step == std::numeric_limits<int64_t>::min()) return std::nullopt;
  const std::optional<int64_t> dc = ConstOf(d), sc = ConstOf(start), ec = ConstOf(end);
  if (dc && sc && ec) {
    // Numeric, exactly as the spec clamps.
    int64_t s = *sc, e = *ec;
    const int64_t n = *dc;
    if (s < 0) s = s < -n ? -1 : s + n;  // -1 marks "before the start" (clamped below)
    if (e < 0) e = e < -n ? -1 : e + n;
    if (*step > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      return C(e > s ? (e - s - 1) / *step + 1 : 0);
    }
    s = std::clamp<int64_t>(s, 0, std::max<int64_t>(n - 1, 0));
    e = std::clamp<int64_t>(e, -1, n - 1);
    if (n == 0) return C(0);
    const int64_t k = -*step;
    return C(s > e ? (s - e - 1) / k + 1 : 0);
  }
  const Elem s = ClampBound(start, d, true, *step);
  const Elem e = ClampBound(end, d, false, *step);
  // Both bounds lie in the clamped range, so the length cannot be negative when one of them
  // is that range's far end (x[k:], x[:k], x[::-1]); elsewhere max(..., 0) keeps it so.
  // Extents are below 2^31: a longer step takes at most the first element.
  if (*step >= kToEnd) return Min(Max(Sub(e, s), C(0)), C(1));
  if (*step <= -kToEnd) return Min(Max(Sub(s, e), C(0)), C(1));
  if (*step > 0) {
    const Elem len = CeilDiv(Sub(e, s), C(*step));
    return e == d || (s && s->IsConst(0)) ? len : Max(len, C(0));
  }
  const Elem len = CeilDiv(Sub(s, e), C(-*step));
  return s == Sub(d, C(1)) || (e && e->IsConst(-1)) ? len : Max(len, C(0));
}

Outputs SliceFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  if (x == nullptr) return Fit(op, One(std::move(t)));
  const int64_t r = x->rank();
  std::optional<Elems> starts, ends, axes_e, steps;
  if (op.opset() < 10) {
    auto to_elems = [](const std::optional<std::vector<int64_t>>& v) -> std::optional<Elems> {
      if (!v) return std::nullopt;
      Elems e;
      for (int64_t i : *v) e.push_back(C(i));
      return e;
    };
    starts = to_elems(op.Ints("starts"));
    ends = to_elems(op.Ints("ends"));
    axes_e = to_elems(op.Ints("axes"));
  } else {
    starts = op.Value(1);
    ends = op.Value(2);
    if (op.Has(3)) {
      axes_e = op.Value(3);
      if (!axes_e) {
        // Which axes are sliced is unknown: the rank stays, every dim may change.
        t.shape = Shape::FromDims(std::vector<Dim>(static_cast<size_t>(r), Dim::Unknown()));
        return Fit(op, One(std::move(t)));
      }
    }
    if (op.Has(4)) {
      steps = op.Value(4);
      if (!steps) steps = Elems(starts ? starts->size() : 0, std::nullopt);
    }
  }
  const int64_t n =
      starts ? static_cast<int64_t>(starts->size())
             : (op.InShape(1) && op.InShape(1)->rank() == 1 && op.InShape(1)->dims[0].is_value()
                    ? op.InShape(1)->dims[0].value()
                    : -1);
  std::vector<int64_t> axes;
  if (axes_e) {
    for (const Elem& a : *axes_e) {
      const std::optional<int64_t> c = ConstOf(a);
      if (!c) {
        t.shape = Shape::FromDims(std::vector<Dim>(static_cast<size_t>(r), Dim::Unknown()));
        return Fit(op, One(std::move(t)));
      }
      axes.push_back(*c);
    }
  } else {
    if (n < 0 || n > r) {
      t.shape = Shape::FromDims(std::vector<Dim>(static_cast<size_t>(r), Dim::Unknown()));
      return Fit(op, One(std::move(t)));
    }
    for (int64_t i = 0; i < n; ++i) axes.push_back(i);
  }
  const std::optional<std::vector<int64_t>> norm = NormAxes(axes, r);
  if (!norm) return Fit(op, One(std::move(t)));
  std::vector<Dim> dims = x->dims;
  const size_t k = norm->size();
  const bool sized =
      starts && ends && starts->size() == k && ends->size() == k && (!steps || steps->size() == k);
  for (size_t i = 0; i < k; ++i) {
    Dim& d = dims[static_cast<size_t>((*norm)[i])];
    if (!sized) {
      d = Dim::Unknown();
      continue;
    }
    d = DimOf(SliceLength(ElemOf(d), (*starts)[i], (*ends)[i], steps ? (*steps)[i] : C(1)));
  }
  t.shape = Shape::FromDims(std::move(dims));
  // Contents of a sliced shape vector, or of a small matrix (a reversed pad table).
  if (std::optional<Elems> v = op.AnyValue(0); v && sized && r >= 1 && r <= 2) {
    std::vector<std::vector<int64_t>> picks(static_cast<size_t>(r));
    bool ok = true;
    for (int64_t a = 0; a < r && ok; ++a) {
      const std::optional<int64_t> len = ConstOf(ElemOf(x->dims[static_cast<size_t>(a)]));
      ok = len.has_value();
      if (!ok) break;
      std::vector<int64_t>& pick = picks[static_cast<size_t>(a)];
      const auto it = std::find(norm->begin(), norm->end(), a);
      if (it == norm->end()) {
        for (int64_t i = 0; i < *len; ++i) pick.push_back(i);
        continue;
      }
      const size_t k_i = static_cast<size_t>(it - norm->begin());
      const std::optional<int64_t> s0 = ConstOf((*starts)[k_i]), e0 = ConstOf((*ends)[k_i]);
      const std::optional<int64_t> st = steps ? ConstOf((*steps)[k_i]) : std::optional<int64_t>(1);
      ok = s0 && e0 && st && *st != 0 && *st != std::numeric_limits<int64_t>::min();
      if (!ok) break;
      // Bounds clamp as the spec says; a step longer than the axis takes one element.
      int64_t b = *s0 < 0 ? std::max<int64_t>(*s0 + *len, *st > 0 ? 0 : -1) : *s0;
      int64_t f = *e0 < 0 ? std::max<int64_t>(*e0 + *len, -1) : *e0;
      const int64_t step = std::clamp<int64_t>(*st, -(*len + 1), *len + 1);
      if (step > 0) {
        b = std::clamp<int64_t>(b, 0, *len);
        f = std::clamp<int64_t>(f, 0, *len);
        for (int64_t i = b; i < f; i += step) pick.push_back(i);
      } else {
        b = std::clamp<int64_t>(b, 0, *len - 1);
        f = std::clamp<int64_t>(f, -1, *len - 1);
        for (int64_t i = b; i > f; i += step) pick.push_back(i);
      }
    }
    if (ok) {
      Elems out;
      if (r == 1) {
        for (int64_t i : picks[0]) out.push_back((*v)[static_cast<size_t>(i)]);
      } else {
        const int64_t cols = x->dims[1].value();
        for (int64_t i : picks[0]) {
          for (int64_t j : picks[1]) out.push_back((*v)[static_cast<size_t>(i * cols + j)]);
        }
      }
      SetValue(&t, out);
    }
  }
  return Fit(op, One(std::move(t)));
}

// The preferred of two dims that a valid model makes equal: a value, then an expression.
Dim Better(const Dim& a, const Dim& b) {
  if (a.is_value()) return a;
  if (b.is_value()) return b;
  return a.is_unknown() ? b : a;
}

Outputs ConcatFn(const Op& op) {
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  std::optional<int64_t> rank;
  for (int i = 0; i < op.n_in(); ++i) {
    const Shape* s = op.InShape(i);
    if (s == nullptr) continue;
    if (rank && *rank != s->rank()) return Fit(op, One(std::move(t)));
    rank = s->rank();
  }
  if (t.elem == 0) {
    for (int i = 0; i < op.n_in() && t.elem == 0; ++i) t.elem = op.InElem(i);
  }
  if (!rank || *rank == 0) return Fit(op, One(std::move(t)));
  const std::optional<int64_t> axis = NormAxis(op.Int("axis", 0), *rank);
  if (!axis) return Fit(op, One(std::move(t)));
  std::vector<Dim> dims(static_cast<size_t>(*rank), Dim::Unknown());
  Elem sum = C(0);
  for (int i = 0; i < op.n_in(); ++i) {
    const Shape* s = op.InShape(i);
    if (s == nullptr) {
      sum = std::nullopt;
      continue;
    }
    for (int64_t a = 0; a < *rank; ++a) {
      if (a != *axis)
        dims[static_cast<size_t>(a)] =
            Better(dims[static_cast<size_t>(a)], s->dims[static_cast<size_t>(a)]);
    }
    sum = Add(sum, ElemOf(s->dims[static_cast<size_t>(*axis)]));
  }
  dims[static_cast<size_t>(*axis)] = DimOf(sum);
  t.shape = Shape::FromDims(std::move(dims));
  if (*rank == 1) {
    // Float constants (Resize scales built with Concat).
    std::vector<double> floats;
    bool float_tracked = true;
    for (int i = 0; i < op.n_in() && float_tracked; ++i) {
      const SymTensor* in = op.In(i);
      float_tracked = in != nullptr && in->float_value.has_value();
      if (float_tracked)
        floats.insert(floats.end(), in->float_value->begin(), in->float_value->end());
    }
    if (float_tracked && static_cast<int64_t>(floats.size()) <= kMaxValueElements) {
      t.float_value = std::move(floats);
    } else if (IsFloatElem(t.elem)) {
      Rats rats;
      bool ok = true;
      for (int i = 0; i < op.n_in() && ok; ++i) {
        const std::optional<Rats> r = RatsOf(op.In(i));
        ok = r.has_value();
        if (ok) rats.insert(rats.end(), r->begin(), r->end());
      }
      if (ok) SetFloatExprs(&t, std::move(rats));
    }
    // An input of known length whose contents are not tracked contributes unknown elements,
    // so that Concat(Shape(x)[:2], computed) still carries N and C.
    Elems all;
    bool tracked = true, any = false;
    for (int i = 0; i < op.n_in() && tracked; ++i) {
      if (const std::optional<Elems> v = op.Value(i)) {
        all.insert(all.end(), v->begin(), v->end());
        any = true;
        continue;
      }
      const Shape* s = op.InShape(i);
      tracked = s != nullptr && s->dims[0].is_value() && s->dims[0].value() <= kMaxValueElements;
      if (tracked) all.insert(all.end(), static_cast<size_t>(s->dims[0].value()), std::nullopt);
    }
    if (tracked && any) SetValue(&t, all);
  }
  return Fit(op, One(std::move(t)));
}

// Contents that survive a change of shape (Squeeze, Unsqueeze, Reshape of small tensors).
void KeepContents(const Op& op, SymTensor* t) {
  if (std::optional<Elems> v = op.AnyValue(0)) SetValue(t, *v);
  if (const SymTensor* x = op.In(0); x != nullptr && x->float_exprs) {
    SetFloatExprs(t, *x->float_exprs);
  }
  const SymTensor* x = op.In(0);
  if (x != nullptr && x->float_value && t->shape.rank_known && t->shape.rank() <= 1 &&
      t->shape.NumElements() == static_cast<int64_t>(x->float_value->size())) {
    t->float_value = x->float_value;
  }
}

// Axes of Squeeze/Unsqueeze/reductions: the attribute before `input_since`, then input 1.
// nullopt when the axes are given but not known; an empty vector when absent.
std::optional<std::optional<std::vector<int64_t>>> AxesOf(const Op& op, int64_t input_since) {
  if (op.opset() < input_since) return std::optional<std::vector<int64_t>>(op.Ints("axes"));
  if (!op.Has(1)) return std::optional<std::vector<int64_t>>();
  const std::optional<std::vector<int64_t>> c = ConstValues(op.In(1));
  if (!c) return std::nullopt;
  return std::optional<std::vector<int64_t>>(*c);
}

Outputs SqueezeFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  const auto axes = AxesOf(op, 13);
  if (x == nullptr || !axes) return Fit(op, One(std::move(t)));
  std::vector<Dim> dims;
  if (!axes->has_value() || (*axes)->empty()) {
    for (const Dim& d : x->dims) {
      if (d.Is(1)) continue;
      // A symbolic dim may be 1: which axes go is then unknown.
      if (!d.is_value()) {
        const Elem e = ElemOf(d);
        const std::optional<int64_t> lo = e ? e->LowerBound() : std::nullopt;
        if (!lo || *lo < 2) return Fit(op, One(std::move(t)));
      }
      dims.push_back(d);
    }
  } else {
    const std::optional<std::vector<int64_t>> norm = NormAxes(**axes, x->rank());
    if (!norm) return Fit(op, One(std::move(t)));
    std::vector<bool> drop(x->dims.size(), false);
    for (int64_t a : *norm) drop[static_cast<size_t>(a)] = true;
    for (size_t i = 0; i < x->dims.size(); ++i) {
      if (!drop[i]) dims.push_back(x->dims[i]);
    }
  }
  t.shape = Shape::FromDims(std::move(dims));
  KeepContents(op, &t);
  return Fit(op, One(std::move(t)));
}

Outputs UnsqueezeFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  const auto axes = AxesOf(op, 13);
  if (x == nullptr || !axes || !axes->has_value()) return Fit(op, One(std::move(t)));
  const int64_t out_rank = x->rank() + static_cast<int64_t>((*axes)->size());
  if (out_rank > kMaxRank) return Fit(op, One(std::move(t)));
  const std::optional<std::vector<int64_t>> norm = NormAxes(**axes, out_rank);
  if (!norm) return Fit(op, One(std::move(t)));
  std::vector<bool> ones(static_cast<size_t>(out_rank), false);
  for (int64_t a : *norm) ones[static_cast<size_t>(a)] = true;
  std::vector<Dim> dims;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    dims.push_back(ones[static_cast<size_t>(i)] ? Dim::Value(1) : x->dims[next++]);
  }
  t.shape = Shape::FromDims(std::move(dims));
  KeepContents(op, &t);
  return Fit(op, One(std::move(t)));
}

// The shape a shape tensor describes: its elements as dims (negative -> invalid -> nullopt
// element), or, untracked, `len` unknown dims when its length is known.
std::optional<std::vector<Dim>> ShapeFromTensor(const Op& op, int i) {
  if (std::optional<Elems> v = op.Value(i)) {
    std::vector<Dim> dims;
    for (const Elem& e : *v) {
      const std::optional<int64_t> c = ConstOf(e);
      if (c && *c < 0) return std::nullopt;
      dims.push_back(DimOf(e));
    }
    return dims;
  }
  const Shape* s = op.InShape(i);
  if (s != nullptr && s->rank() == 1 && s->dims[0].is_value() && s->dims[0].value() <= kMaxRank) {
    return std::vector<Dim>(static_cast<size_t>(s->dims[0].value()), Dim::Unknown());
  }
  return std::nullopt;
}

Outputs ConstantOfShapeFn(const Op& op) {
  int32_t elem = onnx::TensorProto::FLOAT;
  std::optional<SymTensor> fill;
  if (const onnx::AttributeProto* a = op.Attr("value"); a != nullptr && a->has_t()) {
    fill = SymTensorOfConstant(a->t());
    elem = a->t().data_type();
  }
  SymTensor t = Tensor(elem, Shape::UnknownRank());
  const std::optional<std::vector<Dim>> dims = ShapeFromTensor(op, 0);
  if (!dims) return Fit(op, One(std::move(t)));
  t.shape = Shape::FromDims(*dims);
  if (fill && t.shape.rank() <= 1) {
    const std::optional<int64_t> n = t.shape.NumElements();
    if (n && *n <= kMaxValueElements) {
      if (std::optional<Elems> v = ValueOf(&*fill); v && v->size() == 1) {
        SetValue(&t, Elems(static_cast<size_t>(*n), (*v)[0]));
      } else if (fill->float_value && fill->float_value->size() == 1) {
        t.float_value.emplace(static_cast<size_t>(*n), (*fill->float_value)[0]);
      }
    }
  }
  return Fit(op, One(std::move(t)));
}

Outputs RangeFn(const Op& op) {
  const int32_t elem = op.InElem(0);
  SymTensor t = Tensor(elem, Shape::FromDims({Dim::Unknown()}));
  if (op.n_in() != 3) return Fit(op, One(std::move(t)));
  const SymTensor* s = op.In(0);
  const SymTensor* l = op.In(1);
  const SymTensor* d = op.In(2);
  if (s && l && d && s->float_value && l->float_value && d->float_value &&
      s->float_value->size() == 1 && l->float_value->size() == 1 && d->float_value->size() == 1) {
    const double a = (*s->float_value)[0], b = (*l->float_value)[0], c = (*d->float_value)[0];
    const double len = std::ceil((b - a) / c);
    if (std::isfinite(len) && c != 0) {
      const int64_t n = len <= 0 ? 0 : len > 9e15 ? -1 : static_cast<int64_t>(len);
      if (n >= 0) t.shape = Shape::Of({n});
    }
    return Fit(op, One(std::move(t)));
  }
  const std::optional<Elems> sv = op.Value(0), lv = op.Value(1), dv = op.Value(2);
  if (!sv || !lv || !dv || sv->size() != 1 || lv->size() != 1 || dv->size() != 1) {
    return Fit(op, One(std::move(t)));
  }
  const std::optional<int64_t> delta = ConstOf((*dv)[0]);
  if (!delta || *delta == 0 || *delta == std::numeric_limits<int64_t>::min()) {
    return Fit(op, One(std::move(t)));
  }
  const Elem len = *delta > 0 ? Max(CeilDiv(Sub((*lv)[0], (*sv)[0]), C(*delta)), C(0))
                              : Max(CeilDiv(Sub((*sv)[0], (*lv)[0]), C(-*delta)), C(0));
  t.shape = Shape::FromDims({DimOf(len)});
  if (const std::optional<int64_t> n = ConstOf(len); n && *n <= kMaxValueElements) {
    Elems e;
    for (int64_t i = 0; i < *n; ++i) {
      int64_t offset = 0;
      if (__builtin_mul_overflow(i, *delta, &offset)) return Fit(op, One(std::move(t)));
      e.push_back(Add((*sv)[0], C(offset)));
    }
    SetValue(&t, e);
  }
  return Fit(op, One(std::move(t)));
}

// Whether e == 0 implies f == 0 for every value of their one common symbol: decided exactly by
// brute force over the period of both zero sets; false when unsure.
bool ZeroImpliesZero(const Expr& e, const Expr& f) {
  std::vector<std::string> names = e.Symbols();
  for (const std::string& n : f.Symbols()) names.push_back(n);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  if (names.size() != 1) return false;
  const std::optional<broadcast::ZeroSetShape> a = broadcast::ZeroSetPeriodicity(e);
  const std::optional<broadcast::ZeroSetShape> b = broadcast::ZeroSetPeriodicity(f);
  if (!a || !b) return false;
  const int64_t period = std::lcm(a->period, b->period);
  const int64_t end = std::max(a->threshold, b->threshold) + period;
  if (period <= 0 || end > (int64_t{1} << 20)) return false;
  for (int64_t h = 1; h < end; ++h) {
    const std::map<std::string, int64_t> at = {{names[0], h}};
    const std::optional<int64_t> ev = e.Evaluate(at), fv = f.Evaluate(at);
    if (!ev || !fv) return false;
    if (*ev == 0 && *fv != 0) return false;
  }
  return true;
}

// Whether Reshape's non-allowzero target element `e` (at position `i`) yields the dim `e`. It
// does where e > 0. Where e == 0 the input's dim i is copied instead: that dim is still 0 when
// e == 0 implies it is (torch's `x.view(B, pad_H // 4, ...)`, 0 only when pad_H is); and when
// e == 0 implies that another input dim is 0, the tensor is empty there, where the copy can
// only change an extent of an empty tensor (element counts must agree), which we accept as e.
bool ReshapeElementIsLiteral(const Expr& e, const Shape* in) {
  if (Positive(e)) return true;
  if (in == nullptr || !NonNegative(e)) return false;  // a negative one may be a -1 to infer
  for (const Dim& d : in->dims) {
    if (const Elem f = ElemOf(d); f && ZeroImpliesZero(e, *f)) return true;
  }
  // e divides the input's element count (B * num_windows of a window partition): e == 0
  // empties the input.
  if (const Elem total = Product(in->dims, 0, in->dims.size())) {
    return Expr::ExactDiv(*total, e).has_value();
  }
  return false;
}

Outputs ReshapeFn(const Op& op) {
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  std::optional<Elems> target;
  if (op.opset() < 5) {
    if (std::optional<std::vector<int64_t>> s = op.Ints("shape")) {
      target.emplace();
      for (int64_t v : *s) target->push_back(C(v));
    }
  } else {
    target = op.Value(1);
    if (!target) {
      // Untracked target of known length: the rank is known.
      if (std::optional<std::vector<Dim>> dims = ShapeFromTensor(op, 1)) {
        t.shape = Shape::FromDims(std::move(*dims));
      }
      return Fit(op, One(std::move(t)));
    }
  }
  if (!target || static_cast<int64_t>(target->size()) > kMaxRank) return Fit(op, One(std::move(t)));
  const bool allowzero = op.Int("allowzero", 0) != 0;
  const Shape* in = op.InShape(0);
  std::vector<Dim> dims;
  int64_t infer = -1;
  for (size_t i = 0; i < target->size(); ++i) {
    const Elem& e = (*target)[i];
    const std::optional<int64_t> c = ConstOf(e);
    if (c && *c == -1) {
      if (infer >= 0) return Fit(op, One(std::move(t)));  // two -1s: malformed
      infer = static_cast<int64_t>(i);
      dims.push_back(Dim::Unknown());
    } else if (c && *c < -1) {
      return Fit(op, One(std::move(t)));
    } else if (c && *c == 0 && !allowzero) {
      dims.push_back(in != nullptr && i < in->dims.size() ? in->dims[i] : Dim::Unknown());
    } else if (!c && e && !(allowzero ? NonNegative(*e) : ReshapeElementIsLiteral(*e, in))) {
      dims.push_back(Dim::Unknown());  // may be -1, or 0 (copy the input's dim), at run time
    } else {
      dims.push_back(DimOf(e));
    }
  }
  if (infer >= 0) {
    Elem known = C(1);
    for (size_t i = 0; i < dims.size(); ++i) {
      if (static_cast<int64_t>(i) != infer) known = Mul(known, ElemOf(dims[i]));
    }
    const Elem total = in != nullptr ? Product(in->dims, 0, in->dims.size()) : std::nullopt;
    Dim solved;
    if (total && known && !known->IsConst(0)) {
      if (std::optional<Expr> q = Expr::ExactDiv(*total, *known)) {
        solved = Dim::FromExpr(*q);
      } else {
        solved = op.Fresh(0, static_cast<int>(infer));
      }
    }
    dims[static_cast<size_t>(infer)] = solved;
  }
  t.shape = Shape::FromDims(std::move(dims));
  KeepContents(op, &t);
  return Fit(op, One(std::move(t)));
}

Outputs ExpandFn(const Op& op) {
  const SymTensor* x = op.In(0);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  const std::optional<std::vector<Dim>> target = ShapeFromTensor(op, 1);
  if (x == nullptr || !target) return Fit(op, One(std::move(t)));
  broadcast::BroadcastResult r = broadcast::BroadcastBidirectional(x->shape, Shape::FromDims(*target));
  if (r.verdict == broadcast::Verdict::kError) return Fit(op, One(std::move(t)));
  t.shape = r.output;
  if (std::optional<Elems> v = ValueOf(x); v && t.shape.rank_known && t.shape.rank() <= 1) {
    const std::optional<int64_t> n = t.shape.NumElements();
    if (n && *n <= kMaxValueElements && (v->size() == 1 || static_cast<int64_t>(v->size()) == *n)) {
      Elems out;
      for (int64_t i = 0; i < *n; ++i)
        out.push_back((*v)[v->size() == 1 ? 0 : static_cast<size_t>(i)]);
      SetValue(&t, out);
    }
  }
  return Fit(op, One(std::move(t)));
}

Outputs TileFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  if (x == nullptr) return Fit(op, One(std::move(t)));
  const std::optional<Elems> reps = op.Value(1);
  if (!reps || static_cast<int64_t>(reps->size()) != x->rank()) {
    t.shape = Shape::FromDims(std::vector<Dim>(x->dims.size(), Dim::Unknown()));
    return Fit(op, One(std::move(t)));
  }
  std::vector<Dim> dims;
  for (size_t i = 0; i < x->dims.size(); ++i) {
    const std::optional<int64_t> c = ConstOf((*reps)[i]);
    if (c && (*c < 0 || *c > kMaxAttr)) return Fit(op, One(std::move(t)));
    dims.push_back(DimOf(Mul(ElemOf(x->dims[i]), (*reps)[i])));
  }
  t.shape = Shape::FromDims(std::move(dims));
  if (std::optional<Elems> v = op.Value(0); v && x->rank() == 1) {
    if (const std::optional<int64_t> c = ConstOf((*reps)[0]);
        c && *c * static_cast<int64_t>(v->size()) <= kMaxValueElements) {
      Elems out;
      for (int64_t k = 0; k < *c; ++k) out.insert(out.end(), v->begin(), v->end());
      SetValue(&t, out);
    }
  }
  return Fit(op, One(std::move(t)));
}

}  // namespace onnx_bcast::analysis::shape_fn

// Symbolic shape functions, elementwise ops: same-shape unary ops, arithmetic, comparisons, logic
// and Where, with value propagation.
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
// Same-shape ops.

Outputs SameShape(const Op& op) {
  const SymTensor* x = op.In(0);
  SymTensor t;
  if (x != nullptr) {
    t.elem = x->elem;
    t.shape = x->shape;
  }
  return Fit(op, One(std::move(t)));
}

// Floor and Ceil of float size arithmetic: an integer expression again.
Outputs RoundFn(const Op& op) {
  Outputs out = SameShape(op);
  const SymTensor* x = op.In(0);
  if (x == nullptr || out.empty()) return out;
  const bool ceil = op.type() == "Ceil";
  if (x->float_value) {
    out[0].float_value.emplace();
    for (double v : *x->float_value) {
      out[0].float_value->push_back(ceil ? std::ceil(v) : std::floor(v));
    }
  } else if (x->float_exprs) {
    Rats r;
    for (const Rat& v : *x->float_exprs) {
      if (!v.num) {
        r.push_back({});
      } else {
        r.push_back({ceil ? CeilDiv(*v.num, C(v.den)) : FloorDiv(*v.num, C(v.den)), 1});
      }
    }
    SetFloatExprs(&out[0], std::move(r));
  }
  return out;
}

Outputs BoolSameShape(const Op& op) {
  Outputs out = SameShape(op);
  if (!out.empty()) out[0].elem = onnx::TensorProto::BOOL;
  return out;
}

// Binary ops whose contents are not tracked: the broadcast shape (PRelu: X's shape).
Outputs BroadcastShapeFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(
      op.InElem(0), op.type() == "PRelu" && x != nullptr ? *x : BroadcastShapes(op, 0, op.n_in()));
  return Fit(op, One(std::move(t)));
}

Outputs EyeLikeFn(const Op& op) {
  Outputs out = SameShape(op);
  if (std::optional<int64_t> dtype = op.Int("dtype"); dtype && !out.empty()) {
    out[0].elem = static_cast<int32_t>(*dtype);
  }
  return out;
}

Outputs IdentityFn(const Op& op) {
  const SymTensor* x = op.In(0);
  return Fit(op, One(x == nullptr ? SymTensor() : *x));
}

Outputs DropoutFn(const Op& op) {
  Outputs out = SameShape(op);
  if (out.size() > 1) {
    out[1].shape = out[0].shape;
    out[1].elem = op.opset() >= 10 ? onnx::TensorProto::BOOL : out[0].elem;
  }
  return out;
}

Outputs Elementwise(const Op& op, int32_t elem, const ElemFn& fn) {
  SymTensor t = Tensor(elem, BroadcastShapes(op, 0, op.n_in()));
  std::vector<Elems> vals;
  for (int i = 0; i < op.n_in(); ++i) {
    std::optional<Elems> v = op.AnyValue(i);
    if (!v) return Fit(op, One(std::move(t)));
    // Flat element-wise pairing is right for lists and for matrices of the output's own shape;
    // anything else (a row against a matrix) is left untracked.
    const Shape* s = op.InShape(i);
    if (v->size() != 1 && (s == nullptr || (s->rank() > 1 && !(*s == t.shape)))) {
      return Fit(op, One(std::move(t)));
    }
    vals.push_back(std::move(*v));
  }
  if (vals.empty()) return Fit(op, One(std::move(t)));
  std::vector<const Elems*> ptrs;
  for (const Elems& v : vals) ptrs.push_back(&v);
  const std::optional<size_t> n = BroadcastLength(ptrs);
  if (!n) return Fit(op, One(std::move(t)));
  Elems out;
  Elems args(vals.size());
  for (size_t i = 0; i < *n; ++i) {
    for (size_t k = 0; k < vals.size(); ++k) args[k] = vals[k][vals[k].size() == 1 ? 0 : i];
    out.push_back(fn(args));
  }
  SetValue(&t, out);
  return Fit(op, One(std::move(t)));
}

int32_t FirstElem(const Op& op, int first) {
  for (int i = first; i < op.n_in(); ++i) {
    if (op.InElem(i) != 0) return op.InElem(i);
  }
  return 0;
}

// Float contents of constant scale arithmetic (Mul/Div of constant float tensors).
void FloatElementwise(const Op& op, const std::function<double(double, double)>& fn, SymTensor* t) {
  if (op.n_in() != 2) return;
  const SymTensor* a = op.In(0);
  const SymTensor* b = op.In(1);
  if (a == nullptr || b == nullptr || !a->float_value || !b->float_value) return;
  const std::vector<double>& x = *a->float_value;
  const std::vector<double>& y = *b->float_value;
  if (x.size() != y.size() && x.size() != 1 && y.size() != 1) return;
  const size_t n = std::max(x.size(), y.size());
  t->float_value.emplace();
  for (size_t i = 0; i < n; ++i) {
    t->float_value->push_back(fn(x[x.size() == 1 ? 0 : i], y[y.size() == 1 ? 0 : i]));
  }
}

// Float size arithmetic over rationals (Add/Sub/Mul/Div by a constant/Max/Min/Sum).
void FloatExprElementwise(const Op& op, SymTensor* t) {
  const std::string& ty = op.type();
  std::vector<Rats> ins;
  bool any_expr = false;
  for (int i = 0; i < op.n_in(); ++i) {
    std::optional<Rats> r = RatsOf(op.In(i));
    if (!r) return;
    any_expr |= op.In(i)->float_exprs.has_value();
    ins.push_back(std::move(*r));
  }
  if (!any_expr || ins.empty()) return;
  size_t n = 1;
  for (const Rats& r : ins) {
    if (r.size() == 1) continue;
    if (n != 1 && r.size() != n) return;
    n = r.size();
  }
  Rats out;
  for (size_t i = 0; i < n; ++i) {
    auto at = [&](size_t k) -> const Rat& { return ins[k][ins[k].size() == 1 ? 0 : i]; };
    Rat acc = at(0);
    for (size_t k = 1; k < ins.size(); ++k) {
      if (ty == "Add" || ty == "Sum") {
        acc = RatAdd(acc, at(k), 1);
      } else if (ty == "Sub") {
        acc = RatAdd(acc, at(k), -1);
      } else if (ty == "Mul") {
        acc = RatMul(acc, at(k));
      } else if (ty == "Div") {
        acc = RatDiv(acc, at(k));
      } else if (ty == "Max" || ty == "Min") {
        acc = RatMinMax(acc, at(k), ty == "Max");
      } else {
        acc = {};
      }
    }
    out.push_back(std::move(acc));
  }
  SetFloatExprs(t, std::move(out));
}

Outputs ArithFn(const Op& op) {
  const std::string& ty = op.type();
  const int32_t elem = FirstElem(op);
  ElemFn fn;
  std::function<double(double, double)> ffn;
  if (ty == "Add" || ty == "Sum") {
    fn = [](const Elems& a) {
      Elem s = C(0);
      for (const Elem& x : a) s = Add(s, x);
      return s;
    };
    ffn = [](double a, double b) { return a + b; };
  } else if (ty == "Sub") {
    fn = [](const Elems& a) { return Sub(a[0], a[1]); };
    ffn = [](double a, double b) { return a - b; };
  } else if (ty == "Mul") {
    fn = [](const Elems& a) { return Mul(a[0], a[1]); };
    ffn = [](double a, double b) { return a * b; };
  } else if (ty == "Div") {
    fn = [](const Elems& a) { return TruncDiv(a[0], a[1]); };
    ffn = [](double a, double b) { return a / b; };
  } else if (ty == "Mod") {
    const bool fmod = op.Int("fmod", 0) != 0;
    fn = [fmod](const Elems& a) { return ModOf(a[0], a[1], fmod); };
  } else if (ty == "Max" || ty == "Min") {
    const bool is_max = ty == "Max";
    fn = [is_max](const Elems& a) {
      Elem m = a.empty() ? Elem() : a[0];
      for (size_t i = 1; i < a.size(); ++i) m = is_max ? Max(m, a[i]) : Min(m, a[i]);
      return m;
    };
    ffn = [is_max](double a, double b) { return is_max ? std::max(a, b) : std::min(a, b); };
  } else {
    return op.Unknown();
  }
  if ((ty == "Sub" || ty == "Mul" || ty == "Div" || ty == "Mod") && op.n_in() != 2) {
    return op.Unknown(elem);
  }
  if (op.n_in() == 0) return op.Unknown(elem);
  Outputs out = Elementwise(op, elem, fn);
  if (ffn && !out.empty() && (IsFloatElem(elem) || elem == 0)) FloatElementwise(op, ffn, &out[0]);
  if (!out.empty() && !out[0].float_value && IsFloatElem(elem) && ty != "Mod") {
    FloatExprElementwise(op, &out[0]);
  }
  return out;
}

Outputs CompareFn(const Op& op) {
  const std::string& ty = op.type();
  ElemFn fn;
  if (ty == "Equal") {
    fn = [](const Elems& a) { return Truth(IsEqual(a[0], a[1])); };
  } else if (ty == "Greater") {
    fn = [](const Elems& a) { return Truth(IsGreater(a[0], a[1])); };
  } else if (ty == "Less") {
    fn = [](const Elems& a) { return Truth(IsGreater(a[1], a[0])); };
  } else if (ty == "GreaterOrEqual") {
    fn = [](const Elems& a) {
      const std::optional<bool> lt = IsGreater(a[1], a[0]);
      return Truth(lt ? std::optional<bool>(!*lt) : std::nullopt);
    };
  } else if (ty == "LessOrEqual") {
    fn = [](const Elems& a) {
      const std::optional<bool> gt = IsGreater(a[0], a[1]);
      return Truth(gt ? std::optional<bool>(!*gt) : std::nullopt);
    };
  } else {
    return op.Unknown(onnx::TensorProto::BOOL);
  }
  if (op.n_in() != 2) return op.Unknown(onnx::TensorProto::BOOL);
  return Elementwise(op, onnx::TensorProto::BOOL, fn);
}

Outputs LogicFn(const Op& op) {
  const std::string& ty = op.type();
  if (ty == "Not") {
    return Elementwise(op, onnx::TensorProto::BOOL, [](const Elems& a) {
      const std::optional<bool> f = Flag(a[0]);
      return Truth(f ? std::optional<bool>(!*f) : std::nullopt);
    });
  }
  if (op.n_in() != 2) return op.Unknown(onnx::TensorProto::BOOL);
  ElemFn fn;
  if (ty == "And") {
    fn = [](const Elems& a) {
      const std::optional<bool> x = Flag(a[0]), y = Flag(a[1]);
      if ((x && !*x) || (y && !*y)) return C(0);
      return x && y ? C(1) : Elem();
    };
  } else if (ty == "Or") {
    fn = [](const Elems& a) {
      const std::optional<bool> x = Flag(a[0]), y = Flag(a[1]);
      if ((x && *x) || (y && *y)) return C(1);
      return x && y ? C(0) : Elem();
    };
  } else {  // Xor
    fn = [](const Elems& a) {
      const std::optional<bool> x = Flag(a[0]), y = Flag(a[1]);
      return x && y ? C(*x != *y ? 1 : 0) : Elem();
    };
  }
  return Elementwise(op, onnx::TensorProto::BOOL, fn);
}

Outputs NegFn(const Op& op) {
  return Elementwise(op, op.InElem(0), [](const Elems& a) { return Sub(C(0), a[0]); });
}

Outputs AbsFn(const Op& op) {
  return Elementwise(op, op.InElem(0), [](const Elems& a) -> Elem {
    if (!a[0]) return std::nullopt;
    if (NonNegative(*a[0])) return a[0];
    if (NonPositive(*a[0])) return -*a[0];
    return std::nullopt;
  });
}

Outputs WhereFn(const Op& op) {
  if (op.n_in() != 3) return op.Unknown(FirstElem(op, 1));
  const int32_t elem = FirstElem(op, 1);
  SymTensor t = Tensor(elem, BroadcastShapes(op, 0, 3));
  std::vector<Elems> vals;
  for (int i = 0; i < 3; ++i) {
    std::optional<Elems> v = op.Value(i);
    // The condition may be untracked when x and y agree; an empty list stands for it.
    if (!v && i == 0) {
      const Shape* s = op.InShape(0);
      std::optional<int64_t> n =
          s && s->rank() <= 1
              ? (s->rank() == 0          ? std::optional<int64_t>(1)
                 : s->dims[0].is_value() ? std::optional<int64_t>(s->dims[0].value())
                                         : std::nullopt)
              : std::nullopt;
      if (!n || *n > kMaxValueElements) return Fit(op, One(std::move(t)));
      v = Elems(static_cast<size_t>(*n), std::nullopt);
    }
    if (!v) return Fit(op, One(std::move(t)));
    vals.push_back(std::move(*v));
  }
  const std::optional<size_t> n = BroadcastLength({&vals[0], &vals[1], &vals[2]});
  if (!n) return Fit(op, One(std::move(t)));
  Elems out;
  for (size_t i = 0; i < *n; ++i) {
    const Elem& c = vals[0][vals[0].size() == 1 ? 0 : i];
    const Elem& x = vals[1][vals[1].size() == 1 ? 0 : i];
    const Elem& y = vals[2][vals[2].size() == 1 ? 0 : i];
    const std::optional<bool> f = Flag(c);
    if (f) {
      out.push_back(*f ? x : y);
    } else if (c && c->IsConst(0)) {
      out.push_back(y);
    } else if (x && y && *x == *y) {
      out.push_back(x);
    } else {
      out.push_back(std::nullopt);
    }
  }
  SetValue(&t, out);
  return Fit(op, One(std::move(t)));
}

}  // namespace onnx_bcast::analysis::shape_fn

// Symbolic shape functions, helpers every family shares: element and dim arithmetic, value
// tracking, rationals, axes. What they require and guarantee: analysis/shape_functions.cc.
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
// Elements and dims.

Elem ElemOf(const Dim& d) { return d.expr(); }
Dim DimOf(const Elem& e) { return e ? Dim::FromExpr(*e) : Dim::Unknown(); }
Elem C(int64_t v) { return Expr::Const(v); }
std::optional<int64_t> ConstOf(const Elem& e) {
  return e ? e->AsConst() : std::optional<int64_t>();
}

Elem Add(const Elem& a, const Elem& b) { return a && b ? Elem(*a + *b) : std::nullopt; }
Elem Sub(const Elem& a, const Elem& b) { return a && b ? Elem(*a - *b) : std::nullopt; }
Elem Mul(const Elem& a, const Elem& b) { return a && b ? Elem(*a * *b) : std::nullopt; }
Elem FloorDiv(const Elem& a, const Elem& b) {
  return a && b ? Expr::FloorDiv(*a, *b) : std::nullopt;
}
Elem CeilDiv(const Elem& a, const Elem& b) { return a && b ? Expr::CeilDiv(*a, *b) : std::nullopt; }
Elem Max(const Elem& a, const Elem& b) { return a && b ? Elem(Expr::Max(*a, *b)) : std::nullopt; }
Elem Min(const Elem& a, const Elem& b) { return a && b ? Elem(Expr::Min(*a, *b)) : std::nullopt; }
// a / b when exact for every value (ExactDiv), else floor (only where the model guarantees
// divisibility: Split, DepthToSpace, SpaceToDepth).
Elem DivisibleDiv(const Elem& a, const Elem& b) {
  if (!a || !b) return std::nullopt;
  if (std::optional<Expr> q = Expr::ExactDiv(*a, *b)) return q;
  return Expr::FloorDiv(*a, *b);
}

bool NonNegative(const Expr& e) {
  const std::optional<int64_t> lo = e.LowerBound();
  return lo && *lo >= 0;
}
bool Positive(const Expr& e) {
  const std::optional<int64_t> lo = e.LowerBound();
  return lo && *lo >= 1;
}
bool NonPositive(const Expr& e) {
  const std::optional<int64_t> hi = e.UpperBound();
  return hi && *hi <= 0;
}

Elem Product(const std::vector<Dim>& dims, size_t begin, size_t end) {
  Elem p = C(1);
  for (size_t i = begin; i < end && i < dims.size(); ++i) p = Mul(p, ElemOf(dims[i]));
  return p;
}

// ONNX integer division truncates toward zero; the expression forms are floor-based, so the
// quotient is built only where floor and truncation agree (or the division is exact).
Elem TruncDiv(const Elem& a, const Elem& b) {
  if (!a || !b) return std::nullopt;
  const std::optional<int64_t> x = a->AsConst(), y = b->AsConst();
  if (x && y) {
    if (*y == 0 || (*x == std::numeric_limits<int64_t>::min() && *y == -1)) return std::nullopt;
    return C(*x / *y);
  }
  if (y && *y != 0 && *y != std::numeric_limits<int64_t>::min()) {
    const int64_t k = *y > 0 ? *y : -*y;
    Elem q;
    if (NonNegative(*a)) {
      q = Expr::FloorDiv(*a, Expr::Const(k));
    } else if (NonPositive(*a)) {
      if (std::optional<Expr> f = Expr::FloorDiv(-*a, Expr::Const(k))) q = -*f;
    } else {
      q = Expr::ExactDiv(*a, Expr::Const(k));
    }
    if (q && *y < 0) q = -*q;
    return q;
  }
  return Expr::ExactDiv(*a, *b);
}

// ONNX Mod: fmod=0 takes the divisor's sign (floor mod), fmod=1 the dividend's (C fmod).
Elem ModOf(const Elem& a, const Elem& b, bool fmod) {
  if (!a || !b) return std::nullopt;
  const std::optional<int64_t> x = a->AsConst(), y = b->AsConst();
  if (x && y) {
    if (*y == 0 || *y == -1) return *y == -1 ? C(0) : Elem();
    int64_t r = *x % *y;
    if (!fmod && r != 0 && ((r < 0) != (*y < 0))) r += *y;
    return C(r);
  }
  if (y && *y > 0 && (!fmod || NonNegative(*a))) return Expr::Mod(*a, *b);
  return std::nullopt;
}

// 1, 0 or unknown for a comparison whose truth is decided for every value of the symbols.
Elem Truth(std::optional<bool> t) { return t ? C(*t ? 1 : 0) : std::nullopt; }

std::optional<bool> IsEqual(const Elem& a, const Elem& b) {
  if (!a || !b) return std::nullopt;
  if (*a == *b) return true;
  const Expr d = *a - *b;
  if (d.AsConst()) return d.IsConst(0);
  if (const std::optional<int64_t> lo = d.LowerBound(); lo && *lo > 0) return false;
  if (const std::optional<int64_t> hi = d.UpperBound(); hi && *hi < 0) return false;
  switch (broadcast::DecideEqual(*a, *b)) {
    case broadcast::Truth::kAlways:
      return true;
    case broadcast::Truth::kNever:
      return false;
    case broadcast::Truth::kSometimes:
      break;
  }
  return std::nullopt;
}

// a > b decided from the bounds of a - b.
std::optional<bool> IsGreater(const Elem& a, const Elem& b) {
  if (!a || !b) return std::nullopt;
  const Expr d = *a - *b;
  if (const std::optional<int64_t> lo = d.LowerBound(); lo && *lo > 0) return true;
  if (const std::optional<int64_t> hi = d.UpperBound(); hi && *hi <= 0) return false;
  return std::nullopt;
}

std::optional<bool> Flag(const Elem& a) {
  if (!a) return std::nullopt;
  if (const std::optional<int64_t> c = a->AsConst()) return *c != 0;
  if (const std::optional<int64_t> lo = a->LowerBound(); lo && *lo > 0) return true;
  return std::nullopt;
}

bool IsIntegerElem(int32_t elem) {
  switch (elem) {
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      return true;
    default:
      return false;
  }
}

bool IsFloatElem(int32_t elem) {
  return elem == onnx::TensorProto::FLOAT || elem == onnx::TensorProto::DOUBLE ||
         elem == onnx::TensorProto::FLOAT16 || elem == onnx::TensorProto::BFLOAT16;
}

/// The elements of a tracked integer tensor (with its negative constants put back), row-major.
/// Rank-2 contents (torch's dynamic pads go through [-1, 2] reshapes, a reversing Slice and a
/// Transpose) are returned only with `any_rank`: every other reader expects a list.
std::optional<Elems> ValueOf(const SymTensor* t, bool any_rank) {
  if (t == nullptr || !t->value) return std::nullopt;
  if (!any_rank && (!t->shape.rank_known || t->shape.rank() > 1)) return std::nullopt;
  Elems e;
  e.reserve(t->value->size());
  for (const Dim& d : *t->value) e.push_back(ElemOf(d));
  for (const auto& [i, v] : t->negatives) {
    if (i >= 0 && i < static_cast<int64_t>(e.size()) && !e[static_cast<size_t>(i)] && v < 0) {
      e[static_cast<size_t>(i)] = Expr::Const(v);
    }
  }
  return e;
}

/// The elements when every one is a constant.
std::optional<std::vector<int64_t>> ConstValues(const SymTensor* t) {
  std::optional<Elems> e = ValueOf(t);
  if (!e) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(e->size());
  for (const Elem& x : *e) {
    const std::optional<int64_t> c = ConstOf(x);
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

/// Stores `e` as `t`'s contents when `t` is a small integer tensor of rank 0 or 1, or of rank 2
/// with constant dims, whose element count matches; otherwise leaves `t` untracked.
void SetValue(SymTensor* t, const Elems& e) {
  t->value.reset();
  t->negatives.clear();
  if (t->elem != 0 && !IsIntegerElem(t->elem)) return;
  if (!t->shape.rank_known || t->shape.rank() > 2) return;
  if (static_cast<int64_t>(e.size()) > kMaxValueElements) return;
  if (t->shape.rank() == 2 &&
      t->shape.NumElements() != std::optional<int64_t>(static_cast<int64_t>(e.size()))) {
    return;
  }
  if (t->shape.rank() == 0 && e.size() != 1) return;
  if (t->shape.rank() == 1) {
    Dim& len = t->shape.dims[0];
    if (len.is_value() && len.value() != static_cast<int64_t>(e.size())) return;
    len = Dim::Value(static_cast<int64_t>(e.size()));
  }
  t->value.emplace();
  t->value->reserve(e.size());
  for (size_t i = 0; i < e.size(); ++i) {
    const std::optional<int64_t> c = ConstOf(e[i]);
    if (c && *c < 0) {
      t->value->push_back(Dim::Unknown());
      t->negatives.emplace_back(static_cast<int64_t>(i), *c);
    } else {
      t->value->push_back(DimOf(e[i]));
    }
  }
}

// A rational with the smallest denominator: a constant fraction reduced, a numerator that the
// denominator divides exactly turned into an integer.
Rat Reduced(Rat r) {
  if (!r.num || r.den == 1) return r;
  if (const std::optional<int64_t> c = r.num->AsConst()) {
    const int64_t g = std::gcd(*c, r.den);
    return {C(*c / g), r.den / g};
  }
  if (std::optional<Expr> q = Expr::ExactDiv(*r.num, Expr::Const(r.den))) return {*q, 1};
  return r;
}

// A float constant as p / 2^j (integers and the dyadic fractions scales use: 0.5, 0.25).
Rat RatOfDouble(double v) {
  if (!std::isfinite(v) || std::fabs(v) >= 1e15) return {};
  for (int64_t den = 1; den <= 1024; den *= 2) {
    const double n = v * static_cast<double>(den);
    if (n == std::floor(n)) return Reduced({C(static_cast<int64_t>(n)), den});
  }
  return {};
}

// The float elements of `t` as rationals: tracked expressions, constants, or (for an integer
// tensor about to be used as float) its integer contents.
std::optional<Rats> RatsOf(const SymTensor* t) {
  if (t == nullptr) return std::nullopt;
  if (t->float_exprs) return *t->float_exprs;
  if (t->float_value) {
    Rats r;
    for (double v : *t->float_value) r.push_back(RatOfDouble(v));
    return r;
  }
  return std::nullopt;
}

void SetFloatExprs(SymTensor* t, Rats r) {
  t->float_exprs.reset();
  if (!t->shape.rank_known || t->shape.rank() > 1) return;
  if (static_cast<int64_t>(r.size()) > kMaxValueElements) return;
  if (t->shape.rank() == 0 && r.size() != 1) return;
  if (t->shape.rank() == 1 && t->shape.dims[0].is_value() &&
      t->shape.dims[0].value() != static_cast<int64_t>(r.size())) {
    return;
  }
  bool any = false;
  for (Rat& x : r) {
    x = Reduced(std::move(x));
    any |= x.num.has_value();
  }
  if (any) t->float_exprs = std::move(r);
}

std::optional<int64_t> MulDen(int64_t a, int64_t b) {
  int64_t d = 0;
  if (__builtin_mul_overflow(a, b, &d) || d <= 0 || d > kMaxDen) return std::nullopt;
  return d;
}

Rat RatAdd(const Rat& a, const Rat& b, int sign) {
  const std::optional<int64_t> d = MulDen(a.den, b.den);
  if (!a.num || !b.num || !d) return {};
  const Elem n = sign > 0 ? Add(Mul(*a.num, C(b.den)), Mul(*b.num, C(a.den)))
                          : Sub(Mul(*a.num, C(b.den)), Mul(*b.num, C(a.den)));
  return {n, *d};
}

Rat RatMul(const Rat& a, const Rat& b) {
  const std::optional<int64_t> d = MulDen(a.den, b.den);
  if (!a.num || !b.num || !d) return {};
  return {Mul(*a.num, *b.num), *d};
}

// a / b for a constant b = p / q: a * q / p.
Rat RatDiv(const Rat& a, const Rat& b) {
  if (!a.num || !b.num) return {};
  const std::optional<int64_t> p = b.num->AsConst();
  if (!p || *p == 0 || *p == std::numeric_limits<int64_t>::min()) return {};
  const std::optional<int64_t> d = MulDen(a.den, *p < 0 ? -*p : *p);
  if (!d) return {};
  const Elem n = Mul(*a.num, C(*p < 0 ? -b.den : b.den));
  return {n, *d};
}

Rat RatMinMax(const Rat& a, const Rat& b, bool is_max) {
  const std::optional<int64_t> d = MulDen(a.den, b.den);
  if (!a.num || !b.num || !d) return {};
  const Elem x = Mul(*a.num, C(b.den)), y = Mul(*b.num, C(a.den));
  return {is_max ? Max(x, y) : Min(x, y), *d};
}

/// Right-aligned broadcasting of element lists of rank <= 1 (lengths 1 broadcast).
std::optional<size_t> BroadcastLength(const std::vector<const Elems*>& ins) {
  size_t n = 1;
  for (const Elems* e : ins) {
    if (e->size() == 1) continue;
    if (n != 1 && e->size() != n) return std::nullopt;
    n = e->size();
  }
  return n;
}

/// Normalizes an axis against `rank` (negative counts from the end); nullopt when out of range.
std::optional<int64_t> NormAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

/// Normalized, distinct axes; nullopt when any is out of range or repeated.
std::optional<std::vector<int64_t>> NormAxes(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    const std::optional<int64_t> n = NormAxis(a, rank);
    if (!n || seen[static_cast<size_t>(*n)]) return std::nullopt;
    seen[static_cast<size_t>(*n)] = true;
    out.push_back(*n);
  }
  return out;
}

Outputs One(SymTensor t) {
  Outputs out;
  out.push_back(std::move(t));
  return out;
}

SymTensor Tensor(int32_t elem, Shape shape) {
  SymTensor t;
  t.elem = elem;
  t.shape = std::move(shape);
  return t;
}

/// Pads `out` to the node's output count with unknown tensors.
Outputs Fit(const Op& op, Outputs out) {
  out.resize(static_cast<size_t>(std::max(op.n_out(), 0)));
  return out;
}

// Broadcast (numpy) of the inputs' shapes; unknown rank when an input is unknown or invalid.
Shape BroadcastShapes(const Op& op, int first, int count) {
  std::vector<Shape> shapes;
  for (int i = first; i < first + count; ++i) {
    const SymTensor* t = op.In(i);
    shapes.push_back(t == nullptr ? Shape::UnknownRank() : t->shape);
  }
  if (shapes.empty()) return Shape::UnknownRank();
  broadcast::BroadcastResult r = broadcast::BroadcastNumpy(shapes);
  if (r.verdict == broadcast::Verdict::kError) return Shape::UnknownRank();
  return r.output;
}

}  // namespace onnx_bcast::analysis::shape_fn

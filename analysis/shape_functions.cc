// Symbolic shape functions and value propagation for shape tensors (see shape_functions.h).
//
// Requires: a node of the default domain and what the analysis knows of its inputs (any of
// which may be null, of unknown rank, or hostile: ranks out of range, negative or huge
// attributes, zero strides).
// Guarantees: one function per op; outputs are expressions of the inputs' dims (broadcast/
// expr.h) where the op's shape follows from them, a fresh symbol from `ctx.symbols` where it
// depends on data the analysis cannot see, and unknown where an input is unknown or the node is
// malformed. Nothing here aborts or overflows on a hostile model: attributes are range-checked
// before any arithmetic and expression builders replace oversized results by opaque symbols.
//
// Value propagation: small integer tensors (rank 0 or 1, at most kMaxValueElements elements)
// carry their elements as expressions, so that Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape keeps symbolic dims. Elements that are negative constants travel in
// SymTensor::negatives (a Dim holds only extents).
//
// Extents are assumed below 2^31: a Slice bound at or beyond +-(2^31 - 1) means "to the end"
// (exporters write INT_MAX and INT64_MAX for it), which keeps `x[1:]` as `H - 1` rather than
// `min(H, 2147483647) - 1`.
#include "analysis/shape_functions.h"

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
#include "broadcast/expr.h"
#include "broadcast/rules.h"
#include "proto/shapes.h"

namespace onnx_bcast::passes {
namespace {

using bcast::Dim;
using bcast::Expr;
using bcast::Shape;

/// One element of a tracked integer tensor: an expression, or nullopt when not known.
using Elem = std::optional<Expr>;
using Elems = std::vector<Elem>;
using Outputs = std::vector<SymTensor>;

constexpr int64_t kMaxRank = 1024;                  // larger ranks are refused as malformed
constexpr int64_t kMaxAttr = int64_t{1} << 31;      // bound on kernels, strides, pads, repeats
constexpr int64_t kToEnd = (int64_t{1} << 31) - 1;  // Slice bounds this large mean "the end"

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
  switch (bcast::DecideEqual(*a, *b)) {
    case bcast::Truth::kAlways:
      return true;
    case bcast::Truth::kNever:
      return false;
    case bcast::Truth::kSometimes:
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
std::optional<Elems> ValueOf(const SymTensor* t, bool any_rank = false) {
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

// ---------------------------------------------------------------------------------------------
// Float elements as exact rationals of expressions (SymTensor::float_exprs).

using Rat = SymTensor::Rational;
using Rats = std::vector<Rat>;
constexpr int64_t kMaxDen = int64_t{1} << 20;

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

// ---------------------------------------------------------------------------------------------
// The node as a shape function reads it.

class Op {
 public:
  explicit Op(const ShapeFnContext& ctx) : ctx_(ctx), node_(*ctx.node) {}

  const onnx::NodeProto& node() const { return node_; }
  const std::string& type() const { return node_.op_type(); }
  int64_t opset() const { return ctx_.opset; }
  int n_in() const { return node_.input_size(); }
  int n_out() const { return node_.output_size(); }

  /// Input `i`, or null when absent or unknown.
  const SymTensor* In(int i) const {
    if (i < 0 || i >= node_.input_size() || node_.input(i).empty()) return nullptr;
    if (static_cast<size_t>(i) >= ctx_.inputs.size()) return nullptr;
    return ctx_.inputs[static_cast<size_t>(i)];
  }
  bool Has(int i) const { return i >= 0 && i < node_.input_size() && !node_.input(i).empty(); }
  /// Input `i`'s shape when its rank is known (and sane), else null.
  const Shape* InShape(int i) const {
    const SymTensor* t = In(i);
    if (t == nullptr || !t->shape.rank_known || t->shape.rank() > kMaxRank) return nullptr;
    return &t->shape;
  }
  int32_t InElem(int i) const {
    const SymTensor* t = In(i);
    return t == nullptr ? 0 : t->elem;
  }
  std::optional<Elems> Value(int i) const { return ValueOf(In(i)); }
  /// Contents of any tracked rank (row-major), for ops that move elements without reading
  /// them as a list.
  std::optional<Elems> AnyValue(int i) const { return ValueOf(In(i), /*any_rank=*/true); }

  /// The attribute, following ref_attr_name into the calling node; null when absent.
  const onnx::AttributeProto* Attr(std::string_view name) const {
    for (const auto& a : node_.attribute()) {
      if (a.name() != name) continue;
      if (a.ref_attr_name().empty()) return &a;
      if (ctx_.caller == nullptr) return nullptr;
      for (const auto& ca : ctx_.caller->attribute()) {
        if (ca.name() == a.ref_attr_name()) return &ca;
      }
      return nullptr;
    }
    return nullptr;
  }
  std::optional<int64_t> Int(std::string_view name) const {
    const onnx::AttributeProto* a = Attr(name);
    if (a == nullptr) return std::nullopt;
    return a->i();
  }
  int64_t Int(std::string_view name, int64_t def) const { return Int(name).value_or(def); }
  std::optional<std::vector<int64_t>> Ints(std::string_view name) const {
    const onnx::AttributeProto* a = Attr(name);
    if (a == nullptr) return std::nullopt;
    if (a->ints_size() > kMaxRank * 2) return std::nullopt;
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  }
  std::optional<std::vector<float>> Floats(std::string_view name) const {
    const onnx::AttributeProto* a = Attr(name);
    if (a == nullptr) return std::nullopt;
    return std::vector<float>(a->floats().begin(), a->floats().end());
  }
  std::optional<float> Float(std::string_view name) const {
    const onnx::AttributeProto* a = Attr(name);
    if (a == nullptr) return std::nullopt;
    return a->f();
  }
  std::string String(std::string_view name, std::string def) const {
    const onnx::AttributeProto* a = Attr(name);
    return a == nullptr ? def : a->s();
  }

  /// A fresh symbol for output `output`, axis `axis` (unknown when no source is given).
  Dim Fresh(int output, int axis) const {
    if (ctx_.symbols == nullptr) return Dim::Unknown();
    return ctx_.symbols->Fresh(ctx_.node_name, output, axis);
  }

  /// n_out() outputs, each of unknown rank with elem `elem`.
  Outputs Unknown(int32_t elem = 0) const {
    Outputs out(static_cast<size_t>(std::max(n_out(), 0)));
    for (SymTensor& t : out) t.elem = elem;
    return out;
  }

 private:
  const ShapeFnContext& ctx_;
  const onnx::NodeProto& node_;
};

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
  bcast::BroadcastResult r = bcast::BroadcastNumpy(shapes);
  if (r.verdict == bcast::Verdict::kError) return Shape::UnknownRank();
  return r.output;
}

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

// Element-wise ops over tracked contents (shape arithmetic of exporters). The shape is the
// numpy broadcast of the inputs (the analysis re-derives broadcasting ops' shapes itself).
using ElemFn = std::function<Elem(const Elems&)>;

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

int32_t FirstElem(const Op& op, int first = 0) {
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
  const std::optional<bcast::ZeroSetShape> a = bcast::ZeroSetPeriodicity(e);
  const std::optional<bcast::ZeroSetShape> b = bcast::ZeroSetPeriodicity(f);
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
  bcast::BroadcastResult r = bcast::BroadcastBidirectional(x->shape, Shape::FromDims(*target));
  if (r.verdict == bcast::Verdict::kError) return Fit(op, One(std::move(t)));
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

// ---------------------------------------------------------------------------------------------
// Convolutions and pools.

struct Window {
  std::vector<Elem> kernel;
  std::vector<int64_t> strides, dilations, pads;
  std::string auto_pad;
  bool ceil_mode = false;
};

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

// ---------------------------------------------------------------------------------------------
// Movement ops.

Outputs PadFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  if (x == nullptr) return Fit(op, One(std::move(t)));
  const int64_t r = x->rank();
  std::optional<Elems> pads;
  if (op.opset() < 11) {
    std::optional<std::vector<int64_t>> p = op.Ints(op.opset() < 2 ? "paddings" : "pads");
    if (p) {
      pads.emplace();
      for (int64_t v : *p) pads->push_back(C(v));
    }
  } else {
    pads = op.Value(1);
  }
  std::vector<int64_t> axes;
  if (op.opset() >= 18 && op.Has(3)) {
    const std::optional<std::vector<int64_t>> a = ConstValues(op.In(3));
    const std::optional<std::vector<int64_t>> norm = a ? NormAxes(*a, r) : std::nullopt;
    if (!norm) {
      t.shape = Shape::FromDims(std::vector<Dim>(x->dims.size(), Dim::Unknown()));
      return Fit(op, One(std::move(t)));
    }
    axes = *norm;
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  const size_t n = axes.size();
  if (!pads || pads->size() != 2 * n) {
    t.shape = Shape::FromDims(std::vector<Dim>(x->dims.size(), Dim::Unknown()));
    return Fit(op, One(std::move(t)));
  }
  std::vector<Dim> dims = x->dims;
  for (size_t i = 0; i < n; ++i) {
    for (const Elem& p : {(*pads)[i], (*pads)[i + n]}) {
      if (const std::optional<int64_t> c = ConstOf(p); c && (*c > kMaxAttr || *c < -kMaxAttr)) {
        return Fit(op, One(std::move(t)));
      }
    }
    Dim& d = dims[static_cast<size_t>(axes[i])];
    d = DimOf(Add(Add(ElemOf(d), (*pads)[i]), (*pads)[i + n]));
  }
  t.shape = Shape::FromDims(std::move(dims));
  return Fit(op, One(std::move(t)));
}

Outputs SplitFn(const Op& op) {
  const Shape* x = op.InShape(0);
  Outputs out = op.Unknown(op.InElem(0));
  const size_t k = out.size();
  if (x == nullptr || x->rank() == 0 || k == 0) return out;
  const std::optional<int64_t> axis = NormAxis(op.Int("axis", 0), x->rank());
  if (!axis) return out;
  std::optional<Elems> split;
  bool split_given = false;
  if (op.opset() < 13 && op.Attr("split") != nullptr) {
    split_given = true;
    split.emplace();
    const std::vector<int64_t> attr = op.Ints("split").value_or(std::vector<int64_t>());
    for (int64_t v : attr) split->push_back(C(v));
  } else if (op.Has(1)) {
    split_given = true;
    split = op.Value(1);
  }
  const Elem d = ElemOf(x->dims[static_cast<size_t>(*axis)]);
  std::vector<Elem> parts;
  if (split_given) {
    if (!split || split->size() != k) {
      parts.assign(k, std::nullopt);
    } else {
      for (const Elem& e : *split) {
        if (const std::optional<int64_t> c = ConstOf(e); c && *c < 0) return out;
        parts.push_back(e);
      }
    }
  } else {
    const int64_t n =
        op.opset() >= 18 ? op.Int("num_outputs", static_cast<int64_t>(k)) : static_cast<int64_t>(k);
    if (n != static_cast<int64_t>(k) || n < 1) return out;
    const Elem exact = d ? Expr::ExactDiv(*d, Expr::Const(n)) : Elem();
    if (exact || op.opset() < 18) {
      // Before opset 18 the extent must divide evenly.
      parts.assign(k, exact ? exact : CeilDiv(d, C(n)));
    } else {
      const Elem each = CeilDiv(d, C(n));
      parts.assign(k, each);
      parts.back() = Sub(d, Mul(each, C(n - 1)));
    }
  }
  for (size_t i = 0; i < k; ++i) {
    std::vector<Dim> dims = x->dims;
    dims[static_cast<size_t>(*axis)] = DimOf(parts[i]);
    out[i].shape = Shape::FromDims(std::move(dims));
  }
  // Pieces of a tracked shape vector.
  if (std::optional<Elems> v = op.Value(0); v && x->rank() == 1) {
    size_t at = 0;
    for (size_t i = 0; i < k; ++i) {
      const std::optional<int64_t> len = ConstOf(parts[i]);
      if (!len || at + static_cast<size_t>(*len) > v->size()) break;
      SetValue(&out[i],
               Elems(v->begin() + static_cast<std::ptrdiff_t>(at),
                     v->begin() + static_cast<std::ptrdiff_t>(at + static_cast<size_t>(*len))));
      at += static_cast<size_t>(*len);
    }
  }
  return out;
}

Outputs TransposeFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  if (x == nullptr) return Fit(op, One(std::move(t)));
  const int64_t r = x->rank();
  std::vector<int64_t> perm;
  if (std::optional<std::vector<int64_t>> p = op.Ints("perm")) {
    perm = *p;
  } else {
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != r) return Fit(op, One(std::move(t)));
  std::vector<bool> seen(static_cast<size_t>(r), false);
  std::vector<Dim> dims;
  for (int64_t p : perm) {
    if (p < 0 || p >= r || seen[static_cast<size_t>(p)]) return Fit(op, One(std::move(t)));
    seen[static_cast<size_t>(p)] = true;
    dims.push_back(x->dims[static_cast<size_t>(p)]);
  }
  t.shape = Shape::FromDims(std::move(dims));
  // A transposed [n, 2] pad table (torch's dynamic F.pad).
  if (std::optional<Elems> v = op.AnyValue(0);
      v && r == 2 && perm[0] == 1 && x->dims[0].is_value() && x->dims[1].is_value()) {
    const int64_t rows = x->dims[0].value(), cols = x->dims[1].value();
    Elems out;
    for (int64_t j = 0; j < cols; ++j) {
      for (int64_t i = 0; i < rows; ++i) out.push_back((*v)[static_cast<size_t>(i * cols + j)]);
    }
    SetValue(&t, out);
  } else if (v) {
    SetValue(&t, *v);  // rank <= 1, or the identity permutation
  }
  return Fit(op, One(std::move(t)));
}

Outputs FlattenFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  if (x == nullptr) return Fit(op, One(std::move(t)));
  const int64_t r = x->rank();
  int64_t axis = op.Int("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) return Fit(op, One(std::move(t)));
  const size_t a = static_cast<size_t>(axis);
  t.shape =
      Shape::FromDims({DimOf(Product(x->dims, 0, a)), DimOf(Product(x->dims, a, x->dims.size()))});
  return Fit(op, One(std::move(t)));
}

Outputs MatMulFn(const Op& op) {
  const Shape* a = op.InShape(0);
  const Shape* b = op.InShape(1);
  SymTensor t = Tensor(FirstElem(op), Shape::UnknownRank());
  if (a == nullptr || b == nullptr) return Fit(op, One(std::move(t)));
  bcast::BroadcastResult r = bcast::BroadcastMatMul(*a, *b);
  if (r.verdict != bcast::Verdict::kError) t.shape = r.output;
  return Fit(op, One(std::move(t)));
}

Outputs GemmFn(const Op& op) {
  const Shape* a = op.InShape(0);
  const Shape* b = op.InShape(1);
  SymTensor t = Tensor(FirstElem(op), Shape::UnknownRank());
  Dim m, n;
  if (a != nullptr) {
    if (a->rank() != 2) return Fit(op, One(std::move(t)));
    m = a->dims[op.Int("transA", 0) != 0 ? 1 : 0];
  }
  if (b != nullptr) {
    if (b->rank() != 2) return Fit(op, One(std::move(t)));
    n = b->dims[op.Int("transB", 0) != 0 ? 0 : 1];
  }
  t.shape = Shape::FromDims({m, n});
  return Fit(op, One(std::move(t)));
}

Outputs GatherElementsFn(const Op& op) {
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  if (const Shape* idx = op.InShape(1)) t.shape = *idx;
  return Fit(op, One(std::move(t)));
}

Outputs GatherNDFn(const Op& op) {
  const Shape* data = op.InShape(0);
  const Shape* idx = op.InShape(1);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  if (data == nullptr || idx == nullptr || idx->rank() < 1) return Fit(op, One(std::move(t)));
  const int64_t b = op.Int("batch_dims", 0);
  const Dim& last = idx->dims.back();
  if (b < 0 || b >= std::min(data->rank(), idx->rank()) || !last.is_value()) {
    return Fit(op, One(std::move(t)));
  }
  const int64_t k = last.value();
  if (k < 1 || k > data->rank() - b) return Fit(op, One(std::move(t)));
  std::vector<Dim> dims(idx->dims.begin(), idx->dims.end() - 1);
  dims.insert(dims.end(), data->dims.begin() + b + k, data->dims.end());
  t.shape = Shape::FromDims(std::move(dims));
  return Fit(op, One(std::move(t)));
}

// Reductions: axes from the attribute or (from `input_since`) input 1; keepdims;
// noop_with_empty_axes. ArgMax/ArgMin take one `axis`.
Outputs ReduceFn(const Op& op) {
  const std::string& ty = op.type();
  const bool arg = ty == "ArgMax" || ty == "ArgMin";
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(arg ? onnx::TensorProto::INT64 : op.InElem(0), Shape::UnknownRank());
  if (x == nullptr) return Fit(op, One(std::move(t)));
  const int64_t r = x->rank();
  const bool keep = op.Int("keepdims", 1) != 0;
  std::optional<std::vector<int64_t>> axes;
  if (arg) {
    axes = std::vector<int64_t>{op.Int("axis", 0)};
  } else {
    const int64_t since = ty == "ReduceSum" ? 13 : 18;
    const auto a = AxesOf(op, since);
    if (!a) {
      // Axes computed at run time: with keepdims the rank stays.
      if (keep) t.shape = Shape::FromDims(std::vector<Dim>(x->dims.size(), Dim::Unknown()));
      return Fit(op, One(std::move(t)));
    }
    axes = *a;
    if (!axes || axes->empty()) {
      if (op.Int("noop_with_empty_axes", 0) != 0 && op.opset() >= since) {
        t.shape = *x;
        if (std::optional<Elems> v = op.Value(0)) SetValue(&t, *v);
        return Fit(op, One(std::move(t)));
      }
      axes.emplace();
      for (int64_t i = 0; i < r; ++i) axes->push_back(i);
    }
  }
  const std::optional<std::vector<int64_t>> norm = NormAxes(*axes, r);
  if (!norm) return Fit(op, One(std::move(t)));
  std::vector<bool> reduced(static_cast<size_t>(r), false);
  for (int64_t a : *norm) reduced[static_cast<size_t>(a)] = true;
  std::vector<Dim> dims;
  for (size_t i = 0; i < x->dims.size(); ++i) {
    if (!reduced[i]) {
      dims.push_back(x->dims[i]);
    } else if (keep) {
      dims.push_back(Dim::Value(1));
    }
  }
  t.shape = Shape::FromDims(std::move(dims));
  // A whole shape vector reduced (ReduceProd(Shape(x)) is the element count).
  if (std::optional<Elems> v = op.Value(0); v && r == 1 && !arg && !v->empty()) {
    Elem acc = (*v)[0];
    for (size_t i = 1; i < v->size(); ++i) {
      if (ty == "ReduceProd") {
        acc = Mul(acc, (*v)[i]);
      } else if (ty == "ReduceSum") {
        acc = Add(acc, (*v)[i]);
      } else if (ty == "ReduceMax") {
        acc = Max(acc, (*v)[i]);
      } else if (ty == "ReduceMin") {
        acc = Min(acc, (*v)[i]);
      } else {
        acc = std::nullopt;
      }
    }
    if (ty == "ReduceProd" || ty == "ReduceSum" || ty == "ReduceMax" || ty == "ReduceMin") {
      SetValue(&t, {acc});
    }
  }
  // The largest of a few float sizes (torchvision's batching transform: max over images).
  if (const std::optional<Rats> rats = RatsOf(op.In(0)); rats && IsFloatElem(op.InElem(0)) &&
                                                         r == 1 && !arg &&
                                                         (ty == "ReduceMax" || ty == "ReduceMin")) {
    const Rats& v = *rats;
    Rat acc = v.empty() ? Rat() : v[0];
    for (size_t i = 1; i < v.size(); ++i) acc = RatMinMax(acc, v[i], ty == "ReduceMax");
    SetFloatExprs(&t, {acc});
  }
  return Fit(op, One(std::move(t)));
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

Outputs TopKFn(const Op& op) {
  const Shape* x = op.InShape(0);
  Outputs out = op.Unknown(op.InElem(0));
  if (out.size() > 1) out[1].elem = onnx::TensorProto::INT64;
  if (x == nullptr || x->rank() == 0) return out;
  const std::optional<int64_t> axis = NormAxis(op.Int("axis", -1), x->rank());
  if (!axis) return out;
  Dim k;
  if (op.opset() < 10) {
    const int64_t v = op.Int("k", -1);
    if (v < 0) return out;
    k = Dim::Value(v);
  } else if (std::optional<Elems> v = op.Value(1); v && v->size() == 1 && (*v)[0]) {
    if (const std::optional<int64_t> c = ConstOf((*v)[0]); c && *c < 0) return out;
    k = DimOf((*v)[0]);
  } else {
    k = op.Fresh(0, static_cast<int>(*axis));
  }
  std::vector<Dim> dims = x->dims;
  dims[static_cast<size_t>(*axis)] = k;
  for (SymTensor& t : out) t.shape = Shape::FromDims(dims);
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

// Einsum: letters name dims; "..." broadcasts (numpy) across operands.
Outputs EinsumFn(const Op& op) {
  SymTensor t = Tensor(FirstElem(op), Shape::UnknownRank());
  std::string eq;
  for (char c : op.String("equation", "")) {
    if (c != ' ') eq.push_back(c);
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(
        lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (static_cast<int>(terms.size()) != op.n_in()) return Fit(op, One(std::move(t)));
  std::map<char, Dim> letters;
  std::map<char, int> counts;
  std::vector<Shape> ellipses;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Shape* s = op.InShape(static_cast<int>(i));
    if (s == nullptr) return Fit(op, One(std::move(t)));
    const std::string& term = terms[i];
    const size_t dots = term.find("...");
    std::string before = term.substr(0, dots), after;
    if (dots != std::string::npos) after = term.substr(dots + 3);
    const int64_t named = static_cast<int64_t>(before.size() + after.size());
    const int64_t ell = s->rank() - named;
    if (ell < 0 || (dots == std::string::npos && ell != 0)) return Fit(op, One(std::move(t)));
    auto take = [&](const std::string& part, int64_t offset) {
      for (size_t j = 0; j < part.size(); ++j) {
        const char c = part[j];
        if (!std::isalpha(static_cast<unsigned char>(c))) return false;
        const Dim& d = s->dims[static_cast<size_t>(offset) + j];
        auto it = letters.find(c);
        if (it == letters.end()) {
          letters[c] = d;
        } else if (!(it->second == d)) {
          // A letter on a 1 broadcasts; otherwise a valid model makes them equal.
          it->second = it->second.Is(1) ? d : d.Is(1) ? it->second : Better(it->second, d);
        }
        ++counts[c];
      }
      return true;
    };
    if (!take(before, 0) || !take(after, static_cast<int64_t>(before.size()) + ell)) {
      return Fit(op, One(std::move(t)));
    }
    if (dots != std::string::npos) {
      ellipses.push_back(Shape::FromDims(
          std::vector<Dim>(s->dims.begin() + static_cast<std::ptrdiff_t>(before.size()),
                           s->dims.begin() + static_cast<std::ptrdiff_t>(before.size()) + ell)));
    }
  }
  Shape ell = Shape::FromDims({});
  if (!ellipses.empty()) {
    bcast::BroadcastResult r = bcast::BroadcastNumpy(ellipses);
    if (r.verdict == bcast::Verdict::kError) return Fit(op, One(std::move(t)));
    ell = r.output;
  }
  std::string rhs;
  if (arrow != std::string::npos) {
    rhs = eq.substr(arrow + 2);
  } else {
    // Implicit output: "..." first, then the letters used once, alphabetically.
    if (!ellipses.empty()) rhs = "...";
    for (const auto& [c, n] : counts) {
      if (n == 1) rhs.push_back(c);
    }
  }
  std::vector<Dim> dims;
  for (size_t j = 0; j < rhs.size(); ++j) {
    if (rhs.compare(j, 3, "...") == 0) {
      if (!ell.rank_known) return Fit(op, One(std::move(t)));
      dims.insert(dims.end(), ell.dims.begin(), ell.dims.end());
      j += 2;
      continue;
    }
    auto it = letters.find(rhs[j]);
    if (it == letters.end()) return Fit(op, One(std::move(t)));
    dims.push_back(it->second);
  }
  t.shape = Shape::FromDims(std::move(dims));
  return Fit(op, One(std::move(t)));
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

// ---------------------------------------------------------------------------------------------
// Data-dependent extents.

Outputs NonZeroFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(onnx::TensorProto::INT64, Shape::UnknownRank());
  Dim count;
  if (const std::optional<std::vector<int64_t>> v = ConstValues(op.In(0))) {
    int64_t n = 0;
    for (int64_t e : *v) n += e != 0;
    count = Dim::Value(n);
  } else {
    count = op.Fresh(0, 1);
  }
  t.shape = Shape::FromDims({x != nullptr ? Dim::Value(x->rank()) : Dim::Unknown(), count});
  return Fit(op, One(std::move(t)));
}

Outputs UniqueFn(const Op& op) {
  const Shape* x = op.InShape(0);
  Outputs out = op.Unknown(op.InElem(0));
  for (size_t i = 1; i < out.size(); ++i) out[i].elem = onnx::TensorProto::INT64;
  if (x == nullptr || out.empty()) return out;
  const Dim u = op.Fresh(0, 0);
  if (std::optional<int64_t> a = op.Int("axis")) {
    const std::optional<int64_t> axis = NormAxis(*a, x->rank());
    if (!axis) return out;
    std::vector<Dim> dims = x->dims;
    dims[static_cast<size_t>(*axis)] = u;
    out[0].shape = Shape::FromDims(std::move(dims));
    if (out.size() > 2) out[2].shape = Shape::FromDims({x->dims[static_cast<size_t>(*axis)]});
  } else {
    out[0].shape = Shape::FromDims({u});
    if (out.size() > 2)
      out[2].shape = Shape::FromDims({DimOf(Product(x->dims, 0, x->dims.size()))});
  }
  if (out.size() > 1) out[1].shape = Shape::FromDims({u});
  if (out.size() > 3) out[3].shape = Shape::FromDims({u});
  return out;
}

Outputs NmsFn(const Op& op) {
  return Fit(
      op, One(Tensor(onnx::TensorProto::INT64, Shape::FromDims({op.Fresh(0, 0), Dim::Value(3)}))));
}

Outputs CompressFn(const Op& op) {
  const Shape* x = op.InShape(0);
  SymTensor t = Tensor(op.InElem(0), Shape::UnknownRank());
  Dim len;
  if (const std::optional<std::vector<int64_t>> c = ConstValues(op.In(1))) {
    int64_t n = 0;
    for (int64_t e : *c) n += e != 0;
    len = Dim::Value(n);
  }
  std::optional<int64_t> axis;
  if (std::optional<int64_t> a = op.Int("axis")) {
    if (x == nullptr) return Fit(op, One(std::move(t)));
    axis = NormAxis(*a, x->rank());
    if (!axis) return Fit(op, One(std::move(t)));
  }
  if (len.is_unknown()) len = op.Fresh(0, axis ? static_cast<int>(*axis) : 0);
  if (axis) {
    std::vector<Dim> dims = x->dims;
    dims[static_cast<size_t>(*axis)] = len;
    t.shape = Shape::FromDims(std::move(dims));
  } else {
    t.shape = Shape::FromDims({len});
  }
  return Fit(op, One(std::move(t)));
}

// ---------------------------------------------------------------------------------------------
// Element types of same-shape ops.

Outputs QuantizeFn(const Op& op) {
  Outputs out = SameShape(op);
  if (out.empty()) return out;
  if (op.type() == "QuantizeLinear") {
    int32_t elem = op.InElem(2);
    if (elem == 0) elem = static_cast<int32_t>(op.Int("output_dtype", 0));
    if (elem == 0 && !op.Has(2)) elem = onnx::TensorProto::UINT8;
    out[0].elem = elem;
  } else {
    out[0].elem = op.opset() >= 19 && op.InElem(1) != 0 ? op.InElem(1) : onnx::TensorProto::FLOAT;
  }
  return out;
}

Outputs OneHotFn(const Op& op) {
  const Shape* idx = op.InShape(0);
  SymTensor t = Tensor(op.InElem(2), Shape::UnknownRank());
  if (idx == nullptr || idx->rank() + 1 > kMaxRank) return Fit(op, One(std::move(t)));
  const std::optional<int64_t> axis = NormAxis(op.Int("axis", -1), idx->rank() + 1);
  if (!axis) return Fit(op, One(std::move(t)));
  Dim depth;
  if (std::optional<Elems> v = op.Value(1); v && v->size() == 1) {
    depth = DimOf((*v)[0]);
  } else if (const SymTensor* d = op.In(1); d && d->float_value && d->float_value->size() == 1) {
    const double f = (*d->float_value)[0];
    if (f >= 0 && f < 9e15) depth = Dim::Value(static_cast<int64_t>(f));
  }
  std::vector<Dim> dims = idx->dims;
  dims.insert(dims.begin() + *axis, depth);
  t.shape = Shape::FromDims(std::move(dims));
  return Fit(op, One(std::move(t)));
}

// ---------------------------------------------------------------------------------------------
// The table.

using Fn = Outputs (*)(const Op&);

const std::unordered_map<std::string_view, Fn>& Table() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string_view, Fn>();
    for (std::string_view op : {"Relu",
                                "Sigmoid",
                                "Tanh",
                                "Exp",
                                "Log",
                                "Sqrt",
                                "Reciprocal",
                                "Round",
                                "Erf",
                                "Sin",
                                "Cos",
                                "Tan",
                                "Asin",
                                "Acos",
                                "Atan",
                                "Sinh",
                                "Cosh",
                                "Asinh",
                                "Acosh",
                                "Atanh",
                                "Softsign",
                                "Softplus",
                                "LeakyRelu",
                                "Elu",
                                "Selu",
                                "Celu",
                                "HardSigmoid",
                                "HardSwish",
                                "Mish",
                                "Gelu",
                                "ThresholdedRelu",
                                "Sign",
                                "Shrink",
                                "BitwiseNot",
                                "Clip",
                                "Softmax",
                                "LogSoftmax",
                                "Hardmax",
                                "InstanceNormalization",
                                "LRN",
                                "MeanVarianceNormalization",
                                "LpNormalization",
                                "CumSum",
                                "ReverseSequence",
                                "Trilu",
                                "ScatterND",
                                "ScatterElements",
                                "Scatter"}) {
      (*t)[op] = &SameShape;
    }
    (*t)["Floor"] = &RoundFn;
    (*t)["Ceil"] = &RoundFn;
    // Binary ops other than the value-tracked ones: their shape is the broadcast.
    for (std::string_view op :
         {"Pow", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Mean", "PRelu"}) {
      (*t)[op] = &BroadcastShapeFn;
    }
    for (std::string_view op : {"IsNaN", "IsInf"}) (*t)[op] = &BoolSameShape;
    (*t)["EyeLike"] = &EyeLikeFn;
    (*t)["Identity"] = &IdentityFn;
    (*t)["Dropout"] = &DropoutFn;
    (*t)["Shape"] = &ShapeFn;
    (*t)["Size"] = &SizeFn;
    (*t)["Cast"] = &CastFn;
    (*t)["CastLike"] = &CastFn;
    (*t)["Gather"] = &GatherFn;
    (*t)["Slice"] = &SliceFn;
    (*t)["Concat"] = &ConcatFn;
    (*t)["Squeeze"] = &SqueezeFn;
    (*t)["Unsqueeze"] = &UnsqueezeFn;
    for (std::string_view op : {"Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "Sum"}) {
      (*t)[op] = &ArithFn;
    }
    for (std::string_view op : {"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"}) {
      (*t)[op] = &CompareFn;
    }
    for (std::string_view op : {"And", "Or", "Xor", "Not"}) (*t)[op] = &LogicFn;
    (*t)["Neg"] = &NegFn;
    (*t)["Abs"] = &AbsFn;
    (*t)["Where"] = &WhereFn;
    (*t)["ConstantOfShape"] = &ConstantOfShapeFn;
    (*t)["Range"] = &RangeFn;
    (*t)["Reshape"] = &ReshapeFn;
    (*t)["Expand"] = &ExpandFn;
    (*t)["Tile"] = &TileFn;
    (*t)["Conv"] = &ConvFn;
    (*t)["ConvTranspose"] = &ConvFn;
    for (std::string_view op : {"MaxPool", "AveragePool", "LpPool"}) (*t)[op] = &PoolFn;
    for (std::string_view op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) {
      (*t)[op] = &GlobalPoolFn;
    }
    (*t)["Resize"] = &ResizeFn;
    (*t)["Upsample"] = &UpsampleFn;
    (*t)["Pad"] = &PadFn;
    (*t)["Split"] = &SplitFn;
    (*t)["Transpose"] = &TransposeFn;
    (*t)["Flatten"] = &FlattenFn;
    (*t)["MatMul"] = &MatMulFn;
    (*t)["Gemm"] = &GemmFn;
    (*t)["GatherElements"] = &GatherElementsFn;
    (*t)["GatherND"] = &GatherNDFn;
    for (std::string_view op :
         {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
          "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin"}) {
      (*t)[op] = &ReduceFn;
    }
    (*t)["LayerNormalization"] = &LayerNormFn;
    (*t)["BatchNormalization"] = &BatchNormFn;
    (*t)["TopK"] = &TopKFn;
    for (std::string_view op : {"LSTM", "GRU", "RNN"}) (*t)[op] = &RnnFn;
    (*t)["Einsum"] = &EinsumFn;
    (*t)["DepthToSpace"] = &DepthSpaceFn;
    (*t)["SpaceToDepth"] = &DepthSpaceFn;
    (*t)["GridSample"] = &GridSampleFn;
    (*t)["NonZero"] = &NonZeroFn;
    (*t)["Unique"] = &UniqueFn;
    (*t)["NonMaxSuppression"] = &NmsFn;
    (*t)["Compress"] = &CompressFn;
    (*t)["QuantizeLinear"] = &QuantizeFn;
    (*t)["DequantizeLinear"] = &QuantizeFn;
    (*t)["OneHot"] = &OneHotFn;
    return t;
  }();
  return *table;
}

// Little-endian element `i` of a raw payload of `width` bytes, sign-extended when `is_signed`.
int64_t RawInt(const std::string& raw, size_t i, size_t width, bool is_signed) {
  uint64_t u = 0;
  std::memcpy(&u, raw.data() + i * width, width);
  if (is_signed && width < 8 && (u >> (width * 8 - 1)) != 0) u |= ~uint64_t{0} << (width * 8);
  return static_cast<int64_t>(u);
}

}  // namespace

bool HasShapeFunction(std::string_view op_type) { return Table().count(op_type) > 0; }

std::optional<std::vector<SymTensor>> InferSymbolic(const ShapeFnContext& ctx) {
  if (ctx.node == nullptr) return std::nullopt;
  if (!ctx.node->domain().empty() && ctx.node->domain() != "ai.onnx") return std::nullopt;
  const auto& table = Table();
  auto it = table.find(ctx.node->op_type());
  if (it == table.end()) return std::nullopt;
  return it->second(Op(ctx));
}

SymTensor SymTensorOfConstant(const onnx::TensorProto& tensor) {
  SymTensor t;
  t.elem = tensor.data_type();
  t.shape = proto::ShapeOfTensor(tensor);
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL || !t.shape.rank_known ||
      t.shape.rank() > 2) {
    return t;
  }
  const std::optional<int64_t> count = t.shape.NumElements();
  if (!count || *count > kMaxValueElements) return t;
  const size_t n = static_cast<size_t>(*count);
  const bool raw = tensor.has_raw_data();
  const std::string& bytes = tensor.raw_data();
  auto sized = [&](size_t width) { return !raw || bytes.size() == n * width; };
  if (IsIntegerElem(t.elem)) {
    size_t width = 8;
    bool is_signed = true;
    switch (t.elem) {
      case onnx::TensorProto::INT32:
        width = 4;
        break;
      case onnx::TensorProto::INT16:
        width = 2;
        break;
      case onnx::TensorProto::INT8:
        width = 1;
        break;
      case onnx::TensorProto::UINT64:
        is_signed = false;
        break;
      case onnx::TensorProto::UINT32:
        width = 4;
        is_signed = false;
        break;
      case onnx::TensorProto::UINT16:
        width = 2;
        is_signed = false;
        break;
      case onnx::TensorProto::UINT8:
      case onnx::TensorProto::BOOL:
        width = 1;
        is_signed = false;
        break;
      default:
        break;
    }
    if (!sized(width)) return t;
    Elems e;
    for (size_t i = 0; i < n; ++i) {
      int64_t v = 0;
      if (raw) {
        v = RawInt(bytes, i, width, is_signed);
        if (!is_signed && width == 8 && v < 0) {
          e.push_back(std::nullopt);  // above INT64_MAX
          continue;
        }
      } else if (t.elem == onnx::TensorProto::INT64) {
        if (static_cast<size_t>(tensor.int64_data_size()) != n) return t;
        v = tensor.int64_data(static_cast<int>(i));
      } else if (t.elem == onnx::TensorProto::UINT64 || t.elem == onnx::TensorProto::UINT32) {
        if (static_cast<size_t>(tensor.uint64_data_size()) != n) return t;
        const uint64_t u = tensor.uint64_data(static_cast<int>(i));
        if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          e.push_back(std::nullopt);
          continue;
        }
        v = static_cast<int64_t>(u);
      } else {
        if (static_cast<size_t>(tensor.int32_data_size()) != n) return t;
        v = tensor.int32_data(static_cast<int>(i));
        if (t.elem == onnx::TensorProto::BOOL) v = v != 0;
      }
      e.push_back(C(v));
    }
    SetValue(&t, e);
  } else if ((t.elem == onnx::TensorProto::FLOAT || t.elem == onnx::TensorProto::DOUBLE) &&
             t.shape.rank() <= 1) {
    const bool is_double = t.elem == onnx::TensorProto::DOUBLE;
    if (!sized(is_double ? 8 : 4)) return t;
    std::vector<double> f;
    for (size_t i = 0; i < n; ++i) {
      if (raw) {
        if (is_double) {
          double d;
          std::memcpy(&d, bytes.data() + i * 8, 8);
          f.push_back(d);
        } else {
          float x;
          std::memcpy(&x, bytes.data() + i * 4, 4);
          f.push_back(x);
        }
      } else if (is_double) {
        if (static_cast<size_t>(tensor.double_data_size()) != n) return t;
        f.push_back(tensor.double_data(static_cast<int>(i)));
      } else {
        if (static_cast<size_t>(tensor.float_data_size()) != n) return t;
        f.push_back(tensor.float_data(static_cast<int>(i)));
      }
    }
    t.float_value = std::move(f);
  }
  return t;
}

}  // namespace onnx_bcast::passes

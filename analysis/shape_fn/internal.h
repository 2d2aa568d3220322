// What the shape functions of every op family share (analysis/shape_fn/*.cc): element
// expressions of small integer tensors, exact rationals of float elements, and the node as a
// shape function reads it (Op). Internal to analysis/: the public interface is
// analysis/shape_functions.h, and the requirements and guarantees of every function are stated
// at the top of analysis/shape_functions.cc.
#ifndef ONNX_BCAST_ANALYSIS_SHAPE_FN_INTERNAL_H_
#define ONNX_BCAST_ANALYSIS_SHAPE_FN_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/shape_functions.h"
#include "broadcast/expr.h"
#include "broadcast/shape.h"
#include "proto/onnx.h"

namespace onnx_bcast::analysis::shape_fn {

using broadcast::Dim;
using broadcast::Expr;
using broadcast::Shape;

/// One element of a tracked integer tensor: an expression, or nullopt when not known.
using Elem = std::optional<Expr>;
using Elems = std::vector<Elem>;
using Outputs = std::vector<SymTensor>;

constexpr int64_t kMaxRank = 1024;                  // larger ranks are refused as malformed
constexpr int64_t kMaxAttr = int64_t{1} << 31;      // bound on kernels, strides, pads, repeats
constexpr int64_t kToEnd = (int64_t{1} << 31) - 1;  // Slice bounds this large mean "the end"

// ---------------------------------------------------------------------------------------------
// Float elements as exact rationals of expressions (SymTensor::float_exprs).

using Rat = SymTensor::Rational;
using Rats = std::vector<Rat>;
constexpr int64_t kMaxDen = int64_t{1} << 20;

// An element-wise function over tracked contents (shape arithmetic of exporters).
using ElemFn = std::function<Elem(const Elems&)>;

// The window attributes of a convolution or pool (ReadWindow).
struct Window {
  std::vector<Elem> kernel;
  std::vector<int64_t> strides, dilations, pads;
  std::string auto_pad;
  bool ceil_mode = false;
};

class Op;

// ---------------------------------------------------------------------------------------------
// Elements and dims.
Elem ElemOf(const Dim& d);
Dim DimOf(const Elem& e);
Elem C(int64_t v);
std::optional<int64_t> ConstOf(const Elem& e);
Elem Add(const Elem& a, const Elem& b);
Elem Sub(const Elem& a, const Elem& b);
Elem Mul(const Elem& a, const Elem& b);
Elem FloorDiv(const Elem& a, const Elem& b);
Elem CeilDiv(const Elem& a, const Elem& b);
Elem Max(const Elem& a, const Elem& b);
Elem Min(const Elem& a, const Elem& b);
// a / b when exact for every value (ExactDiv), else floor (only where the model guarantees
// divisibility: Split, DepthToSpace, SpaceToDepth).
Elem DivisibleDiv(const Elem& a, const Elem& b);
bool NonNegative(const Expr& e);
bool Positive(const Expr& e);
bool NonPositive(const Expr& e);
Elem Product(const std::vector<Dim>& dims, size_t begin, size_t end);
// ONNX integer division truncates toward zero; the expression forms are floor-based, so the
// quotient is built only where floor and truncation agree (or the division is exact).
Elem TruncDiv(const Elem& a, const Elem& b);
// ONNX Mod: fmod=0 takes the divisor's sign (floor mod), fmod=1 the dividend's (C fmod).
Elem ModOf(const Elem& a, const Elem& b, bool fmod);
// 1, 0 or unknown for a comparison whose truth is decided for every value of the symbols.
Elem Truth(std::optional<bool> t);
std::optional<bool> IsEqual(const Elem& a, const Elem& b);
// a > b decided from the bounds of a - b.
std::optional<bool> IsGreater(const Elem& a, const Elem& b);
std::optional<bool> Flag(const Elem& a);
bool IsIntegerElem(int32_t elem);
bool IsFloatElem(int32_t elem);
/// The elements of a tracked integer tensor (with its negative constants put back), row-major.
/// Rank-2 contents (torch's dynamic pads go through [-1, 2] reshapes, a reversing Slice and a
/// Transpose) are returned only with `any_rank`: every other reader expects a list.
std::optional<Elems> ValueOf(const SymTensor* t, bool any_rank = false);
/// The elements when every one is a constant.
std::optional<std::vector<int64_t>> ConstValues(const SymTensor* t);
/// Stores `e` as `t`'s contents when `t` is a small integer tensor of rank 0 or 1, or of rank 2
/// with constant dims, whose element count matches; otherwise leaves `t` untracked.
void SetValue(SymTensor* t, const Elems& e);
// A rational with the smallest denominator: a constant fraction reduced, a numerator that the
// denominator divides exactly turned into an integer.
Rat Reduced(Rat r);
// A float constant as p / 2^j (integers and the dyadic fractions scales use: 0.5, 0.25).
Rat RatOfDouble(double v);
// The float elements of `t` as rationals: tracked expressions, constants, or (for an integer
// tensor about to be used as float) its integer contents.
std::optional<Rats> RatsOf(const SymTensor* t);
void SetFloatExprs(SymTensor* t, Rats r);
std::optional<int64_t> MulDen(int64_t a, int64_t b);
Rat RatAdd(const Rat& a, const Rat& b, int sign);
Rat RatMul(const Rat& a, const Rat& b);
// a / b for a constant b = p / q: a * q / p.
Rat RatDiv(const Rat& a, const Rat& b);
Rat RatMinMax(const Rat& a, const Rat& b, bool is_max);
/// Right-aligned broadcasting of element lists of rank <= 1 (lengths 1 broadcast).
std::optional<size_t> BroadcastLength(const std::vector<const Elems*>& ins);
/// Normalizes an axis against `rank` (negative counts from the end); nullopt when out of range.
std::optional<int64_t> NormAxis(int64_t axis, int64_t rank);
/// Normalized, distinct axes; nullopt when any is out of range or repeated.
std::optional<std::vector<int64_t>> NormAxes(const std::vector<int64_t>& axes, int64_t rank);
Outputs One(SymTensor t);
SymTensor Tensor(int32_t elem, Shape shape);
/// Pads `out` to the node's output count with unknown tensors.
Outputs Fit(const Op& op, Outputs out);
// Broadcast (numpy) of the inputs' shapes; unknown rank when an input is unknown or invalid.
Shape BroadcastShapes(const Op& op, int first, int count);
// ---------------------------------------------------------------------------------------------
// Same-shape ops.
Outputs SameShape(const Op& op);
// Floor and Ceil of float size arithmetic: an integer expression again.
Outputs RoundFn(const Op& op);
Outputs BoolSameShape(const Op& op);
// Binary ops whose contents are not tracked: the broadcast shape (PRelu: X's shape).
Outputs BroadcastShapeFn(const Op& op);
Outputs EyeLikeFn(const Op& op);
Outputs IdentityFn(const Op& op);
Outputs DropoutFn(const Op& op);
// ---------------------------------------------------------------------------------------------
// Value-carrying ops.
Outputs ShapeFn(const Op& op);
Outputs SizeFn(const Op& op);
Outputs CastFn(const Op& op);
// Gather: data[:axis] + indices + data[axis+1:]; a tracked rank-1 data picks its elements.
Outputs GatherFn(const Op& op);
// One slice bound clamped for a dim `d` (spec: [0, d] for positive steps, [0, d-1] for the
// start and [-1, d-1] for the end of negative steps); nullopt when the bound's sign is unknown.
Elem ClampBound(const Elem& b, const Elem& d, bool start, int64_t step);
Elem SliceLength(const Elem& d, const Elem& start, const Elem& end, const Elem& step_e);
Outputs SliceFn(const Op& op);
// The preferred of two dims that a valid model makes equal: a value, then an expression.
Dim Better(const Dim& a, const Dim& b);
Outputs ConcatFn(const Op& op);
// Contents that survive a change of shape (Squeeze, Unsqueeze, Reshape of small tensors).
void KeepContents(const Op& op, SymTensor* t);
// Axes of Squeeze/Unsqueeze/reductions: the attribute before `input_since`, then input 1.
// nullopt when the axes are given but not known; an empty vector when absent.
std::optional<std::optional<std::vector<int64_t>>> AxesOf(const Op& op, int64_t input_since);
Outputs SqueezeFn(const Op& op);
Outputs UnsqueezeFn(const Op& op);
Outputs Elementwise(const Op& op, int32_t elem, const ElemFn& fn);
int32_t FirstElem(const Op& op, int first = 0);
// Float contents of constant scale arithmetic (Mul/Div of constant float tensors).
void FloatElementwise(const Op& op, const std::function<double(double, double)>& fn, SymTensor* t);
// Float size arithmetic over rationals (Add/Sub/Mul/Div by a constant/Max/Min/Sum).
void FloatExprElementwise(const Op& op, SymTensor* t);
Outputs ArithFn(const Op& op);
Outputs CompareFn(const Op& op);
Outputs LogicFn(const Op& op);
Outputs NegFn(const Op& op);
Outputs AbsFn(const Op& op);
Outputs WhereFn(const Op& op);
// The shape a shape tensor describes: its elements as dims (negative -> invalid -> nullopt
// element), or, untracked, `len` unknown dims when its length is known.
std::optional<std::vector<Dim>> ShapeFromTensor(const Op& op, int i);
Outputs ConstantOfShapeFn(const Op& op);
Outputs RangeFn(const Op& op);
// Whether e == 0 implies f == 0 for every value of their one common symbol: decided exactly by
// brute force over the period of both zero sets; false when unsure.
bool ZeroImpliesZero(const Expr& e, const Expr& f);
// Whether Reshape's non-allowzero target element `e` (at position `i`) yields the dim `e`. It
// does where e > 0. Where e == 0 the input's dim i is copied instead: that dim is still 0 when
// e == 0 implies it is (torch's `x.view(B, pad_H // 4, ...)`, 0 only when pad_H is); and when
// e == 0 implies that another input dim is 0, the tensor is empty there, where the copy can
// only change an extent of an empty tensor (element counts must agree), which we accept as e.
bool ReshapeElementIsLiteral(const Expr& e, const Shape* in);
Outputs ReshapeFn(const Op& op);
Outputs ExpandFn(const Op& op);
Outputs TileFn(const Op& op);
// Reads and validates the window attributes for `n` spatial axes; nullopt when malformed.
std::optional<Window> ReadWindow(const Op& op, size_t n, const std::vector<Elem>* kernel_from_w);
// Output extent of one windowed axis, as the executor computes it for valid inputs.
Elem WindowOut(const Elem& d, const Window& w, size_t i, size_t n);
Outputs ConvFn(const Op& op);
Outputs PoolFn(const Op& op);
Outputs GlobalPoolFn(const Op& op);
// ---------------------------------------------------------------------------------------------
// Resize and Upsample.
// floor(d * s) for a float scale s, as the executor computes it in double: exact for integer
// scales, reciprocals of integers (when the float rounds up, so d * s never falls just below
// an integer) and dyadic fractions p / 2^j; a fresh symbol otherwise.
Dim ScaledDim(const Op& op, const Dim& d, double s, int axis);
// Scales or sizes applied to `x` (on `axes` when given).
// Scales or sizes applied to `x` (on `axes` when given). An element of `scales`/`sizes` that is
// not known (computed from data or float arithmetic we cannot express: torchvision's
// min(320 / min(H, W), ...) scale) gives a fresh symbol named after the node, as does the
// whole output when neither is known: equal sources still give equal extents downstream.
Outputs ResizeFrom(const Op& op, const Shape& x,
                   const std::optional<std::vector<std::optional<double>>>& scales,
                   const std::optional<std::vector<Dim>>& sizes, bool crop);
// Resize/Upsample scales as far as they are known: constants, constant rationals of float
// arithmetic, or (length known) unknown elements; nullopt when not even the length is known.
std::optional<std::vector<std::optional<double>>> PartialScales(const Op& op, int i);
Outputs ResizeFn(const Op& op);
Outputs UpsampleFn(const Op& op);
// ---------------------------------------------------------------------------------------------
// Movement ops.
Outputs PadFn(const Op& op);
Outputs SplitFn(const Op& op);
Outputs TransposeFn(const Op& op);
Outputs FlattenFn(const Op& op);
Outputs MatMulFn(const Op& op);
Outputs GemmFn(const Op& op);
Outputs GatherElementsFn(const Op& op);
Outputs GatherNDFn(const Op& op);
// Reductions: axes from the attribute or (from `input_since`) input 1; keepdims;
// noop_with_empty_axes. ArgMax/ArgMin take one `axis`.
Outputs ReduceFn(const Op& op);
Outputs LayerNormFn(const Op& op);
Outputs BatchNormFn(const Op& op);
Outputs TopKFn(const Op& op);
// LSTM/GRU/RNN: Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]),
// Y_h and Y_c [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]).
Outputs RnnFn(const Op& op);
// Einsum: letters name dims; "..." broadcasts (numpy) across operands.
Outputs EinsumFn(const Op& op);
Outputs DepthSpaceFn(const Op& op);
Outputs GridSampleFn(const Op& op);
// ---------------------------------------------------------------------------------------------
// Data-dependent extents.
Outputs NonZeroFn(const Op& op);
Outputs UniqueFn(const Op& op);
Outputs NmsFn(const Op& op);
Outputs CompressFn(const Op& op);
// ---------------------------------------------------------------------------------------------
// Element types of same-shape ops.
Outputs QuantizeFn(const Op& op);
Outputs OneHotFn(const Op& op);

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

}  // namespace onnx_bcast::analysis::shape_fn

#endif  // ONNX_BCAST_ANALYSIS_SHAPE_FN_INTERNAL_H_

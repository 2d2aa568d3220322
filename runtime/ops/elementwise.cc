// Op family table: elementwise. Broadcasting binary ops (numpy, and the opset<7 legacy
// `broadcast`/`axis` form), variadic Sum/Mean/Max/Min, Where and PRelu; the unary and cast
// rows come from elementwise_unary.cc and elementwise_quantize.cc.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "broadcast/rules.h"
#include "runtime/broadcast_plan.h"
#include "runtime/kernels/binary.h"
#include "runtime/kernels/elementwise_ops.h"
#include "runtime/kernels/unary.h"
#include "runtime/ops/elementwise_internal.h"
#include "runtime/ops/registry.h"

namespace onnx_bcast::rt {
namespace elementwise_internal {

absl::Status AsNodeError(const OpContext& ctx, const absl::Status& status) {
  if (status.ok() || status.code() != absl::StatusCode::kInvalidArgument) return status;
  return ctx.Error(std::string(status.message()));
}

}  // namespace elementwise_internal

namespace {

using elementwise_internal::AsNodeError;

std::string ShapesToString(const std::vector<std::vector<int64_t>>& shapes) {
  return absl::StrJoin(shapes, " and ", [](std::string* out, const std::vector<int64_t>& s) {
    out->append(ShapeToString(s));
  });
}

// numpy output shape of `shapes`, or the node's InvalidArgument naming them.
absl::StatusOr<std::vector<int64_t>> OutputShape(const OpContext& ctx,
                                                 const std::vector<std::vector<int64_t>>& shapes) {
  absl::StatusOr<std::vector<int64_t>> out = bcast::BroadcastConcrete(shapes);
  if (!out.ok()) {
    return ctx.Error(absl::StrCat("inputs ", ShapesToString(shapes),
                                  " do not broadcast: ", out.status().message()));
  }
  return out;
}

BinaryOptions MakeOptions(const OpContext& ctx, BinaryAttributes attrs = {}) {
  BinaryOptions opts;
  opts.attrs = attrs;
  opts.threads = ctx.threads();
  opts.pool = ctx.pool();
  return opts;
}

// Ops whose opset<7 versions carry `broadcast`/`axis` attributes.
constexpr bool HasLegacyBroadcast(OpKind op) {
  switch (op) {
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kPow:
    case OpKind::kAnd:
    case OpKind::kOr:
    case OpKind::kXor:
    case OpKind::kEqual:
    case OpKind::kGreater:
    case OpKind::kLess:
      return true;
    default:
      return false;
  }
}

// B's shape for numpy broadcasting. Opset<7: `broadcast=0` requires equal shapes;
// `broadcast=1` places B on A at `axis` (default suffix), which reshaping B to
// bcast::LegacyToNumpyBShape turns into numpy broadcasting.
absl::StatusOr<std::vector<int64_t>> LegacyBShape(const OpContext& ctx, const Tensor& a,
                                                  const Tensor& b) {
  const Node& node = ctx.node();
  if (node.GetInt("broadcast", 0) == 0) {
    if (a.shape() != b.shape()) {
      return ctx.Error(absl::StrCat("opset ", ctx.opset(),
                                    " without broadcast=1 needs equal "
                                    "shapes, got ",
                                    ShapesToString({a.shape(), b.shape()})));
    }
    return b.shape();
  }
  std::optional<int64_t> axis;
  if (node.Has("axis")) axis = node.GetInt("axis", -1);
  const bcast::Shape sa = bcast::Shape::OfVector(a.shape());
  const bcast::Shape sb = bcast::Shape::OfVector(b.shape());
  const bcast::BroadcastResult legacy = bcast::BroadcastLegacyOnnx(sa, sb, true, axis);
  if (!legacy.ok()) {
    return ctx.Error(absl::StrCat("legacy broadcast of ", ShapesToString({a.shape(), b.shape()}),
                                  ": ", legacy.reason));
  }
  std::optional<bcast::Shape> shaped = bcast::LegacyToNumpyBShape(sa, sb, axis);
  std::optional<std::vector<int64_t>> extents;
  if (shaped) extents = shaped->Extents();
  if (!extents) {
    return ctx.Error(absl::StrCat("legacy broadcast of ", ShapesToString({a.shape(), b.shape()}),
                                  " with axis ", axis.value_or(-1), " is invalid"));
  }
  return *extents;
}

// `t` viewed with `shape` (same element count), borrowing its storage.
absl::StatusOr<Tensor> View(const Tensor& t, const std::vector<int64_t>& shape) {
  return Tensor::Borrow(t.dtype(), shape, const_cast<void*>(t.raw_data()));
}

absl::Status ReadAttributes(const OpContext& ctx, OpKind op, BinaryAttributes* attrs) {
  if (op == OpKind::kMod) attrs->fmod = ctx.node().GetInt("fmod", 0) != 0;
  if (op == OpKind::kBitShift) {
    const std::string direction = ctx.node().GetString("direction", "");
    if (direction == "LEFT") {
      attrs->direction = ShiftDirection::kLeft;
    } else if (direction == "RIGHT") {
      attrs->direction = ShiftDirection::kRight;
    } else {
      return ctx.Error(absl::StrCat("direction must be LEFT or RIGHT, got '", direction, "'"));
    }
  }
  return absl::OkStatus();
}

// out = op(a, b) into output `index` with out_shape; `b` is used with `b_shape`.
absl::Status ComputeBinary(OpContext& ctx, OpKind op, const BinaryAttributes& attrs,
                           const Tensor& a, const Tensor& b, const std::vector<int64_t>& b_shape,
                           const std::vector<int64_t>& out_shape) {
  absl::StatusOr<ElemOp> resolved = ResolveElemOp(op, a.dtype(), b.dtype(), attrs);
  if (!resolved.ok()) return AsNodeError(ctx, resolved.status());
  absl::StatusOr<Tensor*> out = ctx.Allocate(0, BinaryOutputDType(op, a.dtype()), out_shape);
  if (!out.ok()) return out.status();
  absl::StatusOr<Tensor> b_view = View(b, b_shape);
  if (!b_view.ok()) return AsNodeError(ctx, b_view.status());
  absl::StatusOr<BroadcastPlan> plan = BroadcastPlan::Create(a.shape(), b_shape, out_shape);
  if (!plan.ok()) return AsNodeError(ctx, plan.status());
  return AsNodeError(ctx, BinaryOp(op, *plan, a, *b_view, *out, MakeOptions(ctx, attrs)));
}

template <OpKind kOp>
absl::Status RunBinary(OpContext& ctx) {
  absl::StatusOr<const Tensor*> a = ctx.RequireInput(0);
  if (!a.ok()) return a.status();
  absl::StatusOr<const Tensor*> b = ctx.RequireInput(1);
  if (!b.ok()) return b.status();
  BinaryAttributes attrs;
  if (absl::Status s = ReadAttributes(ctx, kOp, &attrs); !s.ok()) return s;
  std::vector<int64_t> b_shape = (*b)->shape();
  if (HasLegacyBroadcast(kOp) && ctx.opset() < 7) {
    absl::StatusOr<std::vector<int64_t>> legacy = LegacyBShape(ctx, **a, **b);
    if (!legacy.ok()) return legacy.status();
    b_shape = *std::move(legacy);
  }
  absl::StatusOr<std::vector<int64_t>> out_shape = OutputShape(ctx, {(*a)->shape(), b_shape});
  if (!out_shape.ok()) return out_shape.status();
  return ComputeBinary(ctx, kOp, attrs, **a, **b, b_shape, *out_shape);
}

// A one-element tensor of `dtype` holding `value`.
absl::StatusOr<Tensor> Scalar(DType dtype, double value) {
  absl::StatusOr<Tensor> t = Tensor::Allocate(dtype, {});
  if (!t.ok()) return t;
  VisitDType(dtype, 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    t->data<T>()[0] = elem::Store<T>(static_cast<elem::Compute<T>>(value));
    return 0;
  });
  return t;
}

// Sum, Mean, Max, Min: n inputs folded left into the output (numpy broadcasting from opset 8,
// equal shapes before). Mean divides once at the end.
template <OpKind kOp, bool kMean>
absl::Status RunVariadic(OpContext& ctx) {
  const int n = ctx.num_inputs();
  if (n < 1) return ctx.Error("needs at least one input");
  std::vector<const Tensor*> inputs;
  std::vector<std::vector<int64_t>> shapes;
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<const Tensor*> t = ctx.RequireInput(i);
    if (!t.ok()) return t.status();
    inputs.push_back(*t);
    shapes.push_back((*t)->shape());
  }
  const DType dtype = inputs[0]->dtype();
  for (const Tensor* t : inputs) {
    if (t->dtype() != dtype) {
      return ctx.Error(
          absl::StrCat("inputs mix ", DTypeName(dtype), " and ", DTypeName(t->dtype())));
    }
  }
  const bool float_only = kOp == OpKind::kAdd;  // Sum and Mean
  if (float_only ? !IsFloatingPoint(dtype) : !IsNumeric(dtype)) {
    return ctx.Error(absl::StrCat("not defined on ", DTypeName(dtype)));
  }
  if (ctx.opset() < 8) {
    for (const auto& s : shapes) {
      if (s != shapes[0]) {
        return ctx.Error(absl::StrCat("opset ", ctx.opset(), " needs equal shapes, got ",
                                      ShapesToString(shapes)));
      }
    }
  }
  absl::StatusOr<std::vector<int64_t>> out_shape = OutputShape(ctx, shapes);
  if (!out_shape.ok()) return out_shape.status();
  absl::StatusOr<Tensor*> out = ctx.Allocate(0, dtype, *out_shape);
  if (!out.ok()) return out.status();
  const BinaryOptions opts = MakeOptions(ctx);
  if (n == 1) {
    if (absl::Status s = Copy(*inputs[0], *out); !s.ok()) return AsNodeError(ctx, s);
  } else {
    absl::StatusOr<BroadcastPlan> plan = BroadcastPlan::Create(shapes[0], shapes[1], *out_shape);
    if (!plan.ok()) return AsNodeError(ctx, plan.status());
    if (absl::Status s = BinaryOp(kOp, *plan, *inputs[0], *inputs[1], *out, opts); !s.ok()) {
      return AsNodeError(ctx, s);
    }
    for (int i = 2; i < n; ++i) {
      // The output has the output shape, so it may be the left operand in place.
      plan = BroadcastPlan::Create(*out_shape, shapes[i], *out_shape);
      if (!plan.ok()) return AsNodeError(ctx, plan.status());
      if (absl::Status s = BinaryOp(kOp, *plan, **out, *inputs[i], *out, opts); !s.ok()) {
        return AsNodeError(ctx, s);
      }
    }
  }
  if constexpr (kMean) {
    absl::StatusOr<Tensor> divisor = Scalar(dtype, n);
    if (!divisor.ok()) return divisor.status();
    if (absl::Status s = BinaryOp(OpKind::kDiv, **out, *divisor, *out, opts); !s.ok()) {
      return AsNodeError(ctx, s);
    }
  }
  return absl::OkStatus();
}

absl::Status RunWhere(OpContext& ctx) {
  std::vector<const Tensor*> in;
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<const Tensor*> t = ctx.RequireInput(i);
    if (!t.ok()) return t.status();
    in.push_back(*t);
  }
  if (in[0]->dtype() != DType::kBool) {
    return ctx.Error(absl::StrCat("condition must be bool, got ", DTypeName(in[0]->dtype())));
  }
  if (in[1]->dtype() != in[2]->dtype()) {
    return ctx.Error(
        absl::StrCat("X is ", DTypeName(in[1]->dtype()), " but Y is ", DTypeName(in[2]->dtype())));
  }
  const std::vector<std::vector<int64_t>> shapes = {in[0]->shape(), in[1]->shape(), in[2]->shape()};
  absl::StatusOr<std::vector<int64_t>> out_shape = OutputShape(ctx, shapes);
  if (!out_shape.ok()) return out_shape.status();
  absl::StatusOr<Tensor*> out = ctx.Allocate(0, in[1]->dtype(), *out_shape);
  if (!out.ok()) return out.status();
  absl::StatusOr<BroadcastPlan> plan = BroadcastPlan::Create(shapes, *out_shape);
  if (!plan.ok()) return AsNodeError(ctx, plan.status());
  return AsNodeError(ctx, Where(*plan, *in[0], *in[1], *in[2], *out, MakeOptions(ctx)));
}

// PRelu: the slope broadcasts unidirectionally to X from opset 7. Before, a slope of one
// element is shared and a 1-D slope of X's channel count applies per channel (axis 1).
absl::Status RunPRelu(OpContext& ctx) {
  absl::StatusOr<const Tensor*> x = ctx.RequireInput(0);
  if (!x.ok()) return x.status();
  absl::StatusOr<const Tensor*> slope = ctx.RequireInput(1);
  if (!slope.ok()) return slope.status();
  const std::vector<int64_t>& x_shape = (*x)->shape();
  std::vector<int64_t> slope_shape = (*slope)->shape();
  if (ctx.opset() < 7) {
    if ((*slope)->num_elements() == 1) {
      slope_shape = {};
    } else if (slope_shape.size() == 1 && x_shape.size() >= 2 && slope_shape[0] == x_shape[1]) {
      slope_shape.resize(x_shape.size() - 1, 1);
    }
  }
  absl::StatusOr<std::vector<int64_t>> out_shape = OutputShape(ctx, {x_shape, slope_shape});
  if (!out_shape.ok()) return out_shape.status();
  if (*out_shape != x_shape) {
    return ctx.Error(absl::StrCat("slope ", ShapeToString((*slope)->shape()),
                                  " does not broadcast to X ", ShapeToString(x_shape)));
  }
  return ComputeBinary(ctx, OpKind::kPRelu, {}, **x, **slope, slope_shape, x_shape);
}

constexpr OpRegistration kBinaryRows[] = {
    {"", "Add", 1, RunBinary<OpKind::kAdd>},
    {"", "Sub", 1, RunBinary<OpKind::kSub>},
    {"", "Mul", 1, RunBinary<OpKind::kMul>},
    {"", "Div", 1, RunBinary<OpKind::kDiv>},
    {"", "Pow", 1, RunBinary<OpKind::kPow>},
    {"", "Mod", 10, RunBinary<OpKind::kMod>},
    {"", "BitShift", 11, RunBinary<OpKind::kBitShift>},
    {"", "And", 1, RunBinary<OpKind::kAnd>},
    {"", "Or", 1, RunBinary<OpKind::kOr>},
    {"", "Xor", 1, RunBinary<OpKind::kXor>},
    {"", "BitwiseAnd", 18, RunBinary<OpKind::kBitwiseAnd>},
    {"", "BitwiseOr", 18, RunBinary<OpKind::kBitwiseOr>},
    {"", "BitwiseXor", 18, RunBinary<OpKind::kBitwiseXor>},
    {"", "Equal", 1, RunBinary<OpKind::kEqual>},
    {"", "Greater", 1, RunBinary<OpKind::kGreater>},
    {"", "GreaterOrEqual", 12, RunBinary<OpKind::kGreaterOrEqual>},
    {"", "Less", 1, RunBinary<OpKind::kLess>},
    {"", "LessOrEqual", 12, RunBinary<OpKind::kLessOrEqual>},
    {"", "Sum", 1, RunVariadic<OpKind::kAdd, false>},
    {"", "Mean", 1, RunVariadic<OpKind::kAdd, true>},
    {"", "Max", 1, RunVariadic<OpKind::kMax, false>},
    {"", "Min", 1, RunVariadic<OpKind::kMin, false>},
    {"", "Where", 9, RunWhere},
    {"", "PRelu", 1, RunPRelu},
};

}  // namespace

namespace elementwise_internal {
absl::Span<const OpRegistration> BinaryRows() { return kBinaryRows; }
}  // namespace elementwise_internal

absl::Span<const OpRegistration> ElementwiseOps() {
  static const std::vector<OpRegistration>* const kRows = [] {
    auto* rows = new std::vector<OpRegistration>();
    for (auto part : {elementwise_internal::BinaryRows, elementwise_internal::UnaryRows,
                      elementwise_internal::QuantizeRows}) {
      for (const OpRegistration& row : part()) rows->push_back(row);
    }
    return rows;
  }();
  return *kRows;
}

}  // namespace onnx_bcast::rt

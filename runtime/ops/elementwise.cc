// Op family table: elementwise. Broadcasting binary ops (numpy, and the opset<7 legacy
// `broadcast`/`axis` form), variadic Sum/Mean/Max/Min, Where and PRelu; the unary and cast
// rows come from elementwise_unary.cc and elementwise_quantize.cc.
#include <memory>
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
#include "support/status_macros.h"

namespace onnx_bcast::runtime {
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
  absl::StatusOr<std::vector<int64_t>> out = broadcast::BroadcastConcrete(shapes);
  if (!out.ok()) {
    return ctx.Error(absl::StrCat("inputs ", ShapesToString(shapes),
                                  " do not broadcast: ", out.status().message()));
  }
  return out;
}

BinaryOptions MakeOptions(const OpContext& ctx, BinaryAttributes attrs = {}) {
  BinaryOptions opts = ctx.ThreadedOptions<BinaryOptions>();
  opts.attrs = attrs;
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
// broadcast::LegacyToNumpyBShape turns into numpy broadcasting.
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
  const broadcast::Shape sa = broadcast::Shape::OfVector(a.shape());
  const broadcast::Shape sb = broadcast::Shape::OfVector(b.shape());
  const broadcast::BroadcastResult legacy = broadcast::BroadcastLegacyOnnx(sa, sb, true, axis);
  if (!legacy.ok()) {
    return ctx.Error(absl::StrCat("legacy broadcast of ", ShapesToString({a.shape(), b.shape()}),
                                  ": ", legacy.reason));
  }
  std::optional<broadcast::Shape> shaped = broadcast::LegacyToNumpyBShape(sa, sb, axis);
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

// A binary node's shape work, cached per input signature: B's shape as used (the legacy
// forms reshape it), the output shape, and the kernel chosen for the plan and dtypes.
struct BinaryNodePlan {
  BinaryAttributes attrs;
  std::vector<int64_t> b_shape;
  BinaryKernel kernel;
};

// Plans op(a, b) with `b` used with `b_shape`, to `out_shape`.
absl::StatusOr<BinaryNodePlan> PlanBinary(const OpContext& ctx, OpKind op,
                                          const BinaryAttributes& attrs, const Tensor& a,
                                          const Tensor& b, std::vector<int64_t> b_shape,
                                          const std::vector<int64_t>& out_shape) {
  absl::StatusOr<BroadcastPlan> plan = BroadcastPlan::Create(a.shape(), b_shape, out_shape);
  if (!plan.ok()) return AsNodeError(ctx, plan.status());
  absl::StatusOr<BinaryKernel> kernel =
      BinaryKernel::Create(op, *std::move(plan), a.dtype(), b.dtype(), attrs);
  if (!kernel.ok()) return AsNodeError(ctx, kernel.status());
  return BinaryNodePlan{attrs, std::move(b_shape), *std::move(kernel)};
}

// Runs a planned binary node into output 0.
absl::Status RunPlannedBinary(OpContext& ctx, const BinaryNodePlan& plan, const Tensor& a,
                              const Tensor& b) {
  BCAST_ASSIGN_OR_RETURN(
      auto* out, ctx.Allocate(0, plan.kernel.output_dtype(), plan.kernel.plan().output_shape()));
  absl::StatusOr<Tensor> b_view = View(b, plan.b_shape);
  if (!b_view.ok()) return AsNodeError(ctx, b_view.status());
  const Tensor* inputs[] = {&a, &*b_view};
  return AsNodeError(ctx, plan.kernel.Run(inputs, out, MakeOptions(ctx, plan.attrs)));
}

template <OpKind kOp>
absl::Status RunBinary(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireInput(1));
  auto build = [&]() -> absl::StatusOr<BinaryNodePlan> {
    BinaryAttributes attrs;
    BCAST_RETURN_IF_ERROR(ReadAttributes(ctx, kOp, &attrs));
    std::vector<int64_t> b_shape = b->shape();
    if (HasLegacyBroadcast(kOp) && ctx.opset() < 7) {
      BCAST_ASSIGN_OR_RETURN(b_shape, LegacyBShape(ctx, *a, *b));
    }
    BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> out_shape, OutputShape(ctx, {a->shape(), b_shape}));
    return PlanBinary(ctx, kOp, attrs, *a, *b, std::move(b_shape), out_shape);
  };
  BCAST_ASSIGN_OR_RETURN(const BinaryNodePlan* plan, ctx.CachedPlan<BinaryNodePlan>(build));
  return RunPlannedBinary(ctx, *plan, *a, *b);
}

// A one-element tensor of `dtype` holding `value`.
absl::StatusOr<Tensor> Scalar(DType dtype, double value) {
  BCAST_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, {}));
  VisitDType(dtype, 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    t.data<T>()[0] = elem::Store<T>(static_cast<elem::Compute<T>>(value));
    return 0;
  });
  return t;
}

// Sum/Mean/Max/Min's shape work: one kernel per fold step (inputs 0 and 1, then the output
// with each further input) and, for Mean, the divisor and its kernel.
struct VariadicPlan {
  std::vector<int64_t> out_shape;
  DType dtype = DType::kUndefined;
  std::vector<BinaryKernel> steps;
  std::shared_ptr<const Tensor> divisor;
  std::optional<BinaryKernel> divide;
};

// Sum, Mean, Max, Min: n inputs folded left into the output (numpy broadcasting from opset 8,
// equal shapes before). Mean divides once at the end.
template <OpKind kOp, bool kMean>
absl::Status RunVariadic(OpContext& ctx) {
  const int n = ctx.num_inputs();
  if (n < 1) return ctx.Error("needs at least one input");
  BCAST_ASSIGN_OR_RETURN(const std::vector<const Tensor*> inputs, ctx.RequireInputs(n));
  auto build = [&]() -> absl::StatusOr<VariadicPlan> {
    std::vector<std::vector<int64_t>> shapes;
    for (const Tensor* t : inputs) shapes.push_back(t->shape());
    VariadicPlan p;
    p.dtype = inputs[0]->dtype();
    for (const Tensor* t : inputs) {
      if (t->dtype() != p.dtype) {
        return ctx.Error(
            absl::StrCat("inputs mix ", DTypeName(p.dtype), " and ", DTypeName(t->dtype())));
      }
    }
    const bool float_only = kOp == OpKind::kAdd;  // Sum and Mean
    if (float_only ? !IsFloatingPoint(p.dtype) : !IsNumeric(p.dtype)) {
      return ctx.Error(absl::StrCat("not defined on ", DTypeName(p.dtype)));
    }
    if (ctx.opset() < 8) {
      for (const auto& s : shapes) {
        if (s != shapes[0]) {
          return ctx.Error(absl::StrCat("opset ", ctx.opset(), " needs equal shapes, got ",
                                        ShapesToString(shapes)));
        }
      }
    }
    BCAST_ASSIGN_OR_RETURN(p.out_shape, OutputShape(ctx, shapes));
    for (int i = 1; i < n; ++i) {
      // After the first step the output has the output shape, so it is the left operand
      // in place.
      absl::StatusOr<BroadcastPlan> step =
          BroadcastPlan::Create(i == 1 ? shapes[0] : p.out_shape, shapes[i], p.out_shape);
      if (!step.ok()) return AsNodeError(ctx, step.status());
      absl::StatusOr<BinaryKernel> kernel =
          BinaryKernel::Create(kOp, *std::move(step), p.dtype, p.dtype);
      if (!kernel.ok()) return AsNodeError(ctx, kernel.status());
      p.steps.push_back(*std::move(kernel));
    }
    if constexpr (kMean) {
      BCAST_ASSIGN_OR_RETURN(Tensor divisor, Scalar(p.dtype, n));
      p.divisor = std::make_shared<const Tensor>(std::move(divisor));
      absl::StatusOr<BroadcastPlan> div =
          BroadcastPlan::Create(p.out_shape, std::vector<int64_t>{}, p.out_shape);
      if (!div.ok()) return AsNodeError(ctx, div.status());
      absl::StatusOr<BinaryKernel> kernel =
          BinaryKernel::Create(OpKind::kDiv, *std::move(div), p.dtype, p.dtype);
      if (!kernel.ok()) return AsNodeError(ctx, kernel.status());
      p.divide = *std::move(kernel);
    }
    return p;
  };
  BCAST_ASSIGN_OR_RETURN(const VariadicPlan* plan, ctx.CachedPlan<VariadicPlan>(build));
  const VariadicPlan& p = *plan;
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, p.dtype, p.out_shape));
  const BinaryOptions opts = MakeOptions(ctx);
  if (n == 1) {
    if (absl::Status s = Copy(*inputs[0], out); !s.ok()) return AsNodeError(ctx, s);
  }
  for (int i = 1; i < n; ++i) {
    const Tensor* operands[] = {i == 1 ? inputs[0] : out, inputs[i]};
    if (absl::Status s = p.steps[i - 1].Run(operands, out, opts); !s.ok()) {
      return AsNodeError(ctx, s);
    }
  }
  if (p.divide.has_value()) {
    const Tensor* operands[] = {out, p.divisor.get()};
    if (absl::Status s = p.divide->Run(operands, out, opts); !s.ok()) return AsNodeError(ctx, s);
  }
  return absl::OkStatus();
}

absl::Status RunWhere(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const std::vector<const Tensor*> in, ctx.RequireInputs(3));
  auto build = [&]() -> absl::StatusOr<BinaryKernel> {
    if (in[0]->dtype() != DType::kBool) {
      return ctx.Error(absl::StrCat("condition must be bool, got ", DTypeName(in[0]->dtype())));
    }
    if (in[1]->dtype() != in[2]->dtype()) {
      return ctx.Error(absl::StrCat("X is ", DTypeName(in[1]->dtype()), " but Y is ",
                                    DTypeName(in[2]->dtype())));
    }
    const std::vector<std::vector<int64_t>> shapes = {in[0]->shape(), in[1]->shape(),
                                                      in[2]->shape()};
    BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> out_shape, OutputShape(ctx, shapes));
    absl::StatusOr<BroadcastPlan> plan = BroadcastPlan::Create(shapes, out_shape);
    if (!plan.ok()) return AsNodeError(ctx, plan.status());
    absl::StatusOr<BinaryKernel> k = BinaryKernel::CreateWhere(*std::move(plan), in[1]->dtype());
    if (!k.ok()) return AsNodeError(ctx, k.status());
    return k;
  };
  BCAST_ASSIGN_OR_RETURN(const BinaryKernel* kernel, ctx.CachedPlan<BinaryKernel>(build));
  BCAST_ASSIGN_OR_RETURN(auto* out,
                         ctx.Allocate(0, kernel->output_dtype(), kernel->plan().output_shape()));
  return AsNodeError(ctx, kernel->Run(in, out, MakeOptions(ctx)));
}

// PRelu: the slope broadcasts unidirectionally to X from opset 7. Before, a slope of one
// element is shared and a 1-D slope of X's channel count applies per channel (axis 1).
absl::Status RunPRelu(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(const Tensor* slope, ctx.RequireInput(1));
  auto build = [&]() -> absl::StatusOr<BinaryNodePlan> {
    const std::vector<int64_t>& x_shape = x->shape();
    std::vector<int64_t> slope_shape = slope->shape();
    if (ctx.opset() < 7) {
      if (slope->num_elements() == 1) {
        slope_shape = {};
      } else if (slope_shape.size() == 1 && x_shape.size() >= 2 && slope_shape[0] == x_shape[1]) {
        slope_shape.resize(x_shape.size() - 1, 1);
      }
    }
    BCAST_ASSIGN_OR_RETURN(std::vector<int64_t> out_shape,
                           OutputShape(ctx, {x_shape, slope_shape}));
    if (out_shape != x_shape) {
      return ctx.Error(absl::StrCat("slope ", ShapeToString(slope->shape()),
                                    " does not broadcast to X ", ShapeToString(x_shape)));
    }
    return PlanBinary(ctx, OpKind::kPRelu, {}, *x, *slope, std::move(slope_shape), x_shape);
  };
  BCAST_ASSIGN_OR_RETURN(const BinaryNodePlan* plan, ctx.CachedPlan<BinaryNodePlan>(build));
  return RunPlannedBinary(ctx, *plan, *x, *slope);
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

}  // namespace onnx_bcast::runtime

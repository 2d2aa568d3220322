// Elementwise ops with one data input: math and activations (through runtime/kernels/unary.h),
// Clip (attributes before opset 11, optional inputs after), Cast, CastLike and inference-mode
// Dropout.
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/kernels/elementwise_ops.h"
#include "runtime/kernels/movement.h"
#include "runtime/kernels/unary.h"
#include "runtime/ops/elementwise_internal.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {
namespace {

using elementwise_internal::AsNodeError;

// Attributes with their ONNX defaults.
UnaryParams ReadParams(const Node& node, UnaryKind op) {
  UnaryParams p;
  switch (op) {
    case UnaryKind::kLeakyRelu:
      p.alpha = node.GetFloat("alpha", 0.01f);
      break;
    case UnaryKind::kElu:
    case UnaryKind::kCelu:
    case UnaryKind::kThresholdedRelu:
      p.alpha = node.GetFloat("alpha", 1.0f);
      break;
    case UnaryKind::kSelu:
      p.alpha = node.GetFloat("alpha", 1.67326319217681884765625f);
      p.gamma = node.GetFloat("gamma", 1.05070102214813232421875f);
      break;
    case UnaryKind::kHardSigmoid:
      p.alpha = node.GetFloat("alpha", 0.2f);
      p.beta = node.GetFloat("beta", 0.5f);
      break;
    case UnaryKind::kShrink:
      p.lambd = node.GetFloat("lambd", 0.5f);
      p.bias = node.GetFloat("bias", 0.0f);
      break;
    case UnaryKind::kIsInf:
      p.detect_negative = node.GetInt("detect_negative", 1) != 0;
      p.detect_positive = node.GetInt("detect_positive", 1) != 0;
      break;
    default:
      break;
  }
  return p;
}

template <UnaryKind kOp>
absl::Status RunUnary(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  if (!UnaryAccepts(kOp, x->dtype())) {
    return ctx.Error(absl::StrCat("not defined on ", DTypeName(x->dtype())));
  }
  if (kOp == UnaryKind::kCelu && ctx.node().GetFloat("alpha", 1.0f) == 0.0f) {
    return ctx.Error("alpha must not be 0");
  }
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, UnaryOutputDType(kOp, x->dtype()), x->shape()));
  return AsNodeError(
      ctx, Unary(kOp, ReadParams(ctx.node(), kOp), *x, out, ctx.ThreadedOptions<UnaryOptions>()));
}

// A one-element tensor of `dtype` holding `value` (rounded to the dtype).
absl::StatusOr<Tensor> Scalar(DType dtype, double value) {
  BCAST_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, {}));
  VisitDType(dtype, 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = elem::Compute<T>;
    if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
      t.data<T>()[0] = elem::SaturatingCast<C>(value);
    } else {
      t.data<T>()[0] = elem::Store<T>(static_cast<C>(value));
    }
    return 0;
  });
  return t;
}

absl::Status RunClip(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  const DType dtype = x->dtype();
  if (!IsNumeric(dtype)) return ctx.Error(absl::StrCat("not defined on ", DTypeName(dtype)));
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, dtype, x->shape()));
  if (ctx.opset() < 11) {
    // Bounds are float attributes; absent ones are unbounded.
    const Node& node = ctx.node();
    std::optional<Tensor> lo, hi;
    if (node.Has("min")) {
      BCAST_ASSIGN_OR_RETURN(lo, Scalar(dtype, node.GetFloat("min", 0)));
    }
    if (node.Has("max")) {
      BCAST_ASSIGN_OR_RETURN(hi, Scalar(dtype, node.GetFloat("max", 0)));
    }
    return AsNodeError(ctx, Clip(*x, lo ? &*lo : nullptr, hi ? &*hi : nullptr, out,
                                 ctx.ThreadedOptions<UnaryOptions>()));
  }
  const Tensor* bounds[2] = {ctx.input(1), ctx.input(2)};
  for (int i = 0; i < 2; ++i) {
    const Tensor* b = bounds[i];
    if (b == nullptr) continue;
    if (b->dtype() != dtype) {
      return ctx.Error(absl::StrCat(i == 0 ? "min" : "max", " is ", DTypeName(b->dtype()),
                                    ", input is ", DTypeName(dtype)));
    }
    if (b->num_elements() != 1) {
      return ctx.Error(absl::StrCat(i == 0 ? "min" : "max", " must be a scalar, got shape ",
                                    ShapeToString(b->shape())));
    }
  }
  return AsNodeError(ctx, Clip(*x, bounds[0], bounds[1], out, ctx.ThreadedOptions<UnaryOptions>()));
}

// Cast-1 names the target type as a string ("FLOAT"); later versions use the enum number.
std::optional<DType> DTypeFromName(const std::string& name) {
  static constexpr std::pair<const char*, DType> kNames[] = {
      {"FLOAT", DType::kFloat32},   {"UINT8", DType::kUInt8},       {"INT8", DType::kInt8},
      {"UINT16", DType::kUInt16},   {"INT16", DType::kInt16},       {"INT32", DType::kInt32},
      {"INT64", DType::kInt64},     {"STRING", DType::kString},     {"BOOL", DType::kBool},
      {"FLOAT16", DType::kFloat16}, {"DOUBLE", DType::kFloat64},    {"UINT32", DType::kUInt32},
      {"UINT64", DType::kUInt64},   {"BFLOAT16", DType::kBFloat16},
  };
  for (const auto& [n, dtype] : kNames) {
    if (name == n) return dtype;
  }
  return std::nullopt;
}

absl::Status CastTo(OpContext& ctx, const Tensor& x, DType to) {
  if (to == DType::kString || x.dtype() == DType::kString) {
    return ctx.Unsupported("casts to and from string are not supported");
  }
  if (!IsSupported(to)) {
    return ctx.Unsupported(absl::StrCat("target type ", static_cast<int>(to), " is not supported"));
  }
  BCAST_ASSIGN_OR_RETURN(auto* out, ctx.Allocate(0, to, x.shape()));
  return AsNodeError(ctx, Cast(x, out, ctx.ThreadedOptions<UnaryOptions>()));
}

absl::Status RunCast(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  const Attribute* to = ctx.node().Find("to");
  if (to == nullptr) return ctx.Error("attribute 'to' is missing");
  if (to->type == Attribute::Type::kString) {
    std::optional<DType> dtype = DTypeFromName(to->s);
    if (!dtype) return ctx.Error(absl::StrCat("unknown type name '", to->s, "'"));
    return CastTo(ctx, *x, *dtype);
  }
  return CastTo(ctx, *x, static_cast<DType>(to->i));
}

absl::Status RunCastLike(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  BCAST_ASSIGN_OR_RETURN(const Tensor* like, ctx.RequireInput(1));
  return CastTo(ctx, *x, like->dtype());
}

// Dropout in inference: the output is the input and the mask is all true. Training mode
// (opset 12+ `training_mode` input) with a nonzero ratio draws a random mask, which is
// Unsupported: no two runtimes' random streams agree, so no test data could check it.
absl::Status RunDropout(OpContext& ctx) {
  BCAST_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireInput(0));
  if (!IsFloatingPoint(x->dtype())) {
    return ctx.Error(absl::StrCat("not defined on ", DTypeName(x->dtype())));
  }
  if (ctx.opset() >= 12) {
    float ratio = 0.5f;
    if (const Tensor* r = ctx.input(1); r != nullptr) {
      if (r->num_elements() != 1 || !IsFloatingPoint(r->dtype())) {
        return ctx.Error("ratio must be a floating-point scalar");
      }
      BCAST_ASSIGN_OR_RETURN(Tensor f, Tensor::Allocate(DType::kFloat32, {}));
      BCAST_ASSIGN_OR_RETURN(Tensor r1,
                             Tensor::Borrow(r->dtype(), {}, const_cast<void*>(r->raw_data())));
      if (absl::Status s = Cast(r1, &f); !s.ok()) return AsNodeError(ctx, s);
      ratio = f.data<float>()[0];
    }
    bool training = false;
    if (const Tensor* t = ctx.input(2); t != nullptr) {
      if (t->num_elements() != 1 || t->dtype() != DType::kBool) {
        return ctx.Error("training_mode must be a bool scalar");
      }
      training = t->data<bool>()[0];
    }
    if (training && ratio != 0.0f) {
      return ctx.Unsupported("training-mode Dropout with a nonzero ratio (random masks)");
    }
  }
  // The output is the input itself (see Identity): no copy.
  ctx.SetOutput(0, *ctx.input_value(0));
  if (ctx.output_wanted(1)) {
    // The mask is bool from opset 10; before, it had the input's type.
    const DType mask_type = ctx.opset() >= 10 ? DType::kBool : x->dtype();
    BCAST_ASSIGN_OR_RETURN(auto* mask, ctx.Allocate(1, mask_type, x->shape()));
    BCAST_ASSIGN_OR_RETURN(Tensor one, Scalar(mask_type, 1.0));
    FillElements(one.raw_data(), mask->num_elements(), mask->element_size(), mask->raw_data());
  }
  return absl::OkStatus();
}

constexpr OpRegistration kUnaryRows[] = {
    {"", "Abs", 1, RunUnary<UnaryKind::kAbs>},
    {"", "Neg", 1, RunUnary<UnaryKind::kNeg>},
    {"", "Sign", 9, RunUnary<UnaryKind::kSign>},
    {"", "Floor", 1, RunUnary<UnaryKind::kFloor>},
    {"", "Ceil", 1, RunUnary<UnaryKind::kCeil>},
    {"", "Round", 11, RunUnary<UnaryKind::kRound>},
    {"", "Reciprocal", 1, RunUnary<UnaryKind::kReciprocal>},
    {"", "Sqrt", 1, RunUnary<UnaryKind::kSqrt>},
    {"", "Exp", 1, RunUnary<UnaryKind::kExp>},
    {"", "Log", 1, RunUnary<UnaryKind::kLog>},
    {"", "Erf", 9, RunUnary<UnaryKind::kErf>},
    {"", "Sin", 7, RunUnary<UnaryKind::kSin>},
    {"", "Cos", 7, RunUnary<UnaryKind::kCos>},
    {"", "Tan", 7, RunUnary<UnaryKind::kTan>},
    {"", "Asin", 7, RunUnary<UnaryKind::kAsin>},
    {"", "Acos", 7, RunUnary<UnaryKind::kAcos>},
    {"", "Atan", 7, RunUnary<UnaryKind::kAtan>},
    {"", "Sinh", 9, RunUnary<UnaryKind::kSinh>},
    {"", "Cosh", 9, RunUnary<UnaryKind::kCosh>},
    {"", "Asinh", 9, RunUnary<UnaryKind::kAsinh>},
    {"", "Acosh", 9, RunUnary<UnaryKind::kAcosh>},
    {"", "Atanh", 9, RunUnary<UnaryKind::kAtanh>},
    {"", "Sigmoid", 1, RunUnary<UnaryKind::kSigmoid>},
    {"", "HardSigmoid", 1, RunUnary<UnaryKind::kHardSigmoid>},
    {"", "HardSwish", 14, RunUnary<UnaryKind::kHardSwish>},
    {"", "Tanh", 1, RunUnary<UnaryKind::kTanh>},
    {"", "Relu", 1, RunUnary<UnaryKind::kRelu>},
    {"", "LeakyRelu", 1, RunUnary<UnaryKind::kLeakyRelu>},
    {"", "Elu", 1, RunUnary<UnaryKind::kElu>},
    {"", "Selu", 1, RunUnary<UnaryKind::kSelu>},
    {"", "Celu", 12, RunUnary<UnaryKind::kCelu>},
    {"", "ThresholdedRelu", 10, RunUnary<UnaryKind::kThresholdedRelu>},
    {"", "Softplus", 1, RunUnary<UnaryKind::kSoftplus>},
    {"", "Softsign", 1, RunUnary<UnaryKind::kSoftsign>},
    {"", "Shrink", 9, RunUnary<UnaryKind::kShrink>},
    {"", "Not", 1, RunUnary<UnaryKind::kNot>},
    {"", "BitwiseNot", 18, RunUnary<UnaryKind::kBitwiseNot>},
    {"", "IsNaN", 9, RunUnary<UnaryKind::kIsNaN>},
    {"", "IsInf", 10, RunUnary<UnaryKind::kIsInf>},
    {"", "Clip", 1, RunClip},
    {"", "Cast", 1, RunCast},
    {"", "CastLike", 15, RunCastLike},
    {"", "Dropout", 1, RunDropout},
};

}  // namespace

namespace elementwise_internal {
absl::Span<const OpRegistration> UnaryRows() { return kUnaryRows; }
}  // namespace elementwise_internal

}  // namespace onnx_bcast::runtime

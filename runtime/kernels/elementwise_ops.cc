// Op names and attribute/dtype resolution for the binary ops.
#include "runtime/kernels/elementwise_ops.h"

#include "absl/strings/str_cat.h"

namespace onnx_bcast::runtime {

absl::string_view OpKindName(OpKind op) {
  switch (op) {
    case OpKind::kAdd:
      return "Add";
    case OpKind::kSub:
      return "Sub";
    case OpKind::kMul:
      return "Mul";
    case OpKind::kDiv:
      return "Div";
    case OpKind::kPow:
      return "Pow";
    case OpKind::kMod:
      return "Mod";
    case OpKind::kBitShift:
      return "BitShift";
    case OpKind::kAnd:
      return "And";
    case OpKind::kOr:
      return "Or";
    case OpKind::kXor:
      return "Xor";
    case OpKind::kBitwiseAnd:
      return "BitwiseAnd";
    case OpKind::kBitwiseOr:
      return "BitwiseOr";
    case OpKind::kBitwiseXor:
      return "BitwiseXor";
    case OpKind::kEqual:
      return "Equal";
    case OpKind::kGreater:
      return "Greater";
    case OpKind::kGreaterOrEqual:
      return "GreaterOrEqual";
    case OpKind::kLess:
      return "Less";
    case OpKind::kLessOrEqual:
      return "LessOrEqual";
    case OpKind::kMax:
      return "Max";
    case OpKind::kMin:
      return "Min";
    case OpKind::kPRelu:
      return "PRelu";
  }
  return "UnknownOp";
}

ElemOp ElemOpOf(OpKind op, const BinaryAttributes& attrs) {
  ElemOp elem = ElemOp::kAdd;
  switch (op) {
    case OpKind::kAdd:
      elem = ElemOp::kAdd;
      break;
    case OpKind::kSub:
      elem = ElemOp::kSub;
      break;
    case OpKind::kMul:
      elem = ElemOp::kMul;
      break;
    case OpKind::kDiv:
      elem = ElemOp::kDiv;
      break;
    case OpKind::kPow:
      elem = ElemOp::kPow;
      break;
    case OpKind::kMod:
      elem = attrs.fmod ? ElemOp::kModTrunc : ElemOp::kModFloor;
      break;
    case OpKind::kBitShift:
      elem = attrs.direction == ShiftDirection::kLeft ? ElemOp::kShiftLeft : ElemOp::kShiftRight;
      break;
    case OpKind::kAnd:
      elem = ElemOp::kAnd;
      break;
    case OpKind::kOr:
      elem = ElemOp::kOr;
      break;
    case OpKind::kXor:
      elem = ElemOp::kXor;
      break;
    case OpKind::kBitwiseAnd:
      elem = ElemOp::kBitwiseAnd;
      break;
    case OpKind::kBitwiseOr:
      elem = ElemOp::kBitwiseOr;
      break;
    case OpKind::kBitwiseXor:
      elem = ElemOp::kBitwiseXor;
      break;
    case OpKind::kEqual:
      elem = ElemOp::kEqual;
      break;
    case OpKind::kGreater:
      elem = ElemOp::kGreater;
      break;
    case OpKind::kGreaterOrEqual:
      elem = ElemOp::kGreaterOrEqual;
      break;
    case OpKind::kLess:
      elem = ElemOp::kLess;
      break;
    case OpKind::kLessOrEqual:
      elem = ElemOp::kLessOrEqual;
      break;
    case OpKind::kMax:
      elem = ElemOp::kMax;
      break;
    case OpKind::kMin:
      elem = ElemOp::kMin;
      break;
    case OpKind::kPRelu:
      elem = ElemOp::kPRelu;
      break;
  }
  return elem;
}

absl::StatusOr<ElemOp> ResolveElemOp(OpKind op, DType a, DType b, const BinaryAttributes& attrs) {
  if (op == OpKind::kMod && IsFloatingPoint(a) && !attrs.fmod) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Mod on ", DTypeName(a), " requires fmod=1 (ONNX defines fmod=0 for integers only)"));
  }
  const ElemOp elem = ElemOpOf(op, attrs);
  if (!ElemOpAccepts(elem, a, b)) {
    return absl::InvalidArgumentError(
        absl::StrCat(OpKindName(op), " is not defined for ", DTypeName(a), " and ", DTypeName(b)));
  }
  return elem;
}

}  // namespace onnx_bcast::runtime

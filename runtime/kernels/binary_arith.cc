// Inner-loop tables for the arithmetic ops (Add, Sub, Mul, Div, Max, Min, PRelu, Mod).
#include "runtime/kernels/binary_loops.h"

namespace onnx_bcast::runtime::binary_internal {

InnerFns LookupArithmetic(ElemOp op, DType dtype) {
  switch (op) {
    case ElemOp::kAdd:
      return LookupSameType<ElemOp::kAdd>(dtype);
    case ElemOp::kSub:
      return LookupSameType<ElemOp::kSub>(dtype);
    case ElemOp::kMul:
      return LookupSameType<ElemOp::kMul>(dtype);
    case ElemOp::kDiv:
      return LookupSameType<ElemOp::kDiv>(dtype);
    case ElemOp::kMax:
      return LookupSameType<ElemOp::kMax>(dtype);
    case ElemOp::kMin:
      return LookupSameType<ElemOp::kMin>(dtype);
    case ElemOp::kPRelu:
      return LookupSameType<ElemOp::kPRelu>(dtype);
    case ElemOp::kModFloor:
      return LookupSameType<ElemOp::kModFloor>(dtype);
    case ElemOp::kModTrunc:
      return LookupSameType<ElemOp::kModTrunc>(dtype);
    default:
      return InnerFns{};
  }
}

}  // namespace onnx_bcast::runtime::binary_internal

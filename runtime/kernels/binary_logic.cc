// Inner-loop tables for comparisons, logic, bitwise ops, shifts and Where.
#include "runtime/kernels/binary_loops.h"

namespace onnx_bcast::runtime::binary_internal {
namespace {

// Where only moves elements, so one loop per element size serves every dtype.
template <class T, bool kScalarC, bool kScalarX, bool kScalarY>
void WhereLoop(const void* const* in, void* out, int64_t n) {
  // Reading bool storage as bytes keeps any nonzero byte "true" and vectorizes as a blend.
  const uint8_t* c = static_cast<const uint8_t*>(in[0]);
  const T* x = static_cast<const T*>(in[1]);
  const T* y = static_cast<const T*>(in[2]);
  T* o = static_cast<T*>(out);
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) {
    o[i] = c[kScalarC ? 0 : i] != 0 ? x[kScalarX ? 0 : i] : y[kScalarY ? 0 : i];
  }
}

template <class T>
InnerFns MakeWhereFns() {
  InnerFns fns;
  fns.fn[0] = &WhereLoop<T, false, false, false>;
  fns.fn[1] = &WhereLoop<T, true, false, false>;
  fns.fn[2] = &WhereLoop<T, false, true, false>;
  fns.fn[3] = &WhereLoop<T, true, true, false>;
  fns.fn[4] = &WhereLoop<T, false, false, true>;
  fns.fn[5] = &WhereLoop<T, true, false, true>;
  fns.fn[6] = &WhereLoop<T, false, true, true>;
  fns.fn[7] = &WhereLoop<T, true, true, true>;
  fns.stream[0] =
      PickStreamingLoop<&WhereLoop<T, false, false, false>, sizeof(T), 0, 1, sizeof(T), sizeof(T)>();
  fns.stream[1] =
      PickStreamingLoop<&WhereLoop<T, true, false, false>, sizeof(T), 1, 1, sizeof(T), sizeof(T)>();
  fns.stream[2] =
      PickStreamingLoop<&WhereLoop<T, false, true, false>, sizeof(T), 2, 1, sizeof(T), sizeof(T)>();
  fns.stream[3] =
      PickStreamingLoop<&WhereLoop<T, true, true, false>, sizeof(T), 3, 1, sizeof(T), sizeof(T)>();
  fns.stream[4] =
      PickStreamingLoop<&WhereLoop<T, false, false, true>, sizeof(T), 4, 1, sizeof(T), sizeof(T)>();
  fns.stream[5] =
      PickStreamingLoop<&WhereLoop<T, true, false, true>, sizeof(T), 5, 1, sizeof(T), sizeof(T)>();
  fns.stream[6] =
      PickStreamingLoop<&WhereLoop<T, false, true, true>, sizeof(T), 6, 1, sizeof(T), sizeof(T)>();
  return fns;
}

}  // namespace

InnerFns LookupLogic(ElemOp op, DType dtype) {
  switch (op) {
    case ElemOp::kEqual:
      return LookupSameType<ElemOp::kEqual>(dtype);
    case ElemOp::kGreater:
      return LookupSameType<ElemOp::kGreater>(dtype);
    case ElemOp::kGreaterOrEqual:
      return LookupSameType<ElemOp::kGreaterOrEqual>(dtype);
    case ElemOp::kLess:
      return LookupSameType<ElemOp::kLess>(dtype);
    case ElemOp::kLessOrEqual:
      return LookupSameType<ElemOp::kLessOrEqual>(dtype);
    case ElemOp::kAnd:
      return LookupSameType<ElemOp::kAnd>(dtype);
    case ElemOp::kOr:
      return LookupSameType<ElemOp::kOr>(dtype);
    case ElemOp::kXor:
      return LookupSameType<ElemOp::kXor>(dtype);
    case ElemOp::kBitwiseAnd:
      return LookupSameType<ElemOp::kBitwiseAnd>(dtype);
    case ElemOp::kBitwiseOr:
      return LookupSameType<ElemOp::kBitwiseOr>(dtype);
    case ElemOp::kBitwiseXor:
      return LookupSameType<ElemOp::kBitwiseXor>(dtype);
    case ElemOp::kShiftLeft:
      return LookupSameType<ElemOp::kShiftLeft>(dtype);
    case ElemOp::kShiftRight:
      return LookupSameType<ElemOp::kShiftRight>(dtype);
    default:
      return InnerFns{};
  }
}

InnerFns LookupWhere(size_t element_size) {
  switch (element_size) {
    case 1:
      return MakeWhereFns<uint8_t>();
    case 2:
      return MakeWhereFns<uint16_t>();
    case 4:
      return MakeWhereFns<uint32_t>();
    case 8:
      return MakeWhereFns<uint64_t>();
    default:
      return InnerFns{};
  }
}

}  // namespace onnx_bcast::runtime::binary_internal

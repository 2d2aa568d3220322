// Inner-loop tables for comparisons, logic, bitwise ops, shifts and Where.
#include <iterator>
#include <type_traits>
#include <utility>

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

// The loop of each scalar mask (bit 0 the condition, 1 x, 2 y), and its streaming form for
// every mask but 7 (all three inputs one element), as MakeBinaryFns leaves its mask 3.
template <class T, size_t... kMasks>
InnerFns MakeWhereFns(std::index_sequence<kMasks...>) {
  InnerFns fns;
  auto set = [&fns](auto mask) {
    constexpr size_t m = decltype(mask)::value;
    constexpr InnerFn loop = &WhereLoop<T, (m & 1) != 0, (m & 2) != 0, (m & 4) != 0>;
    fns.fn[m] = loop;
    if constexpr (m != 7) {
      fns.stream[m] = PickStreamingLoop<loop, sizeof(T), m, 1, sizeof(T), sizeof(T)>();
    }
  };
  (set(std::integral_constant<size_t, kMasks>()), ...);
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
  constexpr auto kMasks = std::make_index_sequence<std::size(InnerFns().fn)>();
  switch (element_size) {
    case 1:
      return MakeWhereFns<uint8_t>(kMasks);
    case 2:
      return MakeWhereFns<uint16_t>(kMasks);
    case 4:
      return MakeWhereFns<uint32_t>(kMasks);
    case 8:
      return MakeWhereFns<uint64_t>(kMasks);
    default:
      return InnerFns{};
  }
}

}  // namespace onnx_bcast::runtime::binary_internal

// Internal to the fast binary kernels: the contiguous inner loops, one instantiation per
// op, dtype pair and broadcast pattern, and the lookup tables the driver dispatches on.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_BINARY_LOOPS_H_
#define ONNX_BCAST_RUNTIME_KERNELS_BINARY_LOOPS_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "runtime/dtype.h"
#include "runtime/kernels/elementwise_ops.h"

namespace onnx_bcast::rt::binary_internal {

/// A flat loop: out[i] = f(in[0][i or 0], in[1][i or 0], ...) for i in [0, n).
using InnerFn = void (*)(const void* const* in, void* out, int64_t n);

/// The loops of one op and dtype tuple, indexed by a mask whose bit k is set when input k
/// is one element repeated over the loop (stride 0). Null entries mean "not defined".
struct InnerFns {
  InnerFn fn[8] = {};
  bool ok() const { return fn[0] != nullptr; }
};

// ivdep: the output may alias an input at the same index (in-place Sum chains), which
// carries no dependence between iterations, so vectorizing stays correct; __restrict
// would promise more than that.
template <ElemOp kOp, class TA, class TB, class TO, bool kScalarA, bool kScalarB>
void BinaryLoop(const void* const* in, void* out, int64_t n) {
  const TA* a = static_cast<const TA*>(in[0]);
  const TB* b = static_cast<const TB*>(in[1]);
  TO* o = static_cast<TO*>(out);
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) {
    o[i] = elem::Store<TO>(
        elem::Apply<kOp>(elem::Load(a[kScalarA ? 0 : i]), elem::Load(b[kScalarB ? 0 : i])));
  }
}

template <ElemOp kOp, class TA, class TB>
InnerFns MakeBinaryFns() {
  using TO = std::conditional_t<ElemOpOutputDType(kOp, DTypeOf<TA>()) == DType::kBool, bool, TA>;
  InnerFns fns;
  fns.fn[0] = &BinaryLoop<kOp, TA, TB, TO, false, false>;
  fns.fn[1] = &BinaryLoop<kOp, TA, TB, TO, true, false>;
  fns.fn[2] = &BinaryLoop<kOp, TA, TB, TO, false, true>;
  fns.fn[3] = &BinaryLoop<kOp, TA, TB, TO, true, true>;
  return fns;
}

/// Loops of `kOp` on two inputs of `dtype`, or empty when ONNX does not define it.
template <ElemOp kOp>
InnerFns LookupSameType(DType dtype) {
  return VisitDType(dtype, InnerFns{}, [](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (ElemOpAccepts(kOp, DTypeOf<T>(), DTypeOf<T>())) {
      return MakeBinaryFns<kOp, T, T>();
    } else {
      return InnerFns{};
    }
  });
}

/// Add, Sub, Mul, Div, Max, Min, PRelu, Mod (binary_arith.cc).
InnerFns LookupArithmetic(ElemOp op, DType dtype);
/// Pow with base dtype `a` and exponent dtype `b` (binary_pow.cc).
InnerFns LookupPow(DType a, DType b);
/// Comparisons, logic, bitwise ops and shifts (binary_logic.cc).
InnerFns LookupLogic(ElemOp op, DType dtype);
/// Where on elements of `element_size` bytes; mask bits: 1 cond, 2 x, 4 y (binary_logic.cc).
InnerFns LookupWhere(size_t element_size);

}  // namespace onnx_bcast::rt::binary_internal

#endif  // ONNX_BCAST_RUNTIME_KERNELS_BINARY_LOOPS_H_

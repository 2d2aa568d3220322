// Inner-loop tables for Pow, whose base (T) and exponent (T1) dtypes may differ.
#include "runtime/kernels/binary_loops.h"

namespace onnx_bcast::rt::binary_internal {

InnerFns LookupPow(DType a, DType b) {
  return VisitDType(a, InnerFns{}, [b](auto base_tag) {
    using TA = typename decltype(base_tag)::type;
    return VisitDType(b, InnerFns{}, [](auto exponent_tag) {
      using TB = typename decltype(exponent_tag)::type;
      if constexpr (ElemOpAccepts(ElemOp::kPow, DTypeOf<TA>(), DTypeOf<TB>())) {
        return MakeBinaryFns<ElemOp::kPow, TA, TB>();
      } else {
        return InnerFns{};
      }
    });
  });
}

}  // namespace onnx_bcast::rt::binary_internal

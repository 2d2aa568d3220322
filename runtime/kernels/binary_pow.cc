// Inner-loop tables for Pow, whose base (T) and exponent (T1) dtypes may differ.
#include "runtime/kernels/binary_loops.h"

namespace onnx_bcast::runtime::binary_internal {
namespace {

// float ** (one float exponent): x * x when the exponent is 2, the square every LayerNorm and
// variance writes as Pow(x, 2). std::pow cost a library call per element (17% of a Swin
// transformer's run); the product is the correctly rounded square (GCC's vectorized powf is up
// to an ULP off), tested bit for bit on random and special values (binary_random_test). Other
// exponents stay std::pow.
void PowFloatScalarExponent(const void* const* in, void* out, int64_t n) {
  const float* a = static_cast<const float*>(in[0]);
  const float e = *static_cast<const float*>(in[1]);
  float* o = static_cast<float*>(out);
  if (e == 2.0f) {
    for (int64_t i = 0; i < n; ++i) o[i] = a[i] * a[i];
    return;
  }
  BinaryLoop<ElemOp::kPow, float, float, float, false, true>(in, out, n);
}

}  // namespace

InnerFns LookupPow(DType a, DType b) {
  if (a == DType::kFloat32 && b == DType::kFloat32) {
    InnerFns fns = MakeBinaryFns<ElemOp::kPow, float, float>();
    fns.fn[2] = &PowFloatScalarExponent;
    fns.stream[2] = nullptr;  // the library call, not the store, bounds the generic loop
    return fns;
  }
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

}  // namespace onnx_bcast::runtime::binary_internal

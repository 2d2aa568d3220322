// Element semantics of the unary ops (math, activations, logic tests): which dtypes each ONNX
// op accepts, the output dtype, and the scalar function the fast kernel runs per element.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_UNARY_OPS_H_
#define ONNX_BCAST_RUNTIME_KERNELS_UNARY_OPS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "absl/strings/string_view.h"
#include "runtime/dtype.h"
#include "runtime/kernels/elementwise_ops.h"

namespace onnx_bcast::runtime {

/// ONNX unary elementwise ops (one input, one output of the same shape).
enum class UnaryKind {
  kAbs,
  kNeg,
  kSign,
  kFloor,
  kCeil,
  kRound,
  kReciprocal,
  kSqrt,
  kExp,
  kLog,
  kErf,
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kSigmoid,
  kHardSigmoid,
  kHardSwish,
  kTanh,
  kRelu,
  kLeakyRelu,
  kElu,
  kSelu,
  kCelu,
  kThresholdedRelu,
  kSoftplus,
  kSoftsign,
  kShrink,
  kNot,
  kBitwiseNot,
  kIsNaN,
  kIsInf,
};

/// Every UnaryKind, for tests and tables.
inline constexpr UnaryKind kAllUnaryKinds[] = {
    UnaryKind::kAbs,        UnaryKind::kNeg,
    UnaryKind::kSign,       UnaryKind::kFloor,
    UnaryKind::kCeil,       UnaryKind::kRound,
    UnaryKind::kReciprocal, UnaryKind::kSqrt,
    UnaryKind::kExp,        UnaryKind::kLog,
    UnaryKind::kErf,        UnaryKind::kSin,
    UnaryKind::kCos,        UnaryKind::kTan,
    UnaryKind::kAsin,       UnaryKind::kAcos,
    UnaryKind::kAtan,       UnaryKind::kSinh,
    UnaryKind::kCosh,       UnaryKind::kAsinh,
    UnaryKind::kAcosh,      UnaryKind::kAtanh,
    UnaryKind::kSigmoid,    UnaryKind::kHardSigmoid,
    UnaryKind::kHardSwish,  UnaryKind::kTanh,
    UnaryKind::kRelu,       UnaryKind::kLeakyRelu,
    UnaryKind::kElu,        UnaryKind::kSelu,
    UnaryKind::kCelu,       UnaryKind::kThresholdedRelu,
    UnaryKind::kSoftplus,   UnaryKind::kSoftsign,
    UnaryKind::kShrink,     UnaryKind::kNot,
    UnaryKind::kBitwiseNot, UnaryKind::kIsNaN,
    UnaryKind::kIsInf,
};

/// The ONNX op_type: "Abs", "HardSigmoid", "IsInf"...
absl::string_view UnaryKindName(UnaryKind op);

/// Attributes of the activations (ONNX defaults filled by the op layer).
struct UnaryParams {
  float alpha = 0;              ///< LeakyRelu, Elu, Selu, Celu, ThresholdedRelu, HardSigmoid
  float beta = 0;               ///< HardSigmoid
  float gamma = 0;              ///< Selu
  float lambd = 0;              ///< Shrink
  float bias = 0;               ///< Shrink
  bool detect_negative = true;  ///< IsInf
  bool detect_positive = true;  ///< IsInf
};

/// True when ONNX allows `op` on `dtype` (latest opset of each op; bfloat16 wherever float16
/// is allowed, computed through float).
constexpr bool UnaryAccepts(UnaryKind op, DType dtype) {
  const bool signed_int = dtype == DType::kInt8 || dtype == DType::kInt16 ||
                          dtype == DType::kInt32 || dtype == DType::kInt64;
  switch (op) {
    case UnaryKind::kAbs:
    case UnaryKind::kSign:
    case UnaryKind::kShrink:
      return IsNumeric(dtype);
    case UnaryKind::kNeg:
    case UnaryKind::kRelu:
      return IsFloatingPoint(dtype) || signed_int;
    case UnaryKind::kNot:
      return dtype == DType::kBool;
    case UnaryKind::kBitwiseNot:
      return IsInteger(dtype);
    default:
      return IsFloatingPoint(dtype);
  }
}

/// bool for IsNaN/IsInf, the input dtype otherwise.
constexpr DType UnaryOutputDType(UnaryKind op, DType in) {
  return op == UnaryKind::kIsNaN || op == UnaryKind::kIsInf ? DType::kBool : in;
}

namespace elem {

/// The float type an integer Shrink computes in; C itself for floating point.
template <class C>
using UnaryFloat = std::conditional_t<std::is_floating_point_v<C>, C, double>;

/// x rounded to the nearest integer, ties to even, with plain arithmetic: adding and
/// subtracting 2^(mantissa bits) leaves the FPU's round-to-nearest-even to do the work.
/// Unlike std::nearbyint/floor/ceil (SSE4.1 instructions) this vectorizes at the x86-64
/// baseline. Values of 2^mantissa or more, inf and NaN are integers already.
template <class C>
inline C RoundHalfEven(C x) {
  constexpr C kShift = std::is_same_v<C, float> ? C(8388608.0) : C(4503599627370496.0);
  const C a = std::fabs(x);
  const C r = std::copysign((a + kShift) - kShift, x);
  return a < kShift ? r : x;
}

/// One element of `kOp` on a compute-type value (Compute<T>: float for float16/bfloat16).
/// Branches are written as selects over values computed unconditionally so GCC vectorizes
/// the loops of the cheap ops.
template <UnaryKind kOp, class C>
inline auto ApplyUnary(C x, const UnaryParams& p) {
  constexpr bool kInt = std::is_integral_v<C>;
  using F = UnaryFloat<C>;
  if constexpr (kOp == UnaryKind::kAbs) {
    if constexpr (std::is_unsigned_v<C> || std::is_same_v<C, bool>) {
      return x;
    } else if constexpr (kInt) {
      return x < 0 ? WrapSub<C>(0, x) : x;
    } else {
      return std::fabs(x);
    }
  } else if constexpr (kOp == UnaryKind::kNeg) {
    if constexpr (kInt) {
      return WrapSub<C>(0, x);
    } else {
      return -x;
    }
  } else if constexpr (kOp == UnaryKind::kSign) {
    const C pos = static_cast<C>(x > C(0) ? 1 : 0);
    if constexpr (kInt) {
      if constexpr (std::is_signed_v<C>) {
        return static_cast<C>(pos - static_cast<C>(x < C(0) ? 1 : 0));
      } else {
        return pos;
      }
    } else {
      const C sign = pos - static_cast<C>(x < C(0) ? 1 : 0);
      return x != x ? x : sign;  // NaN stays NaN, as numpy.sign
    }
  } else if constexpr (kOp == UnaryKind::kFloor) {
    const C r = RoundHalfEven(x);
    return std::copysign(r > x ? r - C(1) : r, x);  // floor(x) always has x's sign
  } else if constexpr (kOp == UnaryKind::kCeil) {
    const C r = RoundHalfEven(x);
    return std::copysign(r < x ? r + C(1) : r, x);
  } else if constexpr (kOp == UnaryKind::kRound) {
    return RoundHalfEven(x);
  } else if constexpr (kOp == UnaryKind::kReciprocal) {
    return C(1) / x;
  } else if constexpr (kOp == UnaryKind::kSqrt) {
    return std::sqrt(x);
  } else if constexpr (kOp == UnaryKind::kExp) {
    return std::exp(x);
  } else if constexpr (kOp == UnaryKind::kLog) {
    return std::log(x);
  } else if constexpr (kOp == UnaryKind::kErf) {
    return std::erf(x);
  } else if constexpr (kOp == UnaryKind::kSin) {
    return std::sin(x);
  } else if constexpr (kOp == UnaryKind::kCos) {
    return std::cos(x);
  } else if constexpr (kOp == UnaryKind::kTan) {
    return std::tan(x);
  } else if constexpr (kOp == UnaryKind::kAsin) {
    return std::asin(x);
  } else if constexpr (kOp == UnaryKind::kAcos) {
    return std::acos(x);
  } else if constexpr (kOp == UnaryKind::kAtan) {
    return std::atan(x);
  } else if constexpr (kOp == UnaryKind::kSinh) {
    return std::sinh(x);
  } else if constexpr (kOp == UnaryKind::kCosh) {
    return std::cosh(x);
  } else if constexpr (kOp == UnaryKind::kAsinh) {
    return std::asinh(x);
  } else if constexpr (kOp == UnaryKind::kAcosh) {
    return std::acosh(x);
  } else if constexpr (kOp == UnaryKind::kAtanh) {
    return std::atanh(x);
  } else if constexpr (kOp == UnaryKind::kSigmoid) {
    // exp(-|x|) never overflows; the two forms keep full precision on both sides of 0.
    const C e = std::exp(-std::fabs(x));
    const C r = C(1) / (C(1) + e);
    return x >= C(0) ? r : e * r;
  } else if constexpr (kOp == UnaryKind::kHardSigmoid) {
    const C y = static_cast<C>(p.alpha) * x + static_cast<C>(p.beta);
    const C lo = y > C(0) ? y : C(0);
    return x != x ? x : (lo < C(1) ? lo : C(1));
  } else if constexpr (kOp == UnaryKind::kHardSwish) {
    const C y = x * C(1.0 / 6.0) + C(0.5);
    const C lo = y > C(0) ? y : C(0);
    return x * (lo < C(1) ? lo : C(1));
  } else if constexpr (kOp == UnaryKind::kTanh) {
    return std::tanh(x);
  } else if constexpr (kOp == UnaryKind::kRelu) {
    if constexpr (kInt) {
      return x > C(0) ? x : C(0);
    } else {
      return x < C(0) ? C(0) : x;  // NaN passes through
    }
  } else if constexpr (kOp == UnaryKind::kLeakyRelu) {
    const C scaled = static_cast<C>(p.alpha) * x;
    return x < C(0) ? scaled : x;
  } else if constexpr (kOp == UnaryKind::kElu) {
    return x < C(0) ? static_cast<C>(p.alpha) * std::expm1(x) : x;
  } else if constexpr (kOp == UnaryKind::kSelu) {
    const C gamma = static_cast<C>(p.gamma);
    return x <= C(0) ? gamma * (static_cast<C>(p.alpha) * std::expm1(x)) : gamma * x;
  } else if constexpr (kOp == UnaryKind::kCelu) {
    const C alpha = static_cast<C>(p.alpha);
    return x < C(0) ? alpha * std::expm1(x / alpha) : x;
  } else if constexpr (kOp == UnaryKind::kThresholdedRelu) {
    return x > static_cast<C>(p.alpha) ? x : C(0);
  } else if constexpr (kOp == UnaryKind::kSoftplus) {
    // log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x.
    const C pos = x > C(0) ? x : C(0);
    return x != x ? x : pos + std::log1p(std::exp(-std::fabs(x)));
  } else if constexpr (kOp == UnaryKind::kSoftsign) {
    return x / (C(1) + std::fabs(x));
  } else if constexpr (kOp == UnaryKind::kShrink) {
    const F v = static_cast<F>(x);
    const F lambd = static_cast<F>(p.lambd);
    const F bias = static_cast<F>(p.bias);
    const F r = v < -lambd ? v + bias : (v > lambd ? v - bias : F(0));
    if constexpr (kInt) {
      return SaturatingCast<C>(static_cast<double>(r));
    } else {
      return r;
    }
  } else if constexpr (kOp == UnaryKind::kNot) {
    return !x;
  } else if constexpr (kOp == UnaryKind::kBitwiseNot) {
    return static_cast<C>(~x);
  } else if constexpr (kOp == UnaryKind::kIsNaN) {
    return x != x;
  } else if constexpr (kOp == UnaryKind::kIsInf) {
    constexpr C kInf = std::numeric_limits<C>::infinity();
    return (p.detect_positive && x == kInf) || (p.detect_negative && x == -kInf);
  }
}

}  // namespace elem
}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_KERNELS_UNARY_OPS_H_

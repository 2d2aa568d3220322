// Element semantics of the broadcasting binary ops, shared by the fast and reference
// kernels: which dtypes each ONNX op accepts, output dtypes, and the scalar functions.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_ELEMENTWISE_OPS_H_
#define ONNX_BCAST_RUNTIME_KERNELS_ELEMENTWISE_OPS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/dtype.h"

namespace onnx_bcast::runtime {

/// ONNX binary ops with multidirectional broadcasting (PRelu's slope is unidirectional,
/// which the caller's output shape already encodes).
enum class OpKind {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMod,
  kBitShift,
  kAnd,
  kOr,
  kXor,
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
  kEqual,
  kGreater,
  kGreaterOrEqual,
  kLess,
  kLessOrEqual,
  kMax,
  kMin,
  kPRelu,
};

/// The ONNX op_type: "Add", "BitwiseAnd", "PRelu"...
absl::string_view OpKindName(OpKind op);

/// BitShift's `direction` attribute.
enum class ShiftDirection { kLeft, kRight };

/// Op attributes that change element semantics.
struct BinaryAttributes {
  /// Mod: false = integer remainder with the divisor's sign (Python), true = C fmod
  /// (dividend's sign). Floating-point Mod requires true, as in ONNX.
  bool fmod = false;
  /// BitShift direction.
  ShiftDirection direction = ShiftDirection::kLeft;
};

/// An op with its attributes folded in; what kernels dispatch on.
enum class ElemOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kModFloor,
  kModTrunc,
  kShiftLeft,
  kShiftRight,
  kAnd,
  kOr,
  kXor,
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
  kEqual,
  kGreater,
  kGreaterOrEqual,
  kLess,
  kLessOrEqual,
  kMax,
  kMin,
  kPRelu,
};

/// True when ONNX allows `op` on inputs of dtypes `a` and `b` (the latest opset of each
/// op). Only Pow accepts a != b (base T, exponent T1).
constexpr bool ElemOpAccepts(ElemOp op, DType a, DType b) {
  if (op == ElemOp::kPow) {
    const bool base_ok = a == DType::kInt32 || a == DType::kInt64 || IsFloatingPoint(a);
    return base_ok && IsNumeric(b);
  }
  if (a != b) return false;
  switch (op) {
    case ElemOp::kAdd:
    case ElemOp::kSub:
    case ElemOp::kMul:
    case ElemOp::kDiv:
    case ElemOp::kModTrunc:
    case ElemOp::kGreater:
    case ElemOp::kGreaterOrEqual:
    case ElemOp::kLess:
    case ElemOp::kLessOrEqual:
    case ElemOp::kMax:
    case ElemOp::kMin:
      return IsNumeric(a);
    case ElemOp::kModFloor:
    case ElemOp::kBitwiseAnd:
    case ElemOp::kBitwiseOr:
    case ElemOp::kBitwiseXor:
      return IsInteger(a);
    case ElemOp::kShiftLeft:
    case ElemOp::kShiftRight:
      return IsUnsignedInteger(a);
    case ElemOp::kAnd:
    case ElemOp::kOr:
    case ElemOp::kXor:
      return a == DType::kBool;
    case ElemOp::kEqual:
      return IsNumeric(a) || a == DType::kBool;
    case ElemOp::kPRelu:
      return IsFloatingPoint(a) || a == DType::kInt32 || a == DType::kInt64 ||
             a == DType::kUInt32 || a == DType::kUInt64;
    case ElemOp::kPow:
      return false;
  }
  return false;
}

/// Output dtype: bool for comparisons and And/Or/Xor, the first input's dtype otherwise.
constexpr DType ElemOpOutputDType(ElemOp op, DType a) {
  switch (op) {
    case ElemOp::kAnd:
    case ElemOp::kOr:
    case ElemOp::kXor:
    case ElemOp::kEqual:
    case ElemOp::kGreater:
    case ElemOp::kGreaterOrEqual:
    case ElemOp::kLess:
    case ElemOp::kLessOrEqual:
      return DType::kBool;
    default:
      return a;
  }
}

/// `op` with `attrs` folded in (Mod's fmod, BitShift's direction), whatever the dtypes.
ElemOp ElemOpOf(OpKind op, const BinaryAttributes& attrs);

/// Folds attributes into the op and checks dtypes; InvalidArgumentError naming the op and
/// dtypes when ONNX does not define the combination (e.g. float Mod with fmod=0).
absl::StatusOr<ElemOp> ResolveElemOp(OpKind op, DType a, DType b, const BinaryAttributes& attrs);

namespace elem {

/// The type arithmetic happens in: float for float16/bfloat16, the storage type otherwise.
template <class T>
using Compute = ComputeType<T>;

template <class T>
inline Compute<T> Load(T v) {
  return LoadCompute(v);
}

template <class T, class C>
inline T Store(C v) {
  return StoreCompute<T>(v);
}

// Signed overflow is undefined in C++ and small types promote to int (where uint16*uint16
// can overflow), so integer arithmetic runs on an unsigned type at least as wide as int and
// wraps modulo 2^bits, like every hardware ONNX runtime in practice.
template <class T>
using WideUnsigned =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T>
inline T WrapAdd(T a, T b) {
  return static_cast<T>(static_cast<WideUnsigned<T>>(a) + static_cast<WideUnsigned<T>>(b));
}
template <class T>
inline T WrapSub(T a, T b) {
  return static_cast<T>(static_cast<WideUnsigned<T>>(a) - static_cast<WideUnsigned<T>>(b));
}
template <class T>
inline T WrapMul(T a, T b) {
  return static_cast<T>(static_cast<WideUnsigned<T>>(a) * static_cast<WideUnsigned<T>>(b));
}

/// Integer division truncating toward zero. x / 0 = 0 (ONNX leaves it undefined; numpy's
/// choice) and MIN / -1 = MIN (wraps).
template <class T>
inline T IntDiv(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return WrapSub<T>(0, a);
  }
  return static_cast<T>(a / b);
}

/// Remainder with the sign of the divisor (Python %, ONNX Mod fmod=0). x % 0 = 0.
template <class T>
inline T IntModFloor(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    T r = static_cast<T>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  } else {
    return static_cast<T>(a % b);
  }
}

/// Remainder with the sign of the dividend (C %, ONNX Mod fmod=1). x % 0 = 0.
template <class T>
inline T IntModTrunc(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
  }
  return static_cast<T>(a % b);
}

/// Exact integer power by squaring, wrapping on overflow. Negative exponents give the
/// truncated real result: 1 for base 1, +-1 for base -1, 0 otherwise (0^-n included,
/// where the real result is infinite).
template <class T, class E>
inline T IntPow(T base, E exponent) {
  if constexpr (std::is_signed_v<E>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if constexpr (std::is_signed_v<T>) {
        if (base == -1) return (exponent & 1) ? T(-1) : T(1);
      }
      return 0;
    }
  }
  using U = WideUnsigned<T>;
  U result = 1;
  U square = static_cast<U>(base);
  for (uint64_t e = static_cast<uint64_t>(exponent); e != 0; e >>= 1) {
    if (e & 1) result *= square;
    square *= square;
  }
  return static_cast<T>(result);
}

/// double -> integer truncating toward zero, saturating at the type's range, NaN -> 0.
template <class T>
inline T SaturatingCast(double r) {
  if (std::isnan(r)) return 0;
  constexpr double kHi = static_cast<double>(std::numeric_limits<T>::max()) + 1.0;
  if (r >= kHi) return std::numeric_limits<T>::max();
  if (r <= static_cast<double>(std::numeric_limits<T>::min()) - 1.0) {
    return std::numeric_limits<T>::min();
  }
  return static_cast<T>(r);
}

template <class T>
inline T Shift(T a, T b, bool left) {
  constexpr T kBits = static_cast<T>(sizeof(T) * 8);
  using U = WideUnsigned<T>;
  // Shifting by the width or more is undefined in C++; every bit is shifted out, so the
  // result is 0. Masking the amount and selecting afterwards keeps the loop branch-free.
  const T amount = static_cast<T>(b & (kBits - 1));
  const T shifted =
      static_cast<T>(left ? static_cast<U>(a) << amount : static_cast<U>(a) >> amount);
  return b >= kBits ? T{0} : shifted;
}

/// One element of `kOp` on compute-type values (see Compute<T>). Pow is the only op whose
/// operands may have different types.
template <ElemOp kOp, class A, class B>
inline auto Apply(A a, B b) {
  constexpr bool kInt = std::is_integral_v<A>;
  if constexpr (kOp == ElemOp::kAdd) {
    if constexpr (kInt) {
      return WrapAdd(a, b);
    } else {
      return a + b;
    }
  } else if constexpr (kOp == ElemOp::kSub) {
    if constexpr (kInt) {
      return WrapSub(a, b);
    } else {
      return a - b;
    }
  } else if constexpr (kOp == ElemOp::kMul) {
    if constexpr (kInt) {
      return WrapMul(a, b);
    } else {
      return a * b;
    }
  } else if constexpr (kOp == ElemOp::kDiv) {
    if constexpr (kInt) {
      return IntDiv(a, b);
    } else {
      return a / b;
    }
  } else if constexpr (kOp == ElemOp::kPow) {
    if constexpr (kInt && std::is_integral_v<B>) {
      return IntPow(a, b);
    } else if constexpr (kInt) {
      return SaturatingCast<A>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    } else if constexpr (std::is_same_v<A, float> && std::is_same_v<B, float>) {
      // The correctly rounded square, as the one-exponent loop computes it (binary_pow.cc):
      // the bits of Pow(x, 2) must not depend on whether the 2 was broadcast (verify compares
      // rewrites bit for bit), and the vectorized powf is up to an ULP off.
      return b == 2.0f ? a * a : std::pow(a, b);
    } else {
      return static_cast<A>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    }
  } else if constexpr (kOp == ElemOp::kModFloor) {
    return IntModFloor(a, b);
  } else if constexpr (kOp == ElemOp::kModTrunc) {
    if constexpr (kInt) {
      return IntModTrunc(a, b);
    } else {
      return std::fmod(a, b);
    }
  } else if constexpr (kOp == ElemOp::kShiftLeft) {
    return Shift(a, b, true);
  } else if constexpr (kOp == ElemOp::kShiftRight) {
    return Shift(a, b, false);
  } else if constexpr (kOp == ElemOp::kAnd) {
    return static_cast<bool>(a & b);
  } else if constexpr (kOp == ElemOp::kOr) {
    return static_cast<bool>(a | b);
  } else if constexpr (kOp == ElemOp::kXor) {
    return static_cast<bool>(a ^ b);
  } else if constexpr (kOp == ElemOp::kBitwiseAnd) {
    return static_cast<A>(a & b);
  } else if constexpr (kOp == ElemOp::kBitwiseOr) {
    return static_cast<A>(a | b);
  } else if constexpr (kOp == ElemOp::kBitwiseXor) {
    return static_cast<A>(a ^ b);
  } else if constexpr (kOp == ElemOp::kEqual) {
    return a == b;
  } else if constexpr (kOp == ElemOp::kGreater) {
    return a > b;
  } else if constexpr (kOp == ElemOp::kGreaterOrEqual) {
    return a >= b;
  } else if constexpr (kOp == ElemOp::kLess) {
    return a < b;
  } else if constexpr (kOp == ElemOp::kLessOrEqual) {
    return a <= b;
  } else if constexpr (kOp == ElemOp::kMax || kOp == ElemOp::kMin) {
    const A picked = (kOp == ElemOp::kMax) == (a > b) ? a : b;
    if constexpr (kInt) {
      return picked;
    } else {
      // NaN propagates: a + b is NaN when either is. Everything is computed unconditionally
      // and combined with selects (x != x tests NaN without a libm call) so GCC vectorizes.
      const A either_nan = a + b;
      return ((a != a) | (b != b)) ? either_nan : picked;
    }
  } else if constexpr (kOp == ElemOp::kPRelu) {
    if constexpr (std::is_unsigned_v<A>) {
      return a;
    } else if constexpr (kInt) {
      const A scaled = WrapMul(b, a);
      return a < 0 ? scaled : a;
    } else {
      // Multiplying unconditionally turns the branch into a select GCC can vectorize.
      const A scaled = b * a;
      return a < 0 ? scaled : a;
    }
  }
}

}  // namespace elem
}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_KERNELS_ELEMENTWISE_OPS_H_

// Reference unary kernels: one element at a time through double (long double for casts), the
// textbook formula for each op, and rounding by scaling to the target's quantum.
#include "runtime/kernels/reference/unary.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "runtime/dtype.h"

namespace onnx_bcast::runtime::reference {
namespace {

template <class T>
constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// Any floating-point storage type -> long double (exact).
template <class T>
long double ReadFloat(T v) {
  if constexpr (kIsHalf<T>) {
    return ToFloat(v);
  } else {
    return v;
  }
}

// long double -> floating-point storage type, one rounding to nearest even.
template <class T>
T WriteFloat(long double v) {
  if constexpr (std::is_same_v<T, Float16>) {
    return Float16{RoundToHalfBits(v)};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16{RoundToBFloat16Bits(v)};
  } else {
    return static_cast<T>(v);
  }
}

// Rounds |v| to a multiple of 2^(max(exponent, min_exp) - mantissa_bits), ties to even.
// Returns the rounded magnitude, or infinity above `max_finite`.
long double RoundMagnitude(long double a, int min_exp, int mantissa_bits, long double max_finite) {
  const int e = std::max(static_cast<int>(std::ilogb(a)), min_exp);
  const long double quantum = std::ldexp(1.0L, e - mantissa_bits);
  const long double r = std::nearbyint(a / quantum) * quantum;
  return r > max_finite ? std::numeric_limits<long double>::infinity() : r;
}

// A 16-bit float format: its NaN and infinity bits (sign cleared), smallest normal exponent,
// mantissa bits and largest finite value.
struct Format16 {
  uint16_t nan, inf;
  int min_exp, mantissa_bits;
  long double max_finite;
};

// `d` in format `f`, rounded to nearest even: sign, NaN, zero, infinity and overflow here, a
// finite rounded magnitude packed by pack(float) (exact: the value is one of f's).
template <class Pack>
uint16_t RoundToBits(long double d, const Format16& f, Pack pack) {
  const uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  if (std::isnan(d)) return sign | f.nan;
  const long double a = std::fabs(d);
  if (a == 0) return sign;
  if (std::isinf(a)) return sign | f.inf;
  const long double r = RoundMagnitude(a, f.min_exp, f.mantissa_bits, f.max_finite);
  if (std::isinf(r)) return sign | f.inf;
  return sign | pack(static_cast<float>(r));
}

double Sign(double x) {
  if (std::isnan(x)) return x;
  if (x > 0) return 1;
  if (x < 0) return -1;
  return 0;
}

double RoundHalfEven(double x) {
  if (!std::isfinite(x)) return x;
  const double lower = std::floor(x);
  const double diff = x - lower;
  double r = lower;
  if (diff > 0.5 || (diff == 0.5 && std::fmod(lower, 2.0) != 0)) r = lower + 1;
  return r == 0 ? std::copysign(0.0, x) : r;
}

double Clamp01(double y) { return y < 0 ? 0 : (y > 1 ? 1 : y); }

// The textbook formula of each floating-point op, in double.
double FloatOp(UnaryKind op, const UnaryParams& p, double x) {
  const double alpha = p.alpha;
  switch (op) {
    case UnaryKind::kAbs:
      return std::fabs(x);
    case UnaryKind::kNeg:
      return -x;
    case UnaryKind::kSign:
      return Sign(x);
    case UnaryKind::kFloor:
      return std::floor(x);
    case UnaryKind::kCeil:
      return std::ceil(x);
    case UnaryKind::kRound:
      return RoundHalfEven(x);
    case UnaryKind::kReciprocal:
      return 1.0 / x;
    case UnaryKind::kSqrt:
      return std::sqrt(x);
    case UnaryKind::kExp:
      return std::exp(x);
    case UnaryKind::kLog:
      return std::log(x);
    case UnaryKind::kErf:
      return std::erf(x);
    case UnaryKind::kSin:
      return std::sin(x);
    case UnaryKind::kCos:
      return std::cos(x);
    case UnaryKind::kTan:
      return std::tan(x);
    case UnaryKind::kAsin:
      return std::asin(x);
    case UnaryKind::kAcos:
      return std::acos(x);
    case UnaryKind::kAtan:
      return std::atan(x);
    case UnaryKind::kSinh:
      return std::sinh(x);
    case UnaryKind::kCosh:
      return std::cosh(x);
    case UnaryKind::kAsinh:
      return std::asinh(x);
    case UnaryKind::kAcosh:
      return std::acosh(x);
    case UnaryKind::kAtanh:
      return std::atanh(x);
    case UnaryKind::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case UnaryKind::kHardSigmoid:
      return std::isnan(x) ? x : Clamp01(alpha * x + static_cast<double>(p.beta));
    case UnaryKind::kHardSwish:
      return x * Clamp01(x / 6.0 + 0.5);
    case UnaryKind::kTanh:
      return std::tanh(x);
    case UnaryKind::kRelu:
      return x < 0 ? 0.0 : x;
    case UnaryKind::kLeakyRelu:
      return x < 0 ? alpha * x : x;
    case UnaryKind::kElu:
      return x < 0 ? alpha * (std::exp(x) - 1.0) : x;
    case UnaryKind::kSelu: {
      const double gamma = p.gamma;
      return x <= 0 ? gamma * (alpha * std::exp(x) - alpha) : gamma * x;
    }
    case UnaryKind::kCelu:
      return std::isnan(x) ? x
                           : std::max(0.0, x) + std::min(0.0, alpha * (std::exp(x / alpha) - 1));
    case UnaryKind::kThresholdedRelu:
      return x > alpha ? x : 0.0;
    case UnaryKind::kSoftplus:
      return x > 30 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    case UnaryKind::kSoftsign:
      return x / (1.0 + std::fabs(x));
    case UnaryKind::kShrink: {
      const double lambd = p.lambd, bias = p.bias;
      if (x < -lambd) return x + bias;
      if (x > lambd) return x - bias;
      return 0.0;
    }
    default:
      return std::numeric_limits<double>::quiet_NaN();
  }
}

// Integer ops (Abs, Neg, Sign, Relu, Shrink) through 128-bit arithmetic; the conversion back
// to T wraps modulo 2^bits (C++20).
template <class T>
T IntOp(UnaryKind op, const UnaryParams& p, T v) {
  const __int128 x = v;
  switch (op) {
    case UnaryKind::kAbs:
      return static_cast<T>(x < 0 ? -x : x);
    case UnaryKind::kNeg:
      return static_cast<T>(-x);
    case UnaryKind::kSign:
      return static_cast<T>(x > 0 ? 1 : (x < 0 ? -1 : 0));
    case UnaryKind::kRelu:
      return static_cast<T>(x < 0 ? 0 : x);
    case UnaryKind::kBitwiseNot:
      return static_cast<T>(-x - 1);  // ~x in two's complement
    case UnaryKind::kShrink: {
      const double r = FloatOp(op, p, static_cast<double>(v));
      if (r >= static_cast<double>(std::numeric_limits<T>::max())) {
        return std::numeric_limits<T>::max();
      }
      if (r <= static_cast<double>(std::numeric_limits<T>::min())) {
        return std::numeric_limits<T>::min();
      }
      return static_cast<T>(std::trunc(r));
    }
    default:
      return 0;
  }
}

template <class To, class From>
To CastElem(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    if constexpr (kIsHalf<From> || std::is_floating_point_v<From>) {
      return ReadFloat(v) != 0;
    } else {
      return v != 0;
    }
  } else if constexpr (kIsHalf<From> || std::is_floating_point_v<From>) {
    const long double x = ReadFloat(v);
    if constexpr (kIsHalf<To> || std::is_floating_point_v<To>) {
      return WriteFloat<To>(x);
    } else {
      if (std::isnan(x)) return 0;
      const long double t = std::trunc(x);
      if (t >= static_cast<long double>(std::numeric_limits<To>::max())) {
        return std::numeric_limits<To>::max();
      }
      if (t <= static_cast<long double>(std::numeric_limits<To>::min())) {
        return std::numeric_limits<To>::min();
      }
      return static_cast<To>(t);
    }
  } else if constexpr (kIsHalf<To> || std::is_floating_point_v<To>) {
    return WriteFloat<To>(static_cast<long double>(v));  // long double holds any int64 exactly
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace

uint16_t RoundToHalfBits(long double d) {
  return RoundToBits(d, {0x7e00, 0x7c00, -14, 10, 65504.0L}, FloatToHalfBits);
}

uint16_t RoundToBFloat16Bits(long double d) {
  const long double max_finite = std::ldexp(255.0L, 127 - 7);  // 0x7f7f
  return RoundToBits(d, {0x7fc0, 0x7f80, -126, 7, max_finite}, [](float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    return static_cast<uint16_t>(bits >> 16);
  });
}

absl::Status Unary(UnaryKind op, const UnaryParams& p, const Tensor& x, Tensor* out) {
  if (!UnaryAccepts(op, x.dtype()) || out->dtype() != UnaryOutputDType(op, x.dtype()) ||
      out->shape() != x.shape()) {
    return absl::InvalidArgumentError(absl::StrCat("reference ", UnaryKindName(op), ": ",
                                                   x.DebugString(), " -> ", out->DebugString()));
  }
  const int64_t n = x.num_elements();
  return VisitDType(x.dtype(), absl::InternalError("dtype"), [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    if constexpr (std::is_same_v<T, bool>) {
      bool* o = out->data<bool>();
      for (int64_t i = 0; i < n; ++i) o[i] = !in[i];
    } else if constexpr (std::is_integral_v<T>) {
      T* o = out->data<T>();
      for (int64_t i = 0; i < n; ++i) o[i] = IntOp<T>(op, p, in[i]);
    } else if (op == UnaryKind::kIsNaN || op == UnaryKind::kIsInf) {
      bool* o = out->data<bool>();
      for (int64_t i = 0; i < n; ++i) {
        const long double v = ReadFloat(in[i]);
        o[i] = op == UnaryKind::kIsNaN
                   ? std::isnan(v)
                   : std::isinf(v) && (v > 0 ? p.detect_positive : p.detect_negative);
      }
    } else {
      T* o = out->data<T>();
      for (int64_t i = 0; i < n; ++i) {
        o[i] = WriteFloat<T>(FloatOp(op, p, static_cast<double>(ReadFloat(in[i]))));
      }
    }
    return absl::OkStatus();
  });
}

absl::Status Clip(const Tensor& x, const Tensor* lo, const Tensor* hi, Tensor* out) {
  if (out->dtype() != x.dtype() || out->shape() != x.shape() || x.dtype() == DType::kBool) {
    return absl::InvalidArgumentError("reference Clip: bad operands");
  }
  return VisitDType(x.dtype(), absl::InternalError("dtype"), [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    T* o = out->data<T>();
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      if constexpr (std::is_integral_v<T>) {
        T v = in[i];
        if (lo != nullptr && v < lo->data<T>()[0]) v = lo->data<T>()[0];
        if (hi != nullptr && v > hi->data<T>()[0]) v = hi->data<T>()[0];
        o[i] = v;
      } else {
        long double v = ReadFloat(in[i]);
        if (!std::isnan(v)) {
          if (lo != nullptr) v = std::max(v, ReadFloat(lo->data<T>()[0]));
          if (hi != nullptr) v = std::min(v, ReadFloat(hi->data<T>()[0]));
        }
        o[i] = WriteFloat<T>(v);
      }
    }
    return absl::OkStatus();
  });
}

absl::Status Cast(const Tensor& x, Tensor* out) {
  if (out->shape() != x.shape()) return absl::InvalidArgumentError("reference Cast: shapes");
  return VisitDType(x.dtype(), absl::InternalError("dtype"), [&](auto from_tag) -> absl::Status {
    using From = typename decltype(from_tag)::type;
    return VisitDType(out->dtype(), absl::InternalError("dtype"), [&](auto to_tag) -> absl::Status {
      using To = typename decltype(to_tag)::type;
      const From* in = x.data<From>();
      To* o = out->data<To>();
      for (int64_t i = 0; i < x.num_elements(); ++i) o[i] = CastElem<To, From>(in[i]);
      return absl::OkStatus();
    });
  });
}

}  // namespace onnx_bcast::runtime::reference

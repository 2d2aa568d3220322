// Fast unary kernels: one flat loop per (op, dtype) instantiated from the element semantics
// in unary_ops.h, a dispatch table indexed by UnaryKind, and Clip/Cast loops.
#include "runtime/kernels/unary.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/kernels/elementwise_ops.h"
#include "runtime/kernels/unary_internal.h"
#include "runtime/kernels/vector_math.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {
namespace {

using unary_internal::ForRange;

template <UnaryKind kOp, class T>
using UnaryOut = std::conditional_t<UnaryOutputDType(kOp, DTypeOf<T>()) == DType::kBool, bool, T>;

template <UnaryKind kOp, class T>
void UnaryLoop(const T* __restrict in, UnaryOut<kOp, T>* __restrict out, int64_t n,
               const UnaryParams& p) {
  using O = UnaryOut<kOp, T>;
  for (int64_t i = 0; i < n; ++i)
    out[i] = elem::Store<O>(elem::ApplyUnary<kOp>(elem::Load(in[i]), p));
}

// In place (out == in): the same loop without the no-alias promise.
template <UnaryKind kOp, class T>
void UnaryLoopInPlace(T* data, int64_t n, const UnaryParams& p) {
  for (int64_t i = 0; i < n; ++i) {
    data[i] = elem::Store<T>(elem::ApplyUnary<kOp>(elem::Load(data[i]), p));
  }
}

template <UnaryKind kOp>
absl::Status RunUnary(const UnaryParams& p, const Tensor& x, Tensor* out,
                      const UnaryOptions& opts) {
  const absl::Status bad = absl::InvalidArgumentError(
      absl::StrCat(UnaryKindName(kOp), " is not defined on ", DTypeName(x.dtype())));
  return VisitDType(x.dtype(), bad, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (!UnaryAccepts(kOp, DTypeOf<T>())) {
      return bad;
    } else {
      using O = UnaryOut<kOp, T>;
      const T* in = x.data<T>();
      O* o = out->data<O>();
      if constexpr (kOp == UnaryKind::kErf && std::is_same_v<T, float>) {
        // libmvec's 8-lane erff: scalar erff was a quarter of a Swin's run (GELU).
        ForRange(x.num_elements(), opts,
                 [&](int64_t b, int64_t e) { kernels::ErfFloats(in + b, o + b, e - b); });
        return absl::OkStatus();
      }
      if constexpr (kOp == UnaryKind::kSigmoid && std::is_same_v<T, float>) {
        ForRange(x.num_elements(), opts,
                 [&](int64_t b, int64_t e) { kernels::SigmoidFloats(in + b, o + b, e - b); });
        return absl::OkStatus();
      }
      if constexpr (std::is_same_v<O, T>) {
        if (static_cast<const void*>(in) == static_cast<const void*>(o)) {
          ForRange(x.num_elements(), opts,
                   [&](int64_t b, int64_t e) { UnaryLoopInPlace<kOp, T>(o + b, e - b, p); });
          return absl::OkStatus();
        }
      }
      ForRange(x.num_elements(), opts,
               [&](int64_t b, int64_t e) { UnaryLoop<kOp, T>(in + b, o + b, e - b, p); });
      return absl::OkStatus();
    }
  });
}

using UnaryFn = absl::Status (*)(const UnaryParams&, const Tensor&, Tensor*, const UnaryOptions&);

template <size_t... I>
constexpr std::array<UnaryFn, sizeof...(I)> MakeUnaryTable(std::index_sequence<I...>) {
  return {&RunUnary<kAllUnaryKinds[I]>...};
}

constexpr size_t kNumUnaryKinds = std::size(kAllUnaryKinds);
constexpr std::array<UnaryFn, kNumUnaryKinds> kUnaryTable =
    MakeUnaryTable(std::make_index_sequence<kNumUnaryKinds>());

// Rounds d to float so that a second rounding (to 11 or 8 bits) is correct: truncate toward
// zero and set the last bit when inexact ("round to odd"), which keeps the sticky bit.
template <class F>
float RoundToOddFloat(F d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<F>(f) == d) return f;
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::fabs(static_cast<F>(f)) > std::fabs(d)) bits -= 1;
  return std::bit_cast<float>(bits | 1u);
}

template <class To, class From>
inline To ConvertElem(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, Float16> || std::is_same_v<From, BFloat16>) {
    return ConvertElem<To, float>(ToFloat(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_same_v<To, Float16>) {
    if constexpr (std::is_same_v<From, float>) {
      return ToFloat16(v);
    } else {
      // long double (64-bit mantissa on x86-64) holds every int64 exactly.
      return Float16{FloatToHalfBits(RoundToOddFloat(static_cast<long double>(v)))};
    }
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    if constexpr (std::is_same_v<From, float>) {
      return ToBFloat16(v);
    } else {
      return BFloat16{FloatToBFloat16Bits(RoundToOddFloat(static_cast<long double>(v)))};
    }
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(v);
  } else if constexpr (std::is_floating_point_v<From>) {
    return elem::SaturatingCast<To>(static_cast<double>(v));
  } else {
    return static_cast<To>(v);
  }
}

template <class To, class From>
void CastLoop(const From* __restrict in, To* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = ConvertElem<To, From>(in[i]);
}

template <class T>
void ClipLoop(const T* in, T* out, int64_t n, elem::Compute<T> lo, elem::Compute<T> hi) {
  for (int64_t i = 0; i < n; ++i) {
    auto v = elem::Load(in[i]);
    v = v < lo ? lo : v;
    out[i] = elem::Store<T>(v > hi ? hi : v);
  }
}

absl::Status CheckSameShape(absl::string_view what, const Tensor& x, const Tensor& out) {
  if (x.shape() != out.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": output shape ",
                                                   ShapeToString(out.shape()), " differs from ",
                                                   ShapeToString(x.shape())));
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view UnaryKindName(UnaryKind op) {
  static constexpr absl::string_view kNames[] = {
      "Abs",        "Neg",      "Sign",       "Floor",
      "Ceil",       "Round",    "Reciprocal", "Sqrt",
      "Exp",        "Log",      "Erf",        "Sin",
      "Cos",        "Tan",      "Asin",       "Acos",
      "Atan",       "Sinh",     "Cosh",       "Asinh",
      "Acosh",      "Atanh",    "Sigmoid",    "HardSigmoid",
      "HardSwish",  "Tanh",     "Relu",       "LeakyRelu",
      "Elu",        "Selu",     "Celu",       "ThresholdedRelu",
      "Softplus",   "Softsign", "Shrink",     "Not",
      "BitwiseNot", "IsNaN",    "IsInf",
  };
  static_assert(std::size(kNames) == kNumUnaryKinds);
  const size_t i = static_cast<size_t>(op);
  return i < kNumUnaryKinds ? kNames[i] : "Unary(?)";
}

uint16_t DoubleToHalfBits(double d) { return FloatToHalfBits(RoundToOddFloat(d)); }

uint16_t DoubleToBFloat16Bits(double d) { return FloatToBFloat16Bits(RoundToOddFloat(d)); }

absl::Status Unary(UnaryKind op, const UnaryParams& params, const Tensor& x, Tensor* out,
                   const UnaryOptions& opts) {
  const size_t i = static_cast<size_t>(op);
  if (i >= kNumUnaryKinds) return absl::InvalidArgumentError("unknown unary op");
  BCAST_RETURN_IF_ERROR(CheckSameShape(UnaryKindName(op), x, *out));
  if (out->dtype() != UnaryOutputDType(op, x.dtype())) {
    return absl::InvalidArgumentError(absl::StrCat(UnaryKindName(op), ": output dtype ",
                                                   DTypeName(out->dtype()), " for input ",
                                                   DTypeName(x.dtype())));
  }
  return kUnaryTable[i](params, x, out, opts);
}

absl::Status Clip(const Tensor& x, const Tensor* lo, const Tensor* hi, Tensor* out,
                  const UnaryOptions& opts) {
  BCAST_RETURN_IF_ERROR(CheckSameShape("Clip", x, *out));
  if (!IsNumeric(x.dtype()) || out->dtype() != x.dtype()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Clip is not defined on ", DTypeName(x.dtype())));
  }
  for (const Tensor* bound : {lo, hi}) {
    if (bound != nullptr && (bound->dtype() != x.dtype() || bound->num_elements() != 1)) {
      return absl::InvalidArgumentError(absl::StrCat("Clip: a bound must be one element of ",
                                                     DTypeName(x.dtype()), ", got ",
                                                     bound->DebugString()));
    }
  }
  return VisitDType(
      x.dtype(), absl::InvalidArgumentError("Clip: bad dtype"), [&](auto tag) -> absl::Status {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, bool>) {
          return absl::InvalidArgumentError("Clip is not defined on bool");
        } else {
          using C = elem::Compute<T>;
          C low = std::numeric_limits<C>::lowest();
          C high = std::numeric_limits<C>::max();
          if constexpr (std::is_floating_point_v<C>) {
            low = -std::numeric_limits<C>::infinity();
            high = std::numeric_limits<C>::infinity();
          }
          if (lo != nullptr) low = elem::Load(lo->data<T>()[0]);
          if (hi != nullptr) high = elem::Load(hi->data<T>()[0]);
          const T* in = x.data<T>();
          T* o = out->data<T>();
          ForRange(x.num_elements(), opts,
                   [&](int64_t b, int64_t e) { ClipLoop<T>(in + b, o + b, e - b, low, high); });
          return absl::OkStatus();
        }
      });
}

absl::Status Cast(const Tensor& x, Tensor* out, const UnaryOptions& opts) {
  BCAST_RETURN_IF_ERROR(CheckSameShape("Cast", x, *out));
  const absl::Status bad = absl::InvalidArgumentError(absl::StrCat(
      "Cast from ", DTypeName(x.dtype()), " to ", DTypeName(out->dtype()), " is not supported"));
  if (x.dtype() == out->dtype()) return Copy(x, out);
  return VisitDType(x.dtype(), bad, [&](auto from_tag) -> absl::Status {
    using From = typename decltype(from_tag)::type;
    return VisitDType(out->dtype(), bad, [&](auto to_tag) -> absl::Status {
      using To = typename decltype(to_tag)::type;
      const From* in = x.data<From>();
      To* o = out->data<To>();
      ForRange(x.num_elements(), opts,
               [&](int64_t b, int64_t e) { CastLoop<To, From>(in + b, o + b, e - b); });
      return absl::OkStatus();
    });
  });
}

absl::Status Copy(const Tensor& x, Tensor* out) {
  if (x.dtype() != out->dtype() || x.num_elements() != out->num_elements()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Copy from ", x.DebugString(), " to ", out->DebugString()));
  }
  if (x.byte_size() != 0 && x.raw_data() != out->raw_data()) {
    std::memmove(out->raw_data(), x.raw_data(), x.byte_size());
  }
  return absl::OkStatus();
}

}  // namespace onnx_bcast::runtime

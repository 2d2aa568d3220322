// Element types of runtime tensors, numbered as ONNX TensorProto.DataType, with sizes,
// names, C++ storage types and float16/bfloat16 <-> float conversion.
#ifndef ONNX_BCAST_RUNTIME_DTYPE_H_
#define ONNX_BCAST_RUNTIME_DTYPE_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <type_traits>

#include "absl/strings/string_view.h"

namespace onnx_bcast::runtime {

/// Element type. Values are ONNX TensorProto.DataType numbers so a proto layer can
/// static_cast between them. kString is listed only to be rejected.
enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
};

/// Every dtype the runtime can store and compute on (all of DType but kUndefined/kString).
inline constexpr DType kAllDTypes[] = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
    DType::kInt16,   DType::kInt32,   DType::kInt64,   DType::kUInt8,    DType::kUInt16,
    DType::kUInt32,  DType::kUInt64,  DType::kBool,
};

/// True for the dtypes listed in kAllDTypes.
bool IsSupported(DType dtype);

/// Bytes per element; 0 for unsupported dtypes.
size_t DTypeSize(DType dtype);

/// Lower-case name as ONNX spells it ("float32", "bfloat16", "bool"...); "undefined" or
/// "string" for the unsupported ones, "dtype(?)" for values outside the enum.
absl::string_view DTypeName(DType dtype);

/// Prints DTypeName (for gtest and logs).
inline std::ostream& operator<<(std::ostream& os, DType dtype) { return os << DTypeName(dtype); }

/// float32, float64, float16, bfloat16.
constexpr bool IsFloatingPoint(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
         dtype == DType::kBFloat16;
}

/// uint8..uint64.
constexpr bool IsUnsignedInteger(DType dtype) {
  return dtype == DType::kUInt8 || dtype == DType::kUInt16 || dtype == DType::kUInt32 ||
         dtype == DType::kUInt64;
}

/// Signed or unsigned integer types (not bool).
constexpr bool IsInteger(DType dtype) {
  return IsUnsignedInteger(dtype) || dtype == DType::kInt8 || dtype == DType::kInt16 ||
         dtype == DType::kInt32 || dtype == DType::kInt64;
}

/// Integer or floating point (every supported dtype but bool).
constexpr bool IsNumeric(DType dtype) { return IsInteger(dtype) || IsFloatingPoint(dtype); }

/// IEEE 754 binary16 storage (bit pattern only; arithmetic goes through float).
struct Float16 {
  uint16_t bits;
  friend bool operator==(Float16, Float16) = default;
};

/// bfloat16 storage: the upper 16 bits of a float32 (arithmetic goes through float).
struct BFloat16 {
  uint16_t bits;
  friend bool operator==(BFloat16, BFloat16) = default;
};

/// Converts binary16 bits to float exactly (subnormals, inf and NaN payloads kept).
inline float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    // Subnormal or zero: mantissa * 2^-24 is exact in float.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(magnitude));
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/// Converts float to binary16 bits, rounding to nearest even; overflow gives inf, NaN
/// stays NaN (quieted, upper payload bits kept).
inline uint16_t FloatToHalfBits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) {
    const bool is_nan = magnitude > 0x7f800000u;
    return sign | 0x7c00u | (is_nan ? (0x200u | ((magnitude >> 13) & 0x3ffu)) : 0u);
  }
  // 65520 is halfway between the largest half (65504, odd mantissa) and 2^16: ties go up.
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;
  if (magnitude < 0x38800000u) {
    // Below the smallest normal half: adding 0.5f aligns the value to a multiple of 2^-24
    // (0.5f's ulp), and the FPU's round-to-nearest-even does the rounding.
    const float aligned = std::bit_cast<float>(magnitude) + 0.5f;
    return sign | static_cast<uint16_t>(std::bit_cast<uint32_t>(aligned) - 0x3f000000u);
  }
  const uint32_t odd = (magnitude >> 13) & 1u;
  // Rebias the exponent (127 -> 15) and round the 13 dropped bits to nearest even; a carry
  // out of the mantissa correctly bumps the exponent.
  magnitude += 0xc8000fffu + odd;
  return sign | static_cast<uint16_t>(magnitude >> 13);
}

/// Converts bfloat16 bits to float exactly.
inline float BFloat16BitsToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

/// Converts float to bfloat16 bits, rounding to nearest even; NaN stays NaN (quieted).
inline uint16_t FloatToBFloat16Bits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float ToFloat(Float16 h) { return HalfBitsToFloat(h.bits); }
inline float ToFloat(BFloat16 b) { return BFloat16BitsToFloat(b.bits); }
inline Float16 ToFloat16(float f) { return Float16{FloatToHalfBits(f)}; }
inline BFloat16 ToBFloat16(float f) { return BFloat16{FloatToBFloat16Bits(f)}; }

/// The DType whose storage type is T (kUndefined for other types).
template <class T>
constexpr DType DTypeOf() {
  if constexpr (std::is_same_v<T, float>) {
    return DType::kFloat32;
  } else if constexpr (std::is_same_v<T, double>) {
    return DType::kFloat64;
  } else if constexpr (std::is_same_v<T, Float16>) {
    return DType::kFloat16;
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return DType::kBFloat16;
  } else if constexpr (std::is_same_v<T, int8_t>) {
    return DType::kInt8;
  } else if constexpr (std::is_same_v<T, int16_t>) {
    return DType::kInt16;
  } else if constexpr (std::is_same_v<T, int32_t>) {
    return DType::kInt32;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return DType::kInt64;
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    return DType::kUInt8;
  } else if constexpr (std::is_same_v<T, uint16_t>) {
    return DType::kUInt16;
  } else if constexpr (std::is_same_v<T, uint32_t>) {
    return DType::kUInt32;
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return DType::kUInt64;
  } else if constexpr (std::is_same_v<T, bool>) {
    return DType::kBool;
  } else {
    return DType::kUndefined;
  }
}

/// Tag carrying a storage type through generic lambdas.
template <class T>
struct TypeTag {
  using type = T;
};

/// Calls `fn(TypeTag<T>{})` with the storage type of `dtype` and returns its result;
/// returns `fallback` for unsupported dtypes. Every branch is instantiated.
template <class R, class Fn>
R VisitDType(DType dtype, R fallback, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32:
      return fn(TypeTag<float>{});
    case DType::kFloat64:
      return fn(TypeTag<double>{});
    case DType::kFloat16:
      return fn(TypeTag<Float16>{});
    case DType::kBFloat16:
      return fn(TypeTag<BFloat16>{});
    case DType::kInt8:
      return fn(TypeTag<int8_t>{});
    case DType::kInt16:
      return fn(TypeTag<int16_t>{});
    case DType::kInt32:
      return fn(TypeTag<int32_t>{});
    case DType::kInt64:
      return fn(TypeTag<int64_t>{});
    case DType::kUInt8:
      return fn(TypeTag<uint8_t>{});
    case DType::kUInt16:
      return fn(TypeTag<uint16_t>{});
    case DType::kUInt32:
      return fn(TypeTag<uint32_t>{});
    case DType::kUInt64:
      return fn(TypeTag<uint64_t>{});
    case DType::kBool:
      return fn(TypeTag<bool>{});
    default:
      return fallback;
  }
}

/// The type arithmetic on T happens in: float for float16/bfloat16, T itself otherwise.
template <class T>
using ComputeType =
    std::conditional_t<std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>, float, T>;

/// A stored value widened for arithmetic (float16/bfloat16 to float, others unchanged).
template <class T>
inline ComputeType<T> LoadCompute(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return ToFloat(v);
  } else {
    return v;
  }
}

/// A computed value stored as T: float16/bfloat16 round to nearest even through float, other
/// types convert with static_cast. The one conversion every kernel family uses.
template <class T, class C>
inline T StoreCompute(C v) {
  if constexpr (std::is_same_v<T, Float16>) {
    return ToFloat16(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return ToBFloat16(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_DTYPE_H_

// Element arithmetic on any storage type, shared by index-driven kernels (Scatter reductions)
// and the movement ops: float16/bfloat16 through float, integers wrapping, bool as or/and.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_ELEMENT_VALUES_H_
#define ONNX_BCAST_RUNTIME_KERNELS_ELEMENT_VALUES_H_

#include <type_traits>

#include "runtime/dtype.h"

namespace onnx_bcast::runtime::kernels {

/// a + b: wrapping for integers, `or` for bool, through float for the half types.
template <class T>
T AddValues(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return StoreCompute<T>(LoadCompute(a) + LoadCompute(b));
  }
}

/// a * b: wrapping for integers, `and` for bool, through float for the half types.
template <class T>
T MulValues(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    // Promote through unsigned long long so that uint16 * uint16 cannot overflow int.
    return static_cast<T>(static_cast<U>(static_cast<unsigned long long>(static_cast<U>(a)) *
                                         static_cast<unsigned long long>(static_cast<U>(b))));
  } else {
    return StoreCompute<T>(LoadCompute(a) * LoadCompute(b));
  }
}

/// Strict weak "less" on element values (floats by value, NaN ordered last).
template <class T>
bool LessValues(T a, T b) {
  const auto x = LoadCompute(a);
  const auto y = LoadCompute(b);
  if constexpr (std::is_floating_point_v<decltype(x)>) {
    if (x != x) return false;
    if (y != y) return true;
  }
  return x < y;
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_ELEMENT_VALUES_H_

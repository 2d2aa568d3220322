// Helpers for runtime tests: seeded random broadcast-compatible shapes and values, and
// bit-exact, NaN-aware tensor comparison.
#ifndef ONNX_BCAST_TESTS_UNIT_RUNTIME_TEST_UTIL_H_
#define ONNX_BCAST_TESTS_UNIT_RUNTIME_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/dtype.h"
#include "runtime/tensor.h"

namespace onnx_bcast::runtime::testing {

/// numpy broadcast of two shapes (the test's own rule; inputs assumed compatible).
inline std::vector<int64_t> BroadcastShapes(const std::vector<int64_t>& a,
                                            const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t k = 1; k <= rank; ++k) {
    const int64_t x = k <= a.size() ? a[a.size() - k] : 1;
    const int64_t y = k <= b.size() ? b[b.size() - k] : 1;
    out[rank - k] = x == 1 ? y : x;
  }
  return out;
}

/// Random shape of `rank` dims in [1, max_dim] with at most `budget` elements.
inline std::vector<int64_t> RandomShape(std::mt19937_64& rng, int rank, int64_t max_dim,
                                        int64_t budget) {
  std::vector<int64_t> shape(rank);
  for (int64_t& d : shape) d = std::uniform_int_distribution<int64_t>(1, max_dim)(rng);
  auto count = [&] {
    int64_t c = 1;
    for (int64_t d : shape) c *= d;
    return c;
  };
  while (count() > budget) {
    int64_t& d = shape[std::uniform_int_distribution<int>(0, rank - 1)(rng)];
    if (d > 1) --d;
  }
  return shape;
}

/// `full` with each dim set to 1 with probability 1/2, then maybe with leading dims removed
/// (down to rank 0).
inline std::vector<int64_t> RandomRank0OrSub(std::mt19937_64& rng,
                                             const std::vector<int64_t>& full) {
  std::vector<int64_t> sub = full;
  for (int64_t& d : sub) {
    if (rng() & 1) d = 1;
  }
  if (rng() & 1) {
    const size_t drop = std::uniform_int_distribution<size_t>(0, sub.size())(rng);
    sub.erase(sub.begin(), sub.begin() + drop);
  }
  return sub;
}

/// Random values for dtype `dtype`; `kind` narrows ranges for ops that need it.
enum class ValueKind { kAny, kSmallNonNegative, kShiftAmount };

template <class T>
T RandomValue(std::mt19937_64& rng, ValueKind kind) {
  std::uniform_int_distribution<int> pick(0, 99);
  const int p = pick(rng);
  if constexpr (std::is_same_v<T, bool>) {
    return (rng() & 1) != 0;
  } else if constexpr (std::is_integral_v<T>) {
    if (kind == ValueKind::kShiftAmount) {
      return static_cast<T>(std::uniform_int_distribution<int>(0, sizeof(T) * 8 + 2)(rng));
    }
    if (kind == ValueKind::kSmallNonNegative) {
      return static_cast<T>(std::uniform_int_distribution<int>(0, 9)(rng));
    }
    if (p < 5) return 0;
    if (p < 8) return std::numeric_limits<T>::min();
    if (p < 10) return std::numeric_limits<T>::max();
    if (p < 60) {
      const int lo = std::is_signed_v<T> ? -20 : 0;
      return static_cast<T>(std::uniform_int_distribution<int>(lo, 20)(rng));
    }
    return static_cast<T>(rng());
  } else {
    float v;
    if (kind != ValueKind::kAny) {
      v = static_cast<float>(std::uniform_int_distribution<int>(-4, 6)(rng)) * 0.5f;
    } else if (p < 2) {
      v = std::numeric_limits<float>::quiet_NaN();
    } else if (p < 4) {
      v = (p & 1) ? std::numeric_limits<float>::infinity()
                  : -std::numeric_limits<float>::infinity();
    } else if (p < 7) {
      v = (p & 1) ? 0.0f : -0.0f;
    } else {
      v = std::uniform_real_distribution<float>(-10.0f, 10.0f)(rng);
    }
    if constexpr (std::is_same_v<T, Float16>) {
      return ToFloat16(v);
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      return ToBFloat16(v);
    } else {
      return static_cast<T>(v);
    }
  }
}

/// Allocates a tensor of `shape` filled with seeded random values.
inline Tensor RandomTensor(std::mt19937_64& rng, DType dtype, std::vector<int64_t> shape,
                           ValueKind kind = ValueKind::kAny) {
  Tensor t = Tensor::Allocate(dtype, std::move(shape)).value();
  VisitDType(dtype, 0, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = RandomValue<T>(rng, kind);
    return 0;
  });
  return t;
}

/// Fills `t` with a recognizable garbage pattern so unwritten outputs show up.
inline void Poison(Tensor& t) {
  if (t.byte_size() != 0) std::memset(t.raw_data(), 0xA5, t.byte_size());
}

/// Index of the first element where `a` and `b` differ (bit-exact; two NaNs of a float
/// dtype count as equal), or -1.
inline int64_t FirstMismatch(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return 0;
  return VisitDType(a.dtype(), int64_t{0}, [&](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      if (std::memcmp(&x[i], &y[i], sizeof(T)) == 0) continue;
      if constexpr (!std::is_integral_v<T>) {
        float fx, fy;
        if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
          fx = ToFloat(x[i]);
          fy = ToFloat(y[i]);
        } else {
          fx = static_cast<float>(x[i]);
          fy = static_cast<float>(y[i]);
        }
        if (std::isnan(fx) && std::isnan(fy)) continue;
      }
      return i;
    }
    return -1;
  });
}

}  // namespace onnx_bcast::runtime::testing

#endif  // ONNX_BCAST_TESTS_UNIT_RUNTIME_TEST_UTIL_H_

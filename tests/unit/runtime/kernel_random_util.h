// Helpers for the fast-vs-reference kernel tests (*_random_test.cc): seeded draws, element
// buffers of any storage type (bool as bytes) and bitwise comparison.
#ifndef ONNX_BCAST_TESTS_UNIT_RUNTIME_KERNEL_RANDOM_UTIL_H_
#define ONNX_BCAST_TESTS_UNIT_RUNTIME_KERNEL_RANDOM_UTIL_H_

#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/dtype.h"

namespace onnx_bcast::runtime::kernels::kernel_test {

/// A draw in [0, n).
inline int64_t Below(std::mt19937* rng, int64_t n) { return static_cast<int64_t>((*rng)() % n); }

/// The element count of a dense tensor of `shape`.
inline int64_t Count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

/// A dense shape seen as [outer, dim, inner] around one axis (the view CumSum, TopK and OneHot
/// loop over).
struct AxisView {
  std::vector<int64_t> shape;
  int64_t axis, outer, dim, inner;
};

/// A random shape of rank 1-4 with dims in [1, max_dim], or in [0, 3] (empty dims likely) when
/// `with_empty`, and a random axis.
inline AxisView RandomAxisView(std::mt19937* rng, bool with_empty, int64_t max_dim) {
  AxisView v;
  const int64_t rank = 1 + Below(rng, 4);
  for (int64_t j = 0; j < rank; ++j) {
    v.shape.push_back(with_empty ? Below(rng, 4) : 1 + Below(rng, max_dim));
  }
  v.axis = Below(rng, rank);
  v.outer = Count({v.shape.begin(), v.shape.begin() + v.axis});
  v.dim = v.shape[v.axis];
  v.inner = Count({v.shape.begin() + v.axis + 1, v.shape.end()});
  return v;
}

/// Element buffers; bool is held as bytes of 0 or 1 (std::vector<bool> has no data()).
template <class T>
using Buffer = std::vector<std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>>;

template <class T, class E>
T* Ptr(std::vector<E>& v) {
  return reinterpret_cast<T*>(v.data());
}
template <class T, class E>
const T* Ptr(const std::vector<E>& v) {
  return reinterpret_cast<const T*>(v.data());
}

/// `n` values: any bits for integers (so that sums wrap), [-3, 3) for floating types.
template <class T>
Buffer<T> RandomValues(std::mt19937* rng, int64_t n) {
  Buffer<T> v(static_cast<size_t>(n));
  for (auto& x : v) {
    if constexpr (std::is_same_v<T, bool>) {
      x = (*rng)() % 2;
    } else if constexpr (std::is_integral_v<T>) {
      x = static_cast<T>((*rng)());
    } else {
      x = StoreCompute<T>(std::uniform_real_distribution<float>(-3, 3)(*rng));
    }
  }
  return v;
}

/// The fast-vs-reference loop of a kernel test: `trials` trials, each calling
/// `check.template operator()<T>(&rng, trial)` for every type of Ts in order, all from one
/// generator seeded with `seed` (so a trial's draws follow those of the types before it).
/// `check` is a templated lambda: []<class T>(std::mt19937* rng, int trial) {...}.
template <class... Ts, class Check>
void ForEachTrial(uint32_t seed, int trials, Check&& check) {
  std::mt19937 rng(seed);
  for (int trial = 0; trial < trials; ++trial) {
    (check.template operator()<Ts>(&rng, trial), ...);
  }
}

/// Bitwise equality, element by element (no memcmp over the whole, possibly empty, buffers).
template <class E>
::testing::AssertionResult SameBits(const std::vector<E>& a, const std::vector<E>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(E)) != 0) {
      return ::testing::AssertionFailure() << "element " << i << " differs";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace onnx_bcast::runtime::kernels::kernel_test

#endif  // ONNX_BCAST_TESTS_UNIT_RUNTIME_KERNEL_RANDOM_UTIL_H_

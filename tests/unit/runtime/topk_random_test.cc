// kernels/topk.h against reference/topk.h on seeded random shapes: ranks 1-4 with empty and
// size-1 dims, every axis, k from 0 to the axis, largest and smallest, values from a small set
// (many ties) with NaN, -0 and +0 among the floats; values and indices bit for bit.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/dtype.h"
#include "runtime/kernels/reference/topk.h"
#include "runtime/kernels/topk.h"
#include "tests/unit/runtime/kernel_random_util.h"

namespace onnx_bcast::runtime::kernels::kernel_test {
namespace {

// Values from {-2, -1, -0, 0, 1, 2} and NaN for floating types (ties are common), any bits for
// integers half of the time.
template <class T>
std::vector<T> TiedValues(std::mt19937* rng, int64_t n) {
  if (!std::is_floating_point_v<ComputeType<T>> && Below(rng, 2) == 0) {
    return RandomValues<T>(rng, n);
  }
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) {
    const int64_t pick = Below(rng, 7);
    if constexpr (std::is_floating_point_v<ComputeType<T>>) {
      const float values[] = {-2, -1, -0.0f, 0, 1, 2, std::numeric_limits<float>::quiet_NaN()};
      x = StoreCompute<T>(values[pick]);
    } else {
      x = static_cast<T>(pick);
    }
  }
  return v;
}

template <class T>
void CheckTopK(std::mt19937* rng, int trial) {
  const AxisView v = RandomAxisView(rng, trial % 5 == 0, trial == 1 ? 40 : 6);
  const int64_t k = Below(rng, v.dim + 1);
  const std::vector<T> src = TiedValues<T>(rng, Count(v.shape));
  const size_t out_count = static_cast<size_t>(v.outer * k * v.inner);
  for (const bool largest : {true, false}) {
    std::vector<T> fast_values(out_count), ref_values(out_count);
    std::vector<int64_t> fast_indices(out_count), ref_indices(out_count);
    TopK(src.data(), v.outer, v.dim, v.inner, k, largest, fast_values.data(), fast_indices.data());
    reference::TopK(src.data(), v.outer, v.dim, v.inner, k, largest, ref_values.data(),
                    ref_indices.data());
    EXPECT_TRUE(SameBits(fast_values, ref_values)) << "trial " << trial << " largest " << largest;
    EXPECT_EQ(fast_indices, ref_indices) << "trial " << trial << " largest " << largest;
  }
}

TEST(TopKKernels, MatchesReference) {
  ForEachTrial<float, double, Float16, int32_t, uint8_t, int64_t>(
      83, 300, []<class T>(std::mt19937* rng, int trial) { CheckTopK<T>(rng, trial); });
}

// The reference on a hand-worked case: ties keep the smaller index first; NaN counts as the
// largest value.
TEST(TopKKernels, ReferenceByHand) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {1, 3, nan, 3, 0};
  std::vector<float> values(3);
  std::vector<int64_t> indices(3);
  reference::TopK(x.data(), 1, 5, 1, 3, true, values.data(), indices.data());
  EXPECT_TRUE(std::isnan(values[0]));
  EXPECT_EQ(values[1], 3);
  EXPECT_EQ(values[2], 3);
  EXPECT_EQ(indices, (std::vector<int64_t>{2, 1, 3}));
  reference::TopK(x.data(), 1, 5, 1, 3, false, values.data(), indices.data());
  EXPECT_EQ(values, (std::vector<float>{0, 1, 3}));
  EXPECT_EQ(indices, (std::vector<int64_t>{4, 0, 1}));
}

}  // namespace
}  // namespace onnx_bcast::runtime::kernels::kernel_test

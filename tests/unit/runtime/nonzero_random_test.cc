// kernels/nonzero.h against reference/nonzero.h on seeded random shapes: ranks 0-4 with empty
// and size-1 dims, sparse and dense inputs, -0 and NaN among floats, float16, bool and integers.
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/dtype.h"
#include "runtime/kernels/nonzero.h"
#include "runtime/kernels/reference/nonzero.h"
#include "tests/unit/runtime/kernel_random_util.h"

namespace onnx_bcast::runtime::kernels::kernel_test {
namespace {

template <class T>
void CheckNonZero(std::mt19937* rng, int trial) {
  std::vector<int64_t> shape;
  for (int64_t j = Below(rng, 5); j > 0; --j) {
    shape.push_back(trial % 5 == 0 ? Below(rng, 4) : 1 + Below(rng, 5));
  }
  const int64_t count = Count(shape);
  Buffer<T> x = RandomValues<T>(rng, count);
  const int64_t zero_share = Below(rng, 4);  // 0 to 3 in 4 elements zero
  for (auto& e : x) {
    if (Below(rng, 4) < zero_share) e = StoreCompute<T>(0);
    if constexpr (std::is_floating_point_v<ComputeType<T>>) {
      if (Below(rng, 8) == 0) e = StoreCompute<T>(Below(rng, 2) ? -0.0f : std::nanf(""));
    }
  }
  const int64_t hits = CountNonZero(Ptr<T>(x), count);
  std::vector<int64_t> fast(static_cast<size_t>(hits * static_cast<int64_t>(shape.size())));
  NonZeroCoordinates(Ptr<T>(x), shape, hits, fast.data());
  EXPECT_EQ(fast, reference::NonZero(Ptr<T>(x), shape)) << "trial " << trial;
}

TEST(NonZeroKernels, MatchesReference) {
  ForEachTrial<float, Float16, bool, int32_t, uint8_t>(
      97, 300, []<class T>(std::mt19937* rng, int trial) { CheckNonZero<T>(rng, trial); });
}

// The reference on a hand-worked case: [[0, 1], [2, 0]] -> rows [0, 1], columns [1, 0].
TEST(NonZeroKernels, ReferenceByHand) {
  const std::vector<float> x = {0, 1, 2, -0.0f};
  const std::vector<int64_t> shape = {2, 2};
  EXPECT_EQ(reference::NonZero(x.data(), shape), (std::vector<int64_t>{0, 1, 1, 0}));
}

}  // namespace
}  // namespace onnx_bcast::runtime::kernels::kernel_test

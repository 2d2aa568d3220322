// kernels/unique.h against reference/unique.h on seeded random shapes: ranks 1-4 with empty and
// size-1 dims, every axis and the flattened form, sorted and by first occurrence, values from a
// small set (many repeated slices) with NaN and signed zeros among floats, bool and integers.
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/dtype.h"
#include "runtime/kernels/reference/unique.h"
#include "runtime/kernels/unique.h"
#include "tests/unit/runtime/kernel_random_util.h"

namespace onnx_bcast::runtime::kernels::kernel_test {
namespace {

// Values from a set of `choices` (so slices repeat; bool has two); floats include -0 and NaN.
template <class T>
Buffer<T> FewValues(std::mt19937* rng, int64_t n, int64_t choices) {
  Buffer<T> v(static_cast<size_t>(n));
  for (auto& x : v) {
    const int64_t pick = Below(rng, choices);
    if constexpr (std::is_floating_point_v<ComputeType<T>>) {
      x = StoreCompute<T>(pick == 0 ? -0.0f : pick == 1 ? std::nanf("") : pick - 3.0f);
    } else if constexpr (std::is_same_v<T, bool>) {
      x = pick % 2;  // bytes other than 0 and 1 are not bools
    } else {
      x = static_cast<T>(pick);
    }
  }
  return v;
}

template <class T>
void CheckUnique(std::mt19937* rng, int trial) {
  AxisView v = RandomAxisView(rng, trial % 5 == 0, 5);
  if (Below(rng, 3) == 0) v = {v.shape, 0, 1, Count(v.shape), 1};  // no axis: flattened
  const Buffer<T> x = FewValues<T>(rng, Count(v.shape), 1 + Below(rng, 5));
  for (const bool sorted : {true, false}) {
    const UniqueGroups fast = UniqueSlices(Ptr<T>(x), v.outer, v.dim, v.inner, sorted);
    const UniqueGroups ref = reference::UniqueSlices(Ptr<T>(x), v.outer, v.dim, v.inner, sorted);
    EXPECT_EQ(fast.first, ref.first) << "trial " << trial << " sorted " << sorted;
    EXPECT_EQ(fast.inverse, ref.inverse) << "trial " << trial << " sorted " << sorted;
    EXPECT_EQ(fast.counts, ref.counts) << "trial " << trial << " sorted " << sorted;
  }
}

TEST(UniqueKernels, MatchesReference) {
  ForEachTrial<float, Float16, bool, int32_t, uint8_t>(
      103, 300, []<class T>(std::mt19937* rng, int trial) { CheckUnique<T>(rng, trial); });
}

// The reference on a hand-worked case: [2, 1, 2, 3, 1] sorted and by first occurrence.
TEST(UniqueKernels, ReferenceByHand) {
  const std::vector<int32_t> x = {2, 1, 2, 3, 1};
  const UniqueGroups s = reference::UniqueSlices(x.data(), 1, 5, 1, true);
  EXPECT_EQ(s.first, (std::vector<int64_t>{1, 0, 3}));
  EXPECT_EQ(s.inverse, (std::vector<int64_t>{1, 0, 1, 2, 0}));
  EXPECT_EQ(s.counts, (std::vector<int64_t>{2, 2, 1}));
  const UniqueGroups u = reference::UniqueSlices(x.data(), 1, 5, 1, false);
  EXPECT_EQ(u.first, (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(u.inverse, (std::vector<int64_t>{0, 1, 0, 2, 1}));
  EXPECT_EQ(u.counts, (std::vector<int64_t>{2, 2, 1}));
}

}  // namespace
}  // namespace onnx_bcast::runtime::kernels::kernel_test

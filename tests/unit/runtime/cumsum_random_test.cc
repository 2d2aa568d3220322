// kernels/cumsum.h against reference/cumsum.h on seeded random shapes: ranks 1-4 with empty and
// size-1 dims, every axis, exclusive and reverse in all four combinations, wrapping integers,
// float16 through float, float and double (same summation order, so bit for bit).
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/dtype.h"
#include "runtime/kernels/cumsum.h"
#include "runtime/kernels/reference/cumsum.h"
#include "tests/unit/runtime/kernel_random_util.h"

namespace onnx_bcast::runtime::kernels::kernel_test {
namespace {

template <class T>
void CheckCumSum(std::mt19937* rng, int trial) {
  const AxisView v = RandomAxisView(rng, trial % 5 == 0, 5);
  const Buffer<T> src = RandomValues<T>(rng, Count(v.shape));
  for (int mode = 0; mode < 4; ++mode) {
    const bool exclusive = (mode & 1) != 0, reverse = (mode & 2) != 0;
    Buffer<T> fast(src.size()), ref(src.size());
    CumSum(Ptr<T>(src), v.outer, v.dim, v.inner, exclusive, reverse, Ptr<T>(fast));
    reference::CumSum(Ptr<T>(src), v.outer, v.dim, v.inner, exclusive, reverse, Ptr<T>(ref));
    EXPECT_TRUE(SameBits(fast, ref)) << "trial " << trial << " axis " << v.axis << " exclusive "
                                     << exclusive << " reverse " << reverse;
  }
}

TEST(CumSumKernels, MatchesReference) {
  ForEachTrial<float, double, Float16, int32_t, int8_t, uint64_t>(
      71, 300, []<class T>(std::mt19937* rng, int trial) { CheckCumSum<T>(rng, trial); });
}

// The reference on a hand-worked case: [1, 2, 3] in every mode.
TEST(CumSumKernels, ReferenceByHand) {
  const std::vector<int32_t> x = {1, 2, 3};
  std::vector<int32_t> y(3);
  reference::CumSum(x.data(), 1, 3, 1, false, false, y.data());
  EXPECT_EQ(y, (std::vector<int32_t>{1, 3, 6}));
  reference::CumSum(x.data(), 1, 3, 1, true, false, y.data());
  EXPECT_EQ(y, (std::vector<int32_t>{0, 1, 3}));
  reference::CumSum(x.data(), 1, 3, 1, false, true, y.data());
  EXPECT_EQ(y, (std::vector<int32_t>{6, 5, 3}));
  reference::CumSum(x.data(), 1, 3, 1, true, true, y.data());
  EXPECT_EQ(y, (std::vector<int32_t>{5, 3, 0}));
}

}  // namespace
}  // namespace onnx_bcast::runtime::kernels::kernel_test

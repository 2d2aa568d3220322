// kernels/one_hot.h against reference/one_hot.h on seeded random index shapes: ranks 1-4 with
// empty and size-1 dims, every axis for the new dim, depths 1-6, indices negative, in range and
// out of range on both sides, elements of 1, 2, 4 and 8 bytes.
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/one_hot.h"
#include "runtime/kernels/reference/one_hot.h"
#include "tests/unit/runtime/kernel_random_util.h"

namespace onnx_bcast::runtime::kernels::kernel_test {
namespace {

template <class E>
void CheckOneHot(std::mt19937* rng, int trial) {
  // The index tensor viewed as [outer, inner] around the place the new axis goes.
  const AxisView v = RandomAxisView(rng, trial % 5 == 0, 5);
  const int64_t outer = v.outer, inner = v.dim * v.inner;
  const int64_t depth = 1 + Below(rng, 6);
  std::vector<int64_t> indices(static_cast<size_t>(outer * inner));
  for (int64_t& i : indices) i = Below(rng, 2 * depth + 4) - depth - 2;
  const std::vector<E> off_on = RandomValues<E>(rng, 2);
  const size_t out_count = static_cast<size_t>(outer * depth * inner);
  std::vector<E> fast(out_count), ref(out_count);
  OneHot(indices.data(), outer, depth, inner, &off_on[0], &off_on[1], sizeof(E), fast.data());
  reference::OneHot(indices.data(), outer, depth, inner, &off_on[0], &off_on[1], sizeof(E),
                    ref.data());
  EXPECT_TRUE(SameBits(fast, ref)) << "trial " << trial << " depth " << depth;
}

TEST(OneHotKernels, MatchesReference) {
  ForEachTrial<uint8_t, uint16_t, float, int64_t>(
      89, 300, []<class T>(std::mt19937* rng, int trial) { CheckOneHot<T>(rng, trial); });
}

// The reference on a hand-worked case: indices [1, -1, 3] at depth 3 on the last axis.
TEST(OneHotKernels, ReferenceByHand) {
  const std::vector<int64_t> indices = {1, -1, 3};
  const int32_t off = 0, on = 7;
  std::vector<int32_t> out(9);
  reference::OneHot(indices.data(), 3, 3, 1, &off, &on, sizeof(int32_t), out.data());
  EXPECT_EQ(out, (std::vector<int32_t>{0, 7, 0, 0, 0, 7, 0, 0, 0}));
}

}  // namespace
}  // namespace onnx_bcast::runtime::kernels::kernel_test

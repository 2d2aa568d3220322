// kernels/generate.h against reference/generate.h on seeded random inputs: Range over every
// numeric storage type (integer progressions that wrap, negative and zero-length ranges,
// float16 through float) and EyeLike's diagonal for every offset in and beyond the matrix,
// empty matrices and element sizes 1-8, bit for bit.
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/dtype.h"
#include "runtime/kernels/generate.h"
#include "runtime/kernels/reference/generate.h"
#include "tests/unit/runtime/kernel_random_util.h"

namespace onnx_bcast::runtime::kernels::kernel_test {
namespace {

template <class T>
void CheckRange(std::mt19937* rng, int trial) {
  const Buffer<T> ends = RandomValues<T>(rng, 2);
  const int64_t n = trial % 9 == 0 ? 0 : Below(rng, 200);
  Buffer<T> fast(static_cast<size_t>(n)), ref(static_cast<size_t>(n));
  Range(ends[0], ends[1], n, Ptr<T>(fast));
  reference::Range(ends[0], ends[1], n, Ptr<T>(ref));
  EXPECT_TRUE(SameBits(fast, ref)) << "trial " << trial << " n " << n;
}

TEST(GenerateKernels, RangeMatchesReference) {
  ForEachTrial<float, double, Float16, BFloat16, int8_t, uint16_t, int32_t, int64_t, uint64_t>(
      101, 300, []<class T>(std::mt19937* rng, int trial) { CheckRange<T>(rng, trial); });
}

TEST(GenerateKernels, DiagonalMatchesReference) {
  std::mt19937 rng(102);
  for (int trial = 0; trial < 400; ++trial) {
    const int64_t rows = Below(&rng, 7), cols = Below(&rng, 7);
    const size_t es = size_t{1} << Below(&rng, 4);
    // Offsets inside the matrix, just outside it, and far outside (no overflow).
    int64_t k = Below(&rng, 17) - 8;
    if (trial % 13 == 0) k = trial % 2 == 0 ? INT64_MAX : INT64_MIN;
    std::vector<uint8_t> one(es);
    for (uint8_t& b : one) b = static_cast<uint8_t>(1 + Below(&rng, 255));
    const size_t bytes = static_cast<size_t>(rows * cols) * es;
    std::vector<uint8_t> fast(bytes, 0xAA), ref(bytes, 0x55);
    Diagonal(rows, cols, k, one.data(), es, fast.data());
    reference::Diagonal(rows, cols, k, one.data(), es, ref.data());
    EXPECT_EQ(fast, ref) << rows << "x" << cols << " k " << k << " es " << es;
  }
}

// The references on hand-worked cases.
TEST(GenerateKernels, ReferencesByHand) {
  std::vector<int8_t> r(4);
  reference::Range<int8_t>(120, 5, 4, r.data());  // wraps past 127
  EXPECT_EQ(r, (std::vector<int8_t>{120, 125, -126, -121}));
  const float one = 1;
  std::vector<float> eye(6);
  reference::Diagonal(2, 3, 1, &one, sizeof(float), eye.data());
  EXPECT_EQ(eye, (std::vector<float>{0, 1, 0, 0, 0, 1}));
}

}  // namespace
}  // namespace onnx_bcast::runtime::kernels::kernel_test

// kernels/qlinear.h against reference/qlinear.h on seeded random tensors: zero points per
// tensor and per slice (int8 and uint8 into double and int32), requantization through scalar,
// per-row, per-column and per-channel scales into int8 and uint8 (saturating, ties to even,
// huge and NaN reals), and ConvInteger's rounding, bit for bit.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/qlinear.h"
#include "runtime/kernels/reference/qlinear.h"
#include "tests/unit/runtime/kernel_random_util.h"

namespace onnx_bcast::runtime::kernels::kernel_test {
namespace {

template <class T, class Out>
void CheckZeroPoint(std::mt19937* rng, int trial) {
  const int64_t count = 1 + Below(rng, 4), inner = 1 + Below(rng, 5);
  // Elements: whole slices, a partial last slice, or none.
  const int64_t n = trial % 10 == 0 ? 0 : count * inner * (1 + Below(rng, 3)) - Below(rng, 2);
  const Buffer<T> x = RandomValues<T>(rng, n);
  std::vector<int64_t> z(static_cast<size_t>(count));
  for (int64_t& v : z) v = static_cast<int64_t>(static_cast<T>((*rng)()));
  const SliceParam<int64_t> zp{z.data(), trial % 3 == 0 ? 1 : count, inner};
  std::vector<Out> fast(static_cast<size_t>(n)), ref(static_cast<size_t>(n));
  SubtractZeroPoint(x.data(), n, zp, fast.data());
  reference::SubtractZeroPoint(x.data(), n, zp, ref.data());
  EXPECT_TRUE(SameBits(fast, ref)) << "trial " << trial;
}

// ForEachTrial over the kernels' type pairs, std::pair<storage, wide type>: int8 and uint8 with
// double (the float path), then with int32 (the integer path).
template <class Check>
void ForEachQuantTrial(uint32_t seed, Check&& check) {
  ForEachTrial<std::pair<int8_t, double>, std::pair<uint8_t, double>, std::pair<int8_t, int32_t>,
               std::pair<uint8_t, int32_t>>(seed, 300, check);
}

TEST(QLinearKernels, SubtractZeroPointMatchesReference) {
  ForEachQuantTrial(121, []<class P>(std::mt19937* rng, int trial) {
    CheckZeroPoint<typename P::first_type, typename P::second_type>(rng, trial);
  });
}

std::vector<double> RandomScales(std::mt19937* rng, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& s : v) s = std::uniform_real_distribution<double>(1e-3, 0.5)(*rng);
  return v;
}

template <class Acc, class T>
void CheckRequantize(std::mt19937* rng, int trial) {
  // [batch, rows, cols]: scale 1 per row (or tensor), scale 2 per column (or tensor); or,
  // as QLinearConv, a scalar and one per channel of [n, m, spatial].
  const int64_t batch = Below(rng, 3), rows = 1 + Below(rng, 5), cols = 1 + Below(rng, 5);
  const int64_t n = batch * rows * cols;
  std::vector<Acc> acc(static_cast<size_t>(n));
  for (Acc& a : acc) a = static_cast<Acc>(static_cast<int32_t>((*rng)() % 20001) - 10000);
  if (trial % 17 == 0 && n > 0) {
    if constexpr (std::is_floating_point_v<Acc>) {
      acc[0] = std::numeric_limits<Acc>::quiet_NaN();
      acc[n - 1] = 0.5;  // tie to even
    } else {
      acc[0] = std::numeric_limits<Acc>::max();
    }
  }
  const std::vector<double> s1 = RandomScales(rng, rows), s2 = RandomScales(rng, cols);
  const bool per_row = Below(rng, 2) == 1, per_col = Below(rng, 2) == 1;
  const SliceParam<double> p1{s1.data(), per_row ? rows : 1, cols};
  const SliceParam<double> p2{s2.data(), per_col ? cols : 1, 1};
  const double y_scale = std::uniform_real_distribution<double>(1e-3, 2)(*rng);
  const int64_t zero_point = static_cast<int64_t>(static_cast<T>((*rng)()));
  std::vector<T> fast(static_cast<size_t>(n)), ref(static_cast<size_t>(n));
  Requantize(acc.data(), n, p1, p2, y_scale, zero_point, fast.data());
  reference::Requantize(acc.data(), n, p1, p2, y_scale, zero_point, ref.data());
  EXPECT_TRUE(SameBits(fast, ref)) << "trial " << trial;
  // The QLinearConv form: a scalar first, then one scale per map of `cols` outputs.
  const double x_scale = s1[0];
  const SliceParam<double> scalar{&x_scale}, per_map{s1.data(), per_row ? rows : 1, cols};
  Requantize(acc.data(), n, scalar, per_map, y_scale, zero_point, fast.data());
  reference::Requantize(acc.data(), n, scalar, per_map, y_scale, zero_point, ref.data());
  EXPECT_TRUE(SameBits(fast, ref)) << "conv form, trial " << trial;
}

TEST(QLinearKernels, RequantizeMatchesReference) {
  ForEachQuantTrial(122, []<class P>(std::mt19937* rng, int trial) {
    CheckRequantize<typename P::second_type, typename P::first_type>(rng, trial);
  });
}

TEST(QLinearKernels, RoundToInt32MatchesReference) {
  std::mt19937 rng(123);
  std::vector<double> acc(257);
  for (double& a : acc) a = static_cast<double>(static_cast<int32_t>(rng()));
  std::vector<int32_t> fast(acc.size()), ref(acc.size());
  RoundToInt32(acc.data(), static_cast<int64_t>(acc.size()), fast.data());
  reference::RoundToInt32(acc.data(), static_cast<int64_t>(acc.size()), ref.data());
  EXPECT_EQ(fast, ref);
}

// The references on hand-worked cases.
TEST(QLinearKernels, ReferencesByHand) {
  const int8_t x[] = {1, -2, 3, 4};
  const int64_t z[] = {1, 2};
  int32_t centered[4];
  reference::SubtractZeroPoint(x, 4, SliceParam<int64_t>{z, 2, 2}, centered);
  EXPECT_EQ(std::vector<int32_t>(centered, centered + 4), (std::vector<int32_t>{0, -3, 1, 2}));
  // 10 * 0.5 * 0.5 / 1 = 2.5 rounds to 2 (even), plus zero point 1; 1000 saturates to 127.
  const int32_t acc[] = {10, 1000};
  const double half = 0.5;
  int8_t q[2];
  reference::Requantize(acc, 2, SliceParam<double>{&half}, SliceParam<double>{&half}, 1.0, 1, q);
  EXPECT_EQ(q[0], 3);
  EXPECT_EQ(q[1], 127);
}

}  // namespace
}  // namespace onnx_bcast::runtime::kernels::kernel_test

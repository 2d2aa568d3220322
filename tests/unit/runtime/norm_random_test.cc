// kernels/norm.h against reference/norm.h on seeded random data: several shapes, including
// empty rows/planes/batches, a broadcast-style parameter (one value repeated over the columns,
// as a view with stride 0 yields), and a large case (fast kernels only where the reference is
// quadratic: checked on a slice). LRN and MeanVarianceNormalization on seeded random shapes
// (empty dims, every window size, any reduced axes), bit for bit: same summation order.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/norm.h"
#include "runtime/kernels/reference/norm.h"
#include "tests/unit/runtime/kernel_random_util.h"

namespace onnx_bcast::runtime::kernels {
namespace {

std::vector<float> RandomFloats(std::mt19937* rng, int64_t n, float lo = -2, float hi = 2) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(*rng);
  return v;
}

void ExpectNear(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], b[i], 1e-4 * (1 + std::fabs(b[i]))) << what << " at " << i;
  }
}

void ExpectNear(const std::vector<double>& a, const std::vector<double>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], b[i], 1e-9 * (1 + std::fabs(b[i]))) << what << " at " << i;
  }
}

struct RowsCase {
  int64_t rows, cols;
  bool repeated_params;  // scale and bias one value over every column (a stride-0 view)
};

TEST(NormKernels, LayerNormRowsMatchesReference) {
  std::mt19937 rng(11);
  for (RowsCase c : {RowsCase{1, 1, false},
                     {3, 7, false},
                     {5, 16, true},
                     {0, 4, false},
                     {4, 0, false},
                     {2, 33, true},
                     {17, 5, false}}) {
    const std::vector<float> x = RandomFloats(&rng, c.rows * c.cols);
    std::vector<float> scale = RandomFloats(&rng, c.cols), bias = RandomFloats(&rng, c.cols);
    if (c.repeated_params) {
      scale.assign(scale.size(), 0.5f);
      bias.assign(bias.size(), -1.25f);
    }
    std::vector<float> y(x.size()), y_ref(x.size());
    std::vector<double> m(c.rows), inv(c.rows), m_ref(c.rows), inv_ref(c.rows);
    LayerNormRows<float>(x.data(), c.rows, c.cols, scale.data(), bias.data(), 1e-5, y.data(),
                         m.data(), inv.data());
    reference::LayerNormRows<float>(x.data(), c.rows, c.cols, scale.data(), bias.data(), 1e-5,
                                    y_ref.data(), m_ref.data(), inv_ref.data());
    ExpectNear(y, y_ref, "y");
    ExpectNear(m, m_ref, "mean");
    for (size_t i = 0; i < inv.size(); ++i) EXPECT_NEAR(inv[i], inv_ref[i], 1e-6 * inv_ref[i]);
  }
}

TEST(NormKernels, LayerNormRowsLargeRowsAgreeWithReferenceOnASlice) {
  std::mt19937 rng(12);
  const int64_t rows = 64, cols = 4096;
  const std::vector<float> x = RandomFloats(&rng, rows * cols, 100, 101);  // large mean
  const std::vector<float> scale = RandomFloats(&rng, cols), bias = RandomFloats(&rng, cols);
  std::vector<float> y(x.size());
  LayerNormRows<float>(x.data(), rows, cols, scale.data(), bias.data(), 1e-5, y.data(), nullptr,
                       nullptr);
  // Rows are independent: the reference on the last two rows alone must agree with them.
  const int64_t from = (rows - 2) * cols;
  std::vector<float> y_ref(2 * cols);
  reference::LayerNormRows<float>(x.data() + from, 2, cols, scale.data(), bias.data(), 1e-5,
                                  y_ref.data(), nullptr, nullptr);
  ExpectNear(std::vector<float>(y.begin() + from, y.end()), y_ref, "large y");
}

struct ChannelCase {
  int64_t n, c, inner;
};

TEST(NormKernels, ChannelKernelsMatchReference) {
  std::mt19937 rng(13);
  for (ChannelCase s :
       {ChannelCase{1, 1, 1}, {2, 3, 5}, {3, 4, 1}, {0, 3, 4}, {2, 3, 0}, {1, 8, 49}, {4, 2, 9}}) {
    const std::vector<float> x = RandomFloats(&rng, s.n * s.c * s.inner);
    const std::vector<float> scale = RandomFloats(&rng, s.c), bias = RandomFloats(&rng, s.c);
    // Instance statistics, then the affine step per instance.
    std::vector<double> pm(s.n * s.c), pi(s.n * s.c), pm_ref(s.n * s.c), pi_ref(s.n * s.c);
    PlaneMoments<float>(x.data(), s.n * s.c, s.inner, 1e-5, pm.data(), pi.data());
    reference::PlaneMoments<float>(x.data(), s.n * s.c, s.inner, 1e-5, pm_ref.data(),
                                   pi_ref.data());
    ExpectNear(pm, pm_ref, "plane mean");
    for (size_t i = 0; i < pi.size(); ++i) EXPECT_NEAR(pi[i], pi_ref[i], 1e-6 * pi_ref[i]);
    std::vector<float> y(x.size()), y_ref(x.size());
    NormalizeChannels<float>(x.data(), s.n, s.c, s.inner, pm.data(), pi.data(), scale.data(),
                             bias.data(), y.data(), true);
    reference::NormalizeChannels<float>(x.data(), s.n, s.c, s.inner, pm.data(), pi.data(),
                                        scale.data(), bias.data(), y_ref.data(), true);
    ExpectNear(y, y_ref, "instance y");
    // Batch statistics per channel, then the affine step per channel.
    std::vector<double> cm(s.c), cv(s.c), cm_ref(s.c), cv_ref(s.c), ci(s.c);
    ChannelMoments<float>(x.data(), s.n, s.c, s.inner, cm.data(), cv.data());
    reference::ChannelMoments<float>(x.data(), s.n, s.c, s.inner, cm_ref.data(), cv_ref.data());
    ExpectNear(cm, cm_ref, "channel mean");
    for (size_t i = 0; i < cv.size(); ++i) EXPECT_NEAR(cv[i], cv_ref[i], 1e-6 * (1 + cv_ref[i]));
    for (int64_t ch = 0; ch < s.c; ++ch) ci[ch] = 1.0 / std::sqrt(cv_ref[ch] + 1e-5);
    NormalizeChannels<float>(x.data(), s.n, s.c, s.inner, cm_ref.data(), ci.data(), scale.data(),
                             bias.data(), y.data(), false);
    reference::NormalizeChannels<float>(x.data(), s.n, s.c, s.inner, cm_ref.data(), ci.data(),
                                        scale.data(), bias.data(), y_ref.data(), false);
    ExpectNear(y, y_ref, "batch y");
  }
}

template <class C>
void CheckLrn(std::mt19937* rng, int trial) {
  using kernel_test::Below;
  const bool with_empty = trial % 5 == 0;
  std::vector<int64_t> shape;
  for (int64_t j = 2 + Below(rng, 3); j > 0; --j) {
    shape.push_back(with_empty ? Below(rng, 4) : 1 + Below(rng, 6));
  }
  const int64_t n = shape[0], c = shape[1],
                inner = kernel_test::Count(shape) / std::max<int64_t>(1, n * c);
  // Windows narrower and wider than the channels, even and odd, and one near INT64_MAX.
  const int64_t size = trial % 17 == 0 ? int64_t{1} << 62 : 1 + Below(rng, c + 4);
  const double alpha = 1e-4 + Below(rng, 100) * 1e-3, beta = 0.5 + Below(rng, 4) * 0.25;
  const double bias = 1.0 + Below(rng, 3);
  const kernel_test::Buffer<C> x = kernel_test::RandomValues<C>(rng, kernel_test::Count(shape));
  kernel_test::Buffer<C> fast(x.size()), ref(x.size());
  Lrn<C>(x.data(), n, c, inner, size, alpha, beta, bias, fast.data());
  reference::Lrn<C>(x.data(), n, c, inner, size, alpha, beta, bias, ref.data());
  EXPECT_TRUE(kernel_test::SameBits(fast, ref)) << "trial " << trial << " size " << size;
}

TEST(NormKernels, LrnMatchesReference) {
  kernel_test::ForEachTrial<float, double>(
      91, 300, []<class T>(std::mt19937* rng, int trial) { CheckLrn<T>(rng, trial); });
}

template <class C>
void CheckMvn(std::mt19937* rng, int trial) {
  using kernel_test::Below;
  const bool with_empty = trial % 7 == 0;
  std::vector<int64_t> shape;
  std::vector<bool> reduce;
  for (int64_t j = Below(rng, 5); j > 0; --j) {
    shape.push_back(with_empty ? Below(rng, 4) : 1 + Below(rng, 5));
    reduce.push_back(Below(rng, 2) == 1);
  }
  kernel_test::Buffer<C> x = kernel_test::RandomValues<C>(rng, kernel_test::Count(shape));
  // A constant input: variance rounding below zero is clamped.
  if (trial % 11 == 0) std::fill(x.begin(), x.end(), C(0.1));
  kernel_test::Buffer<C> fast(x.size()), ref(x.size());
  MeanVarianceNormalize<C>(x.data(), shape, reduce, fast.data());
  reference::MeanVarianceNormalize<C>(x.data(), shape, reduce, ref.data());
  EXPECT_TRUE(kernel_test::SameBits(fast, ref)) << "trial " << trial;
}

TEST(NormKernels, MeanVarianceNormalizeMatchesReference) {
  kernel_test::ForEachTrial<float, double>(
      92, 300, []<class T>(std::mt19937* rng, int trial) { CheckMvn<T>(rng, trial); });
}

// The references on hand-worked cases.
TEST(NormKernels, LrnAndMvnReferencesByHand) {
  // One channel, size 1: y = x / (1 + 1 * x^2)^1.
  const std::vector<double> x = {1, 2};
  std::vector<double> y(2);
  reference::Lrn<double>(x.data(), 1, 1, 2, 1, 1.0, 1.0, 1.0, y.data());
  EXPECT_EQ(y, (std::vector<double>{0.5, 0.4}));
  // [1, 3] over its only axis: mean 2, standard deviation 1.
  const std::vector<double> m = {1, 3};
  reference::MeanVarianceNormalize<double>(m.data(), {2}, {true}, y.data());
  EXPECT_DOUBLE_EQ(y[0], -1 / (1 + 1e-9));
  EXPECT_DOUBLE_EQ(y[1], 1 / (1 + 1e-9));
}

}  // namespace
}  // namespace onnx_bcast::runtime::kernels

// kernels/det.h against reference/det.h on seeded random matrices: sizes 0-7, empty batches,
// singular matrices (repeated rows, zero columns), pivots that must be swapped, NaN and
// infinite entries, float and double (same arithmetic, so bit for bit); and the reference
// against cofactor expansion on small matrices.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/det.h"
#include "runtime/kernels/reference/det.h"
#include "tests/unit/runtime/kernel_random_util.h"

namespace onnx_bcast::runtime::kernels::kernel_test {
namespace {

template <class C>
void CheckDet(std::mt19937* rng, int trial) {
  const int64_t n = Below(rng, 8), batch = trial % 9 == 0 ? 0 : 1 + Below(rng, 3);
  Buffer<C> x = RandomValues<C>(rng, batch * n * n);
  for (int64_t b = 0; b < batch && n > 1; ++b) {
    C* m = x.data() + b * n * n;
    switch (Below(rng, 6)) {
      case 0:  // two equal rows: singular
        for (int64_t j = 0; j < n; ++j) m[n + j] = m[j];
        break;
      case 1:  // a zero column
        for (int64_t i = 0; i < n; ++i) m[i * n + n - 1] = 0;
        break;
      case 2:  // a zero first pivot: a swap is needed
        m[0] = 0;
        break;
      case 3:
        m[Below(rng, n * n)] = Below(rng, 2) == 0 ? std::numeric_limits<C>::quiet_NaN()
                                                  : std::numeric_limits<C>::infinity();
        break;
      default:
        break;
    }
  }
  Buffer<C> fast(static_cast<size_t>(batch)), ref(static_cast<size_t>(batch));
  Determinants(x.data(), batch, n, fast.data());
  reference::Determinants(x.data(), batch, n, ref.data());
  EXPECT_TRUE(SameBits(fast, ref)) << "trial " << trial << " n " << n;
}

TEST(DetKernels, MatchesReference) {
  ForEachTrial<float, double>(
      131, 400, []<class T>(std::mt19937* rng, int trial) { CheckDet<T>(rng, trial); });
}

// Cofactor expansion along the first row: no division, no pivoting.
double Cofactor(const std::vector<double>& m, int64_t n) {
  if (n == 0) return 1;
  double det = 0;
  for (int64_t j = 0; j < n; ++j) {
    std::vector<double> minor;
    for (int64_t r = 1; r < n; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        if (c != j) minor.push_back(m[r * n + c]);
      }
    }
    det += (j % 2 == 0 ? 1 : -1) * m[j] * Cofactor(minor, n - 1);
  }
  return det;
}

TEST(DetKernels, ReferenceAgreesWithCofactorExpansion) {
  std::mt19937 rng(132);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t n = Below(&rng, 6);
    const Buffer<double> x = RandomValues<double>(&rng, n * n);
    double det = 0;
    reference::Determinants(x.data(), 1, n, &det);
    EXPECT_NEAR(det, Cofactor(x, n), 1e-9 * (1 + std::fabs(det))) << "trial " << trial;
  }
}

TEST(DetKernels, ReferenceByHand) {
  // [[0, 2], [3, 4]] needs a swap: det = 0 * 4 - 2 * 3 = -6.
  const std::vector<double> m = {0, 2, 3, 4};
  double det = 0;
  reference::Determinants(m.data(), 1, 2, &det);
  EXPECT_EQ(det, -6);
}

}  // namespace
}  // namespace onnx_bcast::runtime::kernels::kernel_test

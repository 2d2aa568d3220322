// kernels/grid_sample.h against reference/grid_sample.h on seeded random images and grids:
// every mode, padding and align_corners, grid points inside, on the edges, on half pixels,
// far outside, huge and NaN, empty batches, channels and grids, float and double (the same
// arithmetic in the same order, so bit for bit).
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/grid_sample.h"
#include "runtime/kernels/reference/grid_sample.h"
#include "tests/unit/runtime/kernel_random_util.h"

namespace onnx_bcast::runtime::kernels::kernel_test {
namespace {

constexpr GridSampleMode kModes[] = {GridSampleMode::kBilinear, GridSampleMode::kNearest,
                                     GridSampleMode::kBicubic};
constexpr GridSamplePadding kPaddings[] = {GridSamplePadding::kZeros, GridSamplePadding::kBorder,
                                           GridSamplePadding::kReflection};

// A grid value: mostly in [-1.5, 1.5], sometimes exactly on -1, 0, 1 or a half step, far
// outside, huge or NaN.
template <class C>
C GridValue(std::mt19937* rng, int64_t size) {
  switch (Below(rng, 10)) {
    case 0:
      return static_cast<C>(Below(rng, 3) - 1);
    case 1:  // a multiple of 1/size: pixel centres and edges, and half-pixel ties
      return static_cast<C>(static_cast<double>(Below(rng, 4 * size + 1)) / (2 * size) - 1);
    case 2:
      return static_cast<C>(std::uniform_real_distribution<double>(-40, 40)(*rng));
    case 3:
      return Below(rng, 2) ? static_cast<C>(1e30) : std::numeric_limits<C>::quiet_NaN();
    default:
      return static_cast<C>(std::uniform_real_distribution<double>(-1.5, 1.5)(*rng));
  }
}

template <class C>
void CheckGridSample(std::mt19937* rng, int trial) {
  const bool large = trial == 0;
  const int64_t n = large ? 2 : Below(rng, 3), c = large ? 8 : Below(rng, 4);
  const int64_t h = large ? 24 : 1 + Below(rng, 5), w = large ? 32 : 1 + Below(rng, 5);
  const int64_t ho = large ? 16 : Below(rng, 4), wo = large ? 20 : Below(rng, 4);
  std::vector<C> x(static_cast<size_t>(n * c * h * w));
  for (C& v : x) v = static_cast<C>(std::uniform_real_distribution<double>(-3, 3)(*rng));
  std::vector<C> grid(static_cast<size_t>(n * ho * wo * 2));
  for (size_t i = 0; i < grid.size(); ++i) grid[i] = GridValue<C>(rng, i % 2 == 0 ? w : h);
  const size_t out_count = static_cast<size_t>(n * c * ho * wo);
  for (GridSampleMode mode : kModes) {
    for (GridSamplePadding padding : kPaddings) {
      for (bool align : {false, true}) {
        const GridSampleOptions o{mode, padding, align};
        std::vector<C> fast(out_count), ref(out_count);
        GridSample(x.data(), n, c, h, w, grid.data(), ho, wo, o, fast.data());
        reference::GridSample(x.data(), n, c, h, w, grid.data(), ho, wo, o, ref.data());
        EXPECT_TRUE(SameBits(fast, ref))
            << "trial " << trial << " mode " << static_cast<int>(mode) << " padding "
            << static_cast<int>(padding) << " align " << align;
      }
    }
  }
}

TEST(GridSampleKernels, MatchesReference) {
  ForEachTrial<float, double>(
      101, 200, []<class T>(std::mt19937* rng, int trial) { CheckGridSample<T>(rng, trial); });
}

// The reference on a hand-worked case: a 2x2 image sampled at its centre (bilinear, the mean)
// and at a corner with align_corners (the corner pixel).
TEST(GridSampleKernels, ReferenceByHand) {
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<float> grid = {0, 0, -1, -1};
  std::vector<float> y(2);
  reference::GridSample(x.data(), 1, 1, 2, 2, grid.data(), 1, 2, {}, y.data());
  EXPECT_EQ(y[0], 2.5f);
  EXPECT_EQ(y[1], 0.25f);  // (-0.5, -0.5): a quarter of pixel (0, 0), the rest padding
  const GridSampleOptions aligned{GridSampleMode::kBilinear, GridSamplePadding::kZeros, true};
  reference::GridSample(x.data(), 1, 1, 2, 2, grid.data(), 1, 2, aligned, y.data());
  EXPECT_EQ(y, (std::vector<float>{2.5f, 1}));
}

}  // namespace
}  // namespace onnx_bcast::runtime::kernels::kernel_test

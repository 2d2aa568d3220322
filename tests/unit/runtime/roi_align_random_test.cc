// kernels/roi_align.h against reference/roi_align.h on seeded random images and regions:
// regions partly or wholly outside the image and flipped, both modes and coordinate rules,
// sampling ratios 0-3, empty channels and region lists, float and double.
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/reference/roi_align.h"
#include "runtime/kernels/roi_align.h"
#include "tests/unit/runtime/kernel_random_util.h"

namespace onnx_bcast::runtime::kernels {
namespace {

int64_t Below(std::mt19937* rng, int64_t n) { return static_cast<int64_t>((*rng)() % n); }

template <class C>
void CheckRoiAlign(std::mt19937* rng, int trial) {
  const bool large = trial == 0;
  const int64_t n = 1 + Below(rng, 2), c = large ? 16 : Below(rng, 4);
  const int64_t h = large ? 40 : 1 + Below(rng, 6), w = large ? 56 : 1 + Below(rng, 6);
  const int64_t num_rois = large ? 8 : Below(rng, 4);
  RoiAlignOptions o;
  o.output_height = 1 + Below(rng, 4);
  o.output_width = 1 + Below(rng, 4);
  o.sampling_ratio = Below(rng, 4);
  o.spatial_scale = std::vector<double>{1, 0.5, 2, 0.25}[Below(rng, 4)];
  o.max_mode = Below(rng, 2) == 0;
  o.half_pixel = Below(rng, 2) == 0;
  std::uniform_real_distribution<double> value(-3, 3);
  std::vector<C> x(static_cast<size_t>(n * c * h * w)), rois(static_cast<size_t>(num_rois * 4));
  for (C& v : x) v = static_cast<C>(value(*rng));
  // Regions in input units around the image (before spatial_scale), corners in any order.
  std::uniform_real_distribution<double> corner(-2, 2 + std::max(h, w) / o.spatial_scale);
  for (C& v : rois) v = static_cast<C>(corner(*rng));
  std::vector<int64_t> batch(static_cast<size_t>(num_rois));
  for (int64_t& b : batch) b = Below(rng, n);
  const size_t out_count = static_cast<size_t>(num_rois * c * o.output_height * o.output_width);
  std::vector<C> fast(out_count, C(7)), ref(out_count, C(9));
  RoiAlign(x.data(), c, h, w, rois.data(), batch.data(), num_rois, o, fast.data());
  reference::RoiAlign(x.data(), c, h, w, rois.data(), batch.data(), num_rois, o, ref.data());
  // Same samples summed in the same order: bit for bit. (An empty output has null data, which
  // memcmp must not be given.)
  if (out_count == 0) return;
  ASSERT_EQ(std::memcmp(fast.data(), ref.data(), out_count * sizeof(C)), 0)
      << "trial " << trial << (o.max_mode ? " max" : " avg")
      << (o.half_pixel ? " half_pixel" : " output_half_pixel") << " ratio " << o.sampling_ratio;
}

TEST(RoiAlignKernels, MatchesReference) {
  kernel_test::ForEachTrial<float, double>(
      71, 400, []<class T>(std::mt19937* rng, int trial) { CheckRoiAlign<T>(rng, trial); });
}

// The reference on a hand-worked case: a 2x2 image, the whole image as one bin with one
// sample at its centre (1, 1) clamps to pixel (1, 1); two samples per side average pixels.
TEST(RoiAlignKernels, ReferenceByHand) {
  const std::vector<float> x = {1, 2, 3, 4}, roi = {0, 0, 2, 2};
  const int64_t batch = 0;
  RoiAlignOptions o;
  o.sampling_ratio = 1;
  float y = 0;
  reference::RoiAlign(x.data(), 1, 2, 2, roi.data(), &batch, 1, o, &y);
  EXPECT_EQ(y, 4);  // output_half_pixel: sample at (1, 1)
  o.half_pixel = true;
  reference::RoiAlign(x.data(), 1, 2, 2, roi.data(), &batch, 1, o, &y);
  EXPECT_EQ(y, 2.5);  // half_pixel: sample at (0.5, 0.5), the mean of the four pixels
}

}  // namespace
}  // namespace onnx_bcast::runtime::kernels

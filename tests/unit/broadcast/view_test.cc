// BroadcastView: validation, dims dropped and merged, stride 0 exactly on broadcast dims, and
// the offsets it walks checked against per-element index unravelling on random shapes.
#include "broadcast/view.h"

#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onnx_bcast::broadcast {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(BroadcastView, MergesDimsThatBroadcastAlike) {
  const std::vector<int64_t> ops[] = {{2, 3, 4}, {3, 4}, {2, 1, 1}};
  absl::StatusOr<BroadcastView> v = BroadcastView::Create(ops, {2, 3, 4});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(v->dims(), ElementsAre(2, 12));
  EXPECT_THAT(v->strides(0), ElementsAre(12, 1));
  EXPECT_THAT(v->strides(1), ElementsAre(0, 1));
  EXPECT_THAT(v->strides(2), ElementsAre(1, 0));
  EXPECT_EQ(v->operand_elements(2), 2);
}

TEST(BroadcastView, DropsOnesAndHandlesScalarsAndEmpty) {
  absl::StatusOr<BroadcastView> one = BroadcastView::Create({1, 1}, {1, 5, 1});
  ASSERT_TRUE(one.ok());
  EXPECT_THAT(one->dims(), ElementsAre(5));
  EXPECT_THAT(one->strides(0), ElementsAre(0));
  EXPECT_THAT(one->Offsets(0), ElementsAre(0, 0, 0, 0, 0));
  absl::StatusOr<BroadcastView> scalar = BroadcastView::Create(std::vector<int64_t>{}, std::vector<int64_t>{});
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->rank(), 0);
  EXPECT_THAT(scalar->Offsets(0), ElementsAre(0));
  absl::StatusOr<BroadcastView> empty = BroadcastView::Create({3}, {0, 3});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->output_elements(), 0);
  EXPECT_TRUE(empty->Offsets(0).empty());
}

TEST(BroadcastView, RefusesWhatDoesNotBroadcast) {
  absl::StatusOr<BroadcastView> v = BroadcastView::Create({2, 3}, {4});
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("input 0 shape [2,3] does not broadcast"));
  EXPECT_FALSE(BroadcastView::Create({3}, {2, 4}).ok());
  EXPECT_FALSE(BroadcastView::Create({-1}, {2}).ok());
  EXPECT_FALSE(BroadcastView::Create({1}, {int64_t{1} << 40, int64_t{1} << 40}).ok());
}

TEST(BroadcastView, OffsetsMatchIndexUnravellingOnRandomShapes) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int rank = static_cast<int>(rng() % 6);
    std::vector<int64_t> out(rank);
    for (int64_t& d : out) d = static_cast<int64_t>(rng() % 4);  // 0 included: empty outputs
    std::vector<std::vector<int64_t>> ops(1 + rng() % 3);
    for (auto& op : ops) {
      const int r = static_cast<int>(rng() % (rank + 1));
      for (int k = rank - r; k < rank; ++k) op.push_back(rng() % 2 ? out[k] : 1);
    }
    absl::StatusOr<BroadcastView> v = BroadcastView::Create(ops, out);
    ASSERT_TRUE(v.ok()) << v.status();
    int64_t total = 1;
    for (int64_t d : out) total *= d;
    for (size_t i = 0; i < ops.size(); ++i) {
      std::vector<int64_t> expected;
      for (int64_t flat = 0; flat < total; ++flat) {
        int64_t rem = flat, offset = 0, stride = 1;
        for (int d = rank - 1; d >= 0; --d) {
          const int64_t idx = rem % out[d];
          rem /= out[d];
          const int k = d - (rank - static_cast<int>(ops[i].size()));
          if (k < 0) continue;
          if (ops[i][k] != 1) offset += idx * stride;
          stride *= ops[i][k];
        }
        expected.push_back(offset);
      }
      EXPECT_EQ(v->Offsets(static_cast<int>(i)), expected) << "trial " << trial;
      std::vector<int64_t> scaled = expected;
      for (int64_t& o : scaled) o *= 6;
      EXPECT_EQ(v->Offsets(static_cast<int>(i), 6), scaled);
    }
  }
}

}  // namespace
}  // namespace onnx_bcast::broadcast

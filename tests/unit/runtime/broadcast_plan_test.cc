// BroadcastPlan: dims dropped and merged, stride 0 on broadcast dims, kernel kind picked,
// any rank, n-ary inputs, and invalid shapes rejected with both shapes named.
#include "runtime/broadcast_plan.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onnx_bcast::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using Shape = std::vector<int64_t>;

BroadcastPlan Plan(const Shape& a, const Shape& b, const Shape& out) {
  absl::StatusOr<BroadcastPlan> plan = BroadcastPlan::Create(a, b, out);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return *std::move(plan);
}

TEST(BroadcastPlanTest, SameShapeCollapsesToOneDim) {
  BroadcastPlan p = Plan({2, 3, 4}, {2, 3, 4}, {2, 3, 4});
  EXPECT_EQ(p.kind(), KernelKind::kSameShape);
  EXPECT_THAT(p.dims(), ElementsAre(24));
  EXPECT_THAT(p.strides(0), ElementsAre(1));
  EXPECT_THAT(p.strides(1), ElementsAre(1));
  EXPECT_EQ(p.output_elements(), 24);
}

TEST(BroadcastPlanTest, RankZeroIsSameShape) {
  BroadcastPlan p = Plan({}, {}, {});
  EXPECT_EQ(p.kind(), KernelKind::kSameShape);
  EXPECT_EQ(p.rank(), 0);
  EXPECT_EQ(p.output_elements(), 1);
  // All-ones shapes are scalars too.
  BroadcastPlan q = Plan({1, 1}, {1}, {1, 1});
  EXPECT_EQ(q.kind(), KernelKind::kSameShape);
  EXPECT_EQ(q.rank(), 0);
}

TEST(BroadcastPlanTest, ScalarOnEitherSide) {
  BroadcastPlan right = Plan({2, 3}, {}, {2, 3});
  EXPECT_EQ(right.kind(), KernelKind::kScalarRight);
  EXPECT_EQ(right.broadcast_input(), 1);
  EXPECT_THAT(right.dims(), ElementsAre(6));
  EXPECT_THAT(right.strides(1), ElementsAre(0));
  BroadcastPlan left = Plan({1, 1, 1}, {2, 3}, {1, 2, 3});
  EXPECT_EQ(left.kind(), KernelKind::kScalarLeft);
  EXPECT_EQ(left.broadcast_input(), 0);
  EXPECT_THAT(left.dims(), ElementsAre(6));
  EXPECT_THAT(left.strides(0), ElementsAre(0));
  EXPECT_THAT(left.strides(1), ElementsAre(1));
}

// Variadic ops (Min(x, x, y)) plan a pair into the output shape of all inputs, so both inputs
// of a pair can be repeated elements (found by fuzz_run: taken as scalar-vs-full, the second
// was read 50 elements deep).
TEST(BroadcastPlanTest, BothInputsRepeatedIsGeneralWithStrideZero) {
  BroadcastPlan p = Plan({1}, {1}, {50});
  EXPECT_EQ(p.kind(), KernelKind::kGeneral);
  EXPECT_THAT(p.dims(), ElementsAre(50));
  EXPECT_THAT(p.strides(0), ElementsAre(0));
  EXPECT_THAT(p.strides(1), ElementsAre(0));
  BroadcastPlan q = Plan({}, {1, 1}, {4, 5});
  EXPECT_EQ(q.kind(), KernelKind::kGeneral);
  EXPECT_THAT(q.strides(0), ElementsAre(0));
  EXPECT_THAT(q.strides(1), ElementsAre(0));
}

TEST(BroadcastPlanTest, InnerAxisRow) {
  BroadcastPlan p = Plan({16384, 1024}, {1024}, {16384, 1024});
  EXPECT_EQ(p.kind(), KernelKind::kRow);
  EXPECT_EQ(p.broadcast_input(), 1);
  EXPECT_THAT(p.dims(), ElementsAre(16384, 1024));
  EXPECT_THAT(p.strides(0), ElementsAre(1024, 1));
  EXPECT_THAT(p.strides(1), ElementsAre(0, 1));
  // Leading dims of the full side merge; the row may be on the left.
  BroadcastPlan q = Plan({1, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5});
  EXPECT_EQ(q.kind(), KernelKind::kRow);
  EXPECT_EQ(q.broadcast_input(), 0);
  EXPECT_THAT(q.dims(), ElementsAre(6, 20));
  EXPECT_THAT(q.strides(0), ElementsAre(0, 1));
}

TEST(BroadcastPlanTest, OuterAxisColumn) {
  BroadcastPlan p = Plan({16384, 1024}, {16384, 1}, {16384, 1024});
  EXPECT_EQ(p.kind(), KernelKind::kColumn);
  EXPECT_EQ(p.broadcast_input(), 1);
  EXPECT_THAT(p.strides(1), ElementsAre(1, 0));
  BroadcastPlan q = Plan({2, 3, 1, 1}, {2, 3, 4, 5}, {2, 3, 4, 5});
  EXPECT_EQ(q.kind(), KernelKind::kColumn);
  EXPECT_EQ(q.broadcast_input(), 0);
  EXPECT_THAT(q.dims(), ElementsAre(6, 20));
  EXPECT_THAT(q.strides(0), ElementsAre(1, 0));
  EXPECT_THAT(q.strides(1), ElementsAre(20, 1));
}

TEST(BroadcastPlanTest, DimsOfOneEverywhereAreDropped) {
  BroadcastPlan p = Plan({1, 3, 1, 4}, {1, 1, 1, 4}, {1, 3, 1, 4});
  EXPECT_EQ(p.kind(), KernelKind::kRow);
  EXPECT_THAT(p.dims(), ElementsAre(3, 4));
}

TEST(BroadcastPlanTest, PerChannelIsGeneralWithThreeDims) {
  BroadcastPlan p = Plan({4, 64, 256, 256}, {1, 64, 1, 1}, {4, 64, 256, 256});
  EXPECT_EQ(p.kind(), KernelKind::kGeneral);
  EXPECT_THAT(p.dims(), ElementsAre(4, 64, 65536));
  EXPECT_THAT(p.strides(0), ElementsAre(64 * 65536, 65536, 1));
  EXPECT_THAT(p.strides(1), ElementsAre(0, 1, 0));
}

TEST(BroadcastPlanTest, Bidirectional) {
  BroadcastPlan p = Plan({256, 1, 1024}, {1, 256, 1024}, {256, 256, 1024});
  EXPECT_EQ(p.kind(), KernelKind::kGeneral);
  EXPECT_THAT(p.dims(), ElementsAre(256, 256, 1024));
  EXPECT_THAT(p.strides(0), ElementsAre(1024, 0, 1));
  EXPECT_THAT(p.strides(1), ElementsAre(0, 1024, 1));
  BroadcastPlan outer = Plan({3, 1}, {1, 4}, {3, 4});
  EXPECT_EQ(outer.kind(), KernelKind::kGeneral);
  EXPECT_THAT(outer.strides(0), ElementsAre(1, 0));
  EXPECT_THAT(outer.strides(1), ElementsAre(0, 1));
}

TEST(BroadcastPlanTest, ZeroSizeIsEmpty) {
  BroadcastPlan p = Plan({0, 3}, {1, 3}, {0, 3});
  EXPECT_EQ(p.kind(), KernelKind::kEmpty);
  EXPECT_EQ(p.output_elements(), 0);
  // A 1 broadcasts to 0.
  EXPECT_EQ(Plan({2, 1}, {0}, {2, 0}).kind(), KernelKind::kEmpty);
}

TEST(BroadcastPlanTest, Rank12WithoutMerges) {
  const Shape a = {2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1};
  const Shape b = {1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2};
  BroadcastPlan p = Plan(a, b, Shape(12, 2));
  EXPECT_EQ(p.kind(), KernelKind::kGeneral);
  EXPECT_EQ(p.rank(), 12);
  EXPECT_EQ(p.output_elements(), 4096);
  EXPECT_THAT(p.strides(0), ElementsAreArray<int64_t>({32, 0, 16, 0, 8, 0, 4, 0, 2, 0, 1, 0}));
  EXPECT_THAT(p.strides(1), ElementsAreArray<int64_t>({0, 32, 0, 16, 0, 8, 0, 4, 0, 2, 0, 1}));
}

TEST(BroadcastPlanTest, Rank12WithMerges) {
  const Shape a = {2, 3, 4, 5, 1, 1, 1, 1, 1, 1, 7, 2};
  const Shape b = {2, 3, 1, 1, 1, 1, 1, 1, 1, 1, 7, 2};
  BroadcastPlan p = Plan(a, b, a);
  EXPECT_EQ(p.kind(), KernelKind::kGeneral);
  EXPECT_THAT(p.dims(), ElementsAre(6, 20, 14));
  EXPECT_THAT(p.strides(0), ElementsAre(280, 14, 1));
  EXPECT_THAT(p.strides(1), ElementsAre(14, 0, 1));
}

TEST(BroadcastPlanTest, ThreeInputs) {
  const Shape inputs[] = {{2, 1, 4}, {1, 3, 4}, {}};
  absl::StatusOr<BroadcastPlan> p = BroadcastPlan::Create(inputs, Shape{2, 3, 4});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->num_inputs(), 3);
  EXPECT_EQ(p->kind(), KernelKind::kGeneral);
  EXPECT_THAT(p->dims(), ElementsAre(2, 3, 4));
  EXPECT_THAT(p->strides(0), ElementsAre(4, 0, 1));
  EXPECT_THAT(p->strides(1), ElementsAre(0, 4, 1));
  EXPECT_THAT(p->strides(2), ElementsAre(0, 0, 0));
  const Shape same[] = {{5, 6}, {5, 6}, {5, 6}};
  EXPECT_EQ(BroadcastPlan::Create(same, Shape{5, 6})->kind(), KernelKind::kSameShape);
}

TEST(BroadcastPlanTest, IncompatibleShapesNameBothShapes) {
  absl::StatusOr<BroadcastPlan> p = BroadcastPlan::Create(Shape{2, 3}, Shape{4}, Shape{2, 3});
  ASSERT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(), HasSubstr("[4]"));
  EXPECT_THAT(p.status().message(), HasSubstr("[2,3]"));
  // Output rank lower than an input's.
  p = BroadcastPlan::Create(Shape{2, 3}, Shape{3}, Shape{3});
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  // The output shape must be the broadcast one, not merely compatible.
  p = BroadcastPlan::Create(Shape{2, 1}, Shape{1}, Shape{2, 5});
  EXPECT_TRUE(p.ok());
  p = BroadcastPlan::Create(Shape{2, 3}, Shape{1}, Shape{2, 1});
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  p = BroadcastPlan::Create(Shape{-1}, Shape{1}, Shape{1});
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BroadcastPlanTest, DebugStringShowsKindDimsAndStrides) {
  EXPECT_EQ(Plan({4, 5}, {5}, {4, 5}).DebugString(),
            "kind=row dims=[4,5] strides0=[5,1] strides1=[0,1]");
}

}  // namespace
}  // namespace onnx_bcast::runtime

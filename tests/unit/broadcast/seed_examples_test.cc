// One test per example row of seeds 000 (ONNX Broadcasting.md), 002 (OpenVINO
// Broadcast-3), 003 (MNN BinaryOp) and 004 (OpenVINO broadcast rules), failing
// rows included. Seed 001 (an engine's own rule) lives in tests/unit/engines/ncnn_rules_test.cc.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "broadcast/rules.h"
#include "broadcast/shape.h"
#include "gtest/gtest.h"
#include "tests/unit/broadcast/test_util.h"

namespace onnx_bcast::broadcast {
namespace {

using ::onnx_bcast::broadcast::testing::IsError;
using ::onnx_bcast::broadcast::testing::IsOk;
using ::onnx_bcast::broadcast::testing::Numpy2;
using ::onnx_bcast::broadcast::testing::S;

// numpy rule on two concrete shapes: the symbolic rule and the runtime helper
// must agree on the output.
::testing::AssertionResult NumpyRowOk(std::string_view a, std::string_view b,
                                      std::string_view expected) {
  ::testing::AssertionResult symbolic = IsOk(Numpy2(a, b), expected);
  if (!symbolic) return symbolic;
  const std::vector<std::vector<int64_t>> shapes = {*S(a).Extents(), *S(b).Extents()};
  absl::StatusOr<std::vector<int64_t>> concrete = BroadcastConcrete(shapes);
  if (!concrete.ok()) return ::testing::AssertionFailure() << concrete.status();
  if (Shape::OfVector(*concrete).ToString() != expected) {
    return ::testing::AssertionFailure()
           << "BroadcastConcrete gave " << Shape::OfVector(*concrete).ToString();
  }
  return ::testing::AssertionSuccess();
}

// numpy rule on two concrete shapes that must fail at `axis` with `reason`, in
// both the symbolic rule and the runtime helper.
::testing::AssertionResult NumpyRowError(std::string_view a, std::string_view b, int axis,
                                         std::string_view reason) {
  ::testing::AssertionResult symbolic = IsError(Numpy2(a, b), axis, reason);
  if (!symbolic) return symbolic;
  const std::vector<std::vector<int64_t>> shapes = {*S(a).Extents(), *S(b).Extents()};
  absl::StatusOr<std::vector<int64_t>> concrete = BroadcastConcrete(shapes);
  if (concrete.ok() || concrete.status().code() != absl::StatusCode::kInvalidArgument ||
      std::string(concrete.status().message()) != reason) {
    return ::testing::AssertionFailure() << "BroadcastConcrete gave " << concrete.status();
  }
  return ::testing::AssertionSuccess();
}

// ---- Seed 000: ONNX Broadcasting.md, multidirectional examples. ----

TEST(Seed000Multidirectional, A2x3x4x5_Bscalar) {
  EXPECT_TRUE(NumpyRowOk("[2,3,4,5]", "[]", "[2,3,4,5]"));
}
TEST(Seed000Multidirectional, A2x3x4x5_B5) {
  EXPECT_TRUE(NumpyRowOk("[2,3,4,5]", "[5]", "[2,3,4,5]"));
}
TEST(Seed000Multidirectional, A4x5_B2x3x4x5) {
  EXPECT_TRUE(NumpyRowOk("[4,5]", "[2,3,4,5]", "[2,3,4,5]"));
}
TEST(Seed000Multidirectional, A1x4x5_B2x3x1x1) {
  EXPECT_TRUE(NumpyRowOk("[1,4,5]", "[2,3,1,1]", "[2,3,4,5]"));
}
TEST(Seed000Multidirectional, A3x4x5_B2x1x1x1) {
  EXPECT_TRUE(NumpyRowOk("[3,4,5]", "[2,1,1,1]", "[2,3,4,5]"));
}

// ---- Seed 000: unidirectional examples (B to A). ----

TEST(Seed000Unidirectional, A2x3x4x5_Bscalar) {
  EXPECT_TRUE(IsOk(BroadcastUnidirectional(S("[2,3,4,5]"), S("[]")), "[2,3,4,5]"));
}
TEST(Seed000Unidirectional, A2x3x4x5_B5) {
  EXPECT_TRUE(IsOk(BroadcastUnidirectional(S("[2,3,4,5]"), S("[5]")), "[2,3,4,5]"));
}
TEST(Seed000Unidirectional, A2x3x4x5_B2x1x1x5) {
  EXPECT_TRUE(IsOk(BroadcastUnidirectional(S("[2,3,4,5]"), S("[2,1,1,5]")), "[2,3,4,5]"));
}
TEST(Seed000Unidirectional, A2x3x4x5_B1x3x1x5) {
  EXPECT_TRUE(IsOk(BroadcastUnidirectional(S("[2,3,4,5]"), S("[1,3,1,5]")), "[2,3,4,5]"));
}
// The direction matters: the multidirectional row A (4,5), B (2,3,4,5) is not
// unidirectional (B may not have the higher rank).
TEST(Seed000Unidirectional, A4x5_B2x3x4x5_Fails) {
  EXPECT_TRUE(IsError(BroadcastUnidirectional(S("[4,5]"), S("[2,3,4,5]")), -1,
                      "B has rank 4, more than rank 2 of A"));
}

// ---- Seed 002: OpenVINO Broadcast-3 IR examples. ----

TEST(Seed002Broadcast3, NumpyMode_16x1x1_to_1x16x50x50) {
  EXPECT_TRUE(IsOk(BroadcastNumpyOneWay(S("[16,1,1]"), S("[1,16,50,50]")), "[1,16,50,50]"));
}
TEST(Seed002Broadcast3, ExplicitMode_16_to_1x16x50x50_axes1) {
  const int64_t axes[] = {1};
  EXPECT_TRUE(IsOk(BroadcastExplicit(S("[16]"), S("[1,16,50,50]"), axes), "[1,16,50,50]"));
}
TEST(Seed002Broadcast3, ExplicitMode_50x50_to_1x50x50x16_axes1_2) {
  const int64_t axes[] = {1, 2};
  EXPECT_TRUE(IsOk(BroadcastExplicit(S("[50,50]"), S("[1,50,50,16]"), axes), "[1,50,50,16]"));
}
TEST(Seed002Broadcast3, BidirectionalMode_16x1x1_to_1x1x50x50) {
  // The output differs from target_shape: its 1s take the input's 16.
  EXPECT_TRUE(IsOk(BroadcastBidirectional(S("[16,1,1]"), S("[1,1,50,50]")), "[1,16,50,50]"));
}
// Description: [C] to [N,C,H,W] with axes_mapping [1].
TEST(Seed002Broadcast3, ExplicitMode_C_to_NxCxHxW_axes1) {
  const int64_t axes[] = {1};
  EXPECT_TRUE(IsOk(BroadcastExplicit(S("[C]"), S("[N,C,H,W]"), axes), "[N,C,H,W]"));
}
// Description: [H,W] to [N,H,W,C] with axes_mapping [1,2].
TEST(Seed002Broadcast3, ExplicitMode_HxW_to_NxHxWxC_axes1_2) {
  const int64_t axes[] = {1, 2};
  EXPECT_TRUE(IsOk(BroadcastExplicit(S("[H,W]"), S("[N,H,W,C]"), axes), "[N,H,W,C]"));
}
// "such operations cannot be expressed with numpy": in numpy mode [C] aligns to W.
TEST(Seed002Broadcast3, NumpyMode_C_to_NxCxHxW_NeedsC_equals_W) {
  EXPECT_TRUE(::onnx_bcast::broadcast::testing::IsConditional(
      BroadcastNumpyOneWay(S("[C]"), S("[N,C,H,W]")), "[N,C,H,W]", "C == W or C == 1"));
}
TEST(Seed002Broadcast3, NumpyMode_16_to_1x16x50x50_Fails) {
  EXPECT_TRUE(IsError(BroadcastNumpyOneWay(S("[16]"), S("[1,16,50,50]")), 3, "axis 3: 50 vs 16"));
}
TEST(Seed002Broadcast3, NumpyMode_16x1x1_to_1x1x50x50_Fails) {
  // Only the bidirectional mode may grow target_shape's 1s.
  EXPECT_TRUE(IsError(BroadcastNumpyOneWay(S("[16,1,1]"), S("[1,1,50,50]")), 1, "axis 1: 1 vs 16"));
}

// ---- Seed 003: MNN BinaryOp compatibility check. ----

TEST(Seed003Mnn, A3x4x6_B4x6) { EXPECT_TRUE(NumpyRowOk("[3,4,6]", "[4,6]", "[3,4,6]")); }
TEST(Seed003Mnn, A3x4x6_B2x6_Fails) {
  EXPECT_TRUE(NumpyRowError("[3,4,6]", "[2,6]", 1, "axis 1: 4 vs 2"));
}
// The tf.subtract example: (3,3) - (1,).
TEST(Seed003Mnn, TfSubtract_A3x3_B1) { EXPECT_TRUE(NumpyRowOk("[3,3]", "[1]", "[3,3]")); }
// MNN's kernel stops at 6 dims; this project must not.
TEST(Seed003Mnn, MoreThanSixDims) {
  EXPECT_TRUE(NumpyRowOk("[2,1,3,1,4,1,5]", "[1,6,1,7,1,8,1]", "[2,6,3,7,4,8,5]"));
}

// ---- Seed 004: OpenVINO numpy examples. ----

TEST(Seed004Numpy, Ascalar_Bscalar) { EXPECT_TRUE(NumpyRowOk("[]", "[]", "[]")); }
TEST(Seed004Numpy, A2x3_B1) { EXPECT_TRUE(NumpyRowOk("[2,3]", "[1]", "[2,3]")); }
TEST(Seed004Numpy, A3_B2x3) { EXPECT_TRUE(NumpyRowOk("[3]", "[2,3]", "[2,3]")); }
TEST(Seed004Numpy, A2x3x5_Bscalar) { EXPECT_TRUE(NumpyRowOk("[2,3,5]", "[]", "[2,3,5]")); }
TEST(Seed004Numpy, A2x1x5_B1x4x5) { EXPECT_TRUE(NumpyRowOk("[2,1,5]", "[1,4,5]", "[2,4,5]")); }
TEST(Seed004Numpy, A6x5_B2x1x5) { EXPECT_TRUE(NumpyRowOk("[6,5]", "[2,1,5]", "[2,6,5]")); }
TEST(Seed004Numpy, A2x1x5_B4x1) { EXPECT_TRUE(NumpyRowOk("[2,1,5]", "[4,1]", "[2,4,5]")); }
TEST(Seed004Numpy, A3x2x1x4_B5x4) { EXPECT_TRUE(NumpyRowOk("[3,2,1,4]", "[5,4]", "[3,2,5,4]")); }
TEST(Seed004Numpy, A1x5x3_B5x2x1x3) {
  EXPECT_TRUE(NumpyRowOk("[1,5,3]", "[5,2,1,3]", "[5,2,5,3]"));
}
TEST(Seed004Numpy, A3_B2_Fails) { EXPECT_TRUE(NumpyRowError("[3]", "[2]", 0, "axis 0: 3 vs 2")); }
TEST(Seed004Numpy, A3x1x5_B4x4x5_FailsOnLeftmostAxis) {
  EXPECT_TRUE(NumpyRowError("[3,1,5]", "[4,4,5]", 0, "axis 0: 3 vs 4"));
}

// ---- Seed 004: OpenVINO pdpd examples. ----

TEST(Seed004Pdpd, A2x3x4x5_B3x4_Axis1) {
  EXPECT_TRUE(IsOk(BroadcastPdpd(S("[2,3,4,5]"), S("[3,4]"), 1), "[2,3,4,5]"));
}
TEST(Seed004Pdpd, A2x3x4x5_B3x1_Axis1) {
  EXPECT_TRUE(IsOk(BroadcastPdpd(S("[2,3,4,5]"), S("[3,1]"), 1), "[2,3,4,5]"));
}
TEST(Seed004Pdpd, A2x3x4x5_B4x5_AxisDefault) {
  EXPECT_TRUE(IsOk(BroadcastPdpd(S("[2,3,4,5]"), S("[4,5]"), -1), "[2,3,4,5]"));
}
TEST(Seed004Pdpd, A2x3x4x5_B4x5_Axis2) {
  EXPECT_TRUE(IsOk(BroadcastPdpd(S("[2,3,4,5]"), S("[4,5]"), 2), "[2,3,4,5]"));
}
TEST(Seed004Pdpd, A2x3x4x5_B1x3_Axis0) {
  EXPECT_TRUE(IsOk(BroadcastPdpd(S("[2,3,4,5]"), S("[1,3]"), 0), "[2,3,4,5]"));
}
TEST(Seed004Pdpd, A2x3x4x5_Bscalar) {
  EXPECT_TRUE(IsOk(BroadcastPdpd(S("[2,3,4,5]"), S("[]"), -1), "[2,3,4,5]"));
}
TEST(Seed004Pdpd, A2x3x4x5_B5) {
  EXPECT_TRUE(IsOk(BroadcastPdpd(S("[2,3,4,5]"), S("[5]"), -1), "[2,3,4,5]"));
}
// Rows of the same table that differ from numpy: the default axis on (3,4) fails.
TEST(Seed004Pdpd, A2x3x4x5_B3x4_AxisDefault_Fails) {
  EXPECT_TRUE(IsError(BroadcastPdpd(S("[2,3,4,5]"), S("[3,4]"), -1), 2, "axis 2: 4 vs 3"));
}
TEST(Seed004Pdpd, A2x3x4x5_B3x4_Axis2_Fails) {
  EXPECT_TRUE(IsError(BroadcastPdpd(S("[2,3,4,5]"), S("[3,4]"), 2), 2, "axis 2: 4 vs 3"));
}

// ---- Seed 004: bidirectional examples. ----

TEST(Seed004Bidirectional, A5_B1) {
  EXPECT_TRUE(IsOk(BroadcastBidirectional(S("[5]"), S("[1]")), "[5]"));
}
TEST(Seed004Bidirectional, A2x3_B3) {
  EXPECT_TRUE(IsOk(BroadcastBidirectional(S("[2,3]"), S("[3]")), "[2,3]"));
}
TEST(Seed004Bidirectional, A3x1_B3x4) {
  EXPECT_TRUE(IsOk(BroadcastBidirectional(S("[3,1]"), S("[3,4]")), "[3,4]"));
}
TEST(Seed004Bidirectional, A3x4_Bscalar) {
  EXPECT_TRUE(IsOk(BroadcastBidirectional(S("[3,4]"), S("[]")), "[3,4]"));
}
TEST(Seed004Bidirectional, A3x1_B2x1x6) {
  EXPECT_TRUE(IsOk(BroadcastBidirectional(S("[3,1]"), S("[2,1,6]")), "[2,3,6]"));
}

}  // namespace
}  // namespace onnx_bcast::broadcast

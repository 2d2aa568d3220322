// Rule families beyond the seed rows: symbols, unknown dims and ranks, zero-size
// and rank-0 cases per family; legacy ONNX axis broadcasting and its numpy
// rewrite; matmul; report classes; the concrete runtime helper; names.
#include "broadcast/rules.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "broadcast/shape.h"
#include "gtest/gtest.h"
#include "tests/unit/broadcast/test_util.h"

namespace onnx_bcast::broadcast {
namespace {

using ::onnx_bcast::broadcast::testing::IsConditional;
using ::onnx_bcast::broadcast::testing::IsError;
using ::onnx_bcast::broadcast::testing::IsOk;
using ::onnx_bcast::broadcast::testing::IsUnknown;
using ::onnx_bcast::broadcast::testing::Numpy2;
using ::onnx_bcast::broadcast::testing::S;

BroadcastResult Numpy(std::initializer_list<const char*> shapes) {
  std::vector<Shape> parsed;
  for (const char* text : shapes) parsed.push_back(S(text));
  return BroadcastNumpy(parsed);
}

// ---- numpy (multidirectional) ----

TEST(Numpy, SymbolWithFiveIsConditional) {
  const BroadcastResult r = Numpy2("[N,3]", "[5,3]");
  EXPECT_TRUE(IsConditional(r, "[5,3]", "N ∈ {1, 5}"));
  EXPECT_EQ(r.reason, "axis 0: N vs 5");
  EXPECT_EQ(r.condition.ValuesOf("N"), (std::set<int64_t>{1, 5}));
}
TEST(Numpy, SymbolWithOneIsSymbol) { EXPECT_TRUE(IsOk(Numpy2("[N,3]", "[1,3]"), "[N,3]")); }
TEST(Numpy, SymbolWithMissingAxisIsSymbol) { EXPECT_TRUE(IsOk(Numpy2("[N,3]", "[3]"), "[N,3]")); }
TEST(Numpy, SameSymbolIsSymbol) { EXPECT_TRUE(IsOk(Numpy2("[N,M]", "[N,M]"), "[N,M]")); }
TEST(Numpy, TwoSymbolsGiveTheirMax) {
  const BroadcastResult r = Numpy2("[N]", "[M]");
  EXPECT_TRUE(IsConditional(r, "[max(M, N)]", "N == M or N == 1 or M == 1"));
  EXPECT_EQ(r.reason, "axis 0: N vs M");
  // The output (exact under the condition) does not depend on operand order.
  EXPECT_EQ(Numpy2("[M]", "[N]").output.ToString(), "[max(M, N)]");
}
TEST(Numpy, ThreeSymbolsGivePairwiseClauses) {
  const BroadcastResult r = Numpy({"[N]", "[M]", "[K]"});
  EXPECT_TRUE(IsConditional(r, "[max(K, M, N)]",
                            "(N == M or N == 1 or M == 1) and (N == K or N == 1 or K == 1) and "
                            "(M == K or M == 1 or K == 1)"));
}
TEST(Numpy, SeveralSymbolsAndAValue) {
  EXPECT_TRUE(IsConditional(Numpy({"[N]", "[M]", "[5]"}), "[5]", "N ∈ {1, 5} and M ∈ {1, 5}"));
}
TEST(Numpy, ConditionsOnOneSymbolCombineAcrossAxes) {
  const BroadcastResult r = Numpy2("[N,N]", "[5,7]");
  EXPECT_TRUE(IsConditional(r, "[5,7]", "N == 1"));
  EXPECT_EQ(r.reason, "axis 0: N vs 5; axis 1: N vs 7");
}
TEST(Numpy, DerivedExpressionFeedsLaterConditions) {
  EXPECT_TRUE(
      IsConditional(Numpy2("[max(M,N)]", "[4]"), "[4]", "max(M, N) == 4 or max(M, N) == 1"));
}
TEST(Numpy, ErrorWinsOverConditions) {
  EXPECT_TRUE(IsError(Numpy({"[N]", "[5]", "[7]"}), 0, "axis 0: 5 vs 7"));
  EXPECT_TRUE(IsError(Numpy2("[N,2]", "[5,3]"), 1, "axis 1: 2 vs 3"));
}
TEST(Numpy, ErrorWinsOverUnknown) {
  EXPECT_TRUE(IsError(Numpy2("[?,2]", "[5,3]"), 1, "axis 1: 2 vs 3"));
  EXPECT_TRUE(IsError(Numpy({"?", "[2,3]", "[4,3]"}), 0, "axis 0: 2 vs 4"));
}
TEST(Numpy, ErrorReportsLeftmostAxis) {
  EXPECT_TRUE(IsError(Numpy2("[2,3,4]", "[5,6,4]"), 0, "axis 0: 2 vs 5"));
  // Axes are counted in the right-aligned output.
  EXPECT_TRUE(IsError(Numpy2("[7,2,3]", "[4]"), 2, "axis 2: 3 vs 4"));
}
TEST(Numpy, UnknownDimGivesBestOutput) {
  EXPECT_TRUE(IsUnknown(Numpy2("[?,3]", "[5,3]"), "[5,3]", "axis 0: unknown extent"));
  // Against 1 (or a missing axis) any extent broadcasts: the verdict is decided.
  EXPECT_TRUE(IsOk(Numpy2("[?,3]", "[1,3]"), "[?,3]"));
  EXPECT_TRUE(IsUnknown(Numpy2("[?]", "[N]"), "[?]", "axis 0: unknown extent"));
  EXPECT_TRUE(IsOk(Numpy2("[?,3]", "[3]"), "[?,3]"));
  EXPECT_TRUE(IsUnknown(Numpy2("[?,3]", "[?,3]"), "[?,3]", "axis 0: unknown extent"));
}
TEST(Numpy, UnknownWinsOverConditions) {
  EXPECT_TRUE(IsUnknown(Numpy2("[N,?]", "[5,4]"), "[5,4]", "axis 1: unknown extent"));
}
TEST(Numpy, UnknownRankGivesUnknownRank) {
  EXPECT_TRUE(IsUnknown(Numpy2("?", "[2,3]"), "?", "input 0 has unknown rank"));
  EXPECT_TRUE(IsUnknown(Numpy2("[2,3]", "?"), "?", "input 1 has unknown rank"));
}
TEST(Numpy, ZeroSize) {
  EXPECT_TRUE(IsOk(Numpy2("[0]", "[1]"), "[0]"));
  EXPECT_TRUE(IsOk(Numpy2("[2,0]", "[2,1]"), "[2,0]"));
  EXPECT_TRUE(IsOk(Numpy2("[0,3]", "[3]"), "[0,3]"));
  EXPECT_TRUE(IsOk(Numpy2("[0]", "[0]"), "[0]"));
  EXPECT_TRUE(IsError(Numpy2("[0]", "[3]"), 0, "axis 0: 0 vs 3"));
  // Symbols range over extents >= 1, so N must be 1 against 0.
  EXPECT_TRUE(IsConditional(Numpy2("[N]", "[0]"), "[0]", "N == 1"));
}
TEST(Numpy, RankZero) {
  EXPECT_TRUE(IsOk(Numpy2("[]", "[]"), "[]"));
  EXPECT_TRUE(IsOk(Numpy2("[]", "[1]"), "[1]"));
  EXPECT_TRUE(IsOk(Numpy2("[1]", "[]"), "[1]"));
  EXPECT_TRUE(IsOk(Numpy2("[N]", "[]"), "[N]"));
}
TEST(Numpy, NaryInputs) {
  EXPECT_TRUE(IsOk(Numpy({"[1,3]", "[2,1]", "[]"}), "[2,3]"));                    // Where
  EXPECT_TRUE(IsOk(Numpy({"[4,1,1]", "[1,5,1]", "[1,1,6]", "[6]"}), "[4,5,6]"));  // Sum
  EXPECT_TRUE(IsOk(Numpy({"[2,N]"}), "[2,N]"));
  EXPECT_TRUE(IsError(BroadcastNumpy({}), -1, "no inputs"));
}

// ---- unidirectional ----

TEST(Unidirectional, SymbolInBAgainstValue) {
  EXPECT_TRUE(IsConditional(BroadcastUnidirectional(S("[5]"), S("[N]")), "[5]", "N ∈ {1, 5}"));
}
TEST(Unidirectional, ValueInBAgainstSymbol) {
  EXPECT_TRUE(IsConditional(BroadcastUnidirectional(S("[N]"), S("[5]")), "[N]", "N == 5"));
}
TEST(Unidirectional, SymbolAgainstSymbol) {
  EXPECT_TRUE(
      IsConditional(BroadcastUnidirectional(S("[M]"), S("[N]")), "[M]", "N == M or N == 1"));
  EXPECT_TRUE(IsOk(BroadcastUnidirectional(S("[M,N]"), S("[N]")), "[M,N]"));
}
TEST(Unidirectional, GemmBiasAndPreluSlope) {
  EXPECT_TRUE(IsOk(BroadcastUnidirectional(S("[M,N]"), S("[N]")), "[M,N]"));
  EXPECT_TRUE(IsOk(BroadcastUnidirectional(S("[B,C,H,W]"), S("[C,1,1]")), "[B,C,H,W]"));
  EXPECT_TRUE(IsConditional(BroadcastUnidirectional(S("[B,64,H,W]"), S("[C,1,1]")), "[B,64,H,W]",
                            "C ∈ {1, 64}"));
}
TEST(Unidirectional, NeverGrowsTarget) {
  EXPECT_TRUE(IsError(BroadcastUnidirectional(S("[2,1]"), S("[5]")), 1, "axis 1: 1 vs 5"));
  EXPECT_TRUE(IsError(BroadcastUnidirectional(S("[2,3]"), S("[4]")), 1, "axis 1: 3 vs 4"));
  EXPECT_TRUE(IsError(BroadcastUnidirectional(S("[3]"), S("[2,3]")), -1,
                      "B has rank 2, more than rank 1 of A"));
}
TEST(Unidirectional, ZeroSize) {
  EXPECT_TRUE(IsOk(BroadcastUnidirectional(S("[0,3]"), S("[1,3]")), "[0,3]"));
  EXPECT_TRUE(IsOk(BroadcastUnidirectional(S("[0]"), S("[0]")), "[0]"));
  EXPECT_TRUE(IsError(BroadcastUnidirectional(S("[1]"), S("[0]")), 0, "axis 0: 1 vs 0"));
}
TEST(Unidirectional, RankZero) {
  EXPECT_TRUE(IsOk(BroadcastUnidirectional(S("[]"), S("[]")), "[]"));
  EXPECT_TRUE(IsError(BroadcastUnidirectional(S("[]"), S("[1]")), -1,
                      "B has rank 1, more than rank 0 of A"));
}
TEST(Unidirectional, Unknown) {
  EXPECT_TRUE(
      IsUnknown(BroadcastUnidirectional(S("[2,3]"), S("?")), "[2,3]", "B has unknown rank"));
  EXPECT_TRUE(IsUnknown(BroadcastUnidirectional(S("?"), S("[3]")), "?", "A has unknown rank"));
  EXPECT_TRUE(
      IsUnknown(BroadcastUnidirectional(S("[2,?]"), S("[3]")), "[2,?]", "axis 1: unknown extent"));
  EXPECT_TRUE(
      IsUnknown(BroadcastUnidirectional(S("[2,3]"), S("[?]")), "[2,3]", "axis 1: unknown extent"));
  EXPECT_TRUE(IsOk(BroadcastUnidirectional(S("[2,?]"), S("[1]")), "[2,?]"));
}

// ---- none ----

TEST(None, EqualShapes) {
  const Shape shapes[] = {S("[2,3]"), S("[2,3]"), S("[2,3]")};
  EXPECT_TRUE(IsOk(BroadcastNone(shapes), "[2,3]"));
}
TEST(None, MismatchNamesAxis) {
  const Shape shapes[] = {S("[2,3]"), S("[2,1]")};
  EXPECT_TRUE(IsError(BroadcastNone(shapes), 1, "axis 1: 3 vs 1"));
}
TEST(None, RankMismatch) {
  const Shape shapes[] = {S("[2,3]"), S("[3]")};
  EXPECT_TRUE(IsError(BroadcastNone(shapes), -1, "rank 2 vs 1"));
  const Shape scalar_vs_one[] = {S("[]"), S("[1]")};
  EXPECT_TRUE(IsError(BroadcastNone(scalar_vs_one), -1, "rank 0 vs 1"));
}
TEST(None, RankZero) {
  const Shape shapes[] = {S("[]"), S("[]")};
  EXPECT_TRUE(IsOk(BroadcastNone(shapes), "[]"));
}
TEST(None, Symbols) {
  const Shape value[] = {S("[N,3]"), S("[5,3]")};
  EXPECT_TRUE(IsConditional(BroadcastNone(value), "[N,3]", "N == 5"));
  const Shape symbols[] = {S("[N]"), S("[M]")};
  EXPECT_TRUE(IsConditional(BroadcastNone(symbols), "[N]", "N == M"));
}
TEST(None, ContradictoryConditionsAreAnError) {
  const Shape shapes[] = {S("[N,N]"), S("[5,7]")};
  EXPECT_TRUE(IsError(BroadcastNone(shapes), -1,
                      "contradictory conditions: N == 5 and N == 7 have no common value"));
}
TEST(None, ZeroSizeAndUnknown) {
  const Shape zero[] = {S("[0]"), S("[1]")};
  EXPECT_TRUE(IsError(BroadcastNone(zero), 0, "axis 0: 0 vs 1"));
  const Shape unknown[] = {S("[?]"), S("[1]")};
  EXPECT_TRUE(IsUnknown(BroadcastNone(unknown), "[?]", "axis 0: unknown extent"));
  const Shape unknown_rank[] = {S("?"), S("[1]")};
  EXPECT_TRUE(IsUnknown(BroadcastNone(unknown_rank), "[1]", "input 0 has unknown rank"));
}

// ---- pdpd ----

TEST(Pdpd, TrailingOnesMayRunPastA) {
  EXPECT_TRUE(IsOk(BroadcastPdpd(S("[2,3,4,5]"), S("[5,1]"), 3), "[2,3,4,5]"));
  EXPECT_TRUE(IsOk(BroadcastPdpd(S("[2,3,4,5]"), S("[1,1]"), 4), "[2,3,4,5]"));
  EXPECT_TRUE(IsError(BroadcastPdpd(S("[2,3,4,5]"), S("[5,2]"), 3), -1,
                      "B dim 1 (2) at axis 3 falls past the last axis of A (rank 4)"));
}
TEST(Pdpd, AxisRange) {
  EXPECT_TRUE(IsError(BroadcastPdpd(S("[2,3]"), S("[3]"), -2), -1,
                      "axis -2 is out of range for A of rank 2"));
  EXPECT_TRUE(IsError(BroadcastPdpd(S("[2,3]"), S("[3]"), 3), -1,
                      "axis 3 is out of range for A of rank 2"));
  EXPECT_TRUE(
      IsError(BroadcastPdpd(S("[3]"), S("[2,3]"), -1), -1, "B has rank 2, more than rank 1 of A"));
}
TEST(Pdpd, OnesInBBroadcastButAsOnesDoNot) {
  EXPECT_TRUE(IsOk(BroadcastPdpd(S("[2,3,4,5]"), S("[3,1,5]"), 1), "[2,3,4,5]"));
  EXPECT_TRUE(IsError(BroadcastPdpd(S("[2,1,4,5]"), S("[3,4]"), 1), 1, "axis 1: 1 vs 3"));
}
TEST(Pdpd, Symbols) {
  EXPECT_TRUE(IsConditional(BroadcastPdpd(S("[2,3,4,5]"), S("[N]"), 1), "[2,3,4,5]", "N ∈ {1, 3}"));
  EXPECT_TRUE(IsConditional(BroadcastPdpd(S("[2,C,4,5]"), S("[3,4]"), 1), "[2,C,4,5]", "C == 3"));
  EXPECT_TRUE(IsConditional(BroadcastPdpd(S("[2,3,4,5]"), S("[5,N]"), 3), "[2,3,4,5]", "N == 1"));
}
TEST(Pdpd, ZeroSizeRankZeroUnknown) {
  EXPECT_TRUE(IsOk(BroadcastPdpd(S("[2,0]"), S("[0]"), -1), "[2,0]"));
  EXPECT_TRUE(IsError(BroadcastPdpd(S("[2,0]"), S("[3]"), -1), 1, "axis 1: 0 vs 3"));
  EXPECT_TRUE(IsOk(BroadcastPdpd(S("[]"), S("[]"), -1), "[]"));
  EXPECT_TRUE(IsUnknown(BroadcastPdpd(S("[2,3]"), S("?"), -1), "[2,3]", "B has unknown rank"));
  EXPECT_TRUE(
      IsUnknown(BroadcastPdpd(S("[2,?]"), S("[3]"), -1), "[2,?]", "axis 1: unknown extent"));
}

// ---- legacy ONNX (opset < 7) ----

// The examples of the ONNX Add-1..6 documentation (broadcast=1).
TEST(LegacyOnnx, Add6DocScalar) {
  EXPECT_TRUE(IsOk(BroadcastLegacyOnnx(S("[2,3,4,5]"), S("[]"), true, std::nullopt), "[2,3,4,5]"));
}
TEST(LegacyOnnx, Add6DocOneElement1x1) {
  EXPECT_TRUE(
      IsOk(BroadcastLegacyOnnx(S("[2,3,4,5]"), S("[1,1]"), true, std::nullopt), "[2,3,4,5]"));
}
TEST(LegacyOnnx, Add6DocSuffix5) {
  EXPECT_TRUE(IsOk(BroadcastLegacyOnnx(S("[2,3,4,5]"), S("[5]"), true, std::nullopt), "[2,3,4,5]"));
}
TEST(LegacyOnnx, Add6DocSuffix4x5) {
  EXPECT_TRUE(
      IsOk(BroadcastLegacyOnnx(S("[2,3,4,5]"), S("[4,5]"), true, std::nullopt), "[2,3,4,5]"));
}
TEST(LegacyOnnx, Add6Doc3x4Axis1) {
  EXPECT_TRUE(IsOk(BroadcastLegacyOnnx(S("[2,3,4,5]"), S("[3,4]"), true, 1), "[2,3,4,5]"));
}
TEST(LegacyOnnx, Add6Doc2Axis0) {
  EXPECT_TRUE(IsOk(BroadcastLegacyOnnx(S("[2,3,4,5]"), S("[2]"), true, 0), "[2,3,4,5]"));
}
TEST(LegacyOnnx, OneElementBAtAnyAxis) {
  EXPECT_TRUE(IsOk(BroadcastLegacyOnnx(S("[2,3,4,5]"), S("[1]"), true, 0), "[2,3,4,5]"));
  EXPECT_TRUE(IsOk(BroadcastLegacyOnnx(S("[2,3,4,5]"), S("[1,1]"), true, 3), "[2,3,4,5]"));
}
TEST(LegacyOnnx, Failures) {
  EXPECT_TRUE(IsError(BroadcastLegacyOnnx(S("[2,3,4,5]"), S("[3,4]"), true, std::nullopt), 2,
                      "axis 2: 4 vs 3"));
  EXPECT_TRUE(IsError(BroadcastLegacyOnnx(S("[2,3,4,5]"), S("[2]"), true, 1), 1, "axis 1: 3 vs 2"));
  // B may not be the larger operand.
  EXPECT_TRUE(IsError(BroadcastLegacyOnnx(S("[5]"), S("[2,5]"), true, std::nullopt), -1,
                      "B has rank 2, more than rank 1 of A"));
}
TEST(LegacyOnnx, BroadcastZeroNeedsEqualShapes) {
  EXPECT_TRUE(IsOk(BroadcastLegacyOnnx(S("[2,3]"), S("[2,3]"), false, std::nullopt), "[2,3]"));
  EXPECT_TRUE(
      IsError(BroadcastLegacyOnnx(S("[2,3]"), S("[3]"), false, std::nullopt), -1, "rank 2 vs 1"));
  EXPECT_TRUE(IsError(BroadcastLegacyOnnx(S("[2,3]"), S("[2,1]"), false, std::nullopt), 1,
                      "axis 1: 3 vs 1"));
}
TEST(LegacyOnnx, Symbols) {
  EXPECT_TRUE(IsConditional(BroadcastLegacyOnnx(S("[N,C,H,W]"), S("[K]"), true, 1), "[N,C,H,W]",
                            "K == C or K == 1"));
}

TEST(LegacyToNumpy, UnsqueezeAxes) {
  EXPECT_EQ(LegacyToNumpyUnsqueezeAxes(S("[1,3,4,5]"), S("[3]"), 1), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(LegacyToNumpyUnsqueezeAxes(S("[2,3,4,5]"), S("[2]"), 0),
            (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(LegacyToNumpyUnsqueezeAxes(S("[2,3,4,5]"), S("[3,4]"), 1), (std::vector<int64_t>{2}));
  EXPECT_EQ(LegacyToNumpyUnsqueezeAxes(S("[2,3,4,5]"), S("[4,5]"), std::nullopt),
            (std::vector<int64_t>{}));
  EXPECT_EQ(LegacyToNumpyUnsqueezeAxes(S("[2,3,4,5]"), S("[4,5]"), -1), (std::vector<int64_t>{}));
  EXPECT_EQ(LegacyToNumpyUnsqueezeAxes(S("[2,3,4,5]"), S("[]"), std::nullopt),
            (std::vector<int64_t>{}));
  // All-1 B overhanging A: numpy already gives the same result.
  EXPECT_EQ(LegacyToNumpyUnsqueezeAxes(S("[2,3,4,5]"), S("[1,1]"), 3), (std::vector<int64_t>{}));
  // Overhanging trailing 1s after a real dim need a Reshape, not an Unsqueeze.
  EXPECT_EQ(LegacyToNumpyUnsqueezeAxes(S("[2,3,4,5]"), S("[5,1]"), 3), std::nullopt);
  EXPECT_EQ(LegacyToNumpyUnsqueezeAxes(S("[2,3]"), S("[3]"), 3), std::nullopt);
  EXPECT_EQ(LegacyToNumpyUnsqueezeAxes(S("?"), S("[3]"), 0), std::nullopt);
}
TEST(LegacyToNumpy, BShape) {
  EXPECT_EQ(LegacyToNumpyBShape(S("[1,3,4,5]"), S("[3]"), 1)->ToString(), "[3,1,1]");
  EXPECT_EQ(LegacyToNumpyBShape(S("[2,3,4,5]"), S("[5,1]"), 3)->ToString(), "[5]");
  EXPECT_EQ(LegacyToNumpyBShape(S("[2,3,4,5]"), S("[3,1]"), 1)->ToString(), "[3,1,1]");
  EXPECT_EQ(LegacyToNumpyBShape(S("[2,3,4,5]"), S("[3,4]"), 5), std::nullopt);
}
// The rewritten B broadcasts under numpy to A's shape, as the legacy op did.
TEST(LegacyToNumpy, RewriteAgreesWithNumpy) {
  struct Case {
    const char* a;
    const char* b;
    std::optional<int64_t> axis;
  };
  for (const Case& c : {Case{"[2,3,4,5]", "[3,4]", 1}, Case{"[2,3,4,5]", "[2]", 0},
                        Case{"[2,3,4,5]", "[1,3]", 0}, Case{"[2,3,4,5]", "[5,1]", 3},
                        Case{"[2,3,4,5]", "[]", std::nullopt}, Case{"[N,C,H,W]", "[C]", 1}}) {
    SCOPED_TRACE(std::string(c.a) + " " + c.b);
    ASSERT_TRUE(BroadcastLegacyOnnx(S(c.a), S(c.b), true, c.axis).ok());
    const std::optional<Shape> b2 = LegacyToNumpyBShape(S(c.a), S(c.b), c.axis);
    ASSERT_TRUE(b2.has_value());
    EXPECT_TRUE(IsOk(BroadcastUnidirectional(S(c.a), *b2), S(c.a).ToString()));
    EXPECT_TRUE(IsOk(BroadcastNumpy({S(c.a), *b2}), S(c.a).ToString()));
  }
}

// ---- bidirectional ----

TEST(Bidirectional, OutputMayDifferFromTarget) {
  EXPECT_TRUE(IsOk(BroadcastBidirectional(S("[2,3,4]"), S("[3,1]")), "[2,3,4]"));
  EXPECT_TRUE(IsOk(BroadcastBidirectional(S("[4]"), S("[1,1]")), "[1,4]"));
}
TEST(Bidirectional, FailuresSymbolsZeroUnknown) {
  EXPECT_TRUE(IsError(BroadcastBidirectional(S("[3]"), S("[4]")), 0, "axis 0: 3 vs 4"));
  EXPECT_TRUE(IsConditional(BroadcastBidirectional(S("[N,1]"), S("[5,6]")), "[5,6]", "N ∈ {1, 5}"));
  EXPECT_TRUE(IsOk(BroadcastBidirectional(S("[1]"), S("[0]")), "[0]"));
  EXPECT_TRUE(IsOk(BroadcastBidirectional(S("[]"), S("[]")), "[]"));
  EXPECT_TRUE(IsUnknown(BroadcastBidirectional(S("[3]"), S("?")), "?", "input 1 has unknown rank"));
}

// ---- explicit ----

TEST(Explicit, AxesMappingValidation) {
  const int64_t two[] = {1, 2};
  EXPECT_TRUE(IsError(BroadcastExplicit(S("[16]"), S("[1,16,50,50]"), two), -1,
                      "axes_mapping has 2 entries for input of rank 1"));
  const int64_t unsorted[] = {2, 1};
  EXPECT_TRUE(IsError(BroadcastExplicit(S("[50,50]"), S("[1,50,50,16]"), unsorted), -1,
                      "axes_mapping must be strictly increasing: [2,1]"));
  const int64_t repeated[] = {1, 1};
  EXPECT_TRUE(IsError(BroadcastExplicit(S("[50,50]"), S("[1,50,50,16]"), repeated), -1,
                      "axes_mapping must be strictly increasing: [1,1]"));
  const int64_t too_big[] = {4};
  EXPECT_TRUE(IsError(BroadcastExplicit(S("[16]"), S("[1,16,50,50]"), too_big), -1,
                      "axes_mapping[0] = 4 is out of range for target of rank 4"));
  const int64_t negative[] = {-1};
  EXPECT_TRUE(IsError(BroadcastExplicit(S("[16]"), S("[1,16,50,50]"), negative), -1,
                      "axes_mapping[0] = -1 is out of range for target of rank 4"));
}
TEST(Explicit, DimsMustBeOneOrEqual) {
  const int64_t axis2[] = {2};
  EXPECT_TRUE(
      IsError(BroadcastExplicit(S("[16]"), S("[1,16,50,50]"), axis2), 2, "axis 2: 50 vs 16"));
  const int64_t axis0[] = {0};
  EXPECT_TRUE(
      IsError(BroadcastExplicit(S("[16]"), S("[1,16,50,50]"), axis0), 0, "axis 0: 1 vs 16"));
  EXPECT_TRUE(IsOk(BroadcastExplicit(S("[1]"), S("[1,16,50,50]"), axis2), "[1,16,50,50]"));
}
TEST(Explicit, SymbolsZeroRankZeroUnknown) {
  const int64_t axis1[] = {1};
  EXPECT_TRUE(
      IsConditional(BroadcastExplicit(S("[K]"), S("[1,16]"), axis1), "[1,16]", "K ∈ {1, 16}"));
  EXPECT_TRUE(IsOk(BroadcastExplicit(S("[0]"), S("[3,0]"), axis1), "[3,0]"));
  EXPECT_TRUE(IsOk(BroadcastExplicit(S("[]"), S("[3,4]"), {}), "[3,4]"));
  EXPECT_TRUE(
      IsUnknown(BroadcastExplicit(S("?"), S("[3,4]"), axis1), "[3,4]", "input has unknown rank"));
  EXPECT_TRUE(
      IsUnknown(BroadcastExplicit(S("[3]"), S("?"), axis1), "?", "target has unknown rank"));
}

// ---- matmul ----

TEST(MatMul, Basic) {
  EXPECT_TRUE(IsOk(BroadcastMatMul(S("[2,3]"), S("[3,4]")), "[2,4]"));
  EXPECT_TRUE(IsOk(BroadcastMatMul(S("[5,2,3]"), S("[3,4]")), "[5,2,4]"));
  EXPECT_TRUE(IsOk(BroadcastMatMul(S("[5,1,2,3]"), S("[7,3,4]")), "[5,7,2,4]"));
}
TEST(MatMul, OneDimensionalOperands) {
  EXPECT_TRUE(IsOk(BroadcastMatMul(S("[3]"), S("[3]")), "[]"));
  EXPECT_TRUE(IsOk(BroadcastMatMul(S("[3]"), S("[3,4]")), "[4]"));
  EXPECT_TRUE(IsOk(BroadcastMatMul(S("[2,3]"), S("[3]")), "[2]"));
  EXPECT_TRUE(IsOk(BroadcastMatMul(S("[6,2,3]"), S("[3]")), "[6,2]"));
  EXPECT_TRUE(IsOk(BroadcastMatMul(S("[3]"), S("[6,3,4]")), "[6,4]"));
}
TEST(MatMul, Failures) {
  EXPECT_TRUE(IsError(BroadcastMatMul(S("[2,3]"), S("[4,5]")), -1, "K: 3 vs 4"));
  EXPECT_TRUE(IsError(BroadcastMatMul(S("[3]"), S("[4]")), -1, "K: 3 vs 4"));
  // K never broadcasts, even from 1.
  EXPECT_TRUE(IsError(BroadcastMatMul(S("[2,1]"), S("[4,5]")), -1, "K: 1 vs 4"));
  EXPECT_TRUE(IsError(BroadcastMatMul(S("[2,2,3]"), S("[3,3,4]")), 0, "axis 0: 2 vs 3"));
  EXPECT_TRUE(IsError(BroadcastMatMul(S("[]"), S("[3,4]")), -1, "matmul operand A has rank 0"));
  EXPECT_TRUE(IsError(BroadcastMatMul(S("[3,4]"), S("[]")), -1, "matmul operand B has rank 0"));
}
TEST(MatMul, Symbols) {
  EXPECT_TRUE(IsOk(BroadcastMatMul(S("[B,S,K]"), S("[K,N]")), "[B,S,N]"));
  EXPECT_TRUE(IsConditional(BroadcastMatMul(S("[2,K]"), S("[3,4]")), "[2,4]", "K == 3"));
  EXPECT_TRUE(IsConditional(BroadcastMatMul(S("[2,K]"), S("[L,4]")), "[2,4]", "K == L"));
  const BroadcastResult r = BroadcastMatMul(S("[B,2,3]"), S("[5,3,4]"));
  EXPECT_TRUE(IsConditional(r, "[5,2,4]", "B ∈ {1, 5}"));
  EXPECT_EQ(r.reason, "axis 0: B vs 5");
}
TEST(MatMul, ZeroSizeAndUnknown) {
  EXPECT_TRUE(IsOk(BroadcastMatMul(S("[2,0]"), S("[0,4]")), "[2,4]"));
  EXPECT_TRUE(IsOk(BroadcastMatMul(S("[0,2,3]"), S("[3,4]")), "[0,2,4]"));
  EXPECT_TRUE(IsUnknown(BroadcastMatMul(S("?"), S("[3,4]")), "?", "A has unknown rank"));
  EXPECT_TRUE(IsUnknown(BroadcastMatMul(S("[2,?]"), S("[3,4]")), "[2,4]", "K: unknown extent"));
}

// ---- report classes ----

BroadcastClass ClassOf(std::initializer_list<const char*> inputs) {
  std::vector<Shape> shapes;
  for (const char* text : inputs) shapes.push_back(S(text));
  const BroadcastResult r = BroadcastNumpy(shapes);
  return Classify(shapes, r.output);
}

TEST(Classify, Classes) {
  EXPECT_EQ(ClassOf({"[2,3]", "[2,3]"}), BroadcastClass::kSame);
  EXPECT_EQ(ClassOf({"[2,3]", "[]"}), BroadcastClass::kScalar);
  EXPECT_EQ(ClassOf({"[2,3]", "[1,1]"}), BroadcastClass::kScalar);
  EXPECT_EQ(ClassOf({"[N,C,H,W]", "[1,C,1,1]"}), BroadcastClass::kPerChannel);
  EXPECT_EQ(ClassOf({"[N,C,H,W]", "[C,1,1]"}), BroadcastClass::kPerChannel);
  EXPECT_EQ(ClassOf({"[1,64,56,56]", "[64,1,1]"}), BroadcastClass::kPerChannel);
  EXPECT_EQ(ClassOf({"[N,C,L]", "[C,1]"}), BroadcastClass::kPerChannel);
  EXPECT_EQ(ClassOf({"[16384,1024]", "[1024]"}), BroadcastClass::kInnerAxis);
  EXPECT_EQ(ClassOf({"[16384,1024]", "[1,1024]"}), BroadcastClass::kInnerAxis);
  EXPECT_EQ(ClassOf({"[B,S,768]", "[S,768]"}), BroadcastClass::kInnerAxis);
  EXPECT_EQ(ClassOf({"[16384,1024]", "[16384,1]"}), BroadcastClass::kOuterAxis);
  EXPECT_EQ(ClassOf({"[C,H,W]", "[C,1,1]"}), BroadcastClass::kOuterAxis);
  EXPECT_EQ(ClassOf({"[256,1,1024]", "[1,256,1024]"}), BroadcastClass::kBidirectional);
  EXPECT_EQ(ClassOf({"[2,3,4]", "[2,1,4]"}), BroadcastClass::kGeneral);
  // Operands of different classes.
  EXPECT_EQ(ClassOf({"[N,C,H,W]", "[1,C,1,1]", "[W]"}), BroadcastClass::kGeneral);
  // Where with a scalar condition and a full operand.
  EXPECT_EQ(ClassOf({"[]", "[2,3]", "[2,3]"}), BroadcastClass::kScalar);
  EXPECT_EQ(Classify({S("[2,3]")}, S("?")), BroadcastClass::kGeneral);
}
TEST(Classify, Names) {
  EXPECT_EQ(BroadcastClassName(BroadcastClass::kSame), "same");
  EXPECT_EQ(BroadcastClassName(BroadcastClass::kScalar), "scalar");
  EXPECT_EQ(BroadcastClassName(BroadcastClass::kPerChannel), "per-channel");
  EXPECT_EQ(BroadcastClassName(BroadcastClass::kInnerAxis), "inner-axis");
  EXPECT_EQ(BroadcastClassName(BroadcastClass::kOuterAxis), "outer-axis");
  EXPECT_EQ(BroadcastClassName(BroadcastClass::kBidirectional), "bidirectional");
  EXPECT_EQ(BroadcastClassName(BroadcastClass::kGeneral), "general");
  EXPECT_EQ(BroadcastClassName(BroadcastClass::kLegacyAxis), "legacy-axis");
  EXPECT_EQ(BroadcastClassName(BroadcastClass::kUnidirectional), "unidirectional");
}

// ---- concrete (runtime) ----

absl::StatusOr<std::vector<int64_t>> Concrete(std::vector<std::vector<int64_t>> shapes) {
  return BroadcastConcrete(shapes);
}

TEST(Concrete, Shapes) {
  EXPECT_EQ(*Concrete({{2, 1, 5}, {4, 1}}), (std::vector<int64_t>{2, 4, 5}));
  EXPECT_EQ(*Concrete({{}, {}}), (std::vector<int64_t>{}));
  EXPECT_EQ(*Concrete({{}, {1}}), (std::vector<int64_t>{1}));
  EXPECT_EQ(*Concrete({{0}, {1}}), (std::vector<int64_t>{0}));
  EXPECT_EQ(*Concrete({{1, 3}, {2, 1}, {}}), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(*Concrete({{3}}), (std::vector<int64_t>{3}));
}
TEST(Concrete, Errors) {
  EXPECT_EQ(Concrete({{2, 3}, {2, 4}}).status(), absl::InvalidArgumentError("axis 1: 3 vs 4"));
  EXPECT_EQ(Concrete({{0}, {3}}).status(), absl::InvalidArgumentError("axis 0: 0 vs 3"));
  EXPECT_EQ(Concrete({{3}, {1}, {4}}).status(), absl::InvalidArgumentError("axis 0: 3 vs 4"));
  EXPECT_EQ(Concrete({{2, -1}}).status(),
            absl::InvalidArgumentError("negative extent -1 in [2,-1]"));
  EXPECT_EQ(Concrete({}).status(), absl::InvalidArgumentError("broadcast of no shapes"));
}

// ---- names ----

TEST(Names, Rules) {
  // The names rules.h documents, in the order RuleFamily declares the families (kNumpy first,
  // kMatMul last): an oracle apart from rules.cc's own table.
  static constexpr const char* kDocumented[] = {"numpy",         "unidirectional", "none",
                                                "pdpd",          "legacy-axis",    "bidirectional",
                                                "explicit",      "matmul"};
  static_assert(std::size(kDocumented) == static_cast<size_t>(RuleFamily::kMatMul) + 1);
  for (size_t i = 0; i < std::size(kDocumented); ++i) {
    const RuleFamily rule = static_cast<RuleFamily>(i);
    EXPECT_EQ(RuleName(rule), kDocumented[i]);
    EXPECT_EQ(RuleFromName(kDocumented[i]), rule);
  }
  EXPECT_EQ(RuleFromName("multidirectional"), std::nullopt);
  // An engine's rules are its adapter's (engines/ncnn_rules.h), not a family here.
  EXPECT_EQ(RuleFromName("ncnn"), std::nullopt);
}
// Checks a conditional verdict's condition against running the concrete rule for H (and W)
// in 1..limit: the condition holds exactly where the concrete shapes broadcast.
void ExpectConditionExact(const Shape& a, const Shape& b, int64_t limit, bool two = false) {
  const Shape pair[] = {a, b};
  const BroadcastResult r = BroadcastNumpy(pair);
  ASSERT_NE(r.verdict, Verdict::kUnknown) << r.ToString();
  for (int64_t h = 1; h <= limit; ++h) {
    for (int64_t w = 1; w <= (two ? limit : 1); ++w) {
      const std::map<std::string, int64_t> bind = {{"H", h}, {"W", w}, {"N", h}, {"M", w}};
      std::vector<std::vector<int64_t>> concrete;
      for (const Shape& s : {a, b}) {
        std::vector<int64_t> dims;
        for (const Dim& d : s.dims) dims.push_back(*d.expr()->Evaluate(bind));
        concrete.push_back(dims);
      }
      const bool fits = BroadcastConcrete(concrete).ok();
      bool holds = r.verdict == Verdict::kOk;
      if (r.verdict == Verdict::kConditional) holds = r.condition.Evaluate(bind) == true;
      EXPECT_EQ(holds, fits) << r.ToString() << " at H=" << h << " W=" << w;
      if (fits) {
        // The output expression is exact wherever the broadcast is valid.
        const std::vector<int64_t> out = *BroadcastConcrete(concrete);
        for (size_t i = 0; i < out.size(); ++i) {
          EXPECT_EQ(r.output.dims[i].expr()->Evaluate(bind), out[i]) << r.ToString();
        }
      }
    }
  }
}

TEST(Expressions, ScalarOrAllOnesWithUnknownDimsIsOk) {
  EXPECT_TRUE(IsOk(Numpy2("[?,65,?]", "[]"), "[?,65,?]"));
  EXPECT_TRUE(IsOk(Numpy2("[?,3,?,?]", "[1,3,1,1]"), "[?,3,?,?]"));
  EXPECT_TRUE(IsOk(Numpy2("[N,3,H,W]", "[1,3,1,1]"), "[N,3,H,W]"));
  EXPECT_TRUE(IsOk(Numpy2("?", "[1,1]"), "?"));
  EXPECT_TRUE(IsOk(Numpy2("[]", "?"), "?"));
  EXPECT_TRUE(IsUnknown(Numpy2("?", "[2]"), "?", "input 0 has unknown rank"));
  // An expression provably 1 broadcasts like 1.
  EXPECT_TRUE(IsOk(Numpy2("[floor(H/H),4]", "[7,4]"), "[7,4]") ||
              IsOk(Numpy2("[min(H,1),4]", "[7,4]"), "[7,4]"));
  EXPECT_TRUE(IsOk(Numpy2("[min(H,1),4]", "[N,4]"), "[N,4]"));
}

TEST(Expressions, EqualExpressionsAreOk) {
  EXPECT_TRUE(IsOk(Numpy2("[ceil(H/2)]", "[floor((H - 1)/2) + 1]"), "[ceil(H/2)]"));
  EXPECT_TRUE(IsOk(Numpy2("[past + seq, 4]", "[seq + past, 1]"), "[past + seq,4]"));
  // Equal by periodicity though not by canonical form.
  EXPECT_TRUE(IsOk(Numpy2("[H - 2*floor(H/2)]", "[H mod 2]"), "[H - 2*floor(H/2)]"));
}

TEST(Expressions, ConditionsAreExact) {
  const BroadcastResult r = Numpy2("[(floor((H - 1)/2) + 1)*2]", "[H]");
  EXPECT_TRUE(IsConditional(r, "[max(H, 2*ceil(H/2))]", "H == 1 or H mod 2 == 0"));
  ExpectConditionExact(S("[(floor((H - 1)/2) + 1)*2]"), S("[H]"), 300);
  EXPECT_TRUE(IsConditional(Numpy2("[H]", "[H + 1]"), "[H + 1]", "H == 1"));
  ExpectConditionExact(S("[H]"), S("[H + 1]"), 300);
  EXPECT_TRUE(IsConditional(Numpy2("[4*floor(H/4)]", "[H]"),
                            "[min(4*floor(H/4), 1)*max(H, 4*floor(H/4))]",
                            "H == 1 or H mod 4 == 0"));
  ExpectConditionExact(S("[4*floor(H/4)]"), S("[H]"), 300);
  ExpectConditionExact(S("[32*ceil(H/32)]"), S("[H + 3]"), 300);
  ExpectConditionExact(S("[ceil(H/8), 3]"), S("[floor(H/8), 1]"), 300);
  ExpectConditionExact(S("[H, W]"), S("[W, H]"), 40, true);
  ExpectConditionExact(S("[H + W]"), S("[2*H]"), 40, true);
  ExpectConditionExact(S("[floor(H/2)]"), S("[5]"), 300);
}

TEST(Expressions, NeverEqualAndNeverOneIsAnError) {
  EXPECT_TRUE(IsError(Numpy2("[3]", "[N + 3]"), 0, "axis 0: 3 vs N + 3"));
  EXPECT_TRUE(IsError(Numpy2("[2*H + 2]", "[2*H + 3]"), 0, "axis 0: 2*H + 2 vs 2*H + 3"));
  // N + 1 is never 1 but N can be: conditional.
  EXPECT_TRUE(IsConditional(Numpy2("[N + 1]", "[N]"), "[N + 1]", "N == 1"));
  EXPECT_TRUE(IsError(BroadcastUnidirectional(S("[N]"), S("[N + 2]")), 0, "axis 0: N vs N + 2"));
  EXPECT_TRUE(IsConditional(BroadcastUnidirectional(S("[N + 2]"), S("[N]")), "[N + 2]", "N == 1"));
}

TEST(Expressions, OtherRulesUseExpressions) {
  EXPECT_TRUE(IsOk(BroadcastMatMul(S("[B,H,ceil(S/2),64]"), S("[B,H,64,floor((S + 1)/2)]")),
                   "[B,H,ceil(S/2),ceil(S/2)]"));
  EXPECT_TRUE(IsError(BroadcastMatMul(S("[4,K + 1]"), S("[K,3]")), -1, "K: K + 1 vs K"));
  EXPECT_TRUE(IsConditional(BroadcastMatMul(S("[4,2*K]"), S("[K + 4,3]")), "[4,3]", "K == 4"));
  EXPECT_TRUE(IsOk(BroadcastBidirectional(S("[N,1,H]"), S("[3,floor(H/1)]")), "[N,3,H]"));
  const Shape none[] = {S("[ceil(H/2)]"), S("[H]")};
  EXPECT_TRUE(IsConditional(BroadcastNone(none), "[ceil(H/2)]", "H == 1"));
  EXPECT_EQ(Classify({S("[N,C,floor(H/2)]"), S("[1,C,1]")}, S("[N,C,floor(H/2)]")),
            BroadcastClass::kPerChannel);
}

TEST(Names, VerdictsAndResultText) {
  EXPECT_EQ(VerdictName(Verdict::kOk), "ok");
  EXPECT_EQ(VerdictName(Verdict::kError), "error");
  EXPECT_EQ(VerdictName(Verdict::kConditional), "conditional");
  EXPECT_EQ(VerdictName(Verdict::kUnknown), "unknown");
  EXPECT_EQ(Numpy2("[2,3]", "[3]").ToString(), "ok [2,3]");
  EXPECT_EQ(Numpy2("[N,3]", "[5,3]").ToString(), "conditional [5,3] if N ∈ {1, 5}");
  EXPECT_EQ(Numpy2("[2,3]", "[2,4]").ToString(), "error: axis 1: 3 vs 4");
  EXPECT_EQ(Numpy2("[?]", "[1]").ToString(), "ok [?]");
  EXPECT_EQ(Numpy2("[?]", "[2]").ToString(), "unknown [2]: axis 0: unknown extent");
}

}  // namespace
}  // namespace onnx_bcast::broadcast

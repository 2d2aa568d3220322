// Exact-shape cells of a target profile (issue 35 item 3): the `op.<Op>.<kinds>.shapes` lines
// round-trip, their errors name the line, a profile without them loads as before, and the
// table decides a node whose shapes match a cell by that cell before its class: the built-in
// opencv profile runs `[1,1,1,384] - [1,1,1,1]` (its class refuses it) and refuses
// `[1,32] - [1,1]`, as OpenCV 4.6 does (tests/e2e/live_probe_test.cc runs both on the engine).
#include "targets/shape_cells.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/pass.h"
#include "proto/model_io.h"
#include "targets/targets.h"
#include "tests/support/pass_test_util.h"

namespace onnx_bcast::targets {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using test_support::ViolationLines;

constexpr int64_t N = ShapeCell::kAnyExtent;

TEST(ShapeCells, ProfileLinesParseAndRoundTrip) {
  absl::StatusOr<TargetProfile> p = ParseTargetProfile(
      "name = e\nclasses = same\n"
      "op.Sub.computed = same, scalar:refused\n"
      "op.Sub.computed.shapes = [1,N] [1,1]: refused, [1,1,N] [1,1,1]: wrong,"
      " [1,1,1,N] [1,1,1,1], [] []: crashed, [1, 32] [ 1 , 1 ]\n"
      "op.Expand.constant_b.shapes = [1,1] [1,N]\n",
      "e.profile");
  ASSERT_TRUE(p.ok()) << p.status();
  const std::vector<ShapeCell>& sub = p->op_rules.at("Sub").shape_cells.at("computed");
  ASSERT_EQ(sub.size(), 5u);
  EXPECT_EQ(sub[0], (ShapeCell{{{1, N}, {1, 1}}, FormSupport::kRefused}));
  EXPECT_EQ(sub[1], (ShapeCell{{{1, 1, N}, {1, 1, 1}}, FormSupport::kWrong}));
  EXPECT_EQ(sub[2], (ShapeCell{{{1, 1, 1, N}, {1, 1, 1, 1}}, FormSupport::kRuns}));
  EXPECT_EQ(sub[3], (ShapeCell{{{}, {}}, FormSupport::kCrashed}));
  EXPECT_EQ(sub[4], (ShapeCell{{{1, 32}, {1, 1}}, FormSupport::kRuns}));
  EXPECT_EQ(p->op_rules.at("Sub").forms.at("computed").at("scalar"), FormSupport::kRefused);
  const std::string text = FormatTargetProfile(*p);
  EXPECT_THAT(text, HasSubstr("op.Sub.computed.shapes = [1,N] [1,1]: refused, [1,1,N] [1,1,1]: "
                              "wrong, [1,1,1,N] [1,1,1,1], [] []: crashed, [1,32] [1,1]\n"));
  EXPECT_THAT(text, HasSubstr("op.Expand.constant_b.shapes = [1,1] [1,N]\n"));
  test_support::ExpectProfileRoundTrips(*p, text);
}

TEST(ShapeCells, ErrorsNameTheLineKeyAndEntry) {
  const auto& error = test_support::ProfileLineError;
  EXPECT_THAT(error("op.Sub.computed.shapes = [1,M] [1,1]"),
              HasSubstr("f:3: op.Sub.computed.shapes: '[1,M] [1,1]': dim 'M' of '[1,M]' is "
                        "neither a number nor N"));
  EXPECT_THAT(error("op.Sub.computed.shapes = [1,N] [1,1]: aligned"),
              HasSubstr("'aligned' is not refused, wrong or crashed (nothing: runs)"));
  EXPECT_THAT(error("op.Sub.computed.shapes = [1,N [1,1]"), HasSubstr("f:3:"));
  EXPECT_THAT(error("op.Sub.computed.shapes = refused"), HasSubstr("'refused' has no shape"));
  EXPECT_THAT(error("op.Sub.constant_ba.shapes = [1] [1]"), HasSubstr("optionally followed by"));
  EXPECT_THAT(error("op.Conv.computed.shapes = [1] [1]"),
              HasSubstr("'Conv' is not a broadcasting op"));
}

// A profile written before the cells existed (no `.shapes` line) loads, and decides by class
// exactly as before: the cells are consulted only where a line gives them.
TEST(ShapeCells, AnOlderProfileLoadsAndDecidesByClass) {
  const char* kOld =
      "# written before issue 35\n"
      "name = old\nclasses = same\n"
      "op.Sub.min_rank = 2\n"
      "op.Sub.computed = same, scalar:refused, inner-axis@2:first-full, inner-axis:refused\n";
  absl::StatusOr<TargetProfile> p = ParseTargetProfile(kOld, "old.profile");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->op_rules.at("Sub").shape_cells, IsEmpty());
  EXPECT_THAT(FormatTargetProfile(*p), ::testing::Not(HasSubstr(".shapes")));
  proto::Model model = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,1,384] c, float[1,1,1,1] m, float[4,384] x, float[384] w) => (float[1,1,1,384] d, float[4,384] e) {
  d = Sub (c, m)
  e = Sub (x, w)
})");
  EXPECT_THAT(ViolationLines(model, *p),
              ElementsAre("Sub#0: broadcast as 'scalar' with computed operands, which old "
                          "refuses (op.Sub.computed)"));
}

TEST(ShapeCells, FindMatchesUnitAxesAndNumbersOnly) {
  const std::vector<ShapeCell> cells = {
      {{{1, 32}, {1, 1}}, FormSupport::kWrong},
      {{{1, N}, {1, 1}}, FormSupport::kRefused},
      {{{1, 1, 1, N}, {1, 1, 1, 1}}, FormSupport::kRuns},
  };
  auto find = [&](std::vector<std::vector<int64_t>> shapes) {
    std::vector<broadcast::Shape> in;
    for (const auto& s : shapes) in.push_back(broadcast::Shape::OfVector(s));
    return FindShapeCell(cells, in);
  };
  EXPECT_EQ(find({{1, 32}, {1, 1}}), &cells[0]);  // a number before N: the first match
  EXPECT_EQ(find({{1, 33}, {1, 1}}), &cells[1]);
  EXPECT_EQ(find({{1, 1, 1, 384}, {1, 1, 1, 1}}), &cells[2]);
  EXPECT_EQ(find({{1, 1, 1, 1}, {1, 1, 1, 1}}), nullptr);  // N is above 1
  EXPECT_EQ(find({{1, 4, 1, 384}, {1, 1, 1, 1}}), nullptr);
  EXPECT_EQ(find({{1, 1, 384}, {1, 1, 1}}), nullptr);  // another rank
  EXPECT_EQ(find({{1, 32}}), nullptr);                 // another operand count
  std::vector<broadcast::Shape> symbolic = {broadcast::Shape::OfVector({1, 1, 1, 384}),
                                        broadcast::Shape::OfVector({1, 1, 1, 1})};
  symbolic[0].dims[3] = broadcast::Dim::Symbol("C");
  EXPECT_EQ(FindShapeCell(cells, symbolic), nullptr);  // only static shapes match
  EXPECT_EQ(ShapeCellOf({{1, 32}, {1, 1}, {}, {0, 5}}, FormSupport::kRuns),
            (ShapeCell{{{1, N}, {1, 1}, {}, {0, N}}, FormSupport::kRuns}));
}

// The built-in opencv profile, measured with the cells: a shape-dependent case decided as the
// engine decides it, where the class alone decides otherwise.
TEST(ShapeCells, TheOpenCvTableDecidesTheShapeDependentCasesAsTheEngine) {
  const TargetProfile* opencv = FindTarget("opencv");
  ASSERT_NE(opencv, nullptr);
  ASSERT_FALSE(opencv->op_rules.at("Sub").shape_cells.at("computed").empty());
  TargetProfile class_only = *opencv;
  for (auto& [op, rule] : class_only.op_rules) rule.shape_cells.clear();
  proto::Model model = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,1,384] c, float[1,32] x) => (float[1,1,1,384] d, float[1,32] e) {
  m = ReduceMean <axes = [-1]> (c)
  d = Sub (c, m)
  n = ReduceMean <axes = [-1]> (x)
  e = Sub (x, n)
})");
  // OpenCV 4.6 runs and matches `[1,1,1,384] - [1,1,1,1]` and refuses `[1,32] - [1,1]`.
  EXPECT_THAT(ViolationLines(model, *opencv),
              ElementsAre("Sub#3: [1,32] and [1,1] with computed operands, which opencv refuses "
                          "at these unit axes (op.Sub.computed.shapes: [1,N] [1,1])"));
  // The class alone (inner-axis at rank 4) refused the first.
  EXPECT_THAT(ViolationLines(model, class_only),
              ElementsAre(HasSubstr("Sub#1: broadcast as 'scalar'"), HasSubstr("Sub#3:")));
}

// What legalize-measured logs on `model`; nothing, and a failed test, when the pass fails.
std::vector<passes::Rewrite> LegalizeLog(proto::Model* model, const passes::PassOptions& options) {
  passes::PassStats stats;
  const absl::Status s = test_support::RunPass("legalize-measured", model, &stats, options);
  EXPECT_TRUE(s.ok()) << s;
  return s.ok() ? stats.log : std::vector<passes::Rewrite>();
}

// The rewrite's log says which cell decided the placed node (opt --report, --debug), and a
// placement the class rules decide says only "decided by the table".
TEST(ShapeCells, TheRewriteLogNamesTheCellThatDecided) {
  const TargetProfile* opencv = FindTarget("opencv");
  ASSERT_NE(opencv, nullptr);
  passes::PassOptions options;
  options.target = opencv;
  proto::Model model = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,3,4,5] x, float[1] s) => (float[1,3,4,5] w) {
  w = Max (x, s)
})");
  const std::vector<passes::Rewrite> log = LegalizeLog(&model, options);
  ASSERT_FALSE(log.empty());
  for (const passes::Rewrite& r : log) {
    EXPECT_THAT(r.detail, HasSubstr("decided by the table (op.Max.computed.shapes: [1,1,N] "
                                    "[1,1,1])"));
  }
  // LayerNorm's weight [8] times a [1,5,8] activation: placed on a [5,8] view, which the class
  // entry inner-axis@2 runs (no cell has that pattern).
  proto::Model weight = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 14]>
g (float[1,5,8] x) => (float[1,5,8] y) <float[8] w = {1,2,3,4,5,6,7,8}> {
  y = Mul (x, w)
})");
  const std::vector<passes::Rewrite> by_class = LegalizeLog(&weight, options);
  ASSERT_FALSE(by_class.empty());
  for (const passes::Rewrite& r : by_class) {
    EXPECT_THAT(r.detail, HasSubstr("decided by the table"));
    EXPECT_THAT(r.detail, ::testing::Not(HasSubstr(".shapes")));
  }
}

}  // namespace
}  // namespace onnx_bcast::targets

// What opt says (issue 31 items 2 and 3): the last line of a report with a target says what
// the target covers, naming the ops a profile's list says the engine lacks; hints several
// violations share are said once with their count.
#include "driver/opt_text.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/opt_report.h"
#include "report/report_json.h"

namespace onnx_bcast::driver {
namespace {

using ::testing::ElementsAre;

onnx::GraphProto Graph(const std::vector<std::string>& ops) {
  onnx::GraphProto g;
  for (const std::string& op : ops) g.add_node()->set_op_type(op);
  return g;
}

TEST(TargetCoverage, SaysTheTargetCoversBroadcastFormsOnly) {
  EXPECT_EQ(TargetCoverageLine("opencv", Graph({"Add"}), {}),
            "target opencv covers broadcast forms only (whether opencv has a layer for every op "
            "is not checked)");
}

TEST(TargetCoverage, NamesTheOpsAKnownListSaysTheEngineLacks) {
  onnx::GraphProto g = Graph({"LayerNormalization", "Add", "LayerNormalization", "Loop"});
  // One more inside the Loop's body: bodies count too.
  onnx::AttributeProto* body = g.mutable_node(3)->add_attribute();
  body->set_name("body");
  body->mutable_g()->add_node()->set_op_type("LayerNormalization");
  EXPECT_EQ(TargetCoverageLine("opencv", g, {"LayerNormalization", "Einsum"}),
            "target opencv covers broadcast forms only; opencv has no layer for "
            "LayerNormalization (3 nodes)");
  EXPECT_EQ(TargetCoverageLine("opencv", Graph({"Add"}), {"LayerNormalization"}),
            "target opencv covers broadcast forms only; every op of the model has a layer in "
            "opencv");
}

TEST(FoldViolationHints, SharedHintsAreSaidOnceWithTheirCount) {
  const FoldedViolations f = FoldViolationHints({
      "main: Shape 'a': [N,3]: computes a shape at run time (x has no run-time shapes): bind N "
      "with --dim",
      "main: Add 'b': [N,3] and [3]: refused (an Expand needs a shape known only at run time: "
      "bind N with --dim)",
      "main: Add 'c': [T,3] and [3]: refused (it broadcasts only if T == 3: bind T with --dim)",
      "main: Mul 'd': [] and []: below the minimum rank",
  });
  EXPECT_THAT(f.nodes,
              ElementsAre("main: Shape 'a': [N,3]: computes a shape at run time (x has no "
                          "run-time shapes)",
                          "main: Add 'b': [N,3] and [3]: refused (an Expand needs a shape known "
                          "only at run time)",
                          // A hint of one node stays in its line.
                          "main: Add 'c': [T,3] and [3]: refused (it broadcasts only if T == 3: "
                          "bind T with --dim)",
                          "main: Mul 'd': [] and []: below the minimum rank"));
  EXPECT_THAT(f.hints, ElementsAre("bind N with --dim: 2 nodes"));
}

// Issue 44 item 7: "bind B with --dim: 4 nodes" counted two nodes of ops ncnn has no layer for,
// which no binding makes run: they are not counted, and their lines say why instead.
TEST(FoldViolationHints, NodesOfOpsTheEngineLacksAreNotCounted) {
  const std::vector<std::string> violations = {
      "main: Mul 'm': [B,4] and [B,1]: refused: bind B with --dim",
      "main: Sub 's': [B,4] and [B,1]: refused: bind B with --dim",
      "main: Shape 'h': [B,4]: computes a shape at run time (ncnn has no run-time shapes): bind "
      "B with --dim",
      "main: Expand 'e': [B,1] and [2]: reads a shape computed at run time: bind B with --dim",
  };
  const FoldedViolations f =
      FoldViolationHints(violations, {"", "", "ncnn has no layer for Shape: no --dim makes it run",
                                      "ncnn has no layer for Expand: no --dim makes it run"});
  EXPECT_THAT(f.hints, ElementsAre("bind B with --dim: 2 nodes"));
  EXPECT_THAT(f.nodes,
              ElementsAre("main: Mul 'm': [B,4] and [B,1]: refused",
                          "main: Sub 's': [B,4] and [B,1]: refused",
                          "main: Shape 'h': [B,4]: computes a shape at run time (ncnn has no "
                          "run-time shapes); ncnn has no layer for Shape: no --dim makes it run",
                          "main: Expand 'e': [B,1] and [2]: reads a shape computed at run time; "
                          "ncnn has no layer for Expand: no --dim makes it run"));
  // One node with a layer left: its hint stays in its own line.
  const FoldedViolations one = FoldViolationHints(
      {violations[0], violations[2]}, {"", "ncnn has no layer for Shape: no --dim makes it run"});
  EXPECT_TRUE(one.hints.empty());
  EXPECT_EQ(one.nodes[0], violations[0]);
}

TEST(ViolationHint, IsTheBindingARuleAsksFor) {
  EXPECT_EQ(ViolationHint("refused (an Expand needs a shape known only at run time: bind H, W "
                          "with --dim)"),
            "bind H, W with --dim");
  EXPECT_EQ(ViolationHint("'s' is a graph input: its values are data, which no --dim binds"), "");
}

// Issue 44 item 7: "fold it (raise --fold-limit ...)" for a node fold-constants kept because
// the engine does not load a bool constant: the pass's own reason replaces the advice, which
// only a result kept for its size needs.
TEST(ExplainKeptConstants, GivesTheReasonFoldConstantsNoted) {
  passes::PassRun fold;
  fold.pass = "fold-constants";
  fold.stats.notes = {
      "Less 'Less#0' kept: its constant result 'm' has type bool, which opencv does not load as "
      "a constant (initializer_types)",
      "Tile 'big' kept: its constant result 't' [4096,4096] is 67108864 bytes, over the fold "
      "limit of 1048576 (raise --fold-limit to fold it)"};
  const std::string advice =
      "has only constant inputs: fold it (fold-constants; raise --fold-limit if opt --report "
      "says it was kept for its size)";
  std::vector<targets::TargetViolation> v(3);
  v[0] = {"main", "Less#0", "Less", "[3] and [3]", advice};
  v[1] = {"main", "big", "Tile", "[1,1] and [2]", advice};
  v[2] = {"main", "other", "Add", "[3] and [3]", advice};
  ExplainKeptConstants({fold}, &v);
  EXPECT_EQ(v[0].why,
            "has only constant inputs; fold-constants kept it: its constant result 'm' has type "
            "bool, which opencv does not load as a constant (initializer_types)");
  EXPECT_THAT(v[0].why, ::testing::Not(::testing::HasSubstr("--fold-limit")));
  EXPECT_THAT(v[1].why, ::testing::HasSubstr("(raise --fold-limit to fold it)"));
  EXPECT_EQ(v[2].why, advice);  // nothing noted: the check's own advice stays
}

// Issue 44 item 7: a normal form names no engine, so there is no op list to check.
TEST(TargetCoverage, ANormalFormIsNoEngine) {
  for (const char* target : {"explicit", "none", "canonical"}) {
    const std::string line = TargetCoverageLine(target, Graph({"Add"}), {});
    EXPECT_THAT(line, ::testing::Not(::testing::HasSubstr("has a layer"))) << target;
    EXPECT_THAT(line, ::testing::HasSubstr("a normal form of ONNX, not an engine")) << target;
  }
}

// opt --report writes the rewrites one by one (issue 46): the same bytes as the DOM gives,
// for a pass with rewrites and notes, one without any, and names that need escaping.
TEST(OptReportJson, StreamedRewritesHaveTheDomsBytes) {
  report::OptReport report;
  report.model_path = "m.onnx";
  report.output_path = "out.onnx";
  report.target = "explicit";
  report.bindings = {{"N", 1}};
  passes::PassRun aligned;
  aligned.pass = "align-ranks";
  aligned.seconds = 0.25;
  aligned.stats.nodes_inserted = 1;
  aligned.stats.initializers_rewritten = 1;
  aligned.stats.log.push_back({"Add \"q\"\x01", "y", "Add", "inserted", "b", "Unsqueeze axes [0]",
                               "[3]", "[1,3]", 0});
  aligned.stats.log.push_back({"Mul#2", "", "Mul", "shrunk", "w", "", "[4,3]", "[1,3]", -36});
  aligned.stats.notes = {"kept 'c': too large"};
  passes::PassRun idle;
  idle.pass = "fold-constants";
  report.runs = {aligned, idle};
  report.violations = {"Add 'x': rank"};
  EXPECT_EQ(report::FormatOptJson(report), report::DumpJson(report::OptReportJson(report)));
}

// opt --report is handed on in pieces as it is written (issue 46): at 1M nodes the report is
// 77 MB, never whole in memory; the pieces make the DOM's bytes and a failing sink stops it.
TEST(OptReportJson, WrittenInBoundedPieces) {
  report::OptReport report;
  report.model_path = "m.onnx";
  passes::PassRun aligned;
  aligned.pass = "align-ranks";
  for (int i = 0; i < 2000; ++i) {
    aligned.stats.log.push_back({absl::StrCat("Add#", i), absl::StrCat("t", i), "Add",
                                 "inserted", "b", "Unsqueeze axes [0]", "[3]", "[1,3]", 0});
  }
  report.runs = {aligned};
  std::vector<size_t> pieces;
  std::string joined;
  ASSERT_TRUE(report::WriteOptJson(report, [&](std::string_view piece) {
                pieces.push_back(piece.size());
                joined.append(piece);
                return absl::OkStatus();
              }).ok());
  EXPECT_EQ(joined, report::DumpJson(report::OptReportJson(report)));
  EXPECT_GE(pieces.size(), 3u);
  for (size_t size : pieces) EXPECT_LE(size, size_t{80} << 10);
  int calls = 0;
  const absl::Status failed = report::WriteOptJson(report, [&calls](std::string_view) {
    ++calls;
    return absl::UnavailableError("disk full");
  });
  EXPECT_EQ(failed, absl::UnavailableError("disk full"));
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace onnx_bcast::driver

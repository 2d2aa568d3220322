// What opt says (issue 31 items 2 and 3): the last line of a report with a target says what
// the target covers, naming the ops a profile's list says the engine lacks; hints several
// violations share are said once with their count.
#include "driver/opt_text.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

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

}  // namespace
}  // namespace onnx_bcast::driver

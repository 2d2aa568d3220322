// CheckGraphStructure: what it refuses (names defined twice or nowhere, cycles, outputs nobody
// produces), what it accepts (nodes out of topological order without a cycle, subgraphs
// reading enclosing names), and that every message names the graph, node and value.
#include "proto/graph_structure.h"

#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"

namespace onnx_bcast::proto {
namespace {

using ::testing::HasSubstr;

Model Parse(const std::string& text) {
  absl::StatusOr<Model> m = ParseModelText(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : Model();
}

const char kChain[] = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2] x) => (float[2] z) { a = Relu(x)  b = Neg(a)  z = Abs(b) })";

TEST(GraphStructureTest, AcceptsSortedAndUnsortedAcyclicGraphs) {
  Model m = Parse(kChain);
  EXPECT_TRUE(CheckGraphStructure(m).ok());
  // Reversed: every edge points backwards, still no cycle (the order is not ours to demand).
  auto* nodes = m.proto.mutable_graph()->mutable_node();
  nodes->SwapElements(0, 2);
  const absl::Status s = CheckGraphStructure(m);
  EXPECT_TRUE(s.ok()) << s;
}

TEST(GraphStructureTest, RefusesACycleNamingANodeOnIt) {
  Model m = Parse(kChain);
  // a = Relu(b): a -> b -> a.
  m.proto.mutable_graph()->mutable_node(0)->set_input(0, "b");
  const absl::Status s = CheckGraphStructure(m);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("has a cycle through node"));
}

TEST(GraphStructureTest, RefusesValuesDefinedTwiceOrNowhere) {
  Model twice = Parse(kChain);
  twice.proto.mutable_graph()->mutable_node(1)->set_output(0, "a");
  absl::Status s = CheckGraphStructure(twice);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("value 'a' is defined twice (again by node '#1' (Neg))"));

  Model nowhere = Parse(kChain);
  nowhere.proto.mutable_graph()->mutable_node(2)->set_input(0, "ghost");
  s = CheckGraphStructure(nowhere);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node '#2' (Abs) reads 'ghost', defined nowhere"));

  Model no_producer = Parse(kChain);
  no_producer.proto.mutable_graph()->mutable_output(0)->set_name("lost");
  s = CheckGraphStructure(no_producer);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("graph output 'lost' is produced by no node"));
}

TEST(GraphStructureTest, SubgraphsSeeEnclosingNamesButNotSiblings) {
  const char kIf[] = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x, bool c) => (float[2] y) {
      a = Relu(x)
      y = If(c) <then_branch = t () => (float[2] o) { o = Neg(a) },
                 else_branch = e () => (float[2] o) { o = Abs(x) }>
    })";
  Model m = Parse(kIf);
  EXPECT_TRUE(CheckGraphStructure(m).ok());
  // The else branch reading the then branch's output is an error.
  auto* branch = m.proto.mutable_graph()->mutable_node(1)->mutable_attribute(1)->mutable_g();
  branch->mutable_node(0)->set_input(0, "o_then");
  const absl::Status s = CheckGraphStructure(m);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("reads 'o_then', defined nowhere"));
}

TEST(GraphStructureTest, IsSingleGraph) {
  EXPECT_TRUE(IsSingleGraph(Parse(kChain).proto));
  Model m = Parse(kChain);
  m.proto.add_functions()->set_name("F");
  EXPECT_FALSE(IsSingleGraph(m.proto));
}

}  // namespace
}  // namespace onnx_bcast::proto

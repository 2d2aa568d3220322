// GraphEditor: the use-def index, fresh names, batched insertion order, and linear-time passes.
#include "proto/graph.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "analysis/shape_tables.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/sanitizer.h"
#include "tests/support/pass_test_util.h"

namespace onnx_bcast::passes {
namespace {

using ::testing::ElementsAre;

const char kAddMul[] = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) <float[2] w = {1, 2}> {
  t = Add (x, w)
  y = Mul (t, t)
})";

TEST(GraphEditor, IndexesProducersConsumersAndConstants) {
  proto::Model m = test_support::Parse(kAddMul);
  proto::GraphEditor g(m.proto.mutable_graph());
  EXPECT_EQ(g.Producer("t"), 0);
  EXPECT_EQ(g.Producer("x"), -1);
  EXPECT_EQ(g.Consumers("t").size(), 2u);
  EXPECT_EQ(g.UseCount("y"), 1);  // graph output
  EXPECT_NE(g.ConstantValue("w"), nullptr);
  EXPECT_EQ(g.ConstantValue("x"), nullptr);
}

// The editor can index into the pass's shape tables' id space, which already holds names
// (some the graph never mentions): ids skip ahead, lookups of unknown names find nothing,
// and the tables see the editor's names without shapes.
TEST(GraphEditor, SharedIdSpaceWithTheShapeTables) {
  proto::Model m = test_support::Parse(kAddMul);
  analysis::ShapeTables tables;
  tables.SetShape("elsewhere", broadcast::Shape::Of({7}));
  tables.SetShape("t", broadcast::Shape::Of({2}));
  proto::GraphEditor g(m.proto.mutable_graph(), tables.mutable_ids());
  EXPECT_EQ(g.Producer("t"), 0);
  EXPECT_EQ(g.Producer("elsewhere"), -1);
  EXPECT_TRUE(g.Consumers("elsewhere").empty());
  EXPECT_EQ(g.Consumers("t").size(), 2u);
  EXPECT_NE(g.Initializer("w"), nullptr);
  EXPECT_EQ(tables.FindShape("x"), nullptr);  // interned by the editor, no shape
  tables.SetShape("x", broadcast::Shape::Of({2}));
  EXPECT_EQ(tables.FindShape("x")->ToString(), "[2]");
  EXPECT_EQ(tables.FindShape("t")->ToString(), "[2]");
  g.SetInput(1, 1, "x");
  EXPECT_EQ(g.Consumers("t").size(), 1u);
  EXPECT_EQ(g.Consumers("x").size(), 2u);
}

// The analysis hands the editor the ids it resolved per node. A hint is only a hint: ids
// whose names no longer match the node (the graph changed since), out of range, or for another
// node count are looked up again, and the index comes out the same.
TEST(GraphEditor, NodeIdHintsAreUsedOnlyWhereTheirNamesMatch) {
  const auto index_of = [](const proto::NodeTensorIds* hint) {
    proto::Model m = test_support::Parse(kAddMul);
    proto::TensorIds ids;
    for (const char* name : {"x", "w", "t", "y", "elsewhere"}) ids.Intern(name);
    proto::GraphEditor g(m.proto.mutable_graph(), &ids, hint);
    std::string out;
    for (const char* name : {"x", "w", "t", "y", "elsewhere"}) {
      absl::StrAppend(&out, name, ":", g.Producer(name), "/", g.UseCount(name), "[");
      for (const proto::Use& u : g.Consumers(name)) absl::StrAppend(&out, u.node, ".", u.slot, " ");
      absl::StrAppend(&out, "] ");
    }
    return out;
  };
  const std::string plain = index_of(nullptr);
  EXPECT_EQ(plain, "x:-1/1[0.0 ] w:-1/1[0.1 ] t:0/2[1.0 1.1 ] y:1/1[] elsewhere:-1/0[] ");
  // Right: x w | t, t t | y (ids 0 1 | 2, 2 2 | 3).
  proto::NodeTensorIds right{{0, 3, 6}, {0, 1, 2, 2, 2, 3}};
  EXPECT_EQ(index_of(&right), plain);
  // Stale: Add's inputs swapped, Mul's output pointing at "elsewhere", one id out of range.
  proto::NodeTensorIds stale{{0, 3, 6}, {1, 0, 99, 2, 2, 4}};
  EXPECT_EQ(index_of(&stale), plain);
  // Another node count: ignored whole.
  proto::NodeTensorIds other{{0, 3}, {4, 4, 4}};
  EXPECT_EQ(index_of(&other), plain);
}

TEST(GraphEditor, InitializerThatIsAGraphInputIsNotAConstant) {
  proto::Model m = test_support::Parse(R"(<ir_version: 3, opset_import: ["" : 6]>
g (float[2] x, float[2] w) => (float[2] y) <float[2] w = {1, 2}> {
  y = Add (x, w)
})");
  proto::GraphEditor g(m.proto.mutable_graph());
  EXPECT_NE(g.Initializer("w"), nullptr);
  EXPECT_EQ(g.ConstantValue("w"), nullptr);
}

TEST(GraphEditor, FreshNamesAvoidEveryNameIncludingSubgraphs) {
  proto::Model m = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (bool c, float[2] x) => (float[2] y) {
  y = If (c) <then_branch = g1 () => (float[2] x_1) { x_1 = Identity (x) },
              else_branch = g2 () => (float[2] x_2) { x_2 = Identity (x) }>
})");
  proto::GraphEditor g(m.proto.mutable_graph());
  EXPECT_EQ(g.UniqueName("x"), "x_3");
  EXPECT_EQ(g.UniqueName("x"), "x_4");
  EXPECT_EQ(g.UniqueName("fresh"), "fresh");
  EXPECT_EQ(g.UniqueName("fresh"), "fresh_1");
  EXPECT_TRUE(g.IsUsedBySubgraph("x"));
}

TEST(GraphEditor, InsertionsLandBeforeTheirAnchorInOrder) {
  proto::Model m = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  a = Relu (x)
  y = Neg (a)
})");
  proto::GraphEditor g(m.proto.mutable_graph());
  auto node = [](const std::string& op, const std::string& in, const std::string& out) {
    onnx::NodeProto n;
    n.set_op_type(op);
    n.add_input(in);
    n.add_output(out);
    return n;
  };
  const int first = g.InsertBefore(1, node("Abs", "a", "b"));
  g.InsertBefore(1, node("Abs", "b", "c"));
  g.InsertBefore(first, node("Sigmoid", "a", "s"));  // before an inserted node
  g.SetInput(1, 0, "c");
  EXPECT_EQ(g.Consumers("a").size(), 2u);
  g.Commit();
  std::vector<std::string> ops;
  for (const auto& n : m.proto.graph().node()) ops.push_back(n.output(0));
  EXPECT_THAT(ops, ElementsAre("a", "s", "b", "c", "y"));
  EXPECT_EQ(m.proto.graph().node(4).input(0), "c");
}

TEST(GraphEditor, RemoveNodeAndInitializer) {
  proto::Model m = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) <float[2] w = {1, 2}> {
  t = Add (x, w)
  y = Relu (x)
})");
  proto::GraphEditor g(m.proto.mutable_graph());
  g.RemoveNode(0);
  EXPECT_EQ(g.UseCount("w"), 0);
  g.RemoveInitializer("w");
  g.Commit();
  EXPECT_EQ(m.proto.graph().node_size(), 1);
  EXPECT_EQ(m.proto.graph().initializer_size(), 0);
}

// A chain of `n` Adds, each with its own rank-1 operand, so align-ranks inserts n Unsqueezes
// spread over the whole graph.
proto::Model Chain(int n) {
  std::string body;
  for (int i = 0; i < n; ++i) {
    absl::StrAppend(&body, "  v", i, " = Relu (v)\n  t", i + 1, " = Add (t", i, ", v", i, ")\n");
  }
  return test_support::Parse(absl::StrCat(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,4] t0, float[4] v) => (float[2,4] t)",
                                     n, R"() {
)",
                                     body, "}"));
}

double AlignSeconds(int n, int64_t* inserted) {
  proto::Model m = Chain(n);
  PassStats stats;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(test_support::RunPass("align-ranks", &m, &stats).ok());
  *inserted = stats.nodes_inserted;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Timing is measured by bench/graph/run.sh (growth from 10k to 1M nodes), never asserted here:
// a loaded CI machine or a sanitizer build makes wall-clock ratios meaningless. This keeps the
// large-graph path exercised and its counts exact.
TEST(GraphEditor, AlignRanksHandlesLongChains) {
  // A quarter of the length under the sanitizers (still thousands of nodes: the same paths).
  const int n = test_support::kAddressSanitizer ? 2500 : 10000;
  int64_t small_inserted = 0, large_inserted = 0;
  const double small = AlignSeconds(n, &small_inserted);
  const double large = AlignSeconds(4 * n, &large_inserted);
  EXPECT_EQ(small_inserted, n);
  EXPECT_EQ(large_inserted, 4 * n);
  RecordProperty("seconds_10k", std::to_string(small));
  RecordProperty("seconds_40k", std::to_string(large));
}

}  // namespace
}  // namespace onnx_bcast::passes

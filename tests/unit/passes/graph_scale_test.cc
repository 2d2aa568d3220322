// GraphEditor paths added for large graphs: fresh names collected on first use still avoid
// names queued before it, and a Commit with only input changes keeps the index (no rebuild)
// while one with insertions re-indexes.
#include <string>

#include "gtest/gtest.h"
#include "proto/graph.h"
#include "tests/support/pass_test_util.h"

namespace onnx_bcast::passes {
namespace {

// A node `name` of `op_type` reading `input` and writing `output`.
onnx::NodeProto Node(const std::string& op_type, const std::string& name, const std::string& input,
                     const std::string& output) {
  onnx::NodeProto n;
  n.set_op_type(op_type);
  n.set_name(name);
  n.add_input(input);
  n.add_output(output);
  return n;
}

TEST(GraphEditorScale, LazyNamesSeeQueuedInsertionsAndInitializers) {
  proto::Model m = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  y = Relu (x)
})");
  proto::GraphEditor g(m.proto.mutable_graph());
  g.InsertBefore(0, Node("Identity", "fresh", "x", "fresh_out"));
  onnx::TensorProto t;
  t.set_name("fresh_init");
  g.AddInitializer(t);
  // The first UniqueName builds the name set: it must include the queued node and tensor.
  EXPECT_EQ(g.UniqueName("fresh"), "fresh_1");
  EXPECT_EQ(g.UniqueName("fresh_out"), "fresh_out_1");
  EXPECT_EQ(g.UniqueName("fresh_init"), "fresh_init_1");
  EXPECT_EQ(g.UniqueName("y"), "y_1");
  EXPECT_EQ(g.UniqueName("new"), "new");
  EXPECT_EQ(g.UniqueName("new"), "new_1");
}

TEST(GraphEditorScale, CommitOfInputChangesKeepsTheIndex) {
  proto::Model m = test_support::Parse(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x, float[2] z) => (float[2] y) {
  t = Relu (x)
  y = Add (t, x)
})");
  proto::GraphEditor g(m.proto.mutable_graph());
  g.SetInput(1, 1, "z");
  g.Commit();
  EXPECT_EQ(m.proto.graph().node(1).input(1), "z");
  EXPECT_EQ(g.Consumers("z").size(), 1u);
  EXPECT_EQ(g.Consumers("x").size(), 1u);
  EXPECT_EQ(g.Producer("t"), 0);
  // A structural edit after it re-indexes the committed graph.
  g.InsertBefore(1, Node("Neg", "neg", "z", "zn"));
  g.SetInput(1, 1, "zn");
  g.Commit();
  ASSERT_EQ(m.proto.graph().node_size(), 3);
  EXPECT_EQ(m.proto.graph().node(1).op_type(), "Neg");
  EXPECT_EQ(g.Producer("zn"), 1);
  EXPECT_EQ(g.Producer("y"), 2);
  ASSERT_EQ(g.Consumers("zn").size(), 1u);
  EXPECT_EQ(g.Consumers("zn")[0].node, 2);
}

}  // namespace
}  // namespace onnx_bcast::passes

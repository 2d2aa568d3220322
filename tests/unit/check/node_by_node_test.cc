// The analysis's node-by-node path (libonnx's op-schema inference per node, no whole-graph
// InferShapes) against the whole-graph path: the same verdicts, messages, classes, shapes,
// element types and annotated model on every model of the ONNX test data and on small models
// covering what the node-by-node path answers itself (Constant, shape-preserving ops, declared
// value_info merged as libonnx merges it, inference failures).
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "passes/shape_propagation.h"
#include "proto/model_io.h"

namespace onnx_bcast::passes {
namespace {

namespace fs = std::filesystem;

// Everything a caller sees of an Analysis, as text, so a difference reads as a diff.
std::string Describe(const Analysis& a) {
  std::string out;
  for (const NodeVerdict& v : a.nodes) {
    absl::StrAppend(&out, v.graph, " ", v.node, " ", v.op, " ", v.broadcast_class, " ",
                    static_cast<int>(v.verdict), " ", v.output.ToString(), " ", v.message, " ",
                    v.condition.ToString(), " in:");
    for (const bcast::Shape& s : v.inputs) absl::StrAppend(&out, " ", s.ToString());
    absl::StrAppend(&out, "\n");
  }
  absl::StrAppend(&out, "contradiction: ", a.contradiction, "\n");
  for (const auto& [graph, shapes] : a.shapes) {
    std::vector<std::string> lines;
    for (const auto& [name, s] : shapes) {
      auto e = graph == "main" ? a.elems.find(name) : a.elems.end();
      lines.push_back(absl::StrCat(graph, " ", name, " ", s.ToString(), " elem ",
                                   e == a.elems.end() ? 0 : e->second));
    }
    std::sort(lines.begin(), lines.end());
    for (const std::string& l : lines) absl::StrAppend(&out, l, "\n");
  }
  return out;
}

// libonnx names dims it cannot infer "unk__<n>" from a counter over the whole run; the
// node-by-node path leaves them empty. Both mean "unknown" (the analysis reads them so).
void ForgetInventedDims(onnx::ModelProto* m) {
  auto clean = [](onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    for (auto& d : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (d.has_dim_param() && d.dim_param().rfind("unk__", 0) == 0) d.clear_dim_param();
    }
  };
  for (auto& vi : *m->mutable_graph()->mutable_output()) clean(vi);
  for (auto& vi : *m->mutable_graph()->mutable_value_info()) clean(vi);
}

// Compares both paths on `model`; fails the test where they differ.
void ExpectSamePaths(const proto::Model& model, const std::string& label) {
  AnalysisOptions whole;
  whole.whole_graph_inference = true;
  onnx::ModelProto annotated_whole, annotated_fast;
  absl::StatusOr<Analysis> a = AnalyzeBroadcasts(model, whole, &annotated_whole);
  absl::StatusOr<Analysis> b = AnalyzeBroadcasts(model, AnalysisOptions(), &annotated_fast);
  ASSERT_EQ(a.ok(), b.ok()) << label;
  if (!a.ok()) return;
  EXPECT_EQ(Describe(*a), Describe(*b)) << label;
  if (a->inference_note.empty()) {
    ForgetInventedDims(&annotated_whole);
    ForgetInventedDims(&annotated_fast);
    std::string diff;
    EXPECT_TRUE(proto::ModelsEqual(annotated_whole, annotated_fast, &diff)) << label << "\n"
                                                                           << diff;
  }
}

proto::Model Parse(const std::string& text) {
  absl::StatusOr<proto::Model> m = proto::ParseModelText(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

TEST(NodeByNode, SameAsWholeGraphOnEveryTestDataModel) {
  const fs::path root = "/usr/share/libonnx-testdata/data";
  if (!fs::exists(root)) GTEST_SKIP() << "no ONNX test data installed";
  std::vector<std::string> models;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().filename() == "model.onnx") models.push_back(e.path().string());
  }
  std::sort(models.begin(), models.end());
  int compared = 0;
  for (const std::string& path : models) {
    absl::StatusOr<proto::Model> model = proto::LoadModel(path);
    if (!model.ok()) continue;
    ExpectSamePaths(*model, path);
    ++compared;
  }
  EXPECT_GT(compared, 500);
}

TEST(NodeByNode, ExampleModels) {
  for (const char* name : {"cnn_block.onnx", "legacy_axis.onnx", "external/mlp.onnx"}) {
    absl::StatusOr<proto::Model> model =
        proto::LoadModel(absl::StrCat(BCAST_SOURCE_DIR, "/models/", name));
    ASSERT_TRUE(model.ok()) << model.status();
    ExpectSamePaths(*model, name);
  }
}

TEST(NodeByNode, ChainsThroughSchemaAndNativeOps) {
  // Constant, Relu (answered natively), Transpose, ReduceMean, Conv (op schemas), symbolic
  // batch through all of them, and a broadcast of a derived symbol.
  ExpectSamePaths(Parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,2,3,4] x, float[M] m) => (float[N,2,3,4] y, float[K] z) <float[2,2,1,1] w> {
      c = Constant <value = float[4] {1.0, 2.0, 3.0, 4.0}> ()
      a = Add(x, c)
      r = Relu(a)
      t = Transpose <perm = [0,1,3,2]> (r)
      u = Transpose <perm = [0,1,3,2]> (t)
      s = ReduceMean <axes = [3]> (u)
      v = Conv(u, w)
      y = Mul(v, s)
      n = Shape(x)
      e = Expand(c, n)
      q = Add(m, c)
      z = Sigmoid(q)
    })"), "chain");
}

TEST(NodeByNode, DeclaredValueInfoMergesLikeLibonnx) {
  // A declared dim without a value takes the inferred one; a declared value stays.
  ExpectSamePaths(Parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3] x) => (float[N,?] y) <float[N,?] r> {
      r = Relu(x)
      y = Transpose <perm = [0,1]> (r)
    })"), "declared");
}

TEST(NodeByNode, InferenceFailureInfersNothingDownstream) {
  // Reshape to a shape of the wrong size fails in libonnx; the rest goes on without it.
  ExpectSamePaths(Parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x, float[7] b) => (float[?] y) <int64[1] s = {7}> {
      r = Reshape(x, s)
      y = Add(r, b)
    })"), "failure");
}

TEST(NodeByNode, WhereHasTheTypeOfItsValues) {
  absl::StatusOr<Analysis> a = AnalyzeBroadcasts(Parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool[2,3] c, float[2,3] x, float[3] y) => (float[2,3] z) {
      w = Where(c, x, y)
      z = Relu(w)
    })"), AnalysisOptions());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->elems.at("w"), onnx::TensorProto::FLOAT);
}

}  // namespace
}  // namespace onnx_bcast::passes

// The analysis's single node-by-node walk against libonnx's whole-graph InferShapes, which it
// replaces: on every model of the ONNX test data (subgraphs and functions included) and on
// small models covering what the walk answers itself (Constant, shape-preserving ops, declared
// value_info, inference failures), the walk knows every rank and dim value libonnx knows.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/shape_propagation.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "proto/onnx_checks.h"
#include "proto/shapes.h"

namespace onnx_bcast::analysis {
namespace {

namespace fs = std::filesystem;

// The report name of a node (as the analysis names unnamed ones).
std::string NodeName(const onnx::NodeProto& node, int index) {
  return node.name().empty() ? absl::StrCat(node.op_type(), "#", index) : node.name();
}

// Compares libonnx's types of `g` (after InferShapes) with the walk's shapes recorded under
// `path`, then recurses into If/Loop/Scan bodies under the analysis's path names.
void CompareGraph(const onnx::GraphProto& g, const std::string& path, const Analysis& a,
                  const std::string& label, int* compared) {
  auto shapes_it = a.shapes.find(path);
  ASSERT_NE(shapes_it, a.shapes.end()) << label << ": no shapes for " << path;
  const auto& shapes = shapes_it->second;
  std::set<std::string> produced;
  for (const auto& node : g.node()) produced.insert(node.output().begin(), node.output().end());
  auto compare = [&](const onnx::ValueInfoProto& vi) {
    // Declared value_info for names nothing makes (text-form declarations) are not tensors.
    if (!vi.type().has_tensor_type() || produced.count(vi.name()) == 0) return;
    const broadcast::Shape theirs = proto::ShapeOfType(vi.type());
    auto it = shapes.find(vi.name());
    ASSERT_NE(it, shapes.end()) << label << ": " << path << " " << vi.name();
    const broadcast::Shape& ours = it->second;
    if (!theirs.rank_known) return;
    ++*compared;
    ASSERT_TRUE(ours.rank_known) << label << ": " << path << " " << vi.name() << " libonnx "
                                 << theirs.ToString();
    ASSERT_EQ(ours.rank(), theirs.rank()) << label << ": " << path << " " << vi.name() << " ours "
                                          << ours.ToString() << " libonnx " << theirs.ToString();
    for (size_t k = 0; k < theirs.dims.size(); ++k) {
      if (!theirs.dims[k].is_value()) continue;
      EXPECT_EQ(ours.dims[k], theirs.dims[k])
          << label << ": " << path << " " << vi.name() << " ours " << ours.ToString() << " libonnx "
          << theirs.ToString();
    }
    if (path == "main" && vi.type().tensor_type().elem_type() != 0) {
      auto e = a.elems.find(vi.name());
      EXPECT_TRUE(e != a.elems.end() && e->second == vi.type().tensor_type().elem_type())
          << label << ": element type of " << vi.name();
    }
  };
  for (const auto& vi : g.value_info()) compare(vi);
  for (const auto& vi : g.output()) compare(vi);
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& node = g.node(i);
    for (const auto& attr : node.attribute()) {
      if (!attr.has_g()) continue;
      CompareGraph(
          attr.g(),
          absl::StrCat(path, "/", node.op_type(), " '", NodeName(node, i), "'.", attr.name()), a,
          label, compared);
    }
  }
}

// libonnx's whole-graph InferShapes on `model`, then for every tensor it types (main graph and
// If/Loop/Scan bodies): the walk knows the same rank, and every dim libonnx knows as a number
// the walk knows as that number (the walk may know more: symbols where libonnx has none).
// Returns the number of tensors compared.
int ExpectAtLeastLibonnx(const proto::Model& model, const std::string& label) {
  onnx::ModelProto inferred = model.proto;
  if (!proto::InferShapes(&inferred, /*strict=*/false).ok()) return 0;
  absl::StatusOr<Analysis> a = AnalyzeBroadcasts(model, AnalysisOptions());
  EXPECT_TRUE(a.ok()) << label << ": " << a.status();
  if (!a.ok()) return 0;
  int compared = 0;
  CompareGraph(inferred.graph(), "main", *a, label, &compared);
  return compared;
}

proto::Model Parse(const std::string& text) {
  absl::StatusOr<proto::Model> m = proto::ParseModelText(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

TEST(NodeByNode, KnowsWhatWholeGraphInferenceKnowsOnEveryTestDataModel) {
  const fs::path root = "/usr/share/libonnx-testdata/data";
  if (!fs::exists(root)) GTEST_SKIP() << "no ONNX test data installed";
  std::vector<std::string> models;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().filename() == "model.onnx") models.push_back(e.path().string());
  }
  std::sort(models.begin(), models.end());
  int compared = 0, tensors = 0;
  for (const std::string& path : models) {
    absl::StatusOr<proto::Model> model = proto::LoadModel(path);
    if (!model.ok()) continue;
    tensors += ExpectAtLeastLibonnx(*model, path);
    ++compared;
  }
  EXPECT_GT(compared, 500);
  EXPECT_GT(tensors, 2000);
}

TEST(NodeByNode, ExampleModels) {
  for (const char* name : {"cnn_block.onnx", "legacy_axis.onnx", "external/mlp.onnx"}) {
    absl::StatusOr<proto::Model> model =
        proto::LoadModel(absl::StrCat(BCAST_SOURCE_DIR, "/models/", name));
    ASSERT_TRUE(model.ok()) << model.status();
    ExpectAtLeastLibonnx(*model, name);
  }
}

TEST(NodeByNode, ChainsThroughSchemaAndNativeOps) {
  // Constant, Relu (answered natively), Transpose, ReduceMean, Conv (op schemas), symbolic
  // batch through all of them, and a broadcast of a derived symbol.
  ExpectAtLeastLibonnx(Parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,2,3,4] x, float[M] m) => (float[N,2,3,4] y, float[K] z)
        <float[2,2,1,1] w = {1.0, 0.0, 0.0, 1.0}> {
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
    })"),
                       "chain");
}

TEST(NodeByNode, DeclaredValueInfoMergesLikeLibonnx) {
  // A declared dim without a value takes the inferred one; a declared value stays.
  ExpectAtLeastLibonnx(Parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3] x) => (float[N,?] y) <float[N,?] r> {
      r = Relu(x)
      y = Transpose <perm = [0,1]> (r)
    })"),
                       "declared");
}

TEST(NodeByNode, InferenceFailureInfersNothingDownstream) {
  // Reshape to a shape of the wrong size fails in libonnx; the rest goes on without it.
  ExpectAtLeastLibonnx(Parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,3] x, float[7] b) => (float[?] y) <int64[1] s = {7}> {
      r = Reshape(x, s)
      y = Add(r, b)
    })"),
                       "failure");
}

TEST(NodeByNode, WhereHasTheTypeOfItsValues) {
  absl::StatusOr<Analysis> a = AnalyzeBroadcasts(Parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bool[2,3] c, float[2,3] x, float[3] y) => (float[2,3] z) {
      w = Where(c, x, y)
      z = Relu(w)
    })"),
                                                 AnalysisOptions());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->elems.at("w"), onnx::TensorProto::FLOAT);
}

}  // namespace
}  // namespace onnx_bcast::analysis

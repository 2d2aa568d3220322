// The analysis's single node-by-node walk against libonnx's whole-graph InferShapes, which it
// replaces: on every model of the ONNX test data (subgraphs and functions included) and on
// small models covering what the walk answers itself (Constant, shape-preserving ops, declared
// value_info, inference failures), the walk knows every rank and dim value libonnx knows.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "passes/shape_propagation.h"
#include "proto/model_io.h"
#include "proto/onnx_checks.h"
#include "proto/shapes.h"

namespace onnx_bcast::passes {
namespace {

namespace fs = std::filesystem;

// libonnx's whole-graph InferShapes on `model`, then for every tensor of the main graph it
// types: the walk knows the same rank, and every dim libonnx knows as a number the walk knows
// as that number (the walk may know more: symbols where libonnx has none).
void ExpectAtLeastLibonnx(const proto::Model& model, const std::string& label) {
  onnx::ModelProto inferred = model.proto;
  if (!proto::InferShapes(&inferred, /*strict=*/false).ok()) return;
  absl::StatusOr<Analysis> a = AnalyzeBroadcasts(model, AnalysisOptions());
  ASSERT_TRUE(a.ok()) << label << ": " << a.status();
  const auto& shapes = a->shapes.at("main");
  std::set<std::string> produced;
  for (const auto& node : inferred.graph().node()) produced.insert(node.output().begin(), node.output().end());
  auto compare = [&](const onnx::ValueInfoProto& vi) {
    // Declared value_info for names nothing makes (text-form declarations) are not tensors.
    if (!vi.type().has_tensor_type() || produced.count(vi.name()) == 0) return;
    const bcast::Shape theirs = proto::ShapeOfType(vi.type());
    auto it = shapes.find(vi.name());
    ASSERT_NE(it, shapes.end()) << label << ": " << vi.name();
    const bcast::Shape& ours = it->second;
    if (!theirs.rank_known) return;
    ASSERT_TRUE(ours.rank_known) << label << ": " << vi.name() << " libonnx " << theirs.ToString();
    ASSERT_EQ(ours.rank(), theirs.rank()) << label << ": " << vi.name() << " ours "
                                          << ours.ToString() << " libonnx " << theirs.ToString();
    for (size_t k = 0; k < theirs.dims.size(); ++k) {
      if (!theirs.dims[k].is_value()) continue;
      EXPECT_EQ(ours.dims[k], theirs.dims[k]) << label << ": " << vi.name() << " ours "
                                              << ours.ToString() << " libonnx "
                                              << theirs.ToString();
    }
    auto e = a->elems.find(vi.name());
    if (vi.type().tensor_type().elem_type() != 0) {
      EXPECT_TRUE(e != a->elems.end() && e->second == vi.type().tensor_type().elem_type())
          << label << ": element type of " << vi.name();
    }
  };
  for (const auto& vi : inferred.graph().value_info()) compare(vi);
  for (const auto& vi : inferred.graph().output()) compare(vi);
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
  int compared = 0;
  for (const std::string& path : models) {
    absl::StatusOr<proto::Model> model = proto::LoadModel(path);
    if (!model.ok()) continue;
    ExpectAtLeastLibonnx(*model, path);
    ++compared;
  }
  EXPECT_GT(compared, 500);
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
    })"), "chain");
}

TEST(NodeByNode, DeclaredValueInfoMergesLikeLibonnx) {
  // A declared dim without a value takes the inferred one; a declared value stays.
  ExpectAtLeastLibonnx(Parse(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3] x) => (float[N,?] y) <float[N,?] r> {
      r = Relu(x)
      y = Transpose <perm = [0,1]> (r)
    })"), "declared");
}

TEST(NodeByNode, InferenceFailureInfersNothingDownstream) {
  // Reshape to a shape of the wrong size fails in libonnx; the rest goes on without it.
  ExpectAtLeastLibonnx(Parse(R"(
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

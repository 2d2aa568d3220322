// Tests of the public C++ API (onnx_bcast/onnx_bcast.h) through the shared library exactly as a
// converter links it: every function on files and on in-memory models, the error paths, and
// that results agree with the CLI's reports.
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "onnx_bcast/onnx_bcast.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kModels = BCAST_SOURCE_DIR "/models";
const std::string kFixtures = BCAST_SOURCE_DIR "/tests/fixtures/check";

// A fresh directory for one test's outputs.
fs::path TempDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("onnx_bcast_api_test_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// y = Add(a [2,3], b [3]) at opset 15, built with the protobuf API as a converter would.
onnx::ModelProto AddModel(int64_t b_extent) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(15);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("add");
  auto add_input = [&](const std::string& name, std::vector<int64_t> dims,
                       google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list) {
    onnx::ValueInfoProto* v = list->Add();
    v->set_name(name);
    onnx::TypeProto::Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  add_input("a", {2, 3}, g->mutable_input());
  add_input("b", {b_extent}, g->mutable_input());
  add_input("y", {2, 3}, g->mutable_output());
  onnx::NodeProto* n = g->add_node();
  n->set_name("the_add");
  n->set_op_type("Add");
  n->add_input("a");
  n->add_input("b");
  n->add_output("y");
  return m;
}

TEST(ApiTest, VersionAndTables) {
  EXPECT_FALSE(onnx_bcast::Version().empty());
  std::vector<std::string> passes;
  for (const auto& p : onnx_bcast::ListPasses()) passes.push_back(p.name);
  EXPECT_THAT(passes, testing::Contains("align-ranks"));
  EXPECT_THAT(passes, testing::Contains("upgrade-legacy-broadcast"));
  std::vector<std::string> targets;
  for (const auto& t : onnx_bcast::ListTargets()) {
    targets.push_back(t.name);
    EXPECT_FALSE(t.summary.empty() && t.name != "none") << t.name;
  }
  EXPECT_THAT(targets, testing::IsSupersetOf({"explicit", "ncnn", "canonical"}));
}

// ListTargets()'s comment in the header names every target it returns (it listed 4 of 5).
TEST(ApiTest, ListTargetsCommentNamesEveryTarget) {
  std::ifstream in(BCAST_SOURCE_DIR "/api/include/onnx_bcast/onnx_bcast.h");
  std::stringstream header;
  header << in.rdbuf();
  const std::string text = header.str();
  const size_t decl = text.find("ListTargets();");
  ASSERT_NE(decl, std::string::npos);
  const std::string comment =
      text.substr(text.rfind("\n\n", decl), decl - text.rfind("\n\n", decl));
  for (const onnx_bcast::PassInfo& t : onnx_bcast::ListTargets()) {
    EXPECT_THAT(comment, HasSubstr("\"" + t.name + "\"")) << comment;
  }
}

TEST(ApiTest, LoadSerializeParseSaveRoundTrip) {
  absl::StatusOr<onnx::ModelProto> model = onnx_bcast::LoadModel(kModels + "/cnn_block.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::string> bytes = onnx_bcast::SerializeModel(*model);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<onnx::ModelProto> parsed = onnx_bcast::ParseModel(*bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->graph().node_size(), model->graph().node_size());

  const fs::path dir = TempDir("roundtrip");
  ASSERT_TRUE(onnx_bcast::SaveModel(*parsed, (dir / "m.onnx").string()).ok());
  absl::StatusOr<onnx::ModelProto> again = onnx_bcast::LoadModel((dir / "m.onnx").string());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*onnx_bcast::SerializeModel(*again), *bytes);
}

TEST(ApiTest, LoadErrorsAreStatuses) {
  absl::StatusOr<onnx::ModelProto> missing = onnx_bcast::LoadModel("/nonexistent/m.onnx");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("/nonexistent/m.onnx"));

  absl::StatusOr<onnx::ModelProto> garbage = onnx_bcast::ParseModel("\xff\xff\xff not a model");
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kInvalidArgument);
  // An in-memory model is "model" in the API's words, never the layers' label "<memory>".
  EXPECT_THAT(std::string(garbage.status().message()), testing::StartsWith("model: "));
  EXPECT_THAT(std::string(garbage.status().message()), Not(HasSubstr("<memory>")));

  onnx_bcast::LoadOptions tiny;
  tiny.max_file_bytes = 10;
  EXPECT_EQ(onnx_bcast::LoadModel(kModels + "/cnn_block.onnx", tiny).status().code(),
            absl::StatusCode::kResourceExhausted);
  tiny.max_file_bytes = 0;
  EXPECT_EQ(onnx_bcast::LoadModel(kModels + "/cnn_block.onnx", tiny).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ApiTest, CheckCleanModelFromPathAndMemoryAgree) {
  absl::StatusOr<onnx_bcast::CheckResult> from_path =
      onnx_bcast::Check(kModels + "/cnn_block.onnx");
  ASSERT_TRUE(from_path.ok()) << from_path.status();
  EXPECT_FALSE(from_path->HasError());
  EXPECT_TRUE(from_path->ErrorStatus().ok());
  EXPECT_GE(from_path->nodes.size(), 5u);
  // The Gemm's C [10] against [N,10] and the PRelu slope are among the verdicts.
  bool saw_prelu = false;
  for (const auto& n : from_path->nodes) {
    EXPECT_NE(n.verdict, onnx_bcast::Verdict::kError) << n.message;
    EXPECT_FALSE(n.input_shapes.empty()) << n.node;
    if (n.op == "PRelu") {
      saw_prelu = true;
      EXPECT_EQ(n.input_shapes.size(), 2u);
      EXPECT_EQ(n.input_shapes[1], "[8,1,1]");
    }
  }
  EXPECT_TRUE(saw_prelu);
  EXPECT_THAT(from_path->text, HasSubstr("cnn_block.onnx"));
  EXPECT_THAT(from_path->json, HasSubstr("\"summary\""));

  absl::StatusOr<onnx::ModelProto> model = onnx_bcast::LoadModel(kModels + "/cnn_block.onnx");
  ASSERT_TRUE(model.ok());
  absl::StatusOr<onnx_bcast::CheckResult> from_memory = onnx_bcast::Check(*model);
  ASSERT_TRUE(from_memory.ok()) << from_memory.status();
  ASSERT_EQ(from_memory->nodes.size(), from_path->nodes.size());
  for (size_t i = 0; i < from_path->nodes.size(); ++i) {
    EXPECT_EQ(from_memory->nodes[i].node, from_path->nodes[i].node);
    EXPECT_EQ(from_memory->nodes[i].verdict, from_path->nodes[i].verdict);
    EXPECT_EQ(from_memory->nodes[i].output_shape, from_path->nodes[i].output_shape);
  }
  for (auto v : {onnx_bcast::Verdict::kProven, onnx_bcast::Verdict::kError,
                 onnx_bcast::Verdict::kConditional, onnx_bcast::Verdict::kUnknown}) {
    EXPECT_EQ(from_memory->Count(v), from_path->Count(v)) << onnx_bcast::VerdictName(v);
  }
}

TEST(ApiTest, CheckFindsTheBroadcastErrorAndNamesTheNode) {
  // In memory: b [4] cannot broadcast against a [2,3].
  absl::StatusOr<onnx_bcast::CheckResult> bad = onnx_bcast::Check(AddModel(4));
  ASSERT_TRUE(bad.ok()) << bad.status();
  ASSERT_EQ(bad->nodes.size(), 1u);
  const onnx_bcast::NodeVerdict& v = bad->nodes[0];
  EXPECT_EQ(v.verdict, onnx_bcast::Verdict::kError);
  EXPECT_EQ(v.node, "the_add");
  EXPECT_EQ(v.op, "Add");
  EXPECT_EQ(v.input_shapes, (std::vector<std::string>{"[2,3]", "[4]"}));
  EXPECT_THAT(v.message, HasSubstr("the_add"));
  EXPECT_TRUE(bad->HasError());
  absl::Status s = bad->ErrorStatus();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("the_add"));

  absl::StatusOr<onnx_bcast::CheckResult> good = onnx_bcast::Check(AddModel(3));
  ASSERT_TRUE(good.ok()) << good.status();
  ASSERT_EQ(good->nodes.size(), 1u);
  EXPECT_EQ(good->nodes[0].verdict, onnx_bcast::Verdict::kProven);
  EXPECT_EQ(good->nodes[0].output_shape, "[2,3]");

  // From a file (ONNX text form).
  absl::StatusOr<onnx_bcast::CheckResult> fixture =
      onnx_bcast::Check(kFixtures + "/gemm_bad_c.onnxtxt");
  ASSERT_TRUE(fixture.ok()) << fixture.status();
  EXPECT_TRUE(fixture->HasError());
}

TEST(ApiTest, CheckLintGivesTheEnginesLints) {
  // The analysis names no engine: the front door hands it the engines' lints (engines/lints.h),
  // here ncnn's, which aligns b [3] of [3,3] + [3] to the outer axis.
  onnx::ModelProto m = AddModel(3);
  for (auto* list : {m.mutable_graph()->mutable_input(), m.mutable_graph()->mutable_output()}) {
    list->Mutable(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(3);
  }
  onnx_bcast::CheckOptions options;
  options.lint = true;
  absl::StatusOr<onnx_bcast::CheckResult> r = onnx_bcast::Check(m, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->nodes.size(), 1u);
  EXPECT_THAT(r->nodes[0].lints,
              testing::ElementsAre(HasSubstr("ncnn-outer-axis: Add 'the_add': ncnn's inner-axis")));
  EXPECT_THAT(onnx_bcast::Check(m)->nodes[0].lints, testing::IsEmpty());
}

TEST(ApiTest, CheckConditionalVerdictCarriesTheCondition) {
  absl::StatusOr<onnx_bcast::CheckResult> r =
      onnx_bcast::Check(kFixtures + "/symbolic_batch.onnxtxt");
  ASSERT_TRUE(r.ok()) << r.status();
  bool saw_conditional = false;
  for (const auto& n : r->nodes) {
    if (n.verdict == onnx_bcast::Verdict::kConditional) {
      saw_conditional = true;
      EXPECT_FALSE(n.condition.empty()) << n.node;
    }
  }
  EXPECT_TRUE(saw_conditional);
  EXPECT_FALSE(r->combined_condition.empty());
}

TEST(ApiTest, CheckAtDimsEvaluatesEveryNodeLikeTheCli) {
  onnx_bcast::CheckOptions options;
  options.dims = {{"N", 3}};
  absl::StatusOr<onnx_bcast::CheckResult> r =
      onnx_bcast::Check(kFixtures + "/symbolic_batch.onnxtxt", options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->nodes.size(), 1u);
  EXPECT_EQ(r->nodes[0].condition_symbols, std::vector<std::string>{"N"});
  EXPECT_EQ(r->nodes[0].at_dims, "fails");
  EXPECT_EQ(r->first_failure_at_dims, 0);
  EXPECT_TRUE(r->HasError());
  EXPECT_EQ(r->ErrorStatus().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r->ErrorStatus().message(),
            "Add 'Add#0': A [3,3] and B [5,3] are not broadcastable (numpy rule, axis 0: 3 vs 5)");
  EXPECT_NE(r->text.find("At N=3: 1 fail"), std::string::npos) << r->text;
  EXPECT_NE(r->json.find("\"at_dims\""), std::string::npos);

  options.dims = {{"N", 5}};
  r = onnx_bcast::Check(kFixtures + "/symbolic_batch.onnxtxt", options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->nodes[0].at_dims, "holds");
  EXPECT_EQ(r->first_failure_at_dims, -1);
  EXPECT_FALSE(r->HasError());
  EXPECT_TRUE(r->ErrorStatus().ok());

  // Without dims nothing is evaluated.
  r = onnx_bcast::Check(kFixtures + "/symbolic_batch.onnxtxt");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->nodes[0].at_dims, "");
  EXPECT_FALSE(r->HasError());

  options.dims = {{"Q", 2}};
  r = onnx_bcast::Check(kFixtures + "/symbolic_batch.onnxtxt", options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("its symbols: N"), std::string::npos) << r.status();
}

TEST(ApiTest, CheckRejectsAnInvalidModelWithAStatus) {
  onnx::ModelProto no_graph;
  no_graph.set_ir_version(8);
  absl::StatusOr<onnx_bcast::CheckResult> r = onnx_bcast::Check(no_graph);
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), testing::StartsWith("model: "));
  EXPECT_THAT(std::string(r.status().message()), Not(HasSubstr("<memory>")));
  EXPECT_EQ(onnx_bcast::Check(std::string("/nonexistent.onnx")).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(ApiTest, OptimizeInMemoryUpgradesLegacyAxis) {
  absl::StatusOr<onnx::ModelProto> model = onnx_bcast::LoadModel(kModels + "/legacy_axis.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  const onnx::ModelProto original = *model;
  onnx_bcast::OptimizeOptions options;
  options.target = "explicit";
  absl::StatusOr<onnx_bcast::OptimizeReport> report = onnx_bcast::Optimize(&*model, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->Changed());
  EXPECT_EQ(report->target, "explicit");
  ASSERT_FALSE(report->passes.empty());
  EXPECT_EQ(report->passes[0].pass, "upgrade-legacy-broadcast");
  EXPECT_FALSE(report->passes[0].rewrites.empty());
  EXPECT_EQ(report->before.opset, 6);
  EXPECT_GT(report->after.opset, 6);
  EXPECT_THAT(report->json, HasSubstr("upgrade-legacy-broadcast"));
  // The model changed in place: no more broadcast/axis attributes, and it computes the same.
  for (const auto& node : model->graph().node()) {
    for (const auto& attr : node.attribute()) EXPECT_NE(attr.name(), "axis") << node.name();
  }
  onnx_bcast::VerifyOptions vopts;
  absl::StatusOr<onnx_bcast::VerifyResult> v = onnx_bcast::Verify(original, *model, vopts);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->match) << v->text;

  // Idempotent: a second run changes nothing.
  absl::StatusOr<onnx_bcast::OptimizeReport> again = onnx_bcast::Optimize(&*model, options);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->Changed());
}

// A target not met on some node: Unimplemented naming every such node, model untouched;
// allow_partial keeps the partial rewrite and lists them in the report.
TEST(ApiTest, OptimizeFailsWhenTheTargetIsNotMetUnlessAllowPartial) {
  absl::StatusOr<onnx::ModelProto> model = onnx_bcast::LoadModel(
      std::string(BCAST_SOURCE_DIR) + "/tests/fixtures/opt/unknown_rank.onnxtxt");
  ASSERT_TRUE(model.ok()) << model.status();
  const std::string before = model->SerializeAsString();
  onnx_bcast::OptimizeOptions options;
  options.target = "explicit";
  absl::StatusOr<onnx_bcast::OptimizeReport> r = onnx_bcast::Optimize(&*model, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("target explicit not met: 1 node(s)"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Add 'Add#1'"));
  EXPECT_EQ(model->SerializeAsString(), before);
  options.allow_partial = true;
  r = onnx_bcast::Optimize(&*model, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->violations.size(), 1u);
  EXPECT_THAT(r->violations[0], HasSubstr("cannot prove explicit's form"));
}

// The report's text ends with the CLI's line on what the target covers: here every op of the
// model has a layer in ncnn (its measured profile lists the ops it lacks), as `opt` says.
TEST(ApiTest, OptimizeTextSaysEveryOpHasALayerAsTheCliDoes) {
  absl::StatusOr<onnx::ModelProto> model = onnx_bcast::LoadModel(kModels + "/cnn_block.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  onnx_bcast::OptimizeOptions options;
  options.target = "ncnn";
  options.dims = {{"N", 1}};
  absl::StatusOr<onnx_bcast::OptimizeReport> report = onnx_bcast::Optimize(&*model, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->text, testing::EndsWith("target ncnn covers broadcast forms only; every op "
                                              "of the model has a layer in ncnn\n"));
}

TEST(ApiTest, OptimizeFilesWritesTheOutput) {
  const fs::path dir = TempDir("optimize_files");
  const std::string out = (dir / "cnn_ncnn.onnx").string();
  onnx_bcast::OptimizeOptions options;
  options.passes = {"align-ranks"};
  absl::StatusOr<onnx_bcast::OptimizeReport> report =
      onnx_bcast::Optimize(kModels + "/cnn_block.onnx", out, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->target.empty());
  ASSERT_EQ(report->passes.size(), 1u);
  EXPECT_GT(report->passes[0].nodes_inserted + report->passes[0].initializers_rewritten, 0);
  ASSERT_TRUE(fs::exists(out));
  absl::StatusOr<onnx_bcast::VerifyResult> v =
      onnx_bcast::Verify(kModels + "/cnn_block.onnx", out);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->match) << v->text;
  EXPECT_TRUE(v->exact) << "align-ranks inserts only data-movement ops";

  // Refuses to overwrite its input.
  absl::StatusOr<onnx_bcast::OptimizeReport> in_place = onnx_bcast::Optimize(out, out, options);
  EXPECT_FALSE(in_place.ok());
}

TEST(ApiTest, OptimizeErrorsLeaveTheModelUntouched) {
  absl::StatusOr<onnx::ModelProto> model = onnx_bcast::LoadModel(kModels + "/legacy_axis.onnx");
  ASSERT_TRUE(model.ok());
  const std::string before = *onnx_bcast::SerializeModel(*model);

  onnx_bcast::OptimizeOptions unknown_pass;
  unknown_pass.passes = {"align-ranks", "no-such-pass"};
  absl::StatusOr<onnx_bcast::OptimizeReport> r = onnx_bcast::Optimize(&*model, unknown_pass);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("no-such-pass"));

  onnx_bcast::OptimizeOptions unknown_target;
  unknown_target.target = "tpu9000";
  r = onnx_bcast::Optimize(&*model, unknown_target);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("tpu9000"));

  onnx_bcast::OptimizeOptions both;
  both.target = "explicit";
  both.passes = {"align-ranks"};
  EXPECT_EQ(onnx_bcast::Optimize(&*model, both).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(onnx_bcast::Optimize(nullptr, both).status().code(),
            absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(*onnx_bcast::SerializeModel(*model), before);

  // A model with a broadcast error: the pass names the node, the model stays as it was.
  onnx::ModelProto bad = AddModel(4);
  const std::string bad_before = *onnx_bcast::SerializeModel(bad);
  onnx_bcast::OptimizeOptions materialize;
  materialize.passes = {"materialize-broadcast"};
  r = onnx_bcast::Optimize(&bad, materialize);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("the_add"));
  EXPECT_EQ(*onnx_bcast::SerializeModel(bad), bad_before);
}

TEST(ApiTest, RunMatchesAHandComputedBroadcast) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {10, 20, 30};
  onnx_bcast::TensorMap inputs;
  inputs["a"] = onnx_bcast::Tensor::From<float>({2, 3}, a);
  inputs["b"] = onnx_bcast::Tensor::From<float>({3}, b);
  absl::StatusOr<onnx_bcast::NamedTensors> out = onnx_bcast::Run(AddModel(3), inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].first, "y");
  const onnx_bcast::Tensor& y = (*out)[0].second;
  EXPECT_EQ(y.dtype, onnx_bcast::DataType::kFloat);
  EXPECT_EQ(y.dims, (std::vector<int64_t>{2, 3}));
  absl::StatusOr<std::vector<float>> values = y.Values<float>();
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(*values, (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_FALSE(y.Values<double>().ok());
}

TEST(ApiTest, RunFromPathWithRandomInputsIsSeeded) {
  onnx_bcast::RunOptions options;
  options.random_missing_inputs = true;
  options.dims = {{"N", 2}};
  const std::string path = kModels + "/cnn_block.onnx";
  absl::StatusOr<onnx_bcast::NamedTensors> first = onnx_bcast::Run(path, {}, options);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].second.dims, (std::vector<int64_t>{2, 10}));
  absl::StatusOr<onnx_bcast::NamedTensors> second = onnx_bcast::Run(path, {}, options);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*first)[0].second.data, (*second)[0].second.data);
  options.seed = 7;
  absl::StatusOr<onnx_bcast::NamedTensors> other = onnx_bcast::Run(path, {}, options);
  ASSERT_TRUE(other.ok());
  EXPECT_NE((*first)[0].second.data, (*other)[0].second.data);
}

TEST(ApiTest, RunInputErrorsNameTheInput) {
  onnx_bcast::TensorMap inputs;
  inputs["a"] = onnx_bcast::Tensor::From<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  // Missing b.
  absl::StatusOr<onnx_bcast::NamedTensors> r = onnx_bcast::Run(AddModel(3), inputs);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("input(s) b"));
  // Wrong dtype.
  inputs["b"] = onnx_bcast::Tensor::From<double>({3}, {1, 2, 3});
  r = onnx_bcast::Run(AddModel(3), inputs);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("input 'b'"));
  // Wrong shape.
  inputs["b"] = onnx_bcast::Tensor::From<float>({4}, {1, 2, 3, 4});
  r = onnx_bcast::Run(AddModel(3), inputs);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("[4]"));
  // Data size disagreeing with dims.
  inputs["b"] = onnx_bcast::Tensor::From<float>({3}, {1, 2, 3});
  inputs["b"].data.pop_back();
  r = onnx_bcast::Run(AddModel(3), inputs);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("bytes"));
  // Huge dims with a few bytes: refused before anything is allocated.
  // (b's declared shape is dropped so that only the data size can refuse it.)
  onnx::ModelProto shapeless_b = AddModel(3);
  shapeless_b.mutable_graph()->mutable_input(1)->mutable_type()->mutable_tensor_type()
      ->clear_shape();
  inputs["b"] = onnx_bcast::Tensor::From<float>({int64_t{1} << 31, int64_t{1} << 31}, {1});
  r = onnx_bcast::Run(shapeless_b, inputs);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("4 bytes of data"));
  // Unknown name.
  inputs["b"] = onnx_bcast::Tensor::From<float>({3}, {1, 2, 3});
  inputs["c"] = onnx_bcast::Tensor::From<float>({3}, {1, 2, 3});
  r = onnx_bcast::Run(AddModel(3), inputs);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("'c'"));
}

TEST(ApiTest, VerifyDetectsAnAlteredModel) {
  absl::StatusOr<onnx::ModelProto> original = onnx_bcast::LoadModel(kModels + "/cnn_block.onnx");
  ASSERT_TRUE(original.ok());
  onnx::ModelProto altered = *original;
  // Nudge one float of the first float initializer that has several.
  bool nudged = false;
  for (onnx::TensorProto& t : *altered.mutable_graph()->mutable_initializer()) {
    if (t.data_type() != onnx::TensorProto::FLOAT || nudged) continue;
    if (t.raw_data().size() >= 8) {
      std::string raw = t.raw_data();
      float f;
      std::memcpy(&f, raw.data(), 4);
      f += 0.5f;
      std::memcpy(raw.data(), &f, 4);
      t.set_raw_data(raw);
      nudged = true;
    } else if (t.float_data_size() >= 2) {
      t.set_float_data(0, t.float_data(0) + 0.5f);
      nudged = true;
    }
  }
  ASSERT_TRUE(nudged);
  absl::StatusOr<onnx_bcast::VerifyResult> same = onnx_bcast::Verify(*original, *original);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->match);
  EXPECT_EQ(same->max_abs_error, 0);

  onnx_bcast::VerifyOptions options;
  options.samples = 2;
  absl::StatusOr<onnx_bcast::VerifyResult> r = onnx_bcast::Verify(*original, altered, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->match);
  EXPECT_GT(r->max_abs_error, 0);
  bool any_mismatch = false;
  for (const auto& o : r->outputs) {
    if (!o.match) {
      any_mismatch = true;
      EXPECT_FALSE(o.message.empty());
      EXPECT_GT(o.mismatches, 0);
    }
  }
  EXPECT_TRUE(any_mismatch);
  EXPECT_THAT(r->text, HasSubstr("DIFFERENT"));
  EXPECT_TRUE(r->divergence.has_value());

  // Bad options and unreadable models are statuses.
  onnx_bcast::VerifyOptions bad;
  bad.samples = 0;
  EXPECT_EQ(onnx_bcast::Verify(*original, altered, bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(onnx_bcast::Verify(std::string("/nonexistent.onnx"), kModels + "/cnn_block.onnx")
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

// issue 31: verify after Optimize with dims samples only what the rewritten model accepts, and
// says what it bound; VerifyOptions::dims binds explicitly, in the API's words.
TEST(ApiTest, VerifyBindsWhatTheRewrittenModelDeclares) {
  const std::string vit = BCAST_SOURCE_DIR "/tests/fixtures/exported/torchvision_vit_op14.onnx";
  absl::StatusOr<onnx::ModelProto> original = onnx_bcast::LoadModel(vit);
  ASSERT_TRUE(original.ok()) << original.status();
  onnx::ModelProto rewritten = *original;
  onnx_bcast::OptimizeOptions options;
  options.target = "opencv";
  options.dims = {{"N", 1}};
  absl::StatusOr<onnx_bcast::OptimizeReport> report = onnx_bcast::Optimize(&rewritten, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->text, HasSubstr("target opencv covers broadcast forms only"));
  absl::StatusOr<onnx_bcast::VerifyResult> r = onnx_bcast::Verify(*original, rewritten);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->match) << r->text;
  ASSERT_EQ(r->bound.size(), 1u);
  EXPECT_EQ(r->bound[0].symbol, "N");
  EXPECT_EQ(r->bound[0].value, 1);
  EXPECT_EQ(r->bound[0].by, "the rewritten model");
  onnx_bcast::VerifyOptions vopts;
  vopts.dims = {{"N", 3}};
  r = onnx_bcast::Verify(*original, rewritten, vopts);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("VerifyOptions::dims N=3: the rewritten model accepts only N=1"));
  // OptimizeOptions::dims in the API's words, not the CLI's.
  options.dims = {{"batch", 1}};
  onnx::ModelProto copy = *original;
  absl::Status s = onnx_bcast::Optimize(&copy, options).status();
  EXPECT_THAT(std::string(s.message()), HasSubstr("OptimizeOptions::dims batch: the model has no"));
  EXPECT_THAT(std::string(s.message()), ::testing::Not(HasSubstr("--dim")));
}

TEST(ApiTest, ExternalDataResolvesAgainstBaseDir) {
  const std::string path = kModels + "/external/mlp.onnx";
  onnx_bcast::RunOptions options;
  options.random_missing_inputs = true;
  absl::StatusOr<onnx_bcast::NamedTensors> from_path = onnx_bcast::Run(path, {}, options);
  ASSERT_TRUE(from_path.ok()) << from_path.status();
  absl::StatusOr<onnx::ModelProto> model = onnx_bcast::LoadModel(path);
  ASSERT_TRUE(model.ok());
  options.load.base_dir = kModels + "/external";
  absl::StatusOr<onnx_bcast::NamedTensors> from_memory = onnx_bcast::Run(*model, {}, options);
  ASSERT_TRUE(from_memory.ok()) << from_memory.status();
  EXPECT_EQ((*from_path)[0].second.data, (*from_memory)[0].second.data);
  // Without the base dir the weights cannot be found: an error, not a crash.
  options.load.base_dir = "/nonexistent";
  EXPECT_FALSE(onnx_bcast::Run(*model, {}, options).ok());
}

}  // namespace

// --- One front door (issue 14) ----------------------------------------------------------------
// The hostile catalogue's structural refusals and crash rows through the API: every entry point
// runs the structural checks the CLI runs before anything, so a broken graph is an error Status
// naming the file, never a stack overflow (a recursive model-local function did overflow the
// stack in Check()) or a signal.

struct HostileModel {
  const char* name;
  const char* text;
  const char* message;  // in every entry point's error
};

const HostileModel kStructural[] = {
    {"cycle", R"(<ir_version: 8, opset_import: ["" : 17]>
       g (float[2] x) => (float[2] y) { a = Add(x, b)  b = Relu(a)  y = Identity(b) })",
     "cycle"},
    {"undefined", R"(<ir_version: 8, opset_import: ["" : 17]>
       g (float[2] x) => (float[2] y) { y = Add(x, nowhere) })",
     "'nowhere', defined nowhere"},
    {"defined_twice", R"(<ir_version: 8, opset_import: ["" : 17]>
       g (float[2] x) => (float[2] y) { y = Relu(x)  y = Neg(x) })",
     "value 'y' is defined twice"},
    {"unproduced_output", R"(<ir_version: 8, opset_import: ["" : 17]>
       g (float[2] x) => (float[2] y, float[2] z) { y = Relu(x) })",
     "graph output 'z' is produced by no node"},
    {"two_initializers", R"(<ir_version: 8, opset_import: ["" : 17]>
       g (float[2] x) => (float[2] y) <float[2] w = {1, 2}, float[2] w = {3, 4}> { y = Add(x, w) })",
     "value 'w' is defined twice"},
    {"recursive", R"(<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
       g (float[2] x) => (float[2] y) { y = local.F(x) }
       <domain: "local", opset_import: ["" : 17, "local" : 1]>
       F (a) => (b) { b = local.F(a) })",
     "is recursive"},
    {"mutually_recursive", R"(<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
       g (float[2] x) => (float[2] y) { y = local.F(x) }
       <domain: "local", opset_import: ["" : 17, "local" : 1]>
       F (a) => (b) { b = local.G(a) }
       <domain: "local", opset_import: ["" : 17, "local" : 1]>
       G (a) => (b) { t = Relu(a)  b = local.F(t) })",
     "is recursive"},
};

fs::path WriteText(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path path = dir / (name + ".onnxtxt");
  std::ofstream(path) << text;
  return path;
}

// --- Issue 44: the library's refusals in its own words, as data, and alike with the CLI ------

// A refusal says what to set in the API's words and carries the refused rewrite's report.
TEST(ApiTest, RefusalsSpeakTheApisWordsAndCarryTheReport) {
  absl::StatusOr<onnx::ModelProto> model = onnx_bcast::LoadModel(kModels + "/cnn_block.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  onnx_bcast::OptimizeOptions options;
  options.target = "ncnn";
  options.live_probe = false;
  options.verify_engine = false;
  absl::StatusOr<onnx_bcast::OptimizeReport> r = onnx_bcast::Optimize(&*model, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  const std::string message(r.status().message());
  EXPECT_THAT(message, testing::StartsWith("model: target ncnn not met: 1 node(s)"));
  EXPECT_THAT(message, HasSubstr("bind N with OptimizeOptions::dims"));
  EXPECT_THAT(message, Not(HasSubstr("--dim")));
  EXPECT_THAT(message, Not(HasSubstr("<memory>")));
  const absl::optional<absl::Cord> payload = r.status().GetPayload(onnx_bcast::kOptReportPayload);
  ASSERT_TRUE(payload.has_value());
  const nlohmann::json report = nlohmann::json::parse(std::string(*payload));
  EXPECT_EQ(report["refused"]["exit"], 3);
  ASSERT_EQ(report["violation_details"].size(), 1u);
  EXPECT_EQ(report["violation_details"][0]["node"], "center");
  EXPECT_EQ(report["violation_details"][0]["hint"], "bind N with OptimizeOptions::dims");
  EXPECT_THAT(std::string(*payload), Not(HasSubstr("--dim")));

  options.allow_partial = true;
  r = onnx_bcast::Optimize(&*model, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->violation_details.size(), 1u);
  const onnx_bcast::Violation& v = r->violation_details[0];
  EXPECT_EQ(v.graph, "main");
  EXPECT_EQ(v.node, "center");
  EXPECT_EQ(v.op, "Sub");
  EXPECT_EQ(v.shapes, "[N,10] and [N,1]");
  EXPECT_EQ(v.hint, "bind N with OptimizeOptions::dims");
  EXPECT_THAT(r->violations[0], Not(HasSubstr("--dim")));
  EXPECT_THAT(r->text, Not(HasSubstr("--dim")));
}

// Value ranges of random inputs: the API's input_ranges, checked against the model.
TEST(ApiTest, RunTakesInputRanges) {
  onnx_bcast::RunOptions options;
  options.random_missing_inputs = true;
  options.input_ranges["a"] = {2, 3, /*integers=*/true};
  absl::StatusOr<onnx_bcast::NamedTensors> out = onnx_bcast::Run(AddModel(3), {}, options);
  ASSERT_TRUE(out.ok()) << out.status();
  // y = a + b, a in {2, 3}, b in [-1, 1): every y in [1, 4).
  const onnx_bcast::Tensor& y = out->front().second;
  for (size_t k = 0; k < y.data.size() / 4; ++k) {
    float v;
    std::memcpy(&v, y.data.data() + 4 * k, 4);
    EXPECT_GE(v, 1.0f);
    EXPECT_LT(v, 4.0f);
  }
  options.input_ranges = {{"c", {0, 1}}};
  out = onnx_bcast::Run(AddModel(3), {}, options);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("RunOptions::input_ranges c=0:1: the model has no input 'c'"));
  options.input_ranges = {{"a", {1, 0}}};
  out = onnx_bcast::Run(AddModel(3), {}, options);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("LO is above HI"));
}

// The CLI's `opt` and the API's Optimize decide alike (issue 44 item 2): for the same model and
// options, the same exit code (as a status code), the same nodes outside the target's form, the
// same engine verdict and the same refusal, read from `opt --report` (written on a refusal too)
// and from the report the API returns or attaches to its error.
struct Outcome {
  int exit = 0;
  nlohmann::json report;
};

Outcome CliOpt(const std::vector<std::string>& args, const fs::path& dir) {
  std::string command = std::string("'") + BCAST_CLI + "' opt";
  for (const std::string& a : args) command += " '" + a + "'";
  const fs::path report = dir / "cli.json";
  fs::remove(report);
  command += " -o '" + (dir / "cli.onnx").string() + "' --report '" + report.string() +
             "' >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  Outcome out;
  out.exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (fs::exists(report)) {
    std::ifstream in(report);
    out.report = nlohmann::json::parse(in);
  }
  return out;
}

Outcome ApiOpt(const std::string& path, const onnx_bcast::OptimizeOptions& options,
               const fs::path& dir) {
  absl::StatusOr<onnx_bcast::OptimizeReport> r =
      onnx_bcast::Optimize(path, (dir / "api.onnx").string(), options);
  Outcome out;
  if (r.ok()) {
    out.report = nlohmann::json::parse(r->json);
    return out;
  }
  // The CLI's exit codes for the statuses of opt's outcomes.
  switch (r.status().code()) {
    case absl::StatusCode::kUnimplemented:
      out.exit = 3;
      break;
    case absl::StatusCode::kAborted:
      out.exit = 1;
      break;
    case absl::StatusCode::kInvalidArgument:
      out.exit = 1;
      break;
    default:
      out.exit = 2;
  }
  if (absl::optional<absl::Cord> p = r.status().GetPayload(onnx_bcast::kOptReportPayload)) {
    out.report = nlohmann::json::parse(std::string(*p));
  }
  return out;
}

// What both must agree on: the verdicts, not the words (the API names its option fields).
nlohmann::json Verdicts(const nlohmann::json& report) {
  nlohmann::json v = nlohmann::json::object();
  if (report.is_null()) return v;
  v["refused_exit"] = report.contains("refused") ? report["refused"]["exit"] : nlohmann::json();
  nlohmann::json nodes = nlohmann::json::array();
  if (report.contains("violation_details")) {
    for (const auto& d : report["violation_details"]) {
      nodes.push_back(
          {d["graph"], d["node"], d["op"], d["shapes"], d["cannot_prove"], d["hint"].is_null()});
    }
  }
  v["violations"] = nodes;
  // OpenCV 4.6 given a model whose input dims are symbolic reads shapes it never set: it
  // refuses or dies of SIGFPE depending on the process's memory, so a failed engine check is
  // compared as such, not by how it failed.
  nlohmann::json engine =
      report.contains("engine") ? report["engine"]["outcome"] : nlohmann::json();
  if (engine == "refused" || engine == "crashed") engine = "failed";
  v["engine"] = engine;
  v["waived"] = report.contains("waived") ? report["waived"].size() : 0;
  v["rewrites"] = report["summary"]["rewrites"];
  return v;
}

TEST(ApiAlikeCli, OptimizeDecidesAsOptDoes) {
  const fs::path dir = TempDir("alike");
  const std::string fixtures = std::string(BCAST_SOURCE_DIR) + "/tests/fixtures";
  struct Case {
    std::string model;
    std::string target;
    std::map<std::string, int64_t> dims;
  };
  std::vector<Case> cases = {
      {kModels + "/cnn_block.onnx", "explicit", {}},
      {kModels + "/cnn_block.onnx", "ncnn", {}},
      {kModels + "/cnn_block.onnx", "ncnn", {{"N", 1}}},
      {fixtures + "/opt/unknown_rank.onnxtxt", "ncnn", {}},
      {fixtures + "/check/symbolic_batch.onnxtxt", "explicit", {{"N", 3}}},
      {fixtures + "/newcomer/unet_skip_op13.onnx", "none", {}},
  };
#ifdef BCAST_HAVE_OPENCV
  cases.push_back({fixtures + "/newcomer/googlenet_like_op13.onnx", "opencv", {}});
  cases.push_back(
      {fixtures + "/newcomer/unet_skip_op13.onnx", "opencv", {{"N", 1}, {"H", 32}, {"W", 32}}});
#endif
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model + " --target " + c.target);
    std::vector<std::string> args = {c.model, "--target", c.target};
    std::string dims;
    for (const auto& [s, v] : c.dims)
      dims += (dims.empty() ? "" : ",") + s + "=" + std::to_string(v);
    if (!dims.empty()) args.insert(args.end(), {"--dim", dims});
    const Outcome cli = CliOpt(args, dir);
    onnx_bcast::OptimizeOptions options;
    options.target = c.target;
    options.dims = c.dims;
    const Outcome api = ApiOpt(c.model, options, dir);
    EXPECT_EQ(api.exit, cli.exit);
    EXPECT_EQ(Verdicts(api.report).dump(), Verdicts(cli.report).dump());
    // A written model is the same file either way.
    if (cli.exit == 0) {
      std::ifstream a(dir / "api.onnx", std::ios::binary), b(dir / "cli.onnx", std::ios::binary);
      std::stringstream sa, sb;
      sa << a.rdbuf();
      sb << b.rdbuf();
      EXPECT_TRUE(sa.str() == sb.str());
    }
  }
}

TEST(ApiFrontDoor, StructuralRefusalsFromFiles) {
  const fs::path dir = TempDir("front_door_files");
  for (const HostileModel& h : kStructural) {
    SCOPED_TRACE(h.name);
    const std::string path = WriteText(dir, h.name, h.text).string();
    std::vector<absl::Status> errors = {
        onnx_bcast::LoadModel(path).status(),
        onnx_bcast::Check(path).status(),
        onnx_bcast::Run(path, {}).status(),
        onnx_bcast::Optimize(path, (dir / "out.onnx").string(), {}).status(),
        onnx_bcast::Verify(path, path).status(),
    };
    for (const absl::Status& s : errors) {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
      EXPECT_THAT(s.message(), HasSubstr(h.message));
      EXPECT_EQ(s.message().rfind(path + ": ", 0), 0u) << s;
    }
    EXPECT_FALSE(fs::exists(dir / "out.onnx"));
  }
}

// The model the issue names, built in memory as a converter would: y = F(x), F calls itself.
onnx::ModelProto RecursiveFunctionModel() {
  onnx::ModelProto m = AddModel(3);
  m.add_opset_import()->set_domain("local");
  m.mutable_opset_import(1)->set_version(1);
  onnx::NodeProto* call = m.mutable_graph()->mutable_node(0);
  call->set_op_type("F");
  call->set_domain("local");
  onnx::FunctionProto* f = m.add_functions();
  f->set_name("F");
  f->set_domain("local");
  f->add_input("p");
  f->add_input("q");
  f->add_output("r");
  *f->add_opset_import() = m.opset_import(0);
  *f->add_opset_import() = m.opset_import(1);
  onnx::NodeProto* self = f->add_node();
  self->set_op_type("F");
  self->set_domain("local");
  self->add_input("p");
  self->add_input("q");
  self->add_output("r");
  return m;
}

TEST(ApiFrontDoor, RecursiveFunctionInMemoryIsAStatusEverywhere) {
  onnx::ModelProto m = RecursiveFunctionModel();
  const std::string bytes = *onnx_bcast::SerializeModel(m);
  const onnx::ModelProto before = m;
  std::vector<absl::Status> errors = {
      onnx_bcast::ParseModel(bytes).status(),
      onnx_bcast::Check(m).status(),
      onnx_bcast::Run(m, {}).status(),
      onnx_bcast::Optimize(&m, {}).status(),
      onnx_bcast::Verify(m, m).status(),
  };
  for (const absl::Status& s : errors) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("function 'local.F' is recursive"));
  }
  EXPECT_EQ(m.SerializeAsString(), before.SerializeAsString());  // Optimize left it untouched
}

// The structural refusals text form cannot express, built in memory.
TEST(ApiFrontDoor, UnnamedOutputAndBadSparseInitializerInMemory) {
  onnx::ModelProto unnamed = AddModel(3);
  unnamed.mutable_graph()->mutable_output(0)->set_name("");
  onnx::ModelProto sparse = AddModel(3);
  sparse.mutable_graph()->mutable_input()->RemoveLast();  // b becomes a sparse initializer
  onnx::SparseTensorProto* st = sparse.mutable_graph()->add_sparse_initializer();
  st->add_dims(3);
  st->mutable_values()->set_name("b");
  st->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  st->mutable_values()->add_dims(1);
  st->mutable_values()->add_float_data(1);
  st->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  st->mutable_indices()->add_dims(1);
  st->mutable_indices()->add_int64_data(7);  // outside [0, 3)
  const std::pair<onnx::ModelProto, const char*> cases[] = {
      {unnamed, "graph output 0 has no name"},
      {sparse, "sparse tensor 'b' index 7 out of range"},
  };
  for (const auto& [model, message] : cases) {
    SCOPED_TRACE(message);
    onnx::ModelProto copy = model;
    for (const absl::Status& s :
         {onnx_bcast::ParseModel(*onnx_bcast::SerializeModel(model)).status(),
          onnx_bcast::Check(model).status(), onnx_bcast::Run(model, {}).status(),
          onnx_bcast::Optimize(&copy, {}).status(), onnx_bcast::Verify(model, model).status()}) {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
      EXPECT_THAT(s.message(), HasSubstr(message));
    }
  }
}

// Crash rows of the catalogue: the guards live below the front door, so the API gets them too.
TEST(ApiFrontDoor, CrashRowsAreStatusesOrVerdicts) {
  const fs::path dir = TempDir("front_door_crashes");
  const std::string d2s = WriteText(dir, "d2s", R"(<ir_version: 8, opset_import: ["" : 13]>
      g (float[1,4,2,2] x) => (float[1,1,4,4] y) { y = DepthToSpace<blocksize = 4294967296>(x) })")
                              .string();
  onnx_bcast::RunOptions random;
  random.random_missing_inputs = true;
  EXPECT_TRUE(onnx_bcast::Check(d2s).ok());  // inference refuses the node; no SIGFPE
  absl::Status run = onnx_bcast::Run(d2s, {}, random).status();
  EXPECT_THAT(run.message(), HasSubstr("blocksize 4294967296")) << run;
  const std::string split = WriteText(dir, "split", R"(<ir_version: 8, opset_import: ["" : 13]>
      g (float[6,4] x) => (float[6,4] y) {
        s = Constant<value = int64 {0}>()  q = SplitToSequence(x, s)
        i = Constant<value = int64 {0}>()  y = SequenceAt(q, i)
      })")
                                .string();
  EXPECT_TRUE(onnx_bcast::Check(split).ok());
  EXPECT_THAT(onnx_bcast::Run(split, {}, random).status().message(),
              HasSubstr("split must be positive"));
  std::string nested = "y = Constant<value = float[1] {1}>()";
  for (int i = 0; i < 6000; ++i) {
    nested = "y = If(c) <then_branch = t () => (float[1] y) { " + nested +
             " }, else_branch = e () => (float[1] y) { y = Constant<value = float[1] {1}>() }>";
  }
  const std::string deep = WriteText(dir, "deep", R"(<ir_version: 8, opset_import: ["" : 17]>
      g (bool c) => (float[1] y) {)" + nested + "}")
                               .string();
  absl::Status s = onnx_bcast::Check(deep).status();
  EXPECT_THAT(s.message(), HasSubstr("nested deeper than the limit of 100")) << s;
  onnx_bcast::RunOptions threads = random;
  threads.threads = 100000;
  EXPECT_EQ(onnx_bcast::Run(d2s, {}, threads).status().code(),
            absl::StatusCode::kInvalidArgument);
}

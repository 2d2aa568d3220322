// `check` on small exporter-style models (tests/fixtures/check/golden_*.onnxtxt): the text
// report (check --verbose) must equal golden_*.expected byte for byte. BCAST_UPDATE_GOLDEN=1
// rewrites the expected files (review the diff: a change in what the analysis knows shows there).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/shape_propagation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "report/check_report.h"

namespace onnx_bcast::analysis {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const fs::path kDir = fs::path(BCAST_SOURCE_DIR) / "tests" / "fixtures" / "check";

Analysis AnalyzeFixture(const std::string& name) {
  absl::StatusOr<proto::Model> m = proto::LoadModel((kDir / name).string());
  EXPECT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Analysis> a = AnalyzeBroadcasts(*m, AnalysisOptions());
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *a : Analysis();
}

std::vector<std::string> Fixtures() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(kDir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("golden_", 0) == 0 && e.path().extension() == ".onnxtxt") names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  return names;
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, ReportMatches) {
  const std::string name = GetParam();
  const Analysis a = AnalyzeFixture(name);
  // The verbose form: the default report and every node's shapes (what the analysis knows).
  const std::string text = report::FormatCheckText(a, name, /*lint=*/false, nullptr, report::CheckDetail::kAll);
  const fs::path expected_path = kDir / (fs::path(name).stem().string() + ".expected");
  if (std::getenv("BCAST_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(expected_path, std::ios::binary) << text;
    GTEST_SKIP() << "rewrote " << expected_path;
  }
  std::ifstream in(expected_path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing " << expected_path << " (BCAST_UPDATE_GOLDEN=1 writes it)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(text, expected.str());
}

INSTANTIATE_TEST_SUITE_P(Check, Golden, ::testing::ValuesIn(Fixtures()), [](const auto& info) {
  std::string n = fs::path(info.param).stem().string();
  return n.substr(std::string("golden_").size());
});

// What the walk itself guarantees, asserted apart from the report's wording.
const NodeVerdict& Find(const Analysis& a, const std::string& op, int nth = 0) {
  for (const NodeVerdict& v : a.nodes) {
    if (v.op == op && nth-- == 0) return v;
  }
  static const NodeVerdict none;
  ADD_FAILURE() << "no " << op;
  return none;
}

// The printed shapes of `v`'s inputs.
std::vector<std::string> InputShapes(const NodeVerdict& v) {
  std::vector<std::string> shapes;
  for (const broadcast::Shape& s : v.inputs) shapes.push_back(s.ToString());
  return shapes;
}

TEST(Walk, IfWithConstantConditionTakesItsBranch) {
  const Analysis a = AnalyzeFixture("golden_if_constant.onnxtxt");
  const NodeVerdict& add = Find(a, "Add");
  EXPECT_EQ(add.inputs[0].ToString(), "[N,3]");
  EXPECT_EQ(add.verdict, broadcast::Verdict::kOk) << add.message;
}

TEST(Walk, IfWithUnknownConditionMergesBranches) {
  const Analysis a = AnalyzeFixture("golden_if_merge.onnxtxt");
  const NodeVerdict& add = Find(a, "Add");
  // N agrees, 3 vs 5 becomes a fresh symbol named after the If node (printed quoted: '#' and
  // ':' are not part of plain symbol names).
  EXPECT_EQ(add.inputs[0].ToString(), "[N,`If#0:0:1`]");
  EXPECT_EQ(add.verdict, broadcast::Verdict::kConditional);
  EXPECT_EQ(add.condition.ToString(), "`If#0:0:1` ∈ {1, 3}");
}

TEST(Walk, FunctionBodiesPerCallSite) {
  const Analysis a = AnalyzeFixture("golden_function_call_sites.onnxtxt");
  ASSERT_EQ(a.nodes.size(), 2u);
  EXPECT_EQ(a.nodes[0].verdict, broadcast::Verdict::kOk) << a.nodes[0].message;
  EXPECT_EQ(a.nodes[1].verdict, broadcast::Verdict::kError);
  EXPECT_THAT(a.nodes[1].graph, HasSubstr("AddBias#1"));
  EXPECT_EQ(a.shapes.at("main").at("y").ToString(), "[N,3]");
}

TEST(Walk, LoopBodySeesOuterScopeAndStacksScanOutputs) {
  const Analysis a = AnalyzeFixture("golden_loop_outer_scope.onnxtxt");
  const NodeVerdict& add = Find(a, "Add");
  EXPECT_THAT(InputShapes(add), ElementsAre("[N,3]", "[3]"));
  EXPECT_EQ(add.verdict, broadcast::Verdict::kOk);
  // The trip count is the constant 4 and nothing stops the loop early.
  EXPECT_EQ(a.shapes.at("main").at("steps").ToString(), "[4,N,3]");
  EXPECT_EQ(a.shapes.at("main").at("y").ToString(), "[N,3]");
}

TEST(Walk, LoopBodyIsCheckedWithTheShapesOfLaterIterations) {
  const Analysis a = AnalyzeFixture("golden_loop_growing_carried.onnxtxt");
  ASSERT_EQ(a.nodes.size(), 1u) << "the first walk's verdicts are replaced, not repeated";
  EXPECT_EQ(a.nodes[0].inputs[0].ToString(), "[N,`Loop#0:0:1`]");
  EXPECT_EQ(a.nodes[0].verdict, broadcast::Verdict::kConditional) << a.nodes[0].message;
  EXPECT_EQ(a.combined.ToString(), "`Loop#0:0:1` ∈ {1, 3}");
}

TEST(Walk, UnnamedInputDimsAreNamedAfterTheirInput) {
  const Analysis a = AnalyzeFixture("golden_unnamed_dims.onnxtxt");
  const NodeVerdict& mul = Find(a, "Mul");
  EXPECT_THAT(InputShapes(mul), ElementsAre("[x:0,3]", "[mask:0,3]"));
  EXPECT_EQ(mul.verdict, broadcast::Verdict::kConditional);
}

TEST(Walk, UnknownNamesTheNodeItComesFrom) {
  const Analysis a = AnalyzeFixture("golden_data_dependent.onnxtxt");
  const NodeVerdict& custom = Find(a, "Add", 1);
  EXPECT_EQ(custom.verdict, broadcast::Verdict::kUnknown);
  EXPECT_THAT(custom.message,
              HasSubstr("the shape of 'k' comes from custom op Foo 'Foo#3' (domain custom) "
                        "with no shape function"));
}

TEST(Walk, ScalarExponentIsOkForAnyShape) {
  const Analysis a = AnalyzeFixture("golden_pow_scalar.onnxtxt");
  EXPECT_EQ(Find(a, "Pow").verdict, broadcast::Verdict::kOk);
}

}  // namespace
}  // namespace onnx_bcast::analysis

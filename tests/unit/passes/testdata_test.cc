// Every target on every model of the ONNX test data, in-process: the output passes libonnx's
// full check whenever the input does (the pass manager's verify_each), explicit leaves no
// multidirectional op with operands of different rank, none leaves none with different shapes,
// and canonical after none gives back a graph no larger than the original.
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/onnx_checks.h"
#include "tests/support/sanitizer.h"
#include "tests/support/pass_test_util.h"

namespace onnx_bcast::passes {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> TestDataModels() {
  std::vector<std::string> models;
  const char* root = "/usr/share/libonnx-testdata/data";
  if (!fs::exists(root)) return models;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().filename() == "model.onnx") models.push_back(e.path().string());
  }
  std::sort(models.begin(), models.end());
  return models;
}

TEST(TestData, EveryTargetKeepsEveryModelValid) {
  const std::vector<std::string> models = TestDataModels();
  if (models.empty()) GTEST_SKIP() << "no ONNX test data installed";
  std::map<std::string, int> changed, refused;
  int loaded = 0;
  // Under the sanitizers every 3rd model: the same passes at a third of the instrumented cost.
  const size_t stride = test_support::SweepStride(3);
  for (size_t i = 0; i < models.size(); i += stride) {
    const std::string& path = models[i];
    absl::StatusOr<proto::Model> original = proto::LoadModel(path);
    if (!original.ok()) continue;
    ++loaded;
    const bool valid = proto::CheckModel(*original, true).ok();
    proto::Model none_out;
    bool none_ok = false;
    for (const targets::TargetProfile& t : targets::BuiltinTargets()) {
      proto::Model m = *original;
      std::vector<PassRun> runs;
      const absl::Status s = test_support::RunTarget(t, &m, &runs);
      ASSERT_NE(s.code(), absl::StatusCode::kInternal) << path << " " << t.name << ": " << s;
      if (!s.ok()) {
        // Refusals are allowed (a rank ncnn cannot run, an opset the converter cannot reach,
        // a broadcast the analysis proves wrong) but never for the numpy-only targets on a
        // model that passes libonnx's full check at a numpy opset.
        ++refused[t.name];
        if (t.name != "ncnn") {
          EXPECT_TRUE(!valid || s.code() == absl::StatusCode::kUnimplemented ||
                      s.code() == absl::StatusCode::kInvalidArgument)
              << path << " " << t.name << ": " << s;
        }
        continue;
      }
      if (!proto::ModelsEqual(original->proto, m.proto)) ++changed[t.name];
      if (valid) {
        EXPECT_TRUE(proto::CheckModel(m, true).ok())
            << path << " " << t.name << ": " << proto::CheckModel(m, true);
      }
      if (t.name == "explicit") {
        EXPECT_THAT(test_support::RankMismatches(m), ::testing::IsEmpty()) << path;
      }
      if (t.name == "none") {
        EXPECT_THAT(test_support::ShapeMismatches(m), ::testing::IsEmpty()) << path;
        none_out = m;
        none_ok = true;
      }
    }
    if (none_ok) {
      const absl::Status s = test_support::RunTarget(*targets::FindTarget("canonical"), &none_out);
      ASSERT_TRUE(s.ok()) << path << ": " << s;
      const ModelSummary before = Summarize(original->proto);
      const ModelSummary after = Summarize(none_out.proto);
      // Upgrading a legacy model may add one Unsqueeze per legacy broadcast.
      if (before.opset >= 7) {
        EXPECT_LE(after.nodes, before.nodes) << path;
        EXPECT_LE(after.initializer_bytes, before.initializer_bytes) << path;
      }
    }
  }
  EXPECT_GT(loaded * static_cast<int>(stride), 1000);
  for (const targets::TargetProfile& t : targets::BuiltinTargets()) {
    std::printf("%-10s changed %4d models, refused %3d\n", t.name.c_str(), changed[t.name],
                refused[t.name]);
  }
}

}  // namespace
}  // namespace onnx_bcast::passes

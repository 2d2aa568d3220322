// Live exact-shape probes on the installed OpenCV (issue 35): the `[1,1,32]` Sub of a LayerNorm
// (x minus its mean over the last axis) runs on OpenCV 4.6 with one output element instead of
// 32. The table of classes accepts it; the live probe names it wrong; opt places it in a form
// that runs and matches there (checked on the engine), or refuses it. Also: the probe cache on
// disk answers a second opt without running the engine, and --no-live-probe decides by the
// table.
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "driver/driver.h"
#include "driver/engine_probe.h"
#include "driver/live_probe.h"
#include "engines/isolated_run.h"
#include "engines/opencv_engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/pass_manager.h"
#include "passes/targets.h"
#include "proto/model_io.h"
#include "proto/onnx_text.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/random_inputs.h"

namespace onnx_bcast {
namespace {

namespace fs = std::filesystem;

// LayerNorm's centring at T = 1: [1,1,32] - ReduceMean over the last axis [1,1,1].
constexpr char kCentring[] = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,32] x) => (float[1,1,32] y) {
  m = ReduceMean <axes = [-1], keepdims = 1> (x)
  y = Sub (x, m)
}
)";

proto::Model Parse(const char* text) {
  absl::StatusOr<proto::Model> m = proto::ParseModelText(text, "centring");
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

std::unique_ptr<driver::LiveProbe> Live(const std::string& cache = "") {
  absl::StatusOr<std::unique_ptr<driver::LiveProbe>> live = driver::MakeLiveProbe("opencv", cache);
  EXPECT_TRUE(live.ok()) << live.status();
  return live.ok() ? *std::move(live) : nullptr;
}

// Runs `model` on OpenCV and on our executor with seeded inputs: whether it runs and matches.
std::string RunsOnOpenCv(const proto::Model& model) {
  absl::StatusOr<std::shared_ptr<const rt::Model>> runtime = rt::LoadRuntimeModel(model);
  if (!runtime.ok()) return std::string(runtime.status().message());
  rt::RandomInputOptions options;
  options.seed = 3;
  absl::StatusOr<rt::Feeds> feeds = rt::RandomInputs(*(*runtime)->main, options);
  if (!feeds.ok()) return std::string(feeds.status().message());
  absl::StatusOr<std::unique_ptr<rt::Executor>> exec = rt::Executor::Create(*runtime);
  if (!exec.ok()) return std::string(exec.status().message());
  absl::StatusOr<std::vector<rt::Value>> want = (*exec)->Run(*feeds);
  if (!want.ok()) return std::string(want.status().message());
  engines::EngineJob job;
  job.model_bytes = *proto::SerializeModel(model.proto);
  for (const auto& [n, v] : *feeds) job.inputs.emplace_back(n, v.tensor->Clone());
  job.output_names = (*runtime)->main->outputs;
  absl::StatusOr<std::vector<engines::EngineOutcome>> out = engines::RunIsolated(
      []() -> absl::StatusOr<std::unique_ptr<engines::EngineAdapter>> {
        return engines::MakeOpenCvEngine();
      },
      {job});
  if (!out.ok()) return std::string(out.status().message());
  const engines::EngineOutcome& o = (*out)[0];
  if (o.kind != engines::OutcomeKind::kRan) return absl::StrCat("did not run: ", o.message);
  const driver::OutputAgreement a =
      driver::CompareEngineOutput(*(*want)[0].tensor, o.outputs[0].second);
  return a.matches ? "matches" : absl::StrCat("wrong: ", a.message);
}

TEST(LiveProbe, TableAcceptsTheT1CentringTheEngineComputesWrongly) {
  const proto::Model model = Parse(kCentring);
  const passes::TargetProfile* opencv = passes::FindTarget("opencv");
  ASSERT_NE(opencv, nullptr);
  // The table: in its form.
  absl::StatusOr<std::vector<std::string>> table = passes::FindTargetViolations(model, *opencv);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_THAT(*table, testing::IsEmpty());
  // The engine as exported: it runs, with the wrong number of elements.
  EXPECT_THAT(RunsOnOpenCv(model), testing::StartsWith("wrong"));
  // The live check names the node and what the engine did.
  std::unique_ptr<driver::LiveProbe> live = Live();
  ASSERT_NE(live, nullptr);
  absl::StatusOr<std::vector<std::string>> named =
      passes::FindTargetViolations(model, *opencv, nullptr, nullptr, live.get());
  ASSERT_TRUE(named.ok()) << named.status();
  ASSERT_EQ(named->size(), 1u);
  EXPECT_THAT((*named)[0], testing::HasSubstr("Sub"));
  EXPECT_THAT((*named)[0], testing::HasSubstr("decided live on opencv"));
  EXPECT_THAT((*named)[0], testing::HasSubstr("wrong"));
}

TEST(LiveProbe, OptPlacesTheCentringInAFormThatRunsAndMatches) {
  absl::StatusOr<passes::ResolvedPipeline> pipeline = passes::ResolvePipeline({.target = "opencv"});
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  std::unique_ptr<driver::LiveProbe> live = Live();
  ASSERT_NE(live, nullptr);
  proto::Model model = Parse(kCentring);
  driver::OptSettings settings;
  settings.live = live.get();
  passes::OptReport report;
  ASSERT_TRUE(driver::Optimize(&model, *pipeline, settings, &report).ok()) << report.error;
  EXPECT_THAT(report.decided_by, testing::StartsWith("live on opencv"));
  if (report.violations.empty()) {
    // Placed: the engine runs the written model and matches.
    EXPECT_EQ(RunsOnOpenCv(model), "matches") << proto::PrintGraph(model.proto.graph());
    bool live_rewrite = false;
    for (const passes::PassRun& run : report.runs) {
      for (const passes::Rewrite& r : run.stats.log) {
        live_rewrite |= absl::StrContains(r.detail, "decided live on opencv");
      }
    }
    EXPECT_TRUE(live_rewrite);
    // Idempotent: a second opt (the same oracle) changes nothing.
    proto::Model again = model;
    passes::OptReport second;
    ASSERT_TRUE(driver::Optimize(&again, *pipeline, settings, &second).ok()) << second.error;
    EXPECT_TRUE(proto::ModelsEqual(model.proto, again.proto));
  } else {
    // Refused: named, never written as met.
    EXPECT_THAT(report.violations[0], testing::HasSubstr("decided live"));
  }
}

TEST(LiveProbe, TheDiskCacheAnswersASecondRunWithoutTheEngine) {
  const fs::path dir = fs::temp_directory_path() / absl::StrCat("bcast_live_cache_", ::getpid());
  fs::remove_all(dir);
  absl::StatusOr<passes::ResolvedPipeline> pipeline = passes::ResolvePipeline({.target = "opencv"});
  ASSERT_TRUE(pipeline.ok());
  proto::Model first = Parse(kCentring);
  proto::Model second = first;
  {
    std::unique_ptr<driver::LiveProbe> live = Live(dir.string());
    driver::OptSettings settings;
    settings.live = live.get();
    passes::OptReport report;
    ASSERT_TRUE(driver::Optimize(&first, *pipeline, settings, &report).ok());
    EXPECT_GT(live->forms_run(), 0);
  }
  std::unique_ptr<driver::LiveProbe> live = Live(dir.string());
  driver::OptSettings settings;
  settings.live = live.get();
  passes::OptReport report;
  ASSERT_TRUE(driver::Optimize(&second, *pipeline, settings, &report).ok());
  EXPECT_EQ(live->forms_run(), 0);
  EXPECT_GT(live->cache_hits(), 0);
  EXPECT_TRUE(proto::ModelsEqual(first.proto, second.proto));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace onnx_bcast

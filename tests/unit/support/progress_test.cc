// The progress interface of the library layers: ProgressStep on no sink does nothing, a step
// left without End ends "failed", counts group by thousands, and the pass manager reports each
// pass of a pipeline as one step with its counts.
#include "support/progress.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/pass_manager.h"
#include "proto/model_io.h"

namespace onnx_bcast::support {
namespace {

using ::testing::ElementsAre;

// Records every call as text: "begin X", "update 1/2", "end Y".
class RecordingSink : public ProgressSink {
 public:
  void Begin(std::string_view what) override { calls.push_back("begin " + std::string(what)); }
  void Update(int64_t done, int64_t total) override {
    calls.push_back("update " + std::to_string(done) + "/" + std::to_string(total));
  }
  void End(std::string_view outcome) override { calls.push_back("end " + std::string(outcome)); }
  std::vector<std::string> calls;
};

TEST(Progress, FormatCountGroupsThousands) {
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(1000), "1,000");
  EXPECT_EQ(FormatCount(200001), "200,001");
  EXPECT_EQ(FormatCount(-1234567), "-1,234,567");
}

TEST(Progress, StepWithoutSinkDoesNothingAndAnOpenStepEndsFailed) {
  ProgressStep quiet(nullptr, "nothing");
  EXPECT_FALSE(quiet.active());
  quiet.Update(1, 2);
  quiet.End("ok");

  RecordingSink sink;
  {
    ProgressStep step(&sink, "work");
    EXPECT_TRUE(step.active());
    step.Update(1, 2);
  }
  {
    ProgressStep step(&sink, "more");
    step.End("ok");
    step.End("twice");  // ignored: a step ends once
  }
  EXPECT_THAT(sink.calls,
              ElementsAre("begin work", "update 1/2", "end failed", "begin more", "end ok"));
}

TEST(Progress, PipelineReportsEachPass) {
  absl::StatusOr<proto::Model> model = proto::LoadModel(BCAST_SOURCE_DIR "/models/cnn_block.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<passes::ResolvedPipeline> pipeline = passes::ResolvePipeline({});  // the default target
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  targets::TargetProfile profile = *pipeline->profile;
  RecordingSink sink;
  passes::PipelineOptions options;
  options.pass_options.target = &profile;
  options.progress = &sink;
  std::vector<passes::PassRun> runs;
  ASSERT_TRUE(passes::RunPipeline(&*model, pipeline->passes, options, &runs).ok());
  EXPECT_THAT(sink.calls, ElementsAre("begin pass upgrade-legacy-broadcast", "end no change",
                                      "begin pass align-ranks", "end 4 initializers rewritten"));
}

}  // namespace
}  // namespace onnx_bcast::support

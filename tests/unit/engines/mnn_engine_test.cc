// The MNN adapter through the isolating runner: a model it runs gives numpy's numbers with the
// batch axis kept (MNN has one), integers come back as MNN computes them, an op the converter
// lacks is refused with MNNConvert's own line, and a broadcast MNN's shape rule refuses is
// refused at load with the converter's words although MNNConvert writes the model anyway; and
// the pure helper.
#include "engines/mnn_engine.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engines/isolated_run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "tests/support/engine_jobs.h"

namespace onnx_bcast::engines {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The adapter's own maker: std::function converts its unique_ptr to the StatusOr.
EngineFactory Mnn() { return MakeMnnEngine; }

EngineOutcome RunOne(EngineJob job) { return test_support::RunOne(Mnn(), std::move(job)); }

TEST(MnnEngine, ReportsItsVersionAndBuild) {
  // MNN's version and the date of the commit built from (scripts/engines/build-mnn.sh).
  test_support::ExpectNameAndVersion(Mnn(), "mnn", "[0-9]+\\.[0-9]+\\.[0-9]+\\+[0-9]{8}");
  absl::StatusOr<std::unique_ptr<EngineAdapter>> e = MakeMnnEngine();
  EXPECT_THAT((*e)->build(), ::testing::MatchesRegex("github.com/alibaba/MNN commit [0-9a-f]{40}"));
}

TEST(MnnEngine, RunsAnAddInAChild) {
  test_support::ExpectAddRan(RunOne(test_support::AddJob({2, 3})));
}

TEST(MnnEngine, KeepsABatchOtherThanOne) {
  EngineJob job;
  job.model_bytes = test_support::ModelBytes(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[2,1,3] a, float[2,2,1] b) => (float[2,2,3] y) { y = Sub(a, b) }");
  job.inputs.emplace_back("a", *rt::Tensor::FromValues<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6}));
  job.inputs.emplace_back("b", *rt::Tensor::FromValues<float>({2, 2, 1}, {1, 2, 3, 4}));
  job.output_names = {"y"};
  const EngineOutcome o = RunOne(std::move(job));
  ASSERT_EQ(o.kind, OutcomeKind::kRan) << o.message;
  const rt::Tensor& y = o.outputs.at(0).second;
  EXPECT_THAT(y.shape(), ElementsAre(2, 2, 3));
  EXPECT_THAT(y.values<float>(), ElementsAre(0, 1, 2, -1, 0, 1, 1, 2, 3, 0, 1, 2));
}

TEST(MnnEngine, FeedsInt64AsMnnComputesIt) {
  // A Gather of int64 indices: MNN runs integer tensors as int32.
  EngineJob job;
  job.model_bytes = test_support::ModelBytes(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (int64[1,3] ids) => (float[1,3,2] y) <float[4,2] w = {0,1,10,11,20,21,30,31}> "
      "{ y = Gather(w, ids) }");
  job.inputs.emplace_back("ids", *rt::Tensor::FromValues<int64_t>({1, 3}, {3, 0, 2}));
  job.output_names = {"y"};
  const EngineOutcome o = RunOne(std::move(job));
  ASSERT_EQ(o.kind, OutcomeKind::kRan) << o.message;
  const rt::Tensor& y = o.outputs.at(0).second;
  EXPECT_THAT(y.shape(), ElementsAre(1, 3, 2));
  EXPECT_THAT(y.values<float>(), ElementsAre(30, 31, 0, 1, 20, 21));
}

TEST(MnnEngine, ABroadcastMnnRefusesIsRefusedAtLoadInTheConvertersWords) {
  // [2,3] + [4,3] is no broadcast: MNNConvert logs its shape error and still writes a model.
  EngineJob job;
  job.model_bytes = test_support::ModelBytes(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[2,3] a) => (float[2,3] y) <float[4,3] b = {1,2,3,4,5,6,7,8,9,10,11,12}> "
      "{ y = Add(a, b) }");
  job.inputs.emplace_back("a", *rt::Tensor::FromValues<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  job.output_names = {"y"};
  const EngineOutcome o = RunOne(std::move(job));
  EXPECT_EQ(o.kind, OutcomeKind::kRefused);
  EXPECT_EQ(o.stage, "load");
  EXPECT_THAT(o.message, HasSubstr("Broad cast error, dim1 = 4, dim2 = 2"));
}

TEST(MnnConvertRefusal, KeepsTheConvertersLinesOnceInOrderWithoutLogPrefixes) {
  EXPECT_EQ(MnnConvertRefusal("Start to Convert Other Model Format To MNN Model...\n"
                              "Broad cast error, dim1 = 4, dim2 = 2\n"
                              "[12:00:01] /src/MNN/tools/converter/source/common/writeFb.cpp:220: "
                              "These Op Not Support: ONNX::Foo | ONNX::Bar\n"
                              "Broad cast error, dim1 = 4, dim2 = 2\n"
                              "Converted Success!\n"),
            "Broad cast error, dim1 = 4, dim2 = 2; These Op Not Support: ONNX::Foo | ONNX::Bar");
  EXPECT_EQ(MnnConvertRefusal("Start to Convert Other Model Format To MNN Model...\n"
                              "Converted Success!\n"),
            "");
}

}  // namespace
}  // namespace onnx_bcast::engines

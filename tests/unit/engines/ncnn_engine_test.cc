// The ncnn adapter through the isolating runner: a model it runs gives numpy's numbers with
// the batch axis of 1 dropped and restored, a batch other than 1 is refused, an op the
// converter lacks is refused with onnx2ncnn's own line; and the pure helpers.
#include "engines/ncnn_engine.h"

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

using NcnnEngine = test_support::AdapterTest<MakeNcnnEngine>;

TEST_F(NcnnEngine, ReportsItsVersionAndBuild) {
  test_support::ExpectNameAndVersion(Engine(), "ncnn", "1\\.0\\.[0-9]{8}");
}

TEST_F(NcnnEngine, RunsAnAddWithTheBatchAxisDroppedInAChild) {
  // [2, 3] out: ncnn's Mat has no batch axis.
  test_support::ExpectAddRan(RunOne(test_support::AddJob({1, 2, 3})));
}

TEST_F(NcnnEngine, RefusesABatchOtherThanOne) {
  const EngineOutcome o =
      RunOne(test_support::JobFeedingA("<ir_version: 8, opset_import: [\"\" : 13]>\n"
                                       "g (float[2,3] a) => (float[2,3] y) { y = Relu(a) }"));
  test_support::ExpectRefusedAt(o, "run");
  EXPECT_THAT(o.message, HasSubstr("ncnn has no batch axis"));
  EXPECT_THAT(o.message, HasSubstr("batch 2"));
}

TEST_F(NcnnEngine, AnOpTheConverterLacksIsRefusedInItsOwnWords) {
  EngineJob job;
  job.model_bytes = test_support::ModelBytes(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[1,3] a) => (float[1,2,3] y) <int64[3] s = {1,2,3}> { y = Expand(a, s) }");
  job.inputs.emplace_back("a", *runtime::Tensor::FromValues<float>({1, 3}, {1, 2, 3}));
  job.output_names = {"y"};
  const EngineOutcome o = RunOne(std::move(job));
  test_support::ExpectRefusedAt(o, "load");
  EXPECT_EQ(o.message, "Expand not supported yet!");
}

TEST(Onnx2NcnnRefusal, KeepsTheConvertersLinesOnceInOrder) {
  EXPECT_EQ(Onnx2NcnnRefusal("onnx2ncnn may not fully meet your needs.\n"
                             "Expand not supported yet!\n  # axis=1\nCast not supported yet!\n"
                             "Expand not supported yet!\nUnsupported slice step !\n"),
            "Expand not supported yet!; Cast not supported yet!; Unsupported slice step !");
  EXPECT_EQ(Onnx2NcnnRefusal("onnx2ncnn may not fully meet your needs.\n"), "");
}

TEST(NcnnDims, DropsABatchOfOneAndRefusesOthers) {
  EXPECT_THAT(*NcnnDims("x", {1, 3, 4, 5}), ElementsAre(3, 4, 5));
  EXPECT_THAT(*NcnnDims("x", {5}), ElementsAre(5));  // rank 1: no batch to drop
  EXPECT_THAT(*NcnnDims("x", {}), ElementsAre());
  EXPECT_THAT(*NcnnDims("x", {1, 2, 3, 4, 5}), ElementsAre(2, 3, 4, 5));
  EXPECT_FALSE(NcnnDims("x", {2, 3}).ok());
  EXPECT_FALSE(NcnnDims("x", {1, 2, 3, 4, 5, 6}).ok());
}

}  // namespace
}  // namespace onnx_bcast::engines

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

using MnnEngine = test_support::AdapterTest<MakeMnnEngine>;

TEST_F(MnnEngine, ReportsItsVersionAndBuild) {
  // MNN's version and the date of the commit built from (scripts/engines/build-mnn.sh).
  test_support::ExpectNameAndVersion(Engine(), "mnn", "[0-9]+\\.[0-9]+\\.[0-9]+\\+[0-9]{8}");
  absl::StatusOr<std::unique_ptr<EngineAdapter>> e = MakeMnnEngine();
  EXPECT_THAT((*e)->build(), ::testing::MatchesRegex("github.com/alibaba/MNN commit [0-9a-f]{40}"));
}

TEST_F(MnnEngine, RunsAnAddInAChild) {
  test_support::ExpectAddRan(RunOne(test_support::AddJob({2, 3})));
}

TEST_F(MnnEngine, KeepsABatchOtherThanOne) {
  EngineJob job;
  job.model_bytes = test_support::ModelBytes(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[2,1,3] a, float[2,2,1] b) => (float[2,2,3] y) { y = Sub(a, b) }");
  job.inputs.emplace_back("a", *runtime::Tensor::FromValues<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6}));
  job.inputs.emplace_back("b", *runtime::Tensor::FromValues<float>({2, 2, 1}, {1, 2, 3, 4}));
  job.output_names = {"y"};
  const EngineOutcome o = RunOne(std::move(job));
  ASSERT_EQ(o.kind, OutcomeKind::kRan) << o.message;
  const runtime::Tensor& y = o.outputs.at(0).second;
  EXPECT_THAT(y.shape(), ElementsAre(2, 2, 3));
  EXPECT_THAT(y.values<float>(), ElementsAre(0, 1, 2, -1, 0, 1, 1, 2, 3, 0, 1, 2));
}

TEST_F(MnnEngine, FeedsInt64AsMnnComputesIt) {
  // A Gather of int64 indices: MNN runs integer tensors as int32.
  EngineJob job;
  job.model_bytes = test_support::ModelBytes(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (int64[1,3] ids) => (float[1,3,2] y) <float[4,2] w = {0,1,10,11,20,21,30,31}> "
      "{ y = Gather(w, ids) }");
  job.inputs.emplace_back("ids", *runtime::Tensor::FromValues<int64_t>({1, 3}, {3, 0, 2}));
  job.output_names = {"y"};
  const EngineOutcome o = RunOne(std::move(job));
  ASSERT_EQ(o.kind, OutcomeKind::kRan) << o.message;
  const runtime::Tensor& y = o.outputs.at(0).second;
  EXPECT_THAT(y.shape(), ElementsAre(1, 3, 2));
  EXPECT_THAT(y.values<float>(), ElementsAre(30, 31, 0, 1, 20, 21));
}

TEST_F(MnnEngine, ABroadcastTheConverterRefusesIsRefusedAtLoadThoughItWritesTheModel) {
  // [2,3] + [4,3] is no broadcast. Between two constants MNNConvert folds it: it logs its
  // shape error, then writes a model and says "Converted Success!".
  const EngineOutcome o = RunOne(test_support::JobFeedingA(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[2,3] a) => (float[2,3] y) <float[4,3] b = {1,2,3,4,5,6,7,8,9,10,11,12}, "
      "float[2,3] c = {1,2,3,4,5,6}> { t = Add(c, b)\n y = Add(a, t) }"));
  test_support::ExpectRefusedAt(o, "load");
  EXPECT_EQ(o.message, "Broad cast error, dim1 = 4, dim2 = 2");
}

TEST_F(MnnEngine, ABroadcastTheRuntimeRefusesIsRefusedAtRunInItsWords) {
  // With a graph input the converter computes no shape; MNN's session does, when resized.
  const EngineOutcome o = RunOne(test_support::JobFeedingA(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[2,3] a) => (float[2,3] y) <float[4,3] b = {1,2,3,4,5,6,7,8,9,10,11,12}> "
      "{ y = Add(a, b) }"));
  test_support::ExpectRefusedAt(o, "run");
  EXPECT_EQ(o.message,
            "resizeSession failed to compute the shapes: Broad cast error, dim1 = 4, dim2 = 2; "
            "Compute Shape Error for y");
}

TEST_F(MnnEngine, AnOpTheConverterLacksIsRefusedInItsOwnWords) {
  const EngineOutcome o =
      RunOne(test_support::JobFeedingA("<ir_version: 8, opset_import: [\"\" : 13]>\n"
                                       "g (float[2,3] a) => (float[2,3] y) { y = Hardmax(a) }"));
  test_support::ExpectRefusedAt(o, "load");
  EXPECT_EQ(o.message, "These Op Not Support: ONNX::Hardmax");
}

TEST_F(MnnEngine, AnInputNothingReadsIsNotFed) {
  // MNNConvert folds Shape(x) of a static x: the session keeps x as an input without memory.
  EngineJob job;
  job.model_bytes = test_support::ModelBytes(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[1,3,4,5] x) => (int64[4] y) { y = Shape(x) }");
  job.inputs.emplace_back("x", *runtime::Tensor::Allocate(runtime::DType::kFloat32, {1, 3, 4, 5}));
  job.output_names = {"y"};
  const EngineOutcome o = RunOne(std::move(job));
  ASSERT_EQ(o.kind, OutcomeKind::kRan) << o.message;
  EXPECT_THAT(o.outputs.at(0).second.values<int32_t>(), ElementsAre(1, 3, 4, 5));
}

TEST_F(MnnEngine, AShapeOnlyTheDataDecidesIsRefusedBySessionsInMnnsWords) {
  // MNN's Interpreter sessions compute every shape before running; NonZero's needs the data.
  EngineJob job;
  job.model_bytes = test_support::ModelBytes(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[2,3] x) => (int64[2,K] y) { y = NonZero(x) }");
  job.inputs.emplace_back("x", *runtime::Tensor::FromValues<float>({2, 3}, {0, 1, 0, 2, 0, 3}));
  job.output_names = {"y"};
  const EngineOutcome o = RunOne(std::move(job));
  test_support::ExpectRefusedAt(o, "load");
  // MNN's banner ("The device supports: ...") is left out.
  EXPECT_EQ(o.message,
            "Interpreter::createSession failed: Interpreter don't support case for shape compute "
            "need input content, please use module api instead");
}

TEST_F(MnnEngine, RunAvailableReturnsTheIntermediateTensorsTheConvertedModelHolds) {
  // Bisection asks for every tensor; MNN keeps those asked for (saveTensors) and leaves out
  // the ones the converter did not keep.
  EngineJob job = test_support::AddJob({2, 3});
  job.model_bytes = test_support::ModelBytes(
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "g (float[2,3] a, float[2,3] b) => (float[2,3] y) { t = Neg(a)\n y = Sub(b, t) }");
  job.output_names = {"t", "no_such_tensor", "y"};
  job.available_only = true;
  const EngineOutcome o = RunOne(std::move(job));
  ASSERT_EQ(o.kind, OutcomeKind::kRan) << o.message;
  ASSERT_EQ(o.outputs.size(), 2u);
  EXPECT_EQ(o.outputs[0].first, "t");
  EXPECT_THAT(o.outputs[0].second.values<float>(), ElementsAre(-1, -2, -3, -4, -5, -6));
  EXPECT_EQ(o.outputs[1].first, "y");
  EXPECT_THAT(o.outputs[1].second.values<float>(), ElementsAre(11, 22, 33, 44, 55, 66));
}

TEST(MnnConvertRefusal, KeepsTheConvertersLinesOnceInOrderWithoutLogPrefixes) {
  EXPECT_EQ(MnnConvertRefusal("Start to Convert Other Model Format To MNN Model...\n"
                              "Broad cast error, dim1 = 4, dim2 = 2\n"
                              "[01:30:30] :220: These Op Not Support: ONNX::Foo | ONNX::Bar \n"
                              "Broad cast error, dim1 = 4, dim2 = 2\n"
                              "Converted Success!\n"),
            "Broad cast error, dim1 = 4, dim2 = 2; These Op Not Support: ONNX::Foo | ONNX::Bar");
  EXPECT_EQ(MnnConvertRefusal("Start to Convert Other Model Format To MNN Model...\n"
                              "Converted Success!\n"),
            "");
}

}  // namespace
}  // namespace onnx_bcast::engines

// The OpenCV adapter through the isolating runner: a model it runs gives numpy's numbers, a
// model it refuses gives the cv::Exception's cause; and the message normalization itself.
#include "engines/opencv_engine.h"

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

using ::testing::HasSubstr;

using OpenCvEngine = test_support::AdapterTest<MakeOpenCvEngine>;

TEST_F(OpenCvEngine, ReportsItsVersion) {
  test_support::ExpectNameAndVersion(Engine(), "opencv", "[0-9]+\\.[0-9]+\\.[0-9]+.*");
}

TEST_F(OpenCvEngine, RunsAnAddOfEqualShapesInAChild) {
  test_support::ExpectAddRan(RunOne(test_support::AddJob({2, 3})));
}

TEST_F(OpenCvEngine, ARefusalCarriesTheExceptionsCause) {
  EngineJob job;
  job.model_bytes = "not a model";
  const EngineOutcome o = RunOne(std::move(job));
  test_support::ExpectRefusedAt(o, "load");
  // The cause, without the banner and the build's source directories.
  EXPECT_THAT(o.message, HasSubstr("error: ("));
  EXPECT_THAT(o.message, ::testing::Not(HasSubstr("OpenCV(")));
  EXPECT_THAT(o.message, ::testing::Not(HasSubstr("/")));
}

TEST(CvExceptionMessage, TakesTheInnermostCause) {
  EXPECT_EQ(CvExceptionMessage(
                "OpenCV(4.6.0) ./modules/dnn/src/onnx/onnx_importer.cpp:1040: error: "
                "(-2:Unspecified error) in function 'handleNode'\n> Node [Add@ai.onnx]:"
                "(onnx_node!y) parse error: OpenCV(4.6.0) ./modules/dnn/include/opencv2/dnn/"
                "shape_utils.hpp:170: error: (-215:Assertion failed) start <= end in function "
                "'total'\n> "),
            "shape_utils.hpp:170: error: (-215:Assertion failed) start <= end in function "
            "'total'");
  EXPECT_EQ(CvExceptionMessage("plain text\nmore"), "plain text");
}

}  // namespace
}  // namespace onnx_bcast::engines

// What the converter adapters share: their scratch directory goes with them (and with a new
// Load's), and the build label names a commit only when there is one.
#include "engines/tool_process.h"

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace onnx_bcast::engines {
namespace {

namespace fs = std::filesystem;

TEST(ScratchDir, IsRemovedWithWhatItHoldsWhenItGoesOrIsReplaced) {
  std::string first, second;
  {
    ScratchDir dir;
    ASSERT_TRUE(dir.Create("onnx-bcast-test").ok());
    first = fs::path(dir.File("model.onnx")).parent_path().string();
    ASSERT_TRUE(WriteWholeFile(dir.File("model.onnx"), "bytes").ok());
    EXPECT_EQ(ReadWholeFile(dir.File("model.onnx")), "bytes");
    ASSERT_TRUE(dir.Create("onnx-bcast-test").ok());  // a second Load
    second = fs::path(dir.File("model.onnx")).parent_path().string();
    EXPECT_NE(first, second);
    EXPECT_FALSE(fs::exists(first));
    EXPECT_TRUE(fs::is_directory(second));
  }
  EXPECT_FALSE(fs::exists(second));
}

TEST(CommitLabel, NamesTheCommitOnlyWhenKnown) {
  EXPECT_EQ(CommitLabel("github.com/Tencent/ncnn", "abc123"),
            "github.com/Tencent/ncnn commit abc123");
  EXPECT_EQ(CommitLabel("github.com/Tencent/ncnn", ""), "");
}

}  // namespace
}  // namespace onnx_bcast::engines

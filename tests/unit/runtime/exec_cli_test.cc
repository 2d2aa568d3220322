// `onnx-bcast run` end to end through the built binary (next to this test in bin/): exit codes
// 0/1/2/3, the mismatch line, the bench line and written outputs. Skipped when the binary or
// the ONNX test data is absent.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/exec/test_data.h"

namespace onnx_bcast::runtime {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

const char kData[] = "/usr/share/libonnx-testdata/data/node";

std::string Binary() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "" : (self.parent_path() / "onnx-bcast").string();
}

struct Result {
  int code = -1;
  std::string out;  ///< stdout and stderr
};

// Runs `onnx-bcast run ARGS`.
Result RunBinary(const std::string& args) {
  Result r;
  const std::string cmd = Binary() + " run " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class RunCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Binary().empty() || !fs::exists(Binary())) GTEST_SKIP() << "onnx-bcast not built";
    if (!fs::exists(kData)) GTEST_SKIP() << "no ONNX test data";
  }
  static std::string Case(const std::string& name) { return std::string(kData) + "/" + name; }
};

TEST_F(RunCli, MatchingTestDataExitsZero) {
  Result r = RunBinary(Case("test_add") + "/model.onnx --test-data " + Case("test_add") +
                       "/test_data_set_0");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("1 output(s) match"));
}

TEST_F(RunCli, MismatchExitsOneNamingOutputIndexAndErrors) {
  // Sub's data has Add's shapes but other values.
  Result r = RunBinary(Case("test_add") + "/model.onnx --test-data " + Case("test_sub") +
                       "/test_data_set_0");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, MatchesRegex("(.|\n)*output 'sum' differs at index [0-9]+ \\[[0-9,]*\\]: got "
                                  ".*, expected .*; [0-9]+ element\\(s\\) differ; max abs error "
                                  ".*, max rel error .*, max ULP [0-9]+(.|\n)*"));
}

TEST_F(RunCli, UnsupportedOpExitsThree) {
  const std::string path = ::testing::TempDir() + "/frobnicate.onnxtxt";
  std::ofstream(path) << R"(<ir_version: 8, opset_import: ["" : 16, "com.example" : 2]>
    g (float[2] x) => (float[2] z) { z = com.example.Frobnicate(x) })";
  Result r = RunBinary(path);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("Frobnicate (domain 'com.example', opset 2)"));
}

TEST_F(RunCli, MissingModelExitsTwo) { EXPECT_EQ(RunBinary("/nonexistent/model.onnx").code, 2); }

TEST_F(RunCli, BenchPrintsExactlyOneLine) {
  Result r = RunBinary(Case("test_add") + "/model.onnx --bench 3 --seed 7");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, MatchesRegex("bench: runs=3 median_ms=[0-9.]+ min_ms=[0-9.]+\n"));
}

TEST_F(RunCli, OutputDirRoundTrips) {
  const std::string dir = ::testing::TempDir() + "/run_outputs";
  fs::remove_all(dir);
  Result r = RunBinary(Case("test_add") + "/model.onnx --input x=" + Case("test_add") +
                       "/test_data_set_0/input_0.pb --input y=" + Case("test_add") +
                       "/test_data_set_0/input_1.pb --output-dir " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  // The written output is itself valid test data for the model.
  fs::copy_file(Case("test_add") + "/test_data_set_0/input_0.pb", dir + "/input_0.pb");
  fs::copy_file(Case("test_add") + "/test_data_set_0/input_1.pb", dir + "/input_1.pb");
  Result again = RunBinary(Case("test_add") + "/model.onnx --rtol 0 --atol 0 --test-data " + dir);
  EXPECT_EQ(again.code, 0) << again.out;
}

TEST_F(RunCli, BadDimIsAUsageError) {
  EXPECT_EQ(RunBinary(Case("test_add") + "/model.onnx --dim batch").code, 64);
}

}  // namespace
}  // namespace onnx_bcast::runtime

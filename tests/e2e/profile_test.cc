// `onnx-bcast run --profile` and `--profile-json` (issue 24 item 1): per op type and per node,
// with shares that add up to the run; the JSON on stdout with the run's text on stderr.
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/report_json.h"
#include "proto/model_io.h"
#include "tests/support/cli_process.h"

namespace onnx_bcast {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kModel =
    BCAST_SOURCE_DIR "/tests/fixtures/exported/torchvision_mobilenet_v3_small_op13.onnx";

test_support::CliResult RunCli(const std::vector<std::string>& args) {
  const fs::path dir = fs::temp_directory_path() / absl::StrCat("bcast_profile_", ::getpid());
  fs::create_directories(dir);
  test_support::CliResult r = test_support::RunCliIn(BCAST_CLI, args, dir.string());
  fs::remove_all(dir);
  return r;
}

TEST(RunProfile, JsonCoversEveryNodeAndSharesAddUp) {
  const test_support::CliResult r = RunCli({"run", kModel, "--dim", "N=1,H=64,W=64", "--bench",
                                            "2", "--profile-json", "-"});
  ASSERT_EQ(r.code, 0) << r.err;
  absl::StatusOr<passes::Json> doc = passes::ParseJson(r.out);
  ASSERT_TRUE(doc.ok()) << doc.status() << "\n" << r.out;
  EXPECT_EQ((*doc)["kind"], "profile");
  EXPECT_EQ((*doc)["runs"], 2);
  // The bench line went to stderr with the JSON on stdout.
  EXPECT_THAT(r.err, HasSubstr("bench: runs=2"));
  absl::StatusOr<proto::Model> model = proto::LoadModel(kModel);
  ASSERT_TRUE(model.ok());
  const passes::Json& nodes = (*doc)["nodes"];
  EXPECT_EQ(nodes.size(), static_cast<size_t>(model->proto.graph().node_size()));
  double node_share = 0, op_share = 0;
  int64_t op_nodes = 0;
  std::set<std::string> ops;
  for (const passes::Json& n : nodes) node_share += n["share"].get<double>();
  for (const passes::Json& o : (*doc)["ops"]) {
    op_share += o["share"].get<double>();
    op_nodes += o["nodes"].get<int64_t>();
    ops.insert(o["op"].get<std::string>());
  }
  EXPECT_NEAR(node_share, 1.0, 1e-6);
  EXPECT_NEAR(op_share, 1.0, 1e-6);
  EXPECT_EQ(op_nodes, static_cast<int64_t>(nodes.size()));
  EXPECT_TRUE(ops.count("Conv"));
  EXPECT_GT((*doc)["ms_per_run"].get<double>(), 0);
  // Slowest first.
  for (size_t i = 1; i < nodes.size(); ++i) {
    EXPECT_GE(nodes[i - 1]["ms_per_run"].get<double>(), nodes[i]["ms_per_run"].get<double>());
  }
}

TEST(RunProfile, TextNamesOpsAndSlowestNodes) {
  const test_support::CliResult r =
      RunCli({"run", kModel, "--dim", "N=1,H=32,W=32", "--profile"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("profile: "));
  EXPECT_THAT(r.out, HasSubstr("over 1 run(s)"));
  EXPECT_THAT(r.out, HasSubstr("Conv "));
  EXPECT_THAT(r.out, HasSubstr("slowest nodes:"));
  EXPECT_THAT(r.out, HasSubstr("/features/features.0/features.0.0/Conv"));
}

}  // namespace
}  // namespace onnx_bcast

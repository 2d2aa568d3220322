// `onnx-bcast run --profile` and `--profile-json` (issue 24 item 1): per op type and per node,
// each op's time the sum of its nodes', the total within the runs' wall time; the JSON on
// stdout with the run's text on stderr.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "report/report_json.h"
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

TEST(RunProfile, JsonCoversEveryNodeAndEachOpSumsItsNodes) {
  const test_support::CliResult r =
      RunCli({"run", kModel, "--dim", "N=1,H=64,W=64", "--bench", "2", "--profile-json", "-"});
  ASSERT_EQ(r.code, 0) << r.err;
  absl::StatusOr<report::Json> doc = report::ParseJson(r.out);
  ASSERT_TRUE(doc.ok()) << doc.status() << "\n" << r.out;
  EXPECT_EQ((*doc)["kind"], "profile");
  EXPECT_EQ((*doc)["runs"], 2);
  // The bench line went to stderr with the JSON on stdout.
  EXPECT_THAT(r.err, HasSubstr("bench: runs=2"));
  absl::StatusOr<proto::Model> model = proto::LoadModel(kModel);
  ASSERT_TRUE(model.ok());
  const report::Json& nodes = (*doc)["nodes"];
  EXPECT_EQ(nodes.size(), static_cast<size_t>(model->proto.graph().node_size()));
  // The shares are defined against the sum of the node times, so their total says nothing;
  // what can go wrong is the aggregation and the timing itself. Each op's time must be the sum
  // of its nodes' times (counted independently here), each share a node's time over the total,
  // and the total cannot exceed the runs' wall time (a body or node counted twice would).
  const double total_ms = (*doc)["ms_per_run"].get<double>();
  std::map<std::string, std::pair<double, int64_t>> by_op;  // op -> (ms, nodes) from the nodes
  double node_ms = 0;
  for (const report::Json& n : nodes) {
    const double ms = n["ms_per_run"].get<double>();
    auto& [op_ms, op_count] = by_op[n["op"].get<std::string>()];
    op_ms += ms;
    ++op_count;
    node_ms += ms;
    EXPECT_NEAR(n["share"].get<double>(), ms / total_ms, 1e-4) << n.dump();
  }
  EXPECT_NEAR(node_ms, total_ms, 1e-3 * total_ms);
  std::set<std::string> ops;
  for (const report::Json& o : (*doc)["ops"]) {
    const std::string op = o["op"].get<std::string>();
    ops.insert(op);
    ASSERT_TRUE(by_op.count(op)) << op;
    EXPECT_EQ(o["nodes"].get<int64_t>(), by_op[op].second) << op;
    EXPECT_NEAR(o["ms_per_run"].get<double>(), by_op[op].first, 1e-3 * total_ms + 1e-6) << op;
    EXPECT_NEAR(o["share"].get<double>(), by_op[op].first / total_ms, 1e-4) << op;
  }
  EXPECT_EQ(ops.size(), by_op.size());
  const size_t at = r.err.find("median_ms=");
  ASSERT_NE(at, std::string::npos) << r.err;
  const double median_ms = std::stod(r.err.substr(at + 10));
  // Two runs: the median is their mean, and the node times are measured inside them.
  EXPECT_LE(total_ms, median_ms * 1.02 + 0.01) << r.err;
  EXPECT_TRUE(ops.count("Conv"));
  // The medians beside the means: over both runs, within the runs' wall time, one per op and
  // node.
  EXPECT_EQ((*doc)["median_runs"], 2);
  const double median_total = (*doc)["median_ms_per_run"].get<double>();
  EXPECT_GT(median_total, 0);
  EXPECT_LE(median_total, median_ms * 1.02 + 0.01) << r.err;
  for (const report::Json& o : (*doc)["ops"]) EXPECT_GE(o["median_ms_per_run"].get<double>(), 0);
  double node_median_ms = 0;
  for (const report::Json& n : nodes) node_median_ms += n["median_ms_per_run"].get<double>();
  EXPECT_GT(node_median_ms, 0);
  EXPECT_GT((*doc)["ms_per_run"].get<double>(), 0);
  // Slowest first.
  for (size_t i = 1; i < nodes.size(); ++i) {
    EXPECT_GE(nodes[i - 1]["ms_per_run"].get<double>(), nodes[i]["ms_per_run"].get<double>());
  }
}

TEST(RunProfile, TextNamesOpsAndSlowestNodes) {
  const test_support::CliResult r = RunCli({"run", kModel, "--dim", "N=1,H=32,W=32", "--profile"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("profile: "));
  EXPECT_THAT(r.out, HasSubstr("over 1 run(s)"));
  EXPECT_THAT(r.out, HasSubstr("median ms"));
  EXPECT_THAT(r.out, HasSubstr("Conv "));
  EXPECT_THAT(r.out, HasSubstr("slowest nodes:"));
  EXPECT_THAT(r.out, HasSubstr("/features/features.0/features.0.0/Conv"));
}

}  // namespace
}  // namespace onnx_bcast

// legalize-measured and the target check with a live form oracle (targets/form_oracle.h), the
// engine replaced by a scripted one: what the oracle says decides over the table, for the node
// as it is and for every candidate; the candidate chosen is the cheapest the oracle accepts and
// the log says it was decided live; the check names what the oracle refuses; a second run
// changes nothing; the rewrite computes bit for bit what the node did (our executor).
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/random_inputs.h"
#include "targets/form_oracle.h"
#include "targets/targets.h"
#include "tests/support/centring_models.h"
#include "tests/support/pass_test_util.h"

namespace onnx_bcast::targets {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

using test_support::ScriptedOracle;

constexpr const char* kCentring = test_support::kCentringModel;

// [1,1,1,384] / [1,1,1,1], both computed: inner-axis... refused by the table at rank 4;
// OpenCV 4.6 runs it (issue 35's table).
constexpr char kHead[] = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,1,384] x) => (float[1,1,1,384] y) {
  m = ReduceMean <axes = [-1], keepdims = 1> (x)
  y = Div (x, m)
}
)";

const TargetProfile& OpenCv() { return *FindTarget("opencv"); }

// The target check for OpenCV on `m`, asking `oracle` over the table.
absl::StatusOr<std::vector<std::string>> LiveViolations(const proto::Model& m, FormOracle* oracle) {
  return FindTargetViolations(m, OpenCv(), nullptr, nullptr, oracle);
}

// legalize-measured for OpenCV on `m`, asking `oracle` (none: the table alone decides).
absl::Status Legalize(proto::Model* m, passes::PassStats* stats, FormOracle* oracle) {
  passes::PassOptions options;
  options.target = &OpenCv();
  options.live = oracle;
  return test_support::RunPass("legalize-measured", m, stats, options);
}

std::vector<float> Outputs(const proto::Model& m) {
  absl::StatusOr<std::shared_ptr<const runtime::Model>> runtime = runtime::LoadRuntimeModel(m);
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  runtime::RandomInputOptions o;
  o.seed = 11;
  absl::StatusOr<runtime::Feeds> feeds = runtime::RandomInputs(*(*runtime)->main, o);
  EXPECT_TRUE(feeds.ok());
  absl::StatusOr<std::unique_ptr<runtime::Executor>> exec = runtime::Executor::Create(*runtime);
  EXPECT_TRUE(exec.ok());
  absl::StatusOr<std::vector<runtime::Value>> out = (*exec)->Run(*feeds);
  EXPECT_TRUE(out.ok()) << out.status();
  const absl::Span<const float> v = (*out)[0].tensor->values<float>();
  return std::vector<float>(v.begin(), v.end());
}

TEST(LiveOracle, TheCheckNamesWhatTheTableAcceptsAndTheEngineComputesWrongly) {
  // `[2,1,32] / [2,1,1]`, both computed: in the table's form (op.Div.computed, first-full); a
  // scripted engine computes every broadcasting Div at rank 3 wrongly.
  constexpr char kDiv[] = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,1,32] x) => (float[2,1,32] y) {
  m = ReduceMean <axes = [-1], keepdims = 1> (x)
  y = Div (x, m)
}
)";
  const proto::Model m = test_support::Parse(kDiv);
  absl::StatusOr<std::vector<std::string>> table = FindTargetViolations(m, OpenCv());
  ASSERT_TRUE(table.ok());
  EXPECT_THAT(*table, IsEmpty());
  ScriptedOracle oracle({"Div@3*"});
  absl::StatusOr<std::vector<std::string>> live = LiveViolations(m, &oracle);
  ASSERT_TRUE(live.ok());
  ASSERT_EQ(live->size(), 1u);
  EXPECT_THAT((*live)[0], HasSubstr("Div"));
  EXPECT_THAT((*live)[0], HasSubstr("decided live on scripted 1.0: runs, but wrong: Div@3"));
  // The fragment: canonical names, the computed operands graph inputs, static shapes.
  ASSERT_EQ(oracle.calls, 1);
  EXPECT_EQ(oracle.seen[0].input_size(), 2);
  EXPECT_EQ(oracle.seen[0].node(0).input(0), "in0");
  EXPECT_EQ(oracle.seen[0].output(0).name(), "out");
  // legalize-measured places it where the engine runs it; the check then agrees; exact.
  proto::Model placed = m;
  passes::PassStats stats;
  ASSERT_TRUE(Legalize(&placed, &stats, &oracle).ok());
  EXPECT_TRUE(stats.changed());
  absl::StatusOr<std::vector<std::string>> after = LiveViolations(placed, &oracle);
  ASSERT_TRUE(after.ok());
  EXPECT_THAT(*after, IsEmpty()) << test_support::GoldenForm(placed.proto);
  EXPECT_EQ(Outputs(placed), Outputs(m));
}

TEST(LiveOracle, LegalizeMeasuredPlacesItWhereTheOracleAccepts) {
  proto::Model m = test_support::Parse(kCentring);
  const std::vector<float> before = Outputs(m);
  ScriptedOracle oracle({"Sub@3"});
  passes::PassStats stats;
  ASSERT_TRUE(Legalize(&m, &stats, &oracle).ok());
  ASSERT_TRUE(stats.changed());
  bool live = false;
  for (const passes::Rewrite& r : stats.log)
    live |= absl::StrContains(r.detail, "decided live on scripted");
  EXPECT_TRUE(live);
  // Every fragment the oracle saw after the node itself was a candidate; the one applied is
  // in the model: no Sub at rank 3 is left.
  ScriptedOracle check({"Sub@3"});
  absl::StatusOr<std::vector<std::string>> after = LiveViolations(m, &check);
  ASSERT_TRUE(after.ok());
  EXPECT_THAT(*after, IsEmpty()) << test_support::GoldenForm(m.proto);
  // Exact: a view of the same elements.
  EXPECT_EQ(Outputs(m), before);
  // Idempotent.
  proto::Model again = m;
  passes::PassStats second;
  ASSERT_TRUE(Legalize(&again, &second, &oracle).ok());
  EXPECT_FALSE(second.changed());
  EXPECT_TRUE(proto::ModelsEqual(m.proto, again.proto));
}

TEST(LiveOracle, ANodeTheTableRefusesStaysWhenTheEngineRunsIt) {
  proto::Model m = test_support::Parse(kHead);
  absl::StatusOr<std::vector<std::string>> table = FindTargetViolations(m, OpenCv());
  ASSERT_TRUE(table.ok());
  ASSERT_EQ(table->size(), 1u);  // the table refuses it
  ScriptedOracle oracle({});
  passes::PassStats stats;
  ASSERT_TRUE(Legalize(&m, &stats, &oracle).ok());
  EXPECT_FALSE(stats.changed());
  absl::StatusOr<std::vector<std::string>> live = LiveViolations(m, &oracle);
  ASSERT_TRUE(live.ok());
  EXPECT_THAT(*live, IsEmpty());
}

// LayerNorm's centring over a flattened vector, `[1,32] - [1,1]`, both computed: refused by
// the table as it is, placed by its exact-shape cells (tests/e2e/live_probe_test.cc runs the
// result on OpenCV).
constexpr const char* kFlat = test_support::kFlatCentringModel;

TEST(LiveOracle, WithoutTheOracleTheTableDecidesAndSaysSo) {
  proto::Model m = test_support::Parse(kFlat);
  absl::StatusOr<std::vector<std::string>> table = FindTargetViolations(m, OpenCv());
  ASSERT_TRUE(table.ok());
  ASSERT_EQ(table->size(), 1u);  // the table refuses it as it is
  const std::vector<float> before = Outputs(m);
  passes::PassStats stats;
  ASSERT_TRUE(Legalize(&m, &stats, nullptr).ok());
  // The table refuses the node as it is, so legalize rewrites it: a legalize that did nothing
  // would pass a loop over an empty log (issue 43 item 4).
  EXPECT_TRUE(stats.changed());
  ASSERT_FALSE(stats.log.empty());
  for (const passes::Rewrite& r : stats.log) EXPECT_THAT(r.detail, HasSubstr("decided by the table"));
  absl::StatusOr<std::vector<std::string>> after = FindTargetViolations(m, OpenCv());
  ASSERT_TRUE(after.ok());
  EXPECT_THAT(*after, IsEmpty()) << test_support::GoldenForm(m.proto);
  EXPECT_EQ(Outputs(m), before);
}

}  // namespace
}  // namespace onnx_bcast::targets

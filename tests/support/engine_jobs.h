// Test support for the engine adapters' tests: a model in ONNX text form as the bytes a job
// carries, the Add job every adapter runs first, a one-input job and its refusal, one job run
// through the isolating runner, and the fixture of one adapter's tests.
// Header-only.
#ifndef ONNX_BCAST_TESTS_SUPPORT_ENGINE_JOBS_H_
#define ONNX_BCAST_TESTS_SUPPORT_ENGINE_JOBS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engines/isolated_run.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "runtime/tensor.h"

namespace onnx_bcast::test_support {

/// The serialized model of `text` (a test's own text: a parse error fails the test).
inline std::string ModelBytes(const std::string& text) {
  absl::StatusOr<proto::Model> m = proto::ParseModelText(text, "t");
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return "";
  absl::StatusOr<std::string> b = proto::SerializeModel(m->proto);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? *std::move(b) : "";
}

/// y = Add(a, b) on float tensors of `shape` (six elements): a = 1..6 and b = 10, 20, ..., 60,
/// so y is 11, 22, ..., 66 (the adapters' first run).
inline engines::EngineJob AddJob(const std::vector<int64_t>& shape) {
  const std::string t = absl::StrCat("float[", absl::StrJoin(shape, ","), "]");
  engines::EngineJob job;
  job.model_bytes = ModelBytes(absl::StrCat("<ir_version: 8, opset_import: [\"\" : 13]>\ng (", t,
                                            " a, ", t, " b) => (", t, " y) { y = Add(a, b) }"));
  job.inputs.emplace_back("a", *runtime::Tensor::FromValues<float>(shape, {1, 2, 3, 4, 5, 6}));
  job.inputs.emplace_back("b",
                          *runtime::Tensor::FromValues<float>(shape, {10, 20, 30, 40, 50, 60}));
  job.output_names = {"y"};
  return job;
}

/// The model `text`, whose graph input is `a` (float[2,3]) and output `y`, fed a = 1..6: the
/// one-input job the adapters' refusal tests run.
inline engines::EngineJob JobFeedingA(const std::string& text) {
  engines::EngineJob job;
  job.model_bytes = ModelBytes(text);
  job.inputs.emplace_back("a", *runtime::Tensor::FromValues<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  job.output_names = {"y"};
  return job;
}

/// `o` is AddJob's result as a [2, 3] tensor (a leading 1 of AddJob's shape dropped).
inline void ExpectAddRan(const engines::EngineOutcome& o) {
  ASSERT_EQ(o.kind, engines::OutcomeKind::kRan) << o.message;
  const runtime::Tensor& y = o.outputs.at(0).second;
  EXPECT_THAT(y.shape(), ::testing::ElementsAre(2, 3));
  EXPECT_THAT(y.values<float>(), ::testing::ElementsAre(11, 22, 33, 44, 55, 66));
}

/// `o` is a refusal at `stage` ("load" or "run"); the test then checks its words.
inline void ExpectRefusedAt(const engines::EngineOutcome& o, const std::string& stage) {
  EXPECT_EQ(o.kind, engines::OutcomeKind::kRefused) << o.message;
  EXPECT_EQ(o.stage, stage);
}

/// The adapter `make` builds names itself `name` and reports a version matching `version`.
inline void ExpectNameAndVersion(const engines::EngineFactory& make, const std::string& name,
                                 const std::string& version) {
  absl::StatusOr<std::unique_ptr<engines::EngineAdapter>> e = make();
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ((*e)->name(), name);
  EXPECT_THAT((*e)->version(), ::testing::MatchesRegex(version));
}

/// `job` alone in a child of `engine`; an empty outcome (and a failed test) when the runner
/// itself fails.
inline engines::EngineOutcome RunOne(const engines::EngineFactory& engine, engines::EngineJob job,
                                     const engines::IsolationOptions& options = {}) {
  std::vector<engines::EngineJob> jobs;
  jobs.push_back(std::move(job));
  absl::StatusOr<std::vector<engines::EngineOutcome>> out =
      engines::RunIsolated(engine, jobs, options);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? std::move((*out)[0]) : engines::EngineOutcome{};
}

/// The fixture of one adapter's tests (`Make`, its maker): Engine() is its factory, RunOne(job)
/// runs `job` alone in one of its children.
template <std::unique_ptr<engines::EngineAdapter> (*Make)()>
class AdapterTest : public ::testing::Test {
 protected:
  // std::function converts the maker's unique_ptr to the factory's StatusOr.
  static engines::EngineFactory Engine() { return Make; }
  static engines::EngineOutcome RunOne(engines::EngineJob job) {
    return test_support::RunOne(Engine(), std::move(job));
  }
};

}  // namespace onnx_bcast::test_support

#endif  // ONNX_BCAST_TESTS_SUPPORT_ENGINE_JOBS_H_

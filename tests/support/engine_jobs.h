// Test support for the engine adapters' tests: a model in ONNX text form as the bytes a job
// carries, and one job run through the isolating runner. Header-only.
#ifndef ONNX_BCAST_TESTS_SUPPORT_ENGINE_JOBS_H_
#define ONNX_BCAST_TESTS_SUPPORT_ENGINE_JOBS_H_

#include <string>
#include <utility>
#include <vector>

#include "engines/isolated_run.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"

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

}  // namespace onnx_bcast::test_support

#endif  // ONNX_BCAST_TESTS_SUPPORT_ENGINE_JOBS_H_

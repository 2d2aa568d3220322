// The isolating runner: whatever an adapter does in its child (return outputs, refuse, abort,
// crash, hang, write to stderr) comes back as an outcome, in job order, and the parent lives.
#include "engines/isolated_run.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/sanitizer.h"

namespace onnx_bcast::engines {
namespace {

using ::testing::HasSubstr;

// An engine whose behaviour is the model's bytes: "echo" returns its input doubled, "refuse"
// refuses at load, "refuse-run" at run, "abort", "segv", "hang", "log-abort".
class ScriptedEngine : public EngineAdapter {
 public:
  std::string name() const override { return "scripted"; }
  std::string version() const override { return "1.0"; }
  absl::Status Load(std::string_view model) override {
    script_ = std::string(model);
    if (script_ == "refuse") return absl::InvalidArgumentError("no such layer: Foo");
    if (script_ == "abort") std::abort();
    if (script_ == "segv") raise(SIGSEGV);
    if (script_ == "log-abort") {
      std::fprintf(stderr, "[ERROR:0@0.031] global x.cpp (12) f ERROR during processing\n"
                           "OpenCV(4.6.0) /src/a.cpp:3: error: (-215:Assertion failed) x in "
                           "function 'g'\n\nterminate called\n");
      std::abort();
    }
    if (script_ == "hang") pause();
    return absl::OkStatus();
  }
  absl::StatusOr<NamedTensors> Run(const NamedTensors& inputs,
                                   const std::vector<std::string>& output_names) override {
    if (script_ == "refuse-run") return absl::InternalError("bad input shape");
    NamedTensors out;
    runtime::Tensor t = inputs.at(0).second.Clone();
    for (float& v : t.values<float>()) v *= 2;
    out.emplace_back(output_names.at(0), std::move(t));
    return out;
  }

 private:
  std::string script_;
};

EngineFactory Scripted() {
  return []() -> absl::StatusOr<std::unique_ptr<EngineAdapter>> {
    return std::make_unique<ScriptedEngine>();
  };
}

EngineJob Job(const std::string& script) {
  EngineJob job;
  job.model_bytes = script;
  job.inputs.emplace_back("x", *runtime::Tensor::FromValues<float>({3}, {1, 2, 3}));
  job.output_names = {"y"};
  return job;
}

// Jobs are move-only (their tensors): no initializer lists.
std::vector<EngineJob> Jobs(std::initializer_list<const char*> scripts) {
  std::vector<EngineJob> jobs;
  for (const char* s : scripts) jobs.push_back(Job(s));
  return jobs;
}

TEST(RunIsolated, EveryFailureIsAnOutcomeInJobOrder) {
  const std::vector<EngineJob> jobs =
      Jobs({"echo", "refuse", "refuse-run", "abort", "segv", "log-abort", "echo"});
  absl::StatusOr<std::vector<EngineOutcome>> out = RunIsolated(Scripted(), jobs);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), jobs.size());
  const EngineOutcome& echo = (*out)[0];
  ASSERT_EQ(echo.kind, OutcomeKind::kRan) << echo.message;
  ASSERT_EQ(echo.outputs.size(), 1u);
  EXPECT_EQ(echo.outputs[0].first, "y");
  EXPECT_THAT(echo.outputs[0].second.values<float>(), ::testing::ElementsAre(2, 4, 6));

  EXPECT_EQ((*out)[1].kind, OutcomeKind::kRefused);
  EXPECT_EQ((*out)[1].stage, "load");
  EXPECT_EQ((*out)[1].message, "no such layer: Foo");
  EXPECT_EQ((*out)[2].kind, OutcomeKind::kRefused);
  EXPECT_EQ((*out)[2].stage, "run");
  EXPECT_EQ((*out)[2].message, "bad input shape");

  EXPECT_EQ((*out)[3].kind, OutcomeKind::kCrashed);
  EXPECT_EQ((*out)[3].signal, SIGABRT);
  EXPECT_THAT((*out)[3].message, HasSubstr("signal 6"));
  EXPECT_EQ((*out)[4].kind, OutcomeKind::kCrashed);
  // Under AddressSanitizer the child's segfault is caught, reported and ends as an abort.
  EXPECT_EQ((*out)[4].signal, test_support::kAddressSanitizer ? SIGABRT : SIGSEGV);
  // The engine's stderr names the cause: its last error line, without the log timestamp.
  EXPECT_EQ((*out)[5].kind, OutcomeKind::kCrashed);
  EXPECT_THAT((*out)[5].message,
              HasSubstr("signal 6 (Aborted): OpenCV(4.6.0) /src/a.cpp:3: error: "
                        "(-215:Assertion failed) x in function 'g'"));
  EXPECT_THAT((*out)[5].stderr_tail, HasSubstr("terminate called"));
  EXPECT_EQ((*out)[6].kind, OutcomeKind::kRan);
}

TEST(RunIsolated, AHangingEngineIsKilledAtTheTimeout) {
  IsolationOptions options;
  options.timeout = absl::Milliseconds(300);
  absl::StatusOr<std::vector<EngineOutcome>> out =
      RunIsolated(Scripted(), Jobs({"hang", "echo"}), options);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].kind, OutcomeKind::kTimedOut);
  EXPECT_EQ((*out)[0].stage, "load");
  EXPECT_THAT((*out)[0].message, HasSubstr("no result within 300ms"));
  EXPECT_EQ((*out)[1].kind, OutcomeKind::kRan);
}

TEST(RunIsolated, OneAtATimeGivesTheSameOutcomes) {
  IsolationOptions serial;
  serial.parallel = 1;
  absl::StatusOr<std::vector<EngineOutcome>> out =
      RunIsolated(Scripted(), Jobs({"segv", "echo", "refuse"}), serial);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].kind, OutcomeKind::kCrashed);
  EXPECT_EQ((*out)[1].kind, OutcomeKind::kRan);
  EXPECT_EQ((*out)[2].kind, OutcomeKind::kRefused);
}

TEST(RunIsolated, AFactoryErrorIsARefusal) {
  EngineFactory broken = []() -> absl::StatusOr<std::unique_ptr<EngineAdapter>> {
    return absl::UnavailableError("engine library missing");
  };
  absl::StatusOr<std::vector<EngineOutcome>> out = RunIsolated(broken, Jobs({"echo"}));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].kind, OutcomeKind::kRefused);
  EXPECT_EQ((*out)[0].message, "engine library missing");
}

TEST(LastMeaningfulLine, PrefersTheLastErrorLineWithoutTimestamps) {
  EXPECT_EQ(LastMeaningfulLine("a\n[ERROR:0@1.5] global f.cpp bad thing\nsome note\n\n"),
            "global f.cpp bad thing");
  EXPECT_EQ(LastMeaningfulLine("first\nsecond\n"), "second");
  EXPECT_EQ(LastMeaningfulLine(" \n\n"), "");
}

}  // namespace
}  // namespace onnx_bcast::engines

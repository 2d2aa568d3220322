// Test support: a real engine against our executor on a model, for the corpus tests of the
// engines (engines.OpenCvCorpus, engines.NcnnCorpus): the reference run on the original model
// and the verdict on one engine outcome. Header-only; the test links the driver, the engine
// probe and the executor.
#ifndef ONNX_BCAST_TESTS_SUPPORT_ENGINE_CORPUS_H_
#define ONNX_BCAST_TESTS_SUPPORT_ENGINE_CORPUS_H_

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "engines/isolated_run.h"
#include "engines/judge.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "runtime/exec/error_model.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/random_inputs.h"
#include "tests/support/corpus_bindings.h"

namespace onnx_bcast::test_support {

using Bindings = CorpusBindings;

// Our executor on `model` with seeded random inputs at `dims`: the engine's feeds (graph
// inputs in order) and the expected graph outputs.
struct Reference {
  engines::NamedTensors feeds;
  std::vector<std::string> output_names;
  runtime::Reference expected;  // the float64 reference and its bounds (runtime/exec/error_model.h)
};

inline absl::StatusOr<Reference> RunReference(const proto::Model& model, const Bindings& dims,
                                              const engines::NamedTensors* given = nullptr) {
  absl::StatusOr<std::shared_ptr<const runtime::Model>> runtime = runtime::LoadRuntimeModel(model);
  if (!runtime.ok()) return runtime.status();
  runtime::Feeds feeds;
  Reference ref;
  if (given != nullptr) {
    for (const auto& [n, t] : *given) {
      ref.feeds.emplace_back(n, t.Clone());
      feeds.emplace_back(n, runtime::Value::Of(std::make_shared<runtime::Tensor>(t.Clone())));
    }
  } else {
    runtime::RandomInputOptions options;
    options.seed = 7;
    options.dims = dims;
    absl::StatusOr<runtime::Feeds> random = runtime::RandomInputs(*(*runtime)->main, options);
    if (!random.ok()) return random.status();
    feeds = *std::move(random);
    for (const auto& [n, v] : feeds) ref.feeds.emplace_back(n, v.tensor->Clone());
  }
  absl::StatusOr<runtime::Reference> expected = runtime::ComputeReference(model, feeds);
  if (!expected.ok()) return expected.status();
  ref.output_names = (*runtime)->main->outputs;
  for (const runtime::OutputReference& o : expected->outputs) {
    if (!o.computed.is_tensor()) return absl::UnimplementedError("an output that is not a tensor");
  }
  ref.expected = *std::move(expected);
  return ref;
}

// One engine outcome against the reference: "runs-and-matches", or what failed and the
// engine's own reason.
struct Verdict {
  bool crashed = false;
  bool matches = false;
  std::string text;  // for the table
};

inline Verdict Judge(const engines::EngineOutcome& o, const Reference& ref) {
  const engines::Judgement j = engines::JudgeOutcome(o, ref.expected);
  Verdict v;
  switch (j.kind) {
    case engines::JudgementKind::kMatches:
      v.matches = true;
      v.text = "runs and matches";
      break;
    case engines::JudgementKind::kWrong:
      v.text = absl::StrCat("wrong: ", j.why);
      break;
    case engines::JudgementKind::kRefused:
      v.text = absl::StrCat("refused (", o.stage, "): ", o.message);
      break;
    case engines::JudgementKind::kCrashed:
    case engines::JudgementKind::kTimedOut:
      v.crashed = true;
      v.text = absl::StrCat("CRASHED (", o.stage, "): ", o.message);
      break;
  }
  return v;
}

/// The job that runs `model_bytes` on `ref`'s feeds and returns its outputs.
inline engines::EngineJob JobOn(std::string model_bytes, const Reference& ref) {
  engines::EngineJob job;
  job.model_bytes = std::move(model_bytes);
  for (const auto& [n, t] : ref.feeds) job.inputs.emplace_back(n, t.Clone());
  job.output_names = ref.output_names;
  return job;
}

/// `jobs` on the engine in child processes, two at a time, each given `timeout`.
inline absl::StatusOr<std::vector<engines::EngineOutcome>> RunJobs(
    const engines::EngineFactory& engine, const std::vector<engines::EngineJob>& jobs,
    absl::Duration timeout = engines::IsolationOptions().timeout) {
  engines::IsolationOptions isolation;
  isolation.parallel = 2;
  isolation.timeout = timeout;
  return engines::RunIsolated(engine, jobs, isolation);
}

/// Prints a corpus table and writes it to $BCAST_ENGINES_TABLE when set (the docs quote it).
inline void EmitTable(const std::string& table) {
  std::cout << table;
  if (const char* out = std::getenv("BCAST_ENGINES_TABLE"); out != nullptr) {
    std::ofstream(out) << table;
  }
}

/// The figures a corpus test measured against those its docs page states ("runs and matches:
/// B of N as exported, A of N after opt", any case, bold or not; the summary under the page's
/// table, which tests/docs/figures_test.py holds every other statement of the figure to): a
/// test failure naming both when they differ, or when the page states none (issue 43 item 9).
inline void ExpectPageStatesFigures(const std::string& page, int before, int after, size_t n) {
  std::ifstream in(page);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  static const std::regex kSummary(
      "[Rr]uns and matches:\\** ([0-9]+) of ([0-9]+) as exported, ([0-9]+) of ([0-9]+) after opt");
  std::smatch m;
  const std::string measured =
      absl::StrCat(before, " of ", n, " as exported, ", after, " of ", n, " after opt");
  if (!std::regex_search(text, m, kSummary)) {
    ADD_FAILURE() << page << " states no 'runs and matches: ...' figure; the test measured "
                  << measured;
    return;
  }
  const std::string stated = absl::StrCat(m[1].str(), " of ", m[2].str(), " as exported, ",
                                          m[3].str(), " of ", m[4].str(), " after opt");
  EXPECT_EQ(stated, measured) << page << " states other figures than the test measured: "
                              << "replace its table with the one above (BCAST_ENGINES_TABLE=FILE "
                              << "writes it) and its figures (ctest docs_figures lists them)";
}

inline std::string Cell(std::string s) {
  for (char& c : s) {
    if (c == '|' || c == '\n') c = ' ';
  }
  return s;
}

}  // namespace onnx_bcast::test_support

#endif  // ONNX_BCAST_TESTS_SUPPORT_ENGINE_CORPUS_H_

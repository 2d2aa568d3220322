// Test support: a real engine against our executor on a model, for the corpus tests of the
// engines (engines.OpenCvCorpus, engines.NcnnCorpus, engines.MnnCorpus): the reference run on
// the original model, the verdict on one engine outcome, the run of the whole corpus as
// exported and after opt, and the tally, table and checks every corpus test shares.
// Header-only; the test links the driver, the engine probe and the executor.
#ifndef ONNX_BCAST_TESTS_SUPPORT_ENGINE_CORPUS_H_
#define ONNX_BCAST_TESTS_SUPPORT_ENGINE_CORPUS_H_

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engines/isolated_run.h"
#include "engines/judge.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "report/report_json.h"
#include "runtime/exec/error_model.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/random_inputs.h"
#include "targets/targets.h"
#include "tests/support/cli_process.h"
#include "tests/support/corpus_bindings.h"
#include "tests/support/json_file.h"
#include "tests/support/reference_guard.h"

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

/// One model of the exporter corpus, opened for a corpus test: the original, and where opt
/// writes it as exported (`before`: dims bound, no pass) and after a target's passes (`after`).
struct CorpusModel {
  std::string name;
  std::string path;
  std::string before;
  std::string after;
  proto::Model original;
};

/// The models `manifest` lists (in its order), loaded from `corpus`, written to `scratch`.
inline absl::StatusOr<std::vector<CorpusModel>> LoadCorpus(const std::string& corpus,
                                                           const report::Json& manifest,
                                                           const std::filesystem::path& scratch) {
  std::vector<CorpusModel> models;
  for (const auto& [name, entry] : manifest.items()) {
    CorpusModel m;
    m.name = name;
    m.path = corpus + name + ".onnx";
    absl::StatusOr<proto::Model> original = proto::LoadModel(m.path);
    if (!original.ok()) return original.status();
    m.original = *std::move(original);
    m.before = (scratch / (name + ".before.onnx")).string();
    m.after = (scratch / (name + ".after.onnx")).string();
    models.push_back(std::move(m));
  }
  return models;
}

/// `cli opt --passes none` of `m` at `dims` into `m.before`, run in `scratch`: the model as
/// exported, only its dims bound.
inline CliResult WriteAsExported(const std::string& cli, const CorpusModel& m, const Bindings& dims,
                                 const std::string& scratch) {
  return RunCliIn(cli, OptArgs(m.path, m.before, {"--passes", "none"}, dims), scratch);
}

/// What opt's stderr says about a target besides its verdict: the ops the engine has no layer
/// for (its warnings, into `lacking`) and the nodes outside the table (exit 3, into `outside`).
inline void ReadTargetLines(const std::string& err, std::vector<std::string>* lacking,
                            std::vector<std::string>* outside) {
  for (absl::string_view line : absl::StrSplit(err, '\n', absl::SkipEmpty())) {
    if (const size_t at = line.find("has no layer for "); at != absl::string_view::npos) {
      const absl::string_view rest = line.substr(at + 17);
      lacking->emplace_back(rest.substr(0, rest.find(" (")));
    }
    if (const size_t at = line.find("not in its form; "); at != absl::string_view::npos) {
      outside->emplace_back(line.substr(line.find("): ", at) + 3));
    }
  }
}

/// A model whose reference no comparison can fail against (`uninformative`: why, or "") judges
/// nothing: neither verdict counts as running and matching.
inline void UnjudgedWhenUninformative(const std::string& uninformative, Verdict* before,
                                      Verdict* after) {
  if (uninformative.empty()) return;
  for (Verdict* v : {before, after}) {
    if (v->matches) v->text = "runs; not judged: the reference " + uninformative;
    v->matches = false;
  }
}

/// The corpus models that run and match after opt, counted, with the promise every corpus test
/// holds: a model that ran and matched as exported still does after opt.
struct CorpusTally {
  int before_ok = 0;
  int after_ok = 0;
  std::set<std::string> ran_after;

  void Add(const std::string& model, const Verdict& before, const Verdict& after) {
    if (before.matches) {
      EXPECT_TRUE(after.matches) << model << ": ran and matched as exported, after opt "
                                 << after.text;
    }
    if (after.matches) ran_after.insert(model);
    before_ok += before.matches;
    after_ok += after.matches;
  }
};

/// The models held by name (`held`) against those that ran and matched on `engine` after
/// `opt --target TARGET`, both ways: losing one fails even when another is gained, and a gained
/// one must be recorded (in the test and on `page`) so that a later loss shows.
inline void ExpectHeldByName(const std::set<std::string>& held,
                             const std::set<std::string>& ran_after, absl::string_view engine,
                             absl::string_view target, absl::string_view page,
                             const std::string& table) {
  for (const std::string& model : held) {
    EXPECT_TRUE(ran_after.count(model) > 0)
        << model << " ran and matched on " << engine << " after opt --target " << target
        << "; now it does not\n"
        << table;
  }
  for (const std::string& model : ran_after) {
    EXPECT_TRUE(held.count(model) > 0) << model << " now runs and matches on " << engine
                                       << " after opt: add it to MustRunAfterOpt and " << page;
  }
}

/// One model of a corpus test: its dims, what opt did with the test's flags, the reference, and
/// its jobs on the engine (as exported; after opt only when opt wrote the model, else -1).
struct CorpusRow {
  std::string model;
  Bindings dims;
  CliResult opt;  ///< `opt MODEL -o AFTER FLAGS --dim DIMS`
  Reference ref;
  /// Why no comparison against the reference can fail (a constant or NaN-only output), or "".
  std::string uninformative;
  int before_job = -1, after_job = -1;
};

/// What a corpus test asks of every model.
struct CorpusSetup {
  /// The dims a model runs at: the manifest's first valid binding unless the engine needs
  /// another.
  std::function<Bindings(const report::Json& manifest, const std::string& model,
                         const onnx::GraphProto& graph)>
      bind = FirstBinding;
  std::vector<std::string> opt_flags;          ///< e.g. {"--target", "mnn"}
  absl::Duration timeout = absl::Seconds(60);  ///< each engine job's
};

/// A corpus test's rows, in manifest order, and the engine's outcome of every job.
struct CorpusRun {
  std::vector<CorpusRow> rows;
  std::vector<engines::EngineOutcome> outcomes;

  Verdict Before(const CorpusRow& row) const { return Judge(outcomes[row.before_job], row.ref); }
  /// The verdict on what opt wrote (a row without an after job: an empty verdict).
  Verdict After(const CorpusRow& row) const {
    return row.after_job < 0 ? Verdict() : Judge(outcomes[row.after_job], row.ref);
  }
};

/// Every model of the exporter corpus `corpus` (its manifest.json) at `setup.bind`'s dims,
/// in `scratch`: written as exported, then by `cli opt` with `setup.opt_flags` (exit 0, or 1
/// and 3, which write nothing), its reference computed; both run on `engine`. A fatal test
/// failure where something else happens (the caller checks HasFatalFailure()).
inline void RunCorpus(const std::string& cli, const std::string& corpus,
                      const std::filesystem::path& scratch, const engines::EngineFactory& engine,
                      const CorpusSetup& setup, CorpusRun* run) {
  const report::Json manifest = ReadJson(corpus + "manifest.json");
  absl::StatusOr<std::vector<CorpusModel>> models = LoadCorpus(corpus, manifest, scratch);
  ASSERT_TRUE(models.ok()) << models.status();
  std::vector<engines::EngineJob> jobs;
  for (const CorpusModel& m : *models) {
    CorpusRow row;
    row.model = m.name;
    row.dims = setup.bind(manifest, m.name, m.original.proto.graph());
    const CliResult as_exported = WriteAsExported(cli, m, row.dims, scratch.string());
    ASSERT_EQ(as_exported.code, 0) << m.name << ": " << as_exported.err;
    row.opt = RunCliIn(cli, OptArgs(m.path, m.after, setup.opt_flags, row.dims), scratch.string());
    const int code = row.opt.code;
    ASSERT_TRUE(code == 0 || code == 1 || code == 3) << m.name << ": " << row.opt.err;
    if (code != 0) {
      EXPECT_FALSE(std::filesystem::exists(m.after)) << m.name << ": written with exit " << code;
    }
    absl::StatusOr<Reference> ref = RunReference(m.original, row.dims);
    ASSERT_TRUE(ref.ok()) << m.name << ": " << ref.status();
    row.ref = *std::move(ref);
    row.uninformative = FirstUninformativeOutput(row.ref.expected);
    row.before_job = static_cast<int>(jobs.size());
    jobs.push_back(JobOn(ReadAll(m.before), row.ref));
    if (code == 0) {
      row.after_job = static_cast<int>(jobs.size());
      jobs.push_back(JobOn(ReadAll(m.after), row.ref));
    }
    run->rows.push_back(std::move(row));
  }
  absl::StatusOr<std::vector<engines::EngineOutcome>> outcomes =
      RunJobs(engine, jobs, setup.timeout);
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  run->outcomes = *std::move(outcomes);
}

/// What `opt --target T` said besides its verdict, when its engine check is on (exit 1: the
/// engine refused or computed the written model wrongly; 3: nodes outside the table).
struct OptSaid {
  std::vector<std::string> outside;  ///< the target check's lines when opt exits 3
  std::vector<std::string> lacking;  ///< ops the engine has no layer for (opt's warnings)
  std::string engine;                ///< the engine's answer when opt exits 1
};

/// A corpus test of a target whose opt runs the engine check: what differs between engines.
struct CheckedCorpus {
  std::string target;  ///< opt --target's name ("ncnn")
  std::string engine;  ///< as the table's heading and messages name the engine ("MNN")
  std::string page;    ///< the docs page that quotes the table ("docs/engines-ncnn.md")
  /// The models that run and match after opt, held by name (ExpectHeldByName).
  const std::set<std::string>* held = nullptr;
  /// Reads what opt said (the engine's own line differs between adapters).
  std::function<OptSaid(const CorpusRow& row)> read_opt;
  /// How the engine's refusal names op `op` (an op the table decides never stops a written
  /// model).
  std::function<std::string(const std::string& op)> stops_at;
  std::string exit_1;     ///< a row opt did not write on the engine's answer, before that answer
  std::string unwritten;  ///< the summary's words for the models opt did not write
  /// `page` on disk, held to the figures measured (ExpectPageStatesFigures); "": not checked.
  std::string page_file;
};

/// The checks and the table of a CheckedCorpus test over `run`: what opt writes runs and
/// matches on the engine and never stops at an op whose forms the table measured; a model
/// that ran and matched as exported is written and still does (CorpusTally); exit 3 names a
/// node; the models held by name run and match after opt.
inline void ExpectCheckedCorpus(const CheckedCorpus& c, const CorpusRun& run) {
  const targets::TargetProfile* profile = targets::FindTarget(c.target);
  ASSERT_NE(profile, nullptr);
  CorpusTally tally;
  int written = 0;
  std::string table =
      absl::StrCat("| model | dims | as exported | after `opt --target ", c.target, "` | ops ",
                   c.engine, " has no layer for |\n", "|---|---|---|---|---|\n");
  for (const CorpusRow& row : run.rows) {
    const OptSaid said = c.read_opt(row);
    if (row.opt.code == 3)
      EXPECT_FALSE(said.outside.empty()) << row.model << ": exit 3 naming no node";
    Verdict before = run.Before(row);
    Verdict after = run.After(row);
    if (row.after_job >= 0) {
      ++written;
      // The promise: what opt writes, the engine runs and computes as the original does.
      EXPECT_TRUE(after.matches) << row.model << ": opt --target " << c.target << " exited 0, "
                                 << c.engine << ": " << after.text;
      // What the table decides, the target check names: a written model never stops at an
      // op whose forms the table measured.
      for (const auto& [op, rule] : profile->op_rules) {
        EXPECT_FALSE(absl::StrContains(after.text, c.stops_at(op)))
            << row.model << ": written by opt --target " << c.target << ", stops at " << op
            << ", which the table decides: " << after.text;
      }
    } else if (row.opt.code == 3) {
      after.text = absl::StrCat("not written (opt exit 3): ", said.outside.size(),
                                " node(s) outside the table, first: ", said.outside.front());
    } else {
      after.text = absl::StrCat(c.exit_1, said.engine);
    }
    UnjudgedWhenUninformative(row.uninformative, &before, &after);
    tally.Add(row.model, before, after);
    absl::StrAppend(&table, "| ", row.model, " | ", DimList(row.dims), " | ", Cell(before.text),
                    " | ", Cell(after.text), " | ", absl::StrJoin(said.lacking, ", "), " |\n");
  }
  ExpectHeldByName(*c.held, tally.ran_after, c.engine, c.target, c.page, table);
  const size_t n = run.rows.size();
  absl::StrAppend(&table, "\nruns and matches: ", tally.before_ok, " of ", n, " as exported, ",
                  tally.after_ok, " of ", n, " after opt (", written, " written by opt, ",
                  n - written, " ", c.unwritten, ")\n");
  EmitTable(table);
  if (!c.page_file.empty()) {
    ExpectPageStatesFigures(c.page_file, tally.before_ok, tally.after_ok, n);
  }
}

/// A CheckedCorpus test whole: the exporter corpus `corpus` (RunCorpus with `setup`, in a
/// scratch directory of the test's own, removed when the checks ran) and `c`'s checks.
inline void RunCheckedCorpus(const std::string& cli, const std::string& corpus,
                             const engines::EngineFactory& engine, const CorpusSetup& setup,
                             const CheckedCorpus& c) {
  const std::filesystem::path scratch =
      std::filesystem::temp_directory_path() / absl::StrCat("bcast_", c.target, "_", ::getpid());
  std::filesystem::create_directories(scratch);
  CorpusRun run;
  RunCorpus(cli, corpus, scratch, engine, setup, &run);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  ExpectCheckedCorpus(c, run);
  std::filesystem::remove_all(scratch);
}

}  // namespace onnx_bcast::test_support

#endif  // ONNX_BCAST_TESTS_SUPPORT_ENGINE_CORPUS_H_

// MNN in the loop (issue 45): every model of the exporter corpus at its first manifest binding
// (MNN has a batch axis), converted by MNNConvert and run in an MNN session in child
// processes, as exported (dims bound, no pass) and after `opt --target mnn`, compared with our
// reference on the ORIGINAL model. opt runs as a user runs it: with the live probes and its
// engine check, so a model MNN refuses or computes wrongly is not written (exit 1), and one
// with a node outside the table neither (exit 3). Asserts: opt never writes (exit 0) a model
// that MNN then refuses, crashes on or computes wrongly; a model opt writes never stops at an
// op whose forms the measured table decides; every model that ran and matched as exported is
// written by opt and still does; the models held by name run and match after opt, and none
// runs unrecorded. Writes the table (docs/engines-mnn.md quotes it) to $BCAST_ENGINES_TABLE
// when set.
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engines/isolated_run.h"
#include "engines/mnn_engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "targets/targets.h"
#include "tests/support/cli_process.h"
#include "tests/support/corpus_bindings.h"
#include "tests/support/engine_corpus.h"
#include "tests/support/json_file.h"
#include "tests/support/reference_guard.h"

namespace onnx_bcast {
namespace {

namespace fs = std::filesystem;
using report::Json;
using test_support::Bindings;
using test_support::Cell;
using test_support::EmitTable;
using test_support::JobOn;
using test_support::Judge;
using test_support::OptArgs;
using test_support::Reference;
using test_support::RunJobs;
using test_support::RunReference;
using test_support::Verdict;

const std::string kCorpus = BCAST_SOURCE_DIR "/tests/fixtures/exported/";

// Corpus models that run and match on MNN after opt --target mnn (docs/engines-mnn.md), held
// by name: losing one fails even when another is gained (add a gained one here).
const std::set<std::string>& MustRunAfterOpt() {
  static const auto* const kModels = new std::set<std::string>{
      "clamp_maxmin_op13",
      "flat_layernorm_op14",
      "fpn_op11",
      "fpn_op16",
      "gpt_past_op14",
      "gpt_past_ortnames_op12",
      "masked_attention_op14",
      "resnet_block_op11",
      "resnet_block_op16",
      "torchvision_mobilenet_v3_small_op13",
      "torchvision_swin_op14",
      "transformer_op14",
      "transformer_op17",
  };
  return *kModels;
}

engines::EngineFactory Mnn() { return engines::MakeMnnEngine; }

// What opt said besides its verdict: the nodes outside the table (exit 3), the ops MNN has no
// layer for (warnings), and the engine's answer (exit 1): the first node that differs when MNN
// computed the model wrongly, else its own line ("mnn: refused at load: ...").
struct OptSaid {
  std::vector<std::string> outside;
  std::vector<std::string> lacking;
  std::string engine;
};

OptSaid ReadOpt(const test_support::CliResult& r) {
  OptSaid said;
  test_support::ReadTargetLines(r.err, &said.lacking, &said.outside);
  for (absl::string_view line : absl::StrSplit(r.err, '\n', absl::SkipEmpty())) {
    if (const size_t at = line.find(": on mnn: "); at != absl::string_view::npos) {
      said.engine = std::string(line.substr(at + 2));
    }
  }
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    if (said.engine.empty() && absl::StartsWith(line, "mnn: ")) said.engine = std::string(line);
  }
  return said;
}

TEST(MnnCorpus, AsExportedAndAfterOptOnTheEngine) {
  const targets::TargetProfile* mnn = targets::FindTarget("mnn");
  ASSERT_NE(mnn, nullptr);
  const fs::path scratch = fs::temp_directory_path() / absl::StrCat("bcast_mnn_", ::getpid());
  fs::create_directories(scratch);
  const Json manifest = test_support::ReadJson(kCorpus + "manifest.json");
  struct Row {
    std::string model;
    Bindings dims;
    int opt_exit = -1;
    OptSaid said;
    Reference ref;
    // Why no comparison against the reference can fail (a constant or NaN-only output), or "".
    std::string uninformative;
    int before_job = -1, after_job = -1;
  };
  std::vector<Row> rows;
  std::vector<engines::EngineJob> jobs;
  absl::StatusOr<std::vector<test_support::CorpusModel>> corpus =
      test_support::LoadCorpus(kCorpus, manifest, scratch);
  ASSERT_TRUE(corpus.ok()) << corpus.status();
  for (const test_support::CorpusModel& m : *corpus) {
    const std::string& name = m.name;
    Row row;
    row.model = name;
    row.dims = test_support::FirstBinding(manifest, name, m.original.proto.graph());
    const std::string& before = m.before;
    const std::string& after = m.after;
    test_support::CliResult r =
        test_support::WriteAsExported(BCAST_CLI, m, row.dims, scratch.string());
    ASSERT_EQ(r.code, 0) << name << ": " << r.err;
    // After opt --target mnn, as a user runs it: nothing is written on exit 1 (the engine
    // refuses the result or computes it wrongly) or 3 (a node outside the table).
    r = test_support::RunCliIn(BCAST_CLI, OptArgs(m.path, after, {"--target", "mnn"}, row.dims),
                               scratch.string());
    row.opt_exit = r.code;
    ASSERT_TRUE(r.code == 0 || r.code == 1 || r.code == 3) << name << ": " << r.err;
    row.said = ReadOpt(r);
    if (r.code == 3) EXPECT_FALSE(row.said.outside.empty()) << name << ": exit 3 naming no node";
    if (r.code != 0) EXPECT_FALSE(fs::exists(after)) << name << ": written with exit " << r.code;
    absl::StatusOr<Reference> ref = RunReference(m.original, row.dims);
    ASSERT_TRUE(ref.ok()) << name << ": " << ref.status();
    row.ref = *std::move(ref);
    row.uninformative = test_support::FirstUninformativeOutput(row.ref.expected);
    for (const std::string& file : {before, after}) {
      if (file == after && r.code != 0) continue;  // nothing written
      (file == before ? row.before_job : row.after_job) = static_cast<int>(jobs.size());
      jobs.push_back(JobOn(test_support::ReadAll(file), row.ref));
    }
    rows.push_back(std::move(row));
  }
  absl::StatusOr<std::vector<engines::EngineOutcome>> outcomes =
      RunJobs(Mnn(), jobs, absl::Seconds(60));
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  test_support::CorpusTally tally;
  int written = 0;
  std::string table =
      "| model | dims | as exported | after `opt --target mnn` | ops MNN has no layer for |\n"
      "|---|---|---|---|---|\n";
  for (const Row& row : rows) {
    Verdict before = Judge((*outcomes)[row.before_job], row.ref);
    Verdict after;
    if (row.after_job >= 0) {
      ++written;
      after = Judge((*outcomes)[row.after_job], row.ref);
      // The promise: what opt writes, MNN runs and computes as the original does.
      EXPECT_TRUE(after.matches) << row.model << ": opt --target mnn exited 0, MNN: " << after.text;
      // What the table decides, the target check names: a written model never stops at an
      // op whose forms the table measured.
      for (const auto& [op, rule] : mnn->op_rules) {
        EXPECT_FALSE(absl::StrContains(after.text, absl::StrCat("ONNX::", op, " ")))
            << row.model << ": written by opt --target mnn, stops at " << op
            << ", which the table decides: " << after.text;
      }
    } else if (row.opt_exit == 3) {
      after.text = absl::StrCat("not written (opt exit 3): ", row.said.outside.size(),
                                " node(s) outside the table, first: ", row.said.outside.front());
    } else {
      after.text = absl::StrCat("not written (opt exit 1, its engine check): ", row.said.engine);
    }
    test_support::UnjudgedWhenUninformative(row.uninformative, &before, &after);
    tally.Add(row.model, before, after);
    absl::StrAppend(&table, "| ", row.model, " | ", test_support::DimList(row.dims), " | ",
                    Cell(before.text), " | ", Cell(after.text), " | ",
                    absl::StrJoin(row.said.lacking, ", "), " |\n");
  }
  test_support::ExpectHeldByName(MustRunAfterOpt(), tally.ran_after, "MNN", "mnn",
                                 "docs/engines-mnn.md", table);
  absl::StrAppend(&table, "\nruns and matches: ", tally.before_ok, " of ", rows.size(),
                  " as exported, ", tally.after_ok, " of ", rows.size(), " after opt (", written,
                  " written by opt, ", rows.size() - written, " not written)\n");
  EmitTable(table);
  fs::remove_all(scratch);
}

}  // namespace
}  // namespace onnx_bcast

// ncnn in the loop (issue 34 item 7): every model of the exporter corpus, bound at the manifest
// binding that gives the most graph inputs a batch of 1 (ncnn has no batch axis), converted by
// onnx2ncnn and run on ncnn in child processes, as exported (dims bound, no pass) and after
// `opt --target ncnn`, compared with our executor on the ORIGINAL model. Asserts: a model
// `opt --target ncnn` writes never stops at a node of an op whose forms the measured table
// decides (Expand, a binary op: the target check must have named it, and opt exited 3); every
// model that ran and matched as exported is written by opt and still does; the models held by
// name run and match after opt. Crashes and FPEs inside ncnn are outcomes, shown in the table.
// Writes the table (docs/engines-ncnn.md quotes it) to $BCAST_ENGINES_TABLE when set.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engines/isolated_run.h"
#include "engines/ncnn_engine.h"
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

// Corpus models that run and match on ncnn after opt --target ncnn (docs/engines-ncnn.md).
const std::set<std::string>& MustRunAfterOpt() {
  static const auto* const kModels = new std::set<std::string>{
      "fpn_op11",
      "fpn_op16",
      "resnet_block_op11",
      "resnet_block_op16",
      "torchvision_mobilenet_v3_small_op13",
      // Issue 35's exports (LayerNorm over a flattened vector, a channels-last head, a clamp).
      "channels_last_head_op14",
      "clamp_maxmin_op13",
      "flat_layernorm_op14",
  };
  return *kModels;
}

engines::EngineFactory Ncnn() { return engines::MakeNcnnEngine; }

// The manifest's valid binding (of the symbols the inputs declare) that leaves the most graph
// inputs with a leading extent of 1; the first of those.
Bindings NcnnBinding(const Json& manifest, const std::string& model,
                     const onnx::GraphProto& graph) {
  const std::set<std::string> declared = test_support::DeclaredSymbols(graph);
  Bindings best;
  int best_ones = -1;
  for (const auto& entry : manifest.at(model).at("bindings_ok")) {
    Bindings b = test_support::DeclaredBinding(entry, declared);
    int ones = 0;
    for (const auto& vi : graph.input()) {
      const auto& dims = vi.type().tensor_type().shape().dim();
      if (dims.empty()) continue;
      const auto& d0 = dims[0];
      const bool one = d0.has_dim_value() ? d0.dim_value() == 1
                                          : b.count(d0.dim_param()) > 0 && b[d0.dim_param()] == 1;
      ones += one;
    }
    if (ones > best_ones) {
      best = b;
      best_ones = ones;
    }
  }
  return best;
}

TEST(NcnnCorpus, AsExportedAndAfterOptOnTheEngine) {
  const targets::TargetProfile* ncnn = targets::FindTarget("ncnn");
  ASSERT_NE(ncnn, nullptr);
  const fs::path scratch = fs::temp_directory_path() / absl::StrCat("bcast_ncnn_", ::getpid());
  fs::create_directories(scratch);
  const Json manifest = test_support::ReadJson(kCorpus + "manifest.json");
  struct Row {
    std::string model;
    Bindings dims;
    int opt_exit = -1;
    std::vector<std::string> outside;  // the target check's lines when opt exits 3
    std::vector<std::string> lacking;  // ops ncnn has no layer for (opt's warnings)
    std::string engine;                // opt's engine verdict and bisection when it exits 1
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
    row.dims = NcnnBinding(manifest, name, m.original.proto.graph());
    const std::string& before = m.before;
    const std::string& after = m.after;
    test_support::CliResult r =
        test_support::WriteAsExported(BCAST_CLI, m, row.dims, scratch.string());
    ASSERT_EQ(r.code, 0) << name << ": " << r.err;
    // After opt --target ncnn, as a user runs it: exit 3 writes nothing and names the nodes.
    r = test_support::RunCliIn(BCAST_CLI, OptArgs(m.path, after, {"--target", "ncnn"}, row.dims),
                               scratch.string());
    row.opt_exit = r.code;
    // 1: the engine itself refused or computed the written model wrongly (issue 42: it is the
    // last judge); 3: the target check named nodes outside the table.
    ASSERT_TRUE(r.code == 0 || r.code == 1 || r.code == 3) << name << ": " << r.err;
    for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
      if (absl::StartsWith(line, "ncnn: ")) row.engine = std::string(line);
    }
    if (r.code == 1) {
      EXPECT_FALSE(row.engine.empty()) << name << ": exit 1 without the engine's verdict";
      for (absl::string_view line : absl::StrSplit(r.err, '\n', absl::SkipEmpty())) {
        if (absl::StrContains(line, "first node that differs")) {
          absl::StrAppend(&row.engine, "; ", line.substr(line.find("first node")));
        }
      }
    }
    test_support::ReadTargetLines(r.err, &row.lacking, &row.outside);
    if (r.code == 3) EXPECT_FALSE(row.outside.empty()) << name << ": exit 3 naming no node";
    absl::StatusOr<Reference> ref = RunReference(m.original, row.dims);
    ASSERT_TRUE(ref.ok()) << name << ": " << ref.status();
    row.ref = *std::move(ref);
    // A reference the comparison cannot fail against (constant, or NaN only) judges nothing:
    // the model never counts as running and matching (the nn.Transformers' outputs are NaN at
    // ncnn's batch of 1 with these seeds; they stop at Expand and Where on ncnn anyway).
    row.uninformative = test_support::FirstUninformativeOutput(row.ref.expected);
    for (const std::string& file : {before, after}) {
      if (file == after && r.code != 0) continue;  // nothing written
      (file == before ? row.before_job : row.after_job) = static_cast<int>(jobs.size());
      jobs.push_back(JobOn(test_support::ReadAll(file), row.ref));
    }
    rows.push_back(std::move(row));
  }
  absl::StatusOr<std::vector<engines::EngineOutcome>> outcomes =
      RunJobs(Ncnn(), jobs, absl::Seconds(60));
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  test_support::CorpusTally tally;
  int written = 0;
  std::string table =
      "| model | dims | as exported | after `opt --target ncnn` | ops ncnn has no layer for |\n"
      "|---|---|---|---|---|\n";
  for (const Row& row : rows) {
    Verdict before = Judge((*outcomes)[row.before_job], row.ref);
    Verdict after;
    if (row.after_job >= 0) {
      ++written;
      after = Judge((*outcomes)[row.after_job], row.ref);
      // What the table decides, the target check names: a written model never stops at an op
      // whose forms the table measured (the converter's "<op> not supported yet").
      for (const auto& [op, rule] : ncnn->op_rules) {
        EXPECT_FALSE(absl::StrContains(after.text, absl::StrCat(op, " not supported yet")))
            << row.model << ": written by opt --target ncnn, stops at " << op
            << ", which the table decides: " << after.text;
      }
    } else if (row.opt_exit == 1) {
      after.text = absl::StrCat("not written (opt exit 1): ", row.engine);
    } else {
      after.text = absl::StrCat("not written (opt exit 3): ", row.outside.size(),
                                " node(s) outside the table, first: ", row.outside.front());
    }
    test_support::UnjudgedWhenUninformative(row.uninformative, &before, &after);
    tally.Add(row.model, before, after);
    absl::StrAppend(&table, "| ", row.model, " | ", test_support::DimList(row.dims), " | ",
                    Cell(before.text), " | ", Cell(after.text), " | ",
                    row.lacking.empty() ? "" : absl::StrJoin(row.lacking, ", "), " |\n");
  }
  test_support::ExpectHeldByName(MustRunAfterOpt(), tally.ran_after, "ncnn", "ncnn",
                                 "docs/engines-ncnn.md", table);
  absl::StrAppend(&table, "\nruns and matches: ", tally.before_ok, " of ", rows.size(),
                  " as exported, ", tally.after_ok, " of ", rows.size(), " after opt (", written,
                  " written by opt, ", rows.size() - written,
                  " stopped by the target check or the engine)\n");
  EmitTable(table);
  test_support::ExpectPageStatesFigures(BCAST_SOURCE_DIR "/docs/engines-ncnn.md", tally.before_ok,
                                        tally.after_ok, rows.size());
  fs::remove_all(scratch);
}

}  // namespace
}  // namespace onnx_bcast

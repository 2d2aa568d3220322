// The real engine in the loop (issue 23 item 5): the exporter corpus at each model's test dims,
// as exported (dims bound, no pass) and after `opt --target opencv`, loaded into OpenCV DNN in
// child processes with seeded random inputs and compared with our executor on the ORIGINAL
// model; and every probe cell that `opt --target opencv` rewrites and declares met, run on
// OpenCV. Asserts: nothing we write crashes OpenCV; every model that ran and matched as
// exported still does after opt; every cell opt writes as met runs and matches (the target
// check and the engine agree). Writes the corpus table (docs/engines.md) to
// $BCAST_ENGINES_TABLE when set.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "driver/driver.h"
#include "engines/engine_probe.h"
#include "engines/isolated_run.h"
#include "engines/opencv_engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/pass_manager.h"
#include "proto/model_io.h"
#include "proto/onnx_text.h"
#include "report/report_json.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/random_inputs.h"
#include "tests/support/cli_process.h"
#include "tests/support/engine_corpus.h"
#include "tests/support/reference_guard.h"

namespace onnx_bcast {
namespace {

namespace fs = std::filesystem;
using test_support::Cell;
using test_support::EmitTable;
using test_support::JobOn;
using test_support::Judge;
using test_support::Reference;
using test_support::RunJobs;
using test_support::RunReference;
using test_support::Verdict;

const std::string kCorpus = BCAST_SOURCE_DIR "/tests/fixtures/exported/";

engines::EngineFactory OpenCv() { return engines::MakeOpenCvEngine; }

// Corpus models that run and match on OpenCV 4.6 after opt --target opencv (docs/engines.md),
// held by name: losing one fails even when another is gained (add a gained one here).
const std::set<std::string> kRunAfterOpt = {
    "fpn_op11",
    "fpn_op16",
    "resnet_block_op11",
    "resnet_block_op16",
    "torchvision_mobilenet_v3_small_op13",
    "torchvision_vit_op14",
    "torchvision_swin_op14",
    "kws_layernorm_op14",
    "masked_attention_op14",
    // Issue 42: the BERT-like encoder with a padding mask; the mask's Unsqueeze(-1), which
    // OpenCV refuses at load, becomes a Reshape to a constant shape (decided live).
    "bert_mask_op14",
    "bert_mask_op17",
    // Issue 35: placed by the live probes (Concat of copies, views), LayerNormalization
    // decomposed.
    "flat_layernorm_op14",
    "channels_last_head_op14",
    "layernorm_mlp_op17",
};

// Probe cells that `opt --target opencv` rewrites and calls met (docs/engines.md): the exact
// number, so that a lost cell fails even when another is gained; a change updates the docs.
constexpr size_t kMetProbeCells = 1289;

TEST(ReferenceGuard, RefusesConstantAndNanOnlyOutputs) {
  auto tensor = [](std::initializer_list<float> v) {
    return runtime::Tensor::FromValues<float>({static_cast<int64_t>(v.size())}, v).value();
  };
  const float nan = std::nanf("");
  EXPECT_EQ(test_support::UninformativeReference(tensor({1, 2, 3})), "");
  EXPECT_EQ(test_support::UninformativeReference(tensor({nan, 2, 3})), "");
  EXPECT_THAT(test_support::UninformativeReference(tensor({0, 0, 0})),
              testing::HasSubstr("one value"));
  EXPECT_THAT(test_support::UninformativeReference(tensor({nan, nan, nan})),
              testing::HasSubstr("no finite value"));
  EXPECT_THAT(test_support::UninformativeReference(tensor({nan, 5, nan, INFINITY})),
              testing::HasSubstr("one value"));
}

TEST(OpenCvCorpus, AsExportedAndAfterOptOnTheEngine) {
  const fs::path scratch = fs::temp_directory_path() / absl::StrCat("bcast_ocv_", ::getpid());
  fs::create_directories(scratch);
  // After opt --target opencv: written even when some node stays outside the table, which
  // stderr lists.
  test_support::CorpusRun run;
  test_support::RunCorpus(
      BCAST_CLI, kCorpus, scratch, OpenCv(),
      {.opt_flags = {"--target", "opencv", "--allow-partial"}, .timeout = absl::Seconds(30)}, &run);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  test_support::CorpusTally tally;
  std::string table =
      "| model | dims | as exported | after `opt --target opencv` | nodes outside the table |\n"
      "|---|---|---|---|---|\n";
  for (const test_support::CorpusRow& row : run.rows) {
    const std::string& out = row.opt.out;
    ASSERT_EQ(row.opt.code, 0) << row.model << ": " << row.opt.err;
    // The report on stdout: "target opencv: N node(s) outside its table".
    const std::string tag = "target opencv: ";
    const size_t at = out.find(tag);
    ASSERT_NE(at, std::string::npos) << row.model << ": " << out;
    const size_t from = at + tag.size();
    int outside = 0;
    ASSERT_TRUE(
        absl::SimpleAtoi(absl::string_view(out).substr(from, out.find(' ', from) - from), &outside))
        << out;
    // A reference the comparison cannot fail against (constant, or NaN only) is refused.
    EXPECT_EQ(row.uninformative, "")
        << row.model << " at the test's inputs; re-export it with informative weights";
    const Verdict before = run.Before(row);
    const Verdict after = run.After(row);
    EXPECT_FALSE(before.crashed) << row.model << " as exported: " << before.text;
    EXPECT_FALSE(after.crashed) << row.model << " after opt: " << after.text;
    tally.Add(row.model, before, after);
    if (kRunAfterOpt.count(row.model)) {
      EXPECT_TRUE(after.matches) << row.model << " must run and match after opt: " << after.text;
    }
    std::vector<std::string> dims;
    for (const auto& [s, v] : row.dims) dims.push_back(absl::StrCat(s, "=", v));
    absl::StrAppend(&table, "| ", row.model, " | ", absl::StrJoin(dims, ", "), " | ",
                    Cell(before.text), " | ", Cell(after.text), " | ", outside, " |\n");
  }
  // The models docs/engines.md names: each one present, and none gained unrecorded.
  for (const std::string& model : kRunAfterOpt) {
    EXPECT_TRUE(std::any_of(run.rows.begin(), run.rows.end(),
                            [&](const test_support::CorpusRow& r) { return r.model == model; }))
        << model << " is no longer in the corpus";
  }
  for (const std::string& model : tally.ran_after) {
    EXPECT_TRUE(kRunAfterOpt.count(model))
        << model << " now runs and matches after opt: add it to kRunAfterOpt and docs/engines.md";
  }
  const size_t n = run.rows.size();
  absl::StrAppend(&table, "\nruns and matches: ", tally.before_ok, " of ", n, " as exported, ",
                  tally.after_ok, " of ", n, " after opt\n");
  EmitTable(table);
  test_support::ExpectPageStatesFigures(BCAST_SOURCE_DIR "/docs/engines.md", tally.before_ok,
                                        tally.after_ok, n);
  fs::remove_all(scratch);
}

TEST(OpenCvCorpus, EveryProbeCellOptRewritesAndCallsMetRunsAndMatches) {
  absl::StatusOr<passes::ResolvedPipeline> pipeline = passes::ResolvePipeline({.target = "opencv"});
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  std::vector<engines::EngineJob> jobs;
  std::vector<Reference> refs;
  std::vector<std::string> labels;
  std::vector<bool> inserted_expand;
  int unmet = 0;
  const std::vector<engines::ProbeCell> grid = engines::ProbeGrid();
  for (size_t i = 0; i < grid.size(); ++i) {
    const engines::ProbeCell& c = grid[i];
    if (c.op == "Reshape" || c.form != "direct") continue;  // rewrites start from direct cells
    absl::StatusOr<engines::ProbeModel> built = engines::BuildProbeModel(c, 1 + i);
    ASSERT_TRUE(built.ok()) << built.status();
    absl::StatusOr<proto::Model> model = proto::ParseModelText(built->text, "cell");
    ASSERT_TRUE(model.ok()) << model.status();
    proto::Model rewritten = *model;
    report::OptReport report;
    ASSERT_TRUE(driver::Optimize(&rewritten, *pipeline, {}, &report).ok()) << built->text;
    if (!report.violations.empty()) {
      ++unmet;  // opt exits 3 and writes nothing
      continue;
    }
    if (proto::ModelsEqual(model->proto, rewritten.proto)) continue;  // measured as running
    absl::StatusOr<Reference> ref = RunReference(*model, {}, &built->feeds);
    ASSERT_TRUE(ref.ok()) << ref.status() << "\n" << built->text;
    absl::StatusOr<std::string> bytes = proto::SerializeModel(rewritten.proto);
    ASSERT_TRUE(bytes.ok());
    jobs.push_back(JobOn(*std::move(bytes), *ref));
    refs.push_back(*std::move(ref));
    bool expands = false;
    for (const auto& n : rewritten.proto.graph().node()) expands |= n.op_type() == "Expand";
    inserted_expand.push_back(expands);
    labels.push_back(absl::StrCat("cell ", i + 1, " (", c.op, ")\n", built->text, "-> ",
                                  proto::PrintGraph(rewritten.proto.graph())));
  }
  EXPECT_EQ(jobs.size(), kMetProbeCells)
      << "probe cells opt rewrites and calls met: update kMetProbeCells and docs/engines.md";
  ASSERT_GT(jobs.size(), 0u);
  absl::StatusOr<std::vector<engines::EngineOutcome>> outcomes = RunJobs(OpenCv(), jobs);
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  int matched = 0;
  int refused_expands = 0;
  for (size_t k = 0; k < jobs.size(); ++k) {
    const Verdict v = Judge((*outcomes)[k], refs[k]);
    EXPECT_FALSE(v.crashed) << labels[k] << v.text;
    // What the target check judges, the engine must run: every node of a rewrite, the
    // Expands it inserts included (the table measures Expand too).
    EXPECT_TRUE(v.matches) << "opt called it met, OpenCV: " << v.text << "\n" << labels[k];
    refused_expands += !v.matches && inserted_expand[k];
    matched += v.matches;
  }
  std::cout << jobs.size() << " probe cells rewritten and met, " << matched
            << " run and match on OpenCV (" << refused_expands
            << " refused in an inserted Expand); " << unmet << " left unmet (opt exits 3)\n";
}

// The engine judges the written model (by default; --verify-engine requires it): an answer
// other than "runs" fails opt (exit 1) and writes nothing. OpenCV 4.6 computes ReduceMean over
// input dims it saw unbound at load as NaN, a case no probe cell (all static) covers; the error
// says the dims the engine ran at, names the first node whose output differs there (the
// ReduceMean, its input matching) and the dims to bind; bound, the same model runs and is
// written.
TEST(OpenCvVerifyEngine, AWrongAnswerFailsAndNamesTheUnboundDims) {
  const fs::path scratch =
      fs::temp_directory_path() / absl::StrCat("bcast_ocv_verify_", ::getpid());
  fs::create_directories(scratch);
  const std::string model = kCorpus + "resnet_block_op16.onnx";
  const std::string out = (scratch / "out.onnx").string();
  test_support::CliResult r = test_support::RunCliIn(
      BCAST_CLI, {"opt", model, "-o", out, "--target", "opencv", "--verify-engine"},
      scratch.string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, testing::HasSubstr("opencv: wrong: 10 of 10 elements differ"));
  EXPECT_THAT(r.out, testing::HasSubstr("(at H=32, N=1, W=32 (H, N, W unbound: chosen by opt))"));
  EXPECT_THAT(r.err, testing::HasSubstr(
                         "on opencv: first node that differs: ReduceMean '/ReduceMean' (inputs "
                         "/Relu_3_output_0 [1,16,8,8] (matches)): tensor '/ReduceMean_output_0'"));
  EXPECT_THAT(r.err, testing::HasSubstr("does not run correctly on opencv (wrong); its inputs "
                                        "keep the symbolic dims H, N, W"));
  EXPECT_THAT(r.err, testing::HasSubstr("not written"));
  EXPECT_FALSE(fs::exists(out));
  r = test_support::RunCliIn(
      BCAST_CLI,
      {"opt", model, "-o", out, "--target", "opencv", "--verify-engine", "--dim", "N=1,H=32,W=32"},
      scratch.string());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, testing::HasSubstr("opencv: runs, max abs"));
  EXPECT_TRUE(fs::exists(out));
  fs::remove_all(scratch);
}

// Engine bisection (verify MODEL --engine): every tensor OpenCV still holds (a layer per named
// node, "onnx_node!<name>") judged against our float64 reference; the first that differs is
// the ReduceMean over dims OpenCV saw unbound, its input agreeing. Bound, nothing differs.
TEST(OpenCvBisection, VerifyOnTheEngineNamesTheFirstNodeThatDiffers) {
  const std::string model = kCorpus + "resnet_block_op16.onnx";
  test_support::CliResult r = test_support::RunCliIn(
      BCAST_CLI, {"verify", model, "--engine", "opencv"}, fs::temp_directory_path().string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, testing::HasSubstr(
                         "first node that differs: ReduceMean '/ReduceMean' (inputs "
                         "/Relu_3_output_0 [1,16,8,8] (matches)): tensor '/ReduceMean_output_0': "
                         "16 of 16 elements differ"));
  r = test_support::RunCliIn(BCAST_CLI,
                             {"verify", model, "--engine", "opencv", "--dim", "N=1,H=32,W=32"},
                             fs::temp_directory_path().string());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, testing::HasSubstr("runs and matches; no tensor differs (13 compared"));
  r = test_support::RunCliIn(BCAST_CLI, {"verify", model, "--engine", "tpu9000"},
                             fs::temp_directory_path().string());
  EXPECT_EQ(r.code, 64) << r.out << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr("unknown engine 'tpu9000'"));
}

}  // namespace
}  // namespace onnx_bcast

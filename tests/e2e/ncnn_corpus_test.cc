// ncnn in the loop (issue 34 item 7): every model of the exporter corpus, bound at the manifest
// binding that gives the most graph inputs a batch of 1 (ncnn has no batch axis), converted by
// onnx2ncnn and run on ncnn in child processes, as exported (dims bound, no pass) and after
// `opt --target ncnn`, compared with our executor on the ORIGINAL model. Asserts: what
// `opt --target ncnn` writes (exit 0: its engine check passed) runs and matches on ncnn, and never
// stops at a node of an op whose forms the measured table decides (Expand, a binary op: the target
// check must have named it, and opt exited 3); every model that ran and matched as exported is
// written by opt and still does; the models held by name run and match after opt. Crashes and FPEs
// inside ncnn are outcomes, shown in the table. Writes the table (docs/engines-ncnn.md quotes it)
// to $BCAST_ENGINES_TABLE when set.
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engines/ncnn_engine.h"
#include "gtest/gtest.h"
#include "report/report_json.h"
#include "tests/support/corpus_bindings.h"
#include "tests/support/engine_corpus.h"

namespace onnx_bcast {
namespace {

using test_support::Bindings;

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

// The manifest's valid binding (of the symbols the inputs declare) that leaves the most graph
// inputs with a leading extent of 1; the first of those.
Bindings NcnnBinding(const report::Json& manifest, const std::string& model,
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

// What opt said besides its verdict: ncnn's own line on stdout ("ncnn: refused at load: ..."),
// with the first node that differs when ncnn computed the written model wrongly (exit 1: the
// engine is the last judge, issue 42); the nodes outside the table (exit 3); the ops ncnn has
// no layer for (warnings).
test_support::OptSaid ReadOpt(const test_support::CorpusRow& row) {
  const test_support::CliResult& r = row.opt;
  test_support::OptSaid said;
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "ncnn: ")) said.engine = std::string(line);
  }
  if (r.code == 1) {
    EXPECT_FALSE(said.engine.empty()) << row.model << ": exit 1 without the engine's verdict";
    for (absl::string_view line : absl::StrSplit(r.err, '\n', absl::SkipEmpty())) {
      if (absl::StrContains(line, "first node that differs")) {
        absl::StrAppend(&said.engine, "; ", line.substr(line.find("first node")));
      }
    }
  }
  test_support::ReadTargetLines(r.err, &said.lacking, &said.outside);
  return said;
}

// A reference the comparison cannot fail against (constant, or NaN only) judges nothing: the
// model never counts as running and matching (the nn.Transformers' outputs are NaN at ncnn's
// batch of 1 with these seeds; they stop at Expand and Where on ncnn anyway).
TEST(NcnnCorpus, AsExportedAndAfterOptOnTheEngine) {
  test_support::RunCheckedCorpus(
      BCAST_CLI, kCorpus, engines::MakeNcnnEngine,
      {.bind = NcnnBinding, .opt_flags = {"--target", "ncnn"}},
      {.target = "ncnn",
       .engine = "ncnn",
       .page = "docs/engines-ncnn.md",
       .held = &MustRunAfterOpt(),
       .read_opt = ReadOpt,
       // The converter's words for an op it has no layer for.
       .stops_at = [](const std::string& op) { return absl::StrCat(op, " not supported yet"); },
       .exit_1 = "not written (opt exit 1): ",
       .unwritten = "stopped by the target check or the engine",
       .page_file = BCAST_SOURCE_DIR "/docs/engines-ncnn.md"});
}

}  // namespace
}  // namespace onnx_bcast

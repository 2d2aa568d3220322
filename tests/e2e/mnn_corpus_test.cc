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
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engines/mnn_engine.h"
#include "gtest/gtest.h"
#include "tests/support/engine_corpus.h"

namespace onnx_bcast {
namespace {

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

// What opt said besides its verdict: the nodes outside the table (exit 3), the ops MNN has no
// layer for (warnings), and the engine's answer (exit 1): the first node that differs when MNN
// computed the model wrongly, else its own line ("mnn: refused at load: ...").
test_support::OptSaid ReadOpt(const test_support::CorpusRow& row) {
  const test_support::CliResult& r = row.opt;
  test_support::OptSaid said;
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
  test_support::RunCheckedCorpus(
      BCAST_CLI, kCorpus, engines::MakeMnnEngine, {.opt_flags = {"--target", "mnn"}},
      {.target = "mnn",
       .engine = "MNN",
       .page = "docs/engines-mnn.md",
       .held = &MustRunAfterOpt(),
       .read_opt = ReadOpt,
       .stops_at = [](const std::string& op) { return absl::StrCat("ONNX::", op, " "); },
       .exit_1 = "not written (opt exit 1, its engine check): ",
       .unwritten = "not written"});
}

}  // namespace
}  // namespace onnx_bcast

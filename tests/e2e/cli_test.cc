// End-to-end tests of the onnx-bcast binary: the exit-code contract, one-line errors that start
// with the offending path, nothing left behind on failure, and lossless `opt` with no passes.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/external_data.h"
#include "proto/model_io.h"
#include "proto/tensor_util.h"
#include "tests/support/cli_process.h"
#include "tests/support/sanitizer.h"
#include "tests/support/temp_dir.h"

namespace onnx_bcast {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using Result = test_support::CliResult;

// Runs the CLI with `args` (no shell), capturing stdout and stderr.
Result RunCli(const std::vector<std::string>& args) {
  const std::string dir = fs::temp_directory_path() / ("bcast_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Result r = test_support::RunCliIn(BCAST_CLI, args, dir);
  fs::remove_all(dir);
  return r;
}

// Each test's own directory.
class TempDir : public test_support::TempDir {
 public:
  TempDir() : test_support::TempDir("bcast_e2e") {}
};

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Exactly one line on stderr, starting with `prefix`.
void ExpectOneLineError(const Result& r, const std::string& prefix, const std::string& what) {
  EXPECT_THAT(r.err, StartsWith(prefix));
  EXPECT_THAT(r.err, HasSubstr(what));
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

const char kAddModel[] = R"(
  <ir_version: 8, opset_import: ["" : 15]>
  g (float[2,3] x, float[3] b) => (float[2,3] y) { y = Add(x, b) })";

std::string ValidModelBytes() {
  absl::StatusOr<proto::Model> m = proto::ParseModelText(kAddModel);
  EXPECT_TRUE(m.ok());
  return *proto::SerializeModel(m->proto);
}

TEST(Cli, HelpVersionAndUsage) {
  Result r = RunCli({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* cmd : {"check", "opt", "--passes", "none", "run", "verify"})
    EXPECT_THAT(r.out, HasSubstr(cmd));
  EXPECT_EQ(RunCli({"--version"}).code, 0);
  r = RunCli({"help", "opt"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("--in-place"));
  r = RunCli({"opt", "--passes", "none", "--no-such-flag"});
  EXPECT_EQ(r.code, 64);
  ExpectOneLineError(r, "onnx-bcast opt:", "unknown option '--no-such-flag'");
  EXPECT_EQ(RunCli({"frobnicate"}).code, 64);
  EXPECT_EQ(RunCli({}).code, 64);
  EXPECT_EQ(RunCli({"opt", "--passes", "none", "m.onnx"}).code, 64);  // no -o
  EXPECT_EQ(RunCli({"opt", "--passes", "none", "m.onnx", "-o"}).code, 64);
  EXPECT_EQ(RunCli({"opt", "m.onnx", "-o", "x", "--passes", "no-such-pass"}).code, 64);
  EXPECT_EQ(RunCli({"verify", "a.onnx"}).code, 64);
}

// The words of every usage error the argument parser (CLI11) can raise, one line each, exit 64,
// before the model is read; and the conventions it must keep: '-' and what follows "--" are
// positionals, repeatable options take one value per occurrence.
TEST(Cli, ArgumentErrorsKeepTheirWords) {
  const std::string model = BCAST_SOURCE_DIR "/models/cnn_block.onnx";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"check", model, "--bogus"}, "unknown option '--bogus'"},
      {{"check", model, "--bogus=3"}, "unknown option '--bogus=3'"},
      {{"check", model, "-x"}, "unknown option '-x'"},
      {{"check", model, "--json"}, "option '--json' needs a value (FILE)"},
      {{"check", model, "-o"}, "option '--output' needs a value (OUT)"},
      {{"run", model, "--dim"}, "option '--dim' needs a value (SYMBOL=N)"},
      {{"check", model, "--json", "a", "--json", "b"}, "option '--json' given twice"},
      {{"check", model, "-q", "--quiet"}, "option '--quiet' given twice"},
      {{"check", model, "--strict=yes"}, "option '--strict' takes no value"},
      {{"run", model, "--threads", "x"}, "option '--threads': 'x' is not an integer"},
      {{"run", model, "--seed", "99999999999999999999"},
       "option '--seed': '99999999999999999999' is not an integer"},
      {{"run", model, "--rtol", "abc"}, "option '--rtol': 'abc' is not a number"},
      {{"opt", model, "--fold-limit", "1.5", "--dry-run"},
       "option '--fold-limit': '1.5' is not an integer"},
      // The first mistake on the line is the one reported.
      {{"check", model, "--bogus", "--json"}, "unknown option '--bogus'"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = RunCli(args);
    EXPECT_EQ(r.code, 64) << message;
    ExpectOneLineError(r, "onnx-bcast " + args[0] + ": " + message,
                       " (see 'onnx-bcast help " + args[0] + "')");
  }
  // "--" ends the options: what follows is a MODEL even when it looks like an option.
  Result r = RunCli({"check", "--", "-q"});
  EXPECT_EQ(r.code, 2) << r.err;
  ExpectOneLineError(r, "-q: ", "");
  r = RunCli({"check", "-", "-q"});  // '-' is stdin, here empty
  EXPECT_EQ(r.code, 2) << r.err;
  ExpectOneLineError(r, "<stdin>: ", "");
  // A value may start with a dash; a repeatable option does not swallow the MODEL after it.
  EXPECT_EQ(RunCli({"check", "--dim", "N=2", model, "--json", "-", "-q"}).code, 0);
  r = RunCli({"run", "--dim", "N=2", model, "--dim", "N=3", "-q"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("float32[3,10]"));
  // Every command's help lists its own options, then the shared limits and -h, with metavars.
  for (const char* cmd : {"check", "opt", "run", "verify"}) {
    const std::string help = RunCli({"help", cmd}).out;
    EXPECT_THAT(help, StartsWith(std::string("Usage: onnx-bcast ") + cmd)) << help;
    EXPECT_THAT(help, HasSubstr("      --max-file-bytes N      refuse model files")) << cmd;
    EXPECT_THAT(help, HasSubstr("      --max-function-inlines N\n" + std::string(30, ' '))) << cmd;
    EXPECT_THAT(help, testing::EndsWith("  -h, --help                  show this help\n")) << cmd;
    EXPECT_EQ(RunCli({cmd, "--help"}).out, help) << cmd;
  }
  EXPECT_THAT(RunCli({"help", "run"}).out,
              HasSubstr("      --input NAME=FILE.pb    bind one input from a TensorProto file "
                        "(repeatable)\n"));
}

TEST(Cli, OptWithoutPassesIsLosslessForEveryModel) {
  std::vector<std::string> models;
  for (const char* root : {"/usr/share/libonnx-testdata/data", BCAST_SOURCE_DIR "/models"}) {
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      if (e.path().extension() == ".onnx") models.push_back(e.path().string());
    }
  }
  ASSERT_GT(models.size(), 1000u);
  std::sort(models.begin(), models.end());
  TempDir dir;
  // Under the sanitizers every 5th model: the same load and save paths at a fifth of the cost
  // (a thousand instrumented process starts are minutes of the CI budget).
  const size_t stride = test_support::SweepStride(5);
  for (size_t i = 0; i < models.size(); i += stride) {
    const std::string& model = models[i];
    const std::string out = dir / "out.onnx";
    Result r = RunCli({"opt", "--passes", "none", model, "-o", out});
    ASSERT_EQ(r.code, 0) << model << ": " << r.err;
    absl::StatusOr<proto::Model> a = proto::LoadModel(model);
    absl::StatusOr<proto::Model> b = proto::LoadModel(out);
    ASSERT_TRUE(a.ok() && b.ok()) << model;
    // External data saved to another directory is copied under the output's name and its
    // `location` rewritten; the payloads must be the same and nothing else may differ.
    std::vector<onnx::TensorProto*> in_ext, out_ext;
    proto::ForEachModelTensor(&a->proto, [&](onnx::TensorProto* t) {
      if (t->data_location() == onnx::TensorProto::EXTERNAL) in_ext.push_back(t);
    });
    proto::ForEachModelTensor(&b->proto, [&](onnx::TensorProto* t) {
      if (t->data_location() == onnx::TensorProto::EXTERNAL) out_ext.push_back(t);
    });
    ASSERT_EQ(in_ext.size(), out_ext.size()) << model;
    for (size_t i = 0; i < in_ext.size(); ++i) {
      EXPECT_EQ(proto::ReadExternalData(*in_ext[i], a->base_dir).value(),
                proto::ReadExternalData(*out_ext[i], b->base_dir).value())
          << model << " " << in_ext[i]->name();
      *in_ext[i]->mutable_external_data() = out_ext[i]->external_data();
    }
    std::string diff;
    EXPECT_TRUE(proto::ModelsEqual(a->proto, b->proto, &diff)) << model << "\n" << diff;
  }
}

struct BadInput {
  std::string name, bytes, message;
};

TEST(Cli, UnloadableModelsExitTwoAndWriteNothing) {
  const std::string good = ValidModelBytes();
  const std::vector<BadInput> cases = {
      {"empty", "", "empty file"},
      {"garbage", std::string(100, '\x07'), "not a valid ONNX model"},
      {"truncated", good.substr(0, good.size() - 5), ""},
      {"concatenated", good + good, "imported twice"},
  };
  for (const BadInput& c : cases) {
    TempDir dir;
    const std::string in = dir / "in.onnx";
    WriteFile(in, c.bytes);
    Result r = RunCli({"opt", "--passes", "none", in, "-o", dir / "out.onnx"});
    EXPECT_EQ(r.code, 2) << c.name << ": " << r.err;
    ExpectOneLineError(r, in, c.message);
    EXPECT_EQ(dir.Count(), 1u) << c.name << ": output or temporary left behind";
  }
  Result r = RunCli({"opt", "--passes", "none", "/no/such/model.onnx", "-o", "/tmp/x.onnx"});
  EXPECT_EQ(r.code, 2);
  ExpectOneLineError(r, "/no/such/model.onnx", "no such file");
}

TEST(Cli, UnwritableOutputExitsFour) {
  TempDir dir;
  const std::string in = dir / "in.onnx";
  WriteFile(in, ValidModelBytes());
  Result r = RunCli({"opt", "--passes", "none", in, "-o", in});
  EXPECT_EQ(r.code, 4);
  ExpectOneLineError(r, in, "is the input model");
  fs::create_directories(dir / "sub");
  r = RunCli({"opt", "--passes", "none", in, "-o", dir / "sub/../in.onnx"});
  EXPECT_EQ(r.code, 4);
  ExpectOneLineError(r, dir / "sub/../in.onnx", "is the input model");
  fs::create_symlink(in, dir / "link.onnx");
  r = RunCli({"opt", "--passes", "none", in, "-o", dir / "link.onnx"});
  EXPECT_EQ(r.code, 4);
  r = RunCli({"opt", "--passes", "none", in, "-o", dir / "missing/out.onnx"});
  EXPECT_EQ(r.code, 4);
  ExpectOneLineError(r, dir / "missing/out.onnx", "does not exist");
  EXPECT_EQ(dir.Count(), 3u);  // in.onnx, sub, link.onnx: nothing else
  r = RunCli({"opt", "--passes", "none", in, "-o", in, "--in-place"});
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(Cli, ExternalDataOptionWritesDataFile) {
  TempDir dir;
  Result r = RunCli({"opt", "--passes", "none", BCAST_SOURCE_DIR "/models/external/mlp.onnx", "-o",
                     dir / "mlp.onnx"});
  ASSERT_EQ(r.code, 0) << r.err;
  // The weights are copied under a name derived from the output's, never the model's location.
  EXPECT_TRUE(fs::exists(dir / "mlp.onnx.data"));
  EXPECT_FALSE(fs::exists(dir / "weights"));
  r = RunCli({"opt", "--passes", "none", dir / "mlp.onnx", "-o", dir / "inline_ext.onnx",
              "--external-data"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(proto::LoadModel(dir / "inline_ext.onnx").ok());
}

const std::string kFixtures = BCAST_SOURCE_DIR "/tests/fixtures/check/";

TEST(CliCheck, InvalidModelsExitOneAndNameTheNode) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"gemm_bad_c", "Gemm 'Gemm#0': C [7] is not unidirectionally broadcastable"},
      {"prelu_bad_slope", "PRelu 'PRelu#0': slope [4] is not unidirectionally broadcastable"},
      {"add_mismatch", "Add 'Add#0': A [2,3] and B [4,3] are not broadcastable"},
      {"where_bad_condition", "Where 'Where#0': condition [4]"},
      {"sum_third_conflicts", "data_2 'c' conflicts"},
      {"if_branch_conflict", "Add 'If#0/then/Add#0': A [2,3] and B [4,3] are not broadcastable"},
  };
  for (const auto& [name, what] : cases) {
    Result r = RunCli({"check", kFixtures + name + ".onnxtxt"});
    EXPECT_EQ(r.code, 1) << name << ": " << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr(what)) << name;
    EXPECT_THAT(r.out, HasSubstr("1 error")) << name;
  }
}

TEST(CliCheck, ConditionsAreWarningsUnlessStrict) {
  const std::string model = kFixtures + "symbolic_batch.onnxtxt";
  Result r = RunCli({"check", model});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("only if N ∈ {1, 5}"));
  EXPECT_EQ(RunCli({"check", model, "--strict"}).code, 1);
  r = RunCli({"check", model, "--json", "-"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, StartsWith("{"));
  EXPECT_THAT(r.out, HasSubstr("\"verdict\": \"conditional\""));
  EXPECT_THAT(r.out, HasSubstr("\"conditional\": 1"));
}

TEST(CliCheck, ValidModelsExitZeroAndAnnotate) {
  TempDir dir;
  Result r = RunCli({"check", BCAST_SOURCE_DIR "/models/cnn_block.onnx", "--json",
                     dir / "report.json", "--annotate", "-o", dir / "annotated.onnx"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("5 broadcasting nodes: 5 ok"));
  EXPECT_TRUE(fs::exists(dir / "report.json"));
  absl::StatusOr<proto::Model> m = proto::LoadModel(dir / "annotated.onnx");
  ASSERT_TRUE(m.ok());
  EXPECT_GE(m->proto.graph().value_info_size(), 8);
  EXPECT_EQ(RunCli({"check", BCAST_SOURCE_DIR "/models/legacy_axis.onnx"}).code, 0);
}

TEST(CliCheck, QuietPrintsTheSummaryLineAloneWithTheSameExitCodes) {
  const std::string bad = kFixtures + "if_branch_conflict.onnxtxt";
  for (const char* flag : {"--quiet", "-q"}) {
    Result r = RunCli({"check", bad, flag});
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(r.out, bad + ": 1 broadcasting nodes: 0 ok, 1 error, 0 conditional, 0 unknown\n");
    EXPECT_EQ(r.err, "");
  }
  const std::string conditional = kFixtures + "symbolic_batch.onnxtxt";
  Result r = RunCli({"check", conditional, "-q"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out,
            conditional + ": 1 broadcasting nodes: 0 ok, 0 error, 1 conditional, 0 unknown\n");
  EXPECT_EQ(RunCli({"check", conditional, "-q", "--strict"}).code, 1);
  // --dim still names the failure on stderr; stdout keeps to the one line.
  r = RunCli({"check", conditional, "-q", "--dim", "N=3"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
  ExpectOneLineError(r, conditional, "Add 'Add#0': A [3,3] and B [5,3]");
  // --lint's count stays on the line.
  r = RunCli({"check", BCAST_SOURCE_DIR "/models/cnn_block.onnx", "-q", "--lint"});
  EXPECT_THAT(r.out, HasSubstr("lint warnings\n"));
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
}

TEST(CliCheck, OkNodesAreListedOnlyWhenVerbose) {
  const std::string model = BCAST_SOURCE_DIR "/models/cnn_block.onnx";
  Result r = RunCli({"check", model});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, model + ": 5 broadcasting nodes: 5 ok, 0 error, 0 conditional, 0 unknown\n");
  for (const char* flag : {"--verbose", "-v"}) {
    r = RunCli({"check", model, flag});
    EXPECT_EQ(r.code, 0);
    EXPECT_THAT(r.out, StartsWith(model + ": 5 broadcasting nodes: 5 ok"));
    EXPECT_THAT(r.out, HasSubstr("\nBy class:\n"));
    for (const char* node : {"'bias_add'", "'prelu'", "'row_mul'", "'center'", "'fc'"}) {
      EXPECT_THAT(r.out, HasSubstr(node)) << flag;
    }
  }
  // Errors come before the listing, so the verbose report still opens with what matters.
  const std::string bad = kFixtures + "add_mismatch.onnxtxt";
  r = RunCli({"check", bad, "-v"});
  EXPECT_EQ(r.code, 1);
  EXPECT_LT(r.out.find("\nErrors:\n"), r.out.find("\nBy class:\n")) << r.out;
  r = RunCli({"check", model, "-q", "-v"});
  EXPECT_EQ(r.code, 64);
  EXPECT_EQ(r.out, "");
  const std::string help = RunCli({"help", "check"}).out;
  EXPECT_THAT(help, HasSubstr("-q, --quiet"));
  EXPECT_THAT(help, HasSubstr("-v, --verbose"));
}

TEST(CliCheck, ErrorsAndUsage) {
  TempDir dir;
  WriteFile(dir / "bad.onnx", "garbage");
  Result r = RunCli({"check", dir / "bad.onnx"});
  EXPECT_EQ(r.code, 2);
  ExpectOneLineError(r, dir / "bad.onnx", "not a valid ONNX model");
  EXPECT_EQ(RunCli({"check"}).code, 64);
  EXPECT_EQ(RunCli({"check", "a.onnx", "--annotate"}).code, 64);
  r = RunCli({"check", kFixtures + "add_mismatch.onnxtxt", "--json", dir / "no/such/dir.json"});
  EXPECT_EQ(r.code, 4);
  ExpectOneLineError(r, dir / "no/such/dir.json", "cannot write");
}

TEST(CliOpt, EveryTargetOnTheExampleModels) {
  TempDir dir;
  for (const char* target : {"explicit", "ncnn", "none", "canonical"}) {
    for (const char* model : {"cnn_block.onnx", "legacy_axis.onnx", "external/mlp.onnx"}) {
      const std::string out =
          dir / (std::string(target) + "_" + fs::path(model).filename().string());
      std::vector<std::string> args = {
          "opt", BCAST_SOURCE_DIR "/models/" + std::string(model), "-o", out, "--target", target,
          "--report", out + ".json", "--verify-each",
          // The tables' promise on every machine; the engines themselves judge in the engine
          // tests (engines.NcnnCorpus.TheExampleModels).
          "--no-live-probe", "--no-verify-engine"};
      // ncnn has no batch axis: its measured table holds for a batch of 1.
      if (std::string(target) == "ncnn" && std::string(model) != "legacy_axis.onnx") {
        args.push_back("--dim");
        args.push_back(std::string(model) == "external/mlp.onnx" ? "B=1" : "N=1");
      }
      Result r = RunCli(args);
      EXPECT_EQ(r.code, 0) << target << " " << model << ": " << r.err;
      EXPECT_THAT(r.out, HasSubstr("target " + std::string(target))) << r.out;
      EXPECT_TRUE(fs::exists(out + ".json"));
      // The result is a valid model that `check` finds no error in.
      Result c = RunCli({"check", out});
      EXPECT_EQ(c.code, 0) << target << " " << model << ": " << c.out;
    }
  }
}

TEST(CliOpt, ExplicitUpgradesTheLegacyAxisBroadcast) {
  TempDir dir;
  Result r = RunCli({"opt", BCAST_SOURCE_DIR "/models/legacy_axis.onnx", "-o", dir / "up.onnx",
                     "--target", "explicit"});
  ASSERT_EQ(r.code, 0) << r.err;
  absl::StatusOr<proto::Model> m = proto::LoadModel(dir / "up.onnx");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->proto.opset_import(0).version(), 7);
  Result c = RunCli({"check", dir / "up.onnx", "--verbose"});
  EXPECT_THAT(c.out, HasSubstr("[1,3,4,5] , [1,3,1,1] -> [1,3,4,5]")) << c.out;
}

TEST(CliOpt, DryRunWritesNothingAndReportsChanges) {
  TempDir dir;
  Result r = RunCli({"opt", BCAST_SOURCE_DIR "/models/cnn_block.onnx", "-o", dir / "x.onnx",
                     "--target", "explicit", "--dry-run"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("align-ranks"));
  EXPECT_EQ(dir.Count(), 0u);
}

TEST(CliOpt, TargetFilesAndUsageErrors) {
  TempDir dir;
  WriteFile(dir / "tiny.profile",
            // (unidirectional: legalize-measured gives no Gemm C the (M,N) of a symbolic M;
            // the legalize-ncnn code that did is gone with it.)
            "name = tiny\nclasses = same, scalar, unidirectional\nmax_rank = 4\n"
            "equal_rank = true\n");
  Result r = RunCli({"opt", BCAST_SOURCE_DIR "/models/cnn_block.onnx", "-o", dir / "t.onnx",
                     "--target-file", dir / "tiny.profile"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "t.onnx"));
  WriteFile(dir / "bad.profile", "classes = sideways\n");
  r = RunCli({"opt", BCAST_SOURCE_DIR "/models/cnn_block.onnx", "-o", dir / "b.onnx",
              "--target-file", dir / "bad.profile"});
  EXPECT_EQ(r.code, 64) << r.err;
  EXPECT_THAT(r.err, StartsWith(dir / "bad.profile"));
  EXPECT_EQ(RunCli({"opt", "m.onnx", "-o", "x", "--target", "no-such-target"}).code, 64);
  EXPECT_EQ(
      RunCli({"opt", "m.onnx", "-o", "x", "--target", "ncnn", "--passes", "align-ranks"}).code, 64);
  EXPECT_FALSE(fs::exists(dir / "b.onnx"));
}

const std::string kOptFixtures = BCAST_SOURCE_DIR "/tests/fixtures/opt/";

// A target whose form cannot be reached (or proven) on some node: exit 3, every such node on
// stderr (one line each, graph path, node, op, shapes, why), nothing written; --allow-partial
// writes the model and still lists them.
TEST(CliOpt, TargetNotMetExitsThreeListsEveryNodeAndWritesNothing) {
  TempDir dir;
  // The Reshape to a runtime shape hides the rank: no target that depends on ranks can prove it.
  for (const char* target : {"explicit", "ncnn", "none"}) {
    Result r = RunCli(
        {"opt", kOptFixtures + "unknown_rank.onnxtxt", "-o", dir / "u.onnx", "--target", target});
    EXPECT_EQ(r.code, 3) << target << ": " << r.err;
    // ncnn takes no run-time shapes: the Reshape to a graph input's values is a second node.
    const std::string of = std::string(target) == "ncnn" ? "2" : "1";
    EXPECT_THAT(r.err, HasSubstr(std::string("target ") + target + " not met (node 1 of " + of));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), std::stoi(of)) << r.err;
    EXPECT_THAT(r.err, HasSubstr("main: Add 'Add#1': ? and [120]: cannot prove"));
    EXPECT_THAT(r.err, HasSubstr("rank of input 0 'r' unknown, produced by Reshape 'Reshape#0'"));
    EXPECT_THAT(r.err, HasSubstr("nothing written"));
    EXPECT_EQ(dir.Count(), 0u) << target;
  }
  {
    Result r = RunCli(
        {"opt", kOptFixtures + "unknown_rank.onnxtxt", "-o", dir / "u.onnx", "--target", "ncnn"});
    EXPECT_THAT(r.err, HasSubstr("main: Reshape 'Reshape#0': [N,20,120] and [K]: reads a shape "
                                 "computed at run time (input 1 's'"));
    EXPECT_THAT(r.err, HasSubstr("'s' is a graph input"));
  }
  // canonical depends on no rank: the same model is fine there.
  Result c = RunCli({"opt", kOptFixtures + "unknown_rank.onnxtxt", "-o", dir / "c.onnx", "--target",
                     "canonical"});
  EXPECT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(c.err, "");
  fs::remove(dir / "c.onnx");
  // --dry-run gives the same verdict.
  Result d =
      RunCli({"opt", kOptFixtures + "unknown_rank.onnxtxt", "--dry-run", "--target", "explicit"});
  EXPECT_EQ(d.code, 3) << d.err;
  EXPECT_EQ(dir.Count(), 0u);
}

TEST(CliOpt, AllowPartialWritesTheModelAndStillListsTheNodes) {
  TempDir dir;
  Result r = RunCli({"opt", kOptFixtures + "unknown_rank.onnxtxt", "-o", dir / "u.onnx", "--target",
                     "ncnn", "--allow-partial"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("written anyway: --allow-partial"));
  EXPECT_THAT(r.err, HasSubstr("Add 'Add#1'"));
  EXPECT_TRUE(fs::exists(dir / "u.onnx"));
  EXPECT_THAT(RunCli({"opt", "--help"}).out, HasSubstr("--allow-partial"));
}

TEST(CliOpt, ProvenBroadcastErrorIsNotWritten) {
  TempDir dir;
  Result r = RunCli(
      {"opt", kFixtures + "symbolic_batch.onnxtxt", "-o", dir / "s.onnx", "--target", "explicit"});
  // (N,3)+(5,3): ranks equal, the condition N in {1,5} is check's business, not the target's.
  EXPECT_EQ(r.code, 0) << r.err;
  r = RunCli({"opt", kFixtures + "if_branch_conflict.onnxtxt", "-o", dir / "e.onnx", "--target",
              "explicit"});
  EXPECT_NE(r.code, 0);
  EXPECT_FALSE(fs::exists(dir / "e.onnx"));
}

TEST(CliVerify, ExitCodesAndOptVerify) {
  TempDir dir;
  const std::string model = BCAST_SOURCE_DIR "/models/cnn_block.onnx";
  Result r = RunCli({"opt", model, "-o", dir / "none.onnx", "--target", "none", "--verify"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("EQUAL (whole-model, bit-exact)"));
  EXPECT_TRUE(fs::exists(dir / "none.onnx"));
  r = RunCli({"verify", model, dir / "none.onnx", "--samples", "2", "--edge-cases"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("N=0"));
  r = RunCli({"verify", model, dir / "none.onnx", "--local"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("5 node(s) checked"));
  // A model with another output name is not equivalent.
  WriteFile(dir / "a.onnxtxt", R"(<ir_version: 8, opset_import: ["" : 15]>
    g (float[N,3] x, float[3] b) => (float[N,3] y) { y = Add(x, b) })");
  WriteFile(dir / "b.onnxtxt", R"(<ir_version: 8, opset_import: ["" : 15]>
    g (float[N,3] x, float[3] b) => (float[N,3] y) { y = Sub(x, b) })");
  r = RunCli({"verify", dir / "a.onnxtxt", dir / "b.onnxtxt"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("DIFFERENT"));
  EXPECT_THAT(r.out, HasSubstr("first divergence"));
  EXPECT_EQ(RunCli({"verify", dir / "a.onnxtxt", dir / "missing.onnx"}).code, 2);
  EXPECT_EQ(RunCli({"verify", dir / "a.onnxtxt", dir / "b.onnxtxt", "--samples", "x"}).code, 64);
}

// opt --report names each pass under "pass" (the Python dicts' key too); verify --report reads
// it, and a missing or malformed report fails before any run instead of being ignored.
TEST(CliVerify, ReportIsReadAndMustBeValid) {
  TempDir dir;
  const std::string model = BCAST_SOURCE_DIR "/models/legacy_axis.onnx";
  Result r = RunCli({"opt", model, "--target", "explicit", "-o", dir / "out.onnx", "--report",
                     dir / "report.json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string report = test_support::ReadAll(dir / "report.json");
  EXPECT_THAT(report, HasSubstr("\"pass\": \"upgrade-legacy-broadcast\""));
  EXPECT_THAT(report, ::testing::Not(HasSubstr("\"name\"")));
  r = RunCli({"verify", model, dir / "out.onnx", "--report", dir / "report.json"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  r = RunCli({"verify", model, dir / "out.onnx", "--report", dir / "missing.json"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("missing.json"));
  WriteFile(dir / "garbage.json", "{\"passes\": [");
  r = RunCli({"verify", model, dir / "out.onnx", "--report", dir / "garbage.json"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("garbage.json"));
  WriteFile(dir / "check.json", RunCli({"check", model, "--json", "-"}).out);
  r = RunCli({"verify", model, dir / "out.onnx", "--report", dir / "check.json"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("not an `opt --report` document"));
}

TEST(CliLimits, EveryCommandTakesResourceLimits) {
  TempDir dir;
  const std::string model = BCAST_SOURCE_DIR "/models/cnn_block.onnx";
  Result r = RunCli({"check", model, "--max-nodes", "3"});
  EXPECT_EQ(r.code, 2) << r.err;
  ExpectOneLineError(r, model, "more than the limit of 3 nodes");
  r = RunCli(
      {"opt", "--passes", "none", model, "-o", dir / "x.onnx", "--max-tensor-elements", "100"});
  EXPECT_EQ(r.code, 2) << r.err;
  ExpectOneLineError(r, model, "more than the limit of 100 elements");
  r = RunCli({"run", model, "--max-file-bytes", "1000"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(RunCli({"verify", model, model, "--max-nesting", "0"}).code, 64);
  EXPECT_EQ(RunCli({"check", model, "--max-nodes", "many"}).code, 64);
  EXPECT_EQ(RunCli({"check", model, "--max-nodes", "100"}).code, 0);
  EXPECT_THAT(RunCli({"help", "run"}).out, HasSubstr("--max-tensor-elements"));
  EXPECT_EQ(dir.Count(), 0u);
}

}  // namespace
}  // namespace onnx_bcast

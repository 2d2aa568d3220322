// The command-line conventions of issue 16 (items 3 and 4): opt does its job by default,
// refuses every bad combination before it reads the model, lists valid names, and '-' means one
// thing everywhere: stdin as MODEL, stdout as -o/--json/--report (the text then goes to
// stderr), and a failed write to stdout is exit 4.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"

namespace onnx_bcast {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using Result = test_support::CliResult;

const std::string kModels = BCAST_SOURCE_DIR "/models";
const std::string kCnn = kModels + "/cnn_block.onnx";

class Conventions : public test_support::TempDirTest {
 protected:
  // Runs the CLI; stdin from `stdin_path` when given, stdout to `stdout_path` when given (else
  // captured).
  Result Cli(const std::vector<std::string>& args, const std::string& stdin_path = "",
             const std::string& stdout_path = "") {
    const std::string out = stdout_path.empty() ? Path("stdout") : stdout_path;
    Result r;
    r.code = test_support::WaitExitCode(
        test_support::SpawnCli(BCAST_CLI, args, out, Path("stderr"), stdin_path));
    if (stdout_path.empty()) r.out = test_support::ReadAll(out);
    r.err = test_support::ReadAll(Path("stderr"));
    return r;
  }

  static proto::Model Parse(const std::string& bytes) {
    absl::StatusOr<proto::Model> m = proto::ParseModelBytes(bytes, "<test>", ".");
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *std::move(m) : proto::Model{};
  }
};

// ------------------------------------------------------------------ opt's defaults and options

TEST_F(Conventions, OptWithoutTargetRunsExplicit) {
  const Result r = Cli({"opt", kCnn, "-o", Path("o.onnx")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("target explicit:"));
  EXPECT_THAT(r.out, HasSubstr("align-ranks:"));
  // The model changed: align-ranks rewrote the lower-rank constants (cnn_block has four).
  std::string diff;
  EXPECT_FALSE(proto::ModelsEqual(proto::LoadModel(kCnn)->proto,
                                  proto::LoadModel(Path("o.onnx"))->proto, &diff));
}

TEST_F(Conventions, PassesNoneIsThePlainLosslessSave) {
  const Result r = Cli({"opt", kCnn, "--passes", "none", "-o", Path("o.onnx")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  std::string diff;
  EXPECT_TRUE(proto::ModelsEqual(proto::LoadModel(kCnn)->proto,
                                 proto::LoadModel(Path("o.onnx"))->proto, &diff))
      << diff;
  // 'none' beside another pass is a contradiction.
  EXPECT_EQ(Cli({"opt", kCnn, "--passes", "none,align-ranks", "-o", Path("p.onnx")}).code, 64);
}

TEST_F(Conventions, UnknownNamesListTheValidOnes) {
  Result r = Cli({"opt", kCnn, "--target", "tpu9000", "-o", Path("o.onnx")});
  EXPECT_EQ(r.code, 64);
  EXPECT_THAT(
      r.err,
      HasSubstr("unknown target 'tpu9000' (known: explicit, ncnn, none, canonical, opencv, mnn)"));
  r = Cli({"opt", kCnn, "--passes", "align-ranks,no-such-pass", "-o", Path("o.onnx")});
  EXPECT_EQ(r.code, 64);
  EXPECT_THAT(
      r.err,
      HasSubstr(
          "unknown pass 'no-such-pass' (known: none, upgrade-legacy-broadcast, fold-constants, "
          "align-ranks,"));
  EXPECT_FALSE(fs::exists(Path("o.onnx")));
}

TEST_F(Conventions, MistakesAreRefusedBeforeTheModelIsRead) {
  // The model does not exist: a usage error (64) and not a load error (2) shows that nothing
  // was read before the refusal.
  const std::string missing = Path("missing.onnx");
  const std::vector<std::vector<std::string>> cases = {
      {"opt", missing, "--passes", "legalize", "-o", Path("o.onnx")},  // legalize needs a table
      {"opt", missing, "--target", "explicit", "--passes", "align-ranks", "-o", Path("o.onnx")},
      {"opt", missing, "--passes", "none", "--allow-partial", "-o", Path("o.onnx")},
      {"opt", missing, "--in-place", "--dry-run"},
      {"opt", missing, "--in-place", "-o", Path("other.onnx")},
      {"opt", missing, "-o", "-", "--report", "-"},
      {"opt", missing, "-o", "-", "--external-data"},
      {"opt", missing},
      {"opt", "-", "--in-place"},
      {"run", missing, "--output-dir", "-"},
      {"verify", "-", "-"},
      {"check", missing, "--annotate", "-o", "-", "--json", "-"},
  };
  for (const auto& args : cases) {
    const Result r = Cli(args);
    EXPECT_EQ(r.code, 64) << args[2] << " ...: " << r.err;
    EXPECT_THAT(r.err, StartsWith("onnx-bcast ")) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
}

TEST_F(Conventions, InPlaceNeedsNoOutput) {
  fs::copy_file(kCnn, Path("m.onnx"));
  const Result r = Cli({"opt", Path("m.onnx"), "--in-place"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::string diff;
  EXPECT_FALSE(proto::ModelsEqual(proto::LoadModel(kCnn)->proto,
                                  proto::LoadModel(Path("m.onnx"))->proto, &diff));
  // -o naming the model itself is the same request.
  EXPECT_EQ(Cli({"opt", Path("m.onnx"), "--in-place", "-o", Path("m.onnx")}).code, 0);
}

// -------------------------------------------------------------------------------- one meaning of -

TEST_F(Conventions, DashAsModelReadsStdin) {
  Result r = Cli({"check", "-"}, kCnn);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("<stdin>: 5 broadcasting nodes: 5 ok"));
  r = Cli({"run", "-"}, kCnn);
  EXPECT_EQ(r.code, 0) << r.err;
  r = Cli({"verify", "-", kCnn}, kCnn);
  EXPECT_EQ(r.code, 0) << r.err;
  // Text form from stdin too.
  {
    std::ofstream(Path("m.onnxtxt")) << R"(
      <ir_version: 8, opset_import: ["" : 15]>
      g (float[2,3] x, float[4] b) => (float[2,3] y) { y = Add(x, b) })";
  }
  r = Cli({"check", "-"}, Path("m.onnxtxt"));
  EXPECT_EQ(r.code, 1) << r.err;  // [2,3] + [4] is a proven error
  EXPECT_THAT(r.out, StartsWith("<stdin>: 1 broadcasting nodes: 0 ok, 1 error"));
}

TEST_F(Conventions, StdinModelsCannotReferenceExternalData) {
  // Locations would resolve against our working directory, which the model did not choose.
  const Result r = Cli({"check", "-"}, kModels + "/external/mlp.onnx");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, StartsWith("<stdin>: tensor '"));
  EXPECT_THAT(r.err, HasSubstr("external data"));
}

TEST_F(Conventions, EmptyStdinIsRefused) {
  const Result r = Cli({"check", "-"}, "/dev/null");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, StartsWith("<stdin>: empty input"));
}

TEST_F(Conventions, DashAsOutputWritesTheModelToStdoutAndTheTextToStderr) {
  Result r = Cli({"opt", kCnn, "-o", "-"});
  ASSERT_EQ(r.code, 0) << r.err;
  const proto::Model out = Parse(r.out);
  EXPECT_GT(out.proto.graph().node_size(), 0);
  EXPECT_THAT(r.err, HasSubstr("target explicit: 0 node(s) outside its table"));
  EXPECT_FALSE(fs::exists("-"));
  // stdin to stdout, losslessly.
  r = Cli({"opt", "-", "--passes", "none", "-o", "-"}, kCnn);
  ASSERT_EQ(r.code, 0) << r.err;
  std::string diff;
  EXPECT_TRUE(proto::ModelsEqual(proto::LoadModel(kCnn)->proto, Parse(r.out).proto, &diff)) << diff;
  // A model whose weights live in external data cannot be one stream: exit 4, nothing on stdout.
  r = Cli({"opt", kModels + "/external/mlp.onnx", "--passes", "none", "-o", "-"});
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("external data"));
  // check --annotate -o - too.
  r = Cli({"check", kCnn, "--annotate", "-o", "-"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_GT(Parse(r.out).proto.graph().value_info_size(), 0);
  EXPECT_THAT(r.err, StartsWith(kCnn + ": 5 broadcasting nodes"));
}

TEST_F(Conventions, DashAsJsonOrReportPutsOnlyJsonOnStdout) {
  Result r = Cli({"check", kCnn, "--json", "-"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("{"));
  EXPECT_EQ(r.out.back(), '\n');
  EXPECT_EQ(r.out[r.out.size() - 2], '}');
  EXPECT_THAT(r.out, Not(HasSubstr("broadcasting nodes:")));
  EXPECT_THAT(r.err, StartsWith(kCnn + ": 5 broadcasting nodes"));

  r = Cli({"opt", kCnn, "-o", Path("o.onnx"), "--report", "-"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("{"));
  EXPECT_THAT(r.out, Not(HasSubstr("align-ranks: ")));
  EXPECT_THAT(r.err, HasSubstr("align-ranks: "));
}

TEST_F(Conventions, AFailedWriteToStdoutIsExitFour) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"check", kCnn, "--json", "-"},
        std::vector<std::string>{"check", kCnn}, std::vector<std::string>{"opt", kCnn, "-o", "-"},
        std::vector<std::string>{"opt", kCnn, "--dry-run", "--report", "-"},
        std::vector<std::string>{"verify", kCnn, kCnn, "--samples", "1", "--json", "-"},
        std::vector<std::string>{"run", kCnn}}) {
    const Result r = Cli(args, "", "/dev/full");
    EXPECT_EQ(r.code, 4) << args[0] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("stdout")) << r.err;
  }
}

// -------------------------------------------------------------------------------------- verify

TEST_F(Conventions, VerifyReportsTheModelsInTheOrderGiven) {
  ASSERT_EQ(Cli({"opt", kCnn, "-o", Path("o.onnx")}).code, 0);
  const Result r = Cli({"verify", kCnn, Path("o.onnx")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith(kCnn + " vs " + Path("o.onnx") + ": EQUAL"));
}

// verify --json: one document on stdout (the text on stderr), or in a file beside the text. An
// unnamed node that opt's passes moved is still attributed to the pass that rewrote it: the
// report identifies it by its first output, not by its position.
TEST_F(Conventions, VerifyJsonNamesThePassBehindAnUnnamedNode) {
  {
    std::ofstream(Path("m.onnxtxt")) << R"(<ir_version: 8, opset_import: ["" : 15]>
      g (float[2,3,4,3] x, float[3] b) => (float[2,3,4,3] y) {
        t = Add(x, b)
        y = Relu(t)
      })";
  }
  ASSERT_EQ(Cli({"opt", Path("m.onnxtxt"), "-o", Path("o.onnx"), "--report", Path("r.json")}).code,
            0);
  // The rewrite broken by hand: the Add, now after an inserted Unsqueeze, subtracts.
  absl::StatusOr<proto::Model> o = proto::LoadModel(Path("o.onnx"));
  ASSERT_TRUE(o.ok()) << o.status();
  int add = -1;
  for (int i = 0; i < o->proto.graph().node_size(); ++i) {
    if (o->proto.graph().node(i).op_type() == "Add") add = i;
  }
  ASSERT_GT(add, 0) << "align-ranks inserted nothing before the Add";
  ASSERT_TRUE(o->proto.graph().node(add).name().empty());
  o->proto.mutable_graph()->mutable_node(add)->set_op_type("Sub");
  ASSERT_TRUE(proto::SaveModel(*o, Path("bad.onnx")).ok());

  Result r = Cli({"verify", Path("m.onnxtxt"), Path("bad.onnx"), "--report", Path("r.json"),
                  "--samples", "1", "--json", "-"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, StartsWith("{\n  \"schema_version\": 1,\n  \"kind\": \"verify\""));
  EXPECT_THAT(r.out, HasSubstr("\"pass\": \"align-ranks\""));
  EXPECT_THAT(r.out, HasSubstr("\"node\": \"Add#0\""));
  EXPECT_THAT(r.out, HasSubstr("\"node_output\": \"t\""));
  EXPECT_THAT(r.out, Not(HasSubstr("DIFFERENT (")));
  EXPECT_THAT(r.err, HasSubstr("introduced by pass align-ranks"));

  r = Cli({"verify", Path("m.onnxtxt"), Path("o.onnx"), "--json", Path("v.json")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(": EQUAL"));
  EXPECT_THAT(test_support::ReadAll(Path("v.json")), HasSubstr("\"match\": true"));
  // The JSON never replaces a model it reads.
  r = Cli({"verify", Path("m.onnxtxt"), Path("o.onnx"), "--json", Path("o.onnx")});
  EXPECT_EQ(r.code, 4) << r.err;
}

TEST_F(Conventions, VerifyRefusesAMissingOrMalformedReport) {
  Result r = Cli({"verify", kCnn, kCnn, "--report", Path("none.json")});
  EXPECT_NE(r.code, 0);
  EXPECT_THAT(r.err, HasSubstr("none.json"));
  { std::ofstream(Path("bad.json")) << "{\"passes\": "; }
  r = Cli({"verify", kCnn, kCnn, "--report", Path("bad.json")});
  EXPECT_NE(r.code, 0);
  EXPECT_THAT(r.err, HasSubstr("malformed JSON at byte"));
  { std::ofstream(Path("other.json")) << "{\"nodes\": []}"; }
  r = Cli({"verify", kCnn, kCnn, "--report", Path("other.json")});
  EXPECT_NE(r.code, 0);
  EXPECT_THAT(r.err, HasSubstr("not an `opt --report` document"));
  // The one reader of small files refuses what never ends or would block.
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0600), 0);
  for (const std::string& path : {std::string("/dev/zero"), Path("fifo")}) {
    r = Cli({"verify", kCnn, kCnn, "--report", path});
    EXPECT_NE(r.code, 0);
    EXPECT_THAT(r.err, HasSubstr("not a regular file")) << path;
    r = Cli({"opt", kCnn, "--dry-run", "--target-file", path});
    EXPECT_EQ(r.code, 64) << path << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("not a regular file")) << path;
  }
}

}  // namespace
}  // namespace onnx_bcast

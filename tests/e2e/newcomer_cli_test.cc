// The rough edges a new user met on the way from the README to OpenCV (issue 31): verify on
// the files opt --dim wrote, what a target's verdict covers, one report per refusal in a log
// that merges stdout and stderr, check -q on a set, --help, one rule for an unknown --dim name,
// -o naming MODEL, and the "dims bound" line with --passes none.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_process.h"
#include "tests/support/temp_dir.h"

namespace onnx_bcast {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using Result = test_support::CliResult;

const std::string kExported = BCAST_SOURCE_DIR "/tests/fixtures/exported/";
const std::string kTransformer = kExported + "transformer_op14.onnx";
const std::string kVit = kExported + "torchvision_vit_op14.onnx";
const std::string kCnn = BCAST_SOURCE_DIR "/models/cnn_block.onnx";

class Newcomer : public test_support::TempDirTest {
 protected:
  Result Cli(const std::vector<std::string>& args) {
    return test_support::RunCliIn(BCAST_CLI, args, dir_);
  }
  // stdout and stderr into one file, as a CI log merges them (both appending to one file).
  std::string Merged(const std::vector<std::string>& args) {
    const std::string log = Path("merged.log");
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      test_support::ExecCli(BCAST_CLI, args);
    }
    test_support::WaitExitCode(pid);
    return test_support::ReadAll(log);
  }
};

// Timings differ between runs: "(0.3 ms)" compares as "(T)".
std::string NoTimings(const std::string& line) {
  static const std::regex kTiming(R"(\(\d+(\.\d+)? (ms|s)\))");
  return std::regex_replace(line, kTiming, "(T)");
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  for (absl::string_view l : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    lines.push_back(NoTimings(std::string(l)));
  }
  return lines;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Defect 1: verify of the files opt --dim wrote, both ways round.
TEST_F(Newcomer, VerifyAfterOptDimBindsWhatTheRewrittenModelDeclares) {
  const std::string out = Path("t.onnx");
  ASSERT_EQ(Cli({"opt", kTransformer, "-o", out, "--target", "opencv", "--dim", "N=1,S=5,T=4",
                 "--allow-partial", "--quiet"})
                .code,
            0);
  Result r = Cli({"verify", kTransformer, out, "--quiet"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out.substr(0, r.out.find('\n')),
              HasSubstr(": EQUAL (whole-model, error model: float64 reference, margin 16; N "
                        "bound to 1 by the rewritten model, S bound to 5 by the rewritten model, "
                        "T bound to 4 by the rewritten model)"));
  EXPECT_THAT(r.out, Not(HasSubstr("N=2")));
  // verify --dim binds explicitly; against a declared number it is a usage error.
  r = Cli({"verify", kTransformer, out, "--dim", "N=2", "--quiet"});
  EXPECT_EQ(r.code, 64) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("--dim N=2: the rewritten model accepts only N=1"));
  r = Cli({"verify", kTransformer, kTransformer, "--dim", "N=2", "--samples", "1", "--quiet"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("N bound to 2 by --dim"));
}

// Defect 2: exit 0 from opt --target says what it covers; its last line is the engine's own
// verdict on the written model (issue 42), where this build has the engine.
TEST_F(Newcomer, OptsLastLineSaysWhatTheTargetCovers) {
  Result r = Cli({"opt", kVit, "-o", Path("v.onnx"), "--target", "opencv", "--dim", "N=1"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[lines.size() - 2],
            "target opencv covers broadcast forms only (whether opencv has a layer for every op "
            "is not checked)");
  EXPECT_THAT(lines.back(), testing::StartsWith("opencv: runs, max abs "));
  EXPECT_THAT(lines.back(), testing::EndsWith("x the error model's bound) (at N=1)"));
}

// Defect 3: a refusal is said once, on stderr, the shared hint folded; merged, no line is cut.
TEST_F(Newcomer, ARefusalIsOneReportWithFoldedHintsAndWholeLines) {
  // --no-live-probe: the live probes' line carries their timing, which differs between the
  // two runs compared below.
  const std::vector<std::string> args = {
      "opt", kTransformer, "-o", Path("t.onnx"), "--target", "opencv", "--no-live-probe"};
  Result r = Cli(args);
  ASSERT_EQ(r.code, 3) << r.err;
  // stdout has the count, not the list.
  EXPECT_THAT(r.out, Not(HasSubstr("main: ")));
  EXPECT_THAT(r.out, HasSubstr("node(s) outside its table"));
  // stderr: every node once, each shared hint ("bind N, S with --dim") once with its count.
  EXPECT_THAT(r.err, HasSubstr("--allow-partial writes it anyway): bind N, S with --dim: "));
  const std::regex hint(R"(bind [^()]* with --dim)");
  std::map<std::string, int> hints;
  for (std::sregex_iterator it(r.err.begin(), r.err.end(), hint), end; it != end; ++it) {
    ++hints[it->str()];
  }
  EXPECT_FALSE(hints.empty());
  for (const auto& [h, n] : hints) EXPECT_EQ(n, 1) << h;
  // Merged: every line is a whole line of one of the two streams.
  std::set<std::string> whole;
  for (const std::string& l : Lines(r.out)) whole.insert(l);
  for (const std::string& l : Lines(r.err)) whole.insert(l);
  const std::string merged = Merged(args);
  for (const std::string& l : Lines(merged)) EXPECT_EQ(whole.count(l), 1u) << "cut line: " << l;
  EXPECT_EQ(Lines(merged).size(), Lines(r.out).size() + Lines(r.err).size());
}

// Defect 5: check -q on a set prints the summary line only.
TEST_F(Newcomer, CheckQuietOnASetPrintsTheSummaryOnly) {
  Result r = Cli({"check", kCnn, BCAST_SOURCE_DIR "/models/legacy_axis.onnx", "-q"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("2 models: 2 pass, 0 fail, 0 unreadable;"));
  EXPECT_EQ(Lines(r.out).size(), 1u) << r.out;
}

// Defect 6: "(repeatable)" once per option, in every command's help.
TEST_F(Newcomer, HelpSaysRepeatableOnce) {
  for (const char* cmd : {"check", "opt", "run", "verify"}) {
    Result r = Cli({"help", cmd});
    EXPECT_EQ(r.code, 0);
    EXPECT_THAT(r.out, Not(HasSubstr("(repeatable) (repeatable)"))) << cmd;
    for (const std::string& line : Lines(r.out)) {
      EXPECT_LE(Count(line, "repeatable"), 1u) << cmd << ": " << line;
    }
  }
}

// Defect 8: an unknown --dim name is exit 64 naming the symbols, in every subcommand.
TEST_F(Newcomer, UnknownDimNameIsAUsageErrorEverywhere) {
  const std::vector<std::vector<std::string>> commands = {
      {"check", kVit, "--dim", "batch=1"},
      {"opt", kVit, "-o", Path("o.onnx"), "--dim", "batch=1"},
      {"run", kVit, "--dim", "batch=1"},
      {"verify", kVit, kVit, "--dim", "batch=1"},
  };
  for (const std::vector<std::string>& args : commands) {
    Result r = Cli(args);
    EXPECT_EQ(r.code, 64) << args[0] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("'batch'")) << args[0];
    EXPECT_THAT(r.err, HasSubstr("N)")) << args[0] << ": the symbols that exist";
    EXPECT_EQ(r.out, "") << args[0];
  }
}

// Defect 9: -o naming MODEL is refused before any pass runs (exit 4, as the save would refuse
// it, but with no report that reads as success); --in-place writes it safely.
TEST_F(Newcomer, OutputNamingTheInputIsRefusedBeforeThePasses) {
  const std::string model = Path("m.onnx");
  fs::copy_file(kCnn, model);
  const std::string before = test_support::ReadAll(model);
  Result r = Cli({"opt", model, "-o", model});
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_THAT(r.err, StartsWith(model + ": is the input model"));
  EXPECT_THAT(r.err, HasSubstr("--in-place"));
  EXPECT_EQ(r.out, "") << "no pass ran";
  EXPECT_EQ(test_support::ReadAll(model), before);
  // Through another spelling of the same file.
  r = Cli({"opt", model, "-o", dir_ + "/./m.onnx"});
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(Cli({"opt", model, "--in-place", "--quiet"}).code, 0);
}

// Defect 10: the "dims bound" line whenever dims are bound, --passes none included.
TEST_F(Newcomer, DimsBoundIsSaidWithPassesNone) {
  Result r = Cli({"opt", kVit, "-o", Path("v.onnx"), "--passes", "none", "--dim", "N=1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("dims bound: N=1 ("));
  r = Cli({"opt", kVit, "-o", Path("w.onnx"), "--passes", "none"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace onnx_bcast

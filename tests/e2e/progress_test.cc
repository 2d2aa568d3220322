// Progress on stderr (issue 16 item 2): with stderr on a terminal (a pseudo-terminal here, the
// real isatty path) check, opt, verify and run --bench show step lines with timings; with stderr
// a pipe or a file, or with --quiet, nothing; stdout and exit codes are the same either way.
#include <fcntl.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/cli_process.h"
#include "tests/support/sanitizer.h"
#include "tests/support/temp_dir.h"

namespace onnx_bcast {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;
using Result = test_support::CliResult;

const std::string kCnn = BCAST_SOURCE_DIR "/models/cnn_block.onnx";

// Where the child's stderr goes.
enum class Stderr { kTerminal, kPipe, kFile };

struct Output {
  int code = -1;
  std::string out;
  std::string raw_err;  ///< as written (carriage returns of in-place redraws included)
  /// Lines as a terminal leaves them: the terminal's \r\n folded, each line what follows its
  /// last \r (an in-place redraw), trailing blanks cut.
  std::vector<std::string> lines;
};

std::vector<std::string> ScreenLines(std::string raw) {
  std::string text;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\r' && i + 1 < raw.size() && raw[i + 1] == '\n') continue;  // ONLCR
    text.push_back(raw[i]);
  }
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (size_t cr = line.rfind('\r'); cr != std::string::npos) line = line.substr(cr + 1);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

class Progress : public test_support::TempDirTest {
 protected:
  // Runs the CLI with stdout to a file and stderr to `where`; a terminal and a pipe are read
  // while the child runs (so a full buffer never blocks it).
  Output Cli(const std::vector<std::string>& args, Stderr where = Stderr::kTerminal) {
    Output r;
    const std::string out_path = Path("stdout");
    if (where == Stderr::kFile) {
      Result f = test_support::RunCliIn(BCAST_CLI, args, dir_);
      r.code = f.code;
      r.out = f.out;
      r.raw_err = f.err;
      r.lines = ScreenLines(r.raw_err);
      return r;
    }
    int reader = -1, writer = -1;
    if (where == Stderr::kTerminal) {
      winsize size{};
      size.ws_row = 24;
      size.ws_col = 160;
      EXPECT_EQ(::openpty(&reader, &writer, nullptr, nullptr, &size), 0) << std::strerror(errno);
    } else {
      int fds[2];
      EXPECT_EQ(::pipe(fds), 0);
      reader = fds[0];
      writer = fds[1];
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(reader);
      if (std::freopen(out_path.c_str(), "w", stdout) == nullptr ||
          std::freopen("/dev/null", "r", stdin) == nullptr || ::dup2(writer, STDERR_FILENO) < 0) {
        ::_exit(126);
      }
      ::close(writer);
      test_support::ExecCli(BCAST_CLI, args);
    }
    ::close(writer);
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(reader, buffer, sizeof(buffer));
      if (n > 0) {
        r.raw_err.append(buffer, static_cast<size_t>(n));
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        break;  // EOF (pipe) or EIO (the terminal's last writer closed it)
      }
    }
    ::close(reader);
    r.code = test_support::WaitExitCode(pid);
    r.out = test_support::ReadAll(out_path);
    r.lines = ScreenLines(r.raw_err);
    return r;
  }

  // The rewritten model for verify: opt's default target, progress off.
  std::string Rewritten() {
    const std::string out = Path("rewritten.onnx");
    EXPECT_EQ(Cli({"opt", kCnn, "-o", out}, Stderr::kFile).code, 0);
    return out;
  }
};

// Step lines have the shape `[I] WHAT ... OUTCOME (TIME)`.
::testing::Matcher<std::string> StepLine(const std::string& what, const std::string& outcome) {
  return ContainsRegex("^\\[I\\] " + what + " \\.\\.\\. " + outcome + " ?\\([0-9.]+ m?s\\)$");
}

::testing::Matcher<std::string> AnyStep() { return HasSubstr("[I] "); }

TEST_F(Progress, CheckShowsLoadingAndAnalysisOnATerminal) {
  const Output tty = Cli({"check", kCnn});
  EXPECT_EQ(tty.code, 0) << tty.raw_err;
  EXPECT_THAT(tty.lines, Contains(StepLine("loading .*cnn_block\\.onnx", "9 nodes")));
  EXPECT_THAT(tty.lines, Contains(StepLine("analysis", "5 broadcasting nodes")));
  // Only steps on stderr; stdout and the exit code are what they are without a terminal.
  for (const std::string& line : tty.lines) EXPECT_THAT(line, StartsWith("[I] "));
  const Output file = Cli({"check", kCnn}, Stderr::kFile);
  EXPECT_EQ(tty.out, file.out);
  EXPECT_EQ(tty.code, file.code);
  EXPECT_THAT(file.raw_err, IsEmpty());
  EXPECT_THAT(tty.out, Not(AnyStep()));
}

TEST_F(Progress, OptShowsEachPassAndTheSave) {
  const Output tty = Cli({"opt", kCnn, "-o", Path("tty.onnx")});
  ASSERT_EQ(tty.code, 0) << tty.raw_err;
  EXPECT_THAT(tty.lines, Contains(StepLine("loading .*cnn_block\\.onnx", "9 nodes")));
  EXPECT_THAT(tty.lines, Contains(StepLine("pass upgrade-legacy-broadcast", "no change")));
  EXPECT_THAT(tty.lines, Contains(StepLine("pass align-ranks", "[0-9]+ initializers rewritten")));
  EXPECT_THAT(tty.lines, Contains(StepLine("target check explicit", "met")));
  EXPECT_THAT(tty.lines, Contains(StepLine("saving .*tty\\.onnx", "")));
  const Output file = Cli({"opt", kCnn, "-o", Path("file.onnx")}, Stderr::kFile);
  EXPECT_EQ(file.code, 0);
  EXPECT_THAT(file.raw_err, IsEmpty());
  EXPECT_EQ(test_support::ReadAll(Path("tty.onnx")), test_support::ReadAll(Path("file.onnx")));
  // The text report on stdout is the same but for the passes' timings.
  EXPECT_THAT(tty.out, Not(AnyStep()));
  const std::regex timing("\\([0-9.]+ ms\\)");
  EXPECT_EQ(std::regex_replace(tty.out, timing, "(T)"),
            std::regex_replace(file.out, timing, "(T)"));
}

TEST_F(Progress, OptVerifyShowsTheSamplesToo) {
  // opt --verify runs verify's default of 3 samples.
  const Output ok = Cli({"opt", kCnn, "-o", Path("out.onnx"), "--verify"});
  ASSERT_EQ(ok.code, 0) << ok.raw_err;
  EXPECT_THAT(ok.lines, Contains(StepLine("verify 3/3: random sample 2 \\(.*\\)", "equal")));
}

TEST_F(Progress, VerifyShowsEachSample) {
  const std::string rewritten = Rewritten();
  const Output tty = Cli({"verify", kCnn, rewritten, "--samples", "3"});
  ASSERT_EQ(tty.code, 0) << tty.raw_err;
  EXPECT_THAT(tty.lines, Contains(StepLine("loading .*rewritten\\.onnx", "[0-9]+ nodes")));
  EXPECT_THAT(tty.lines, Contains(StepLine("preparing both models for the executor", "")));
  EXPECT_THAT(tty.lines, Contains(StepLine("choosing samples \\(analysis\\)", "3 input sets")));
  for (int k = 0; k < 3; ++k) {
    EXPECT_THAT(tty.lines,
                Contains(StepLine("verify " + std::to_string(k + 1) + "/3: random sample " +
                                      std::to_string(k) + " \\(N=[0-9]+\\)",
                                  "equal")));
  }
  const Output file = Cli({"verify", kCnn, rewritten, "--samples", "3"}, Stderr::kFile);
  EXPECT_EQ(tty.out, file.out);
  EXPECT_THAT(file.raw_err, IsEmpty());
}

TEST_F(Progress, VerifyLocalShowsTheNodeByNodeStep) {
  const Output tty = Cli({"verify", kCnn, Rewritten(), "--local"});
  ASSERT_EQ(tty.code, 0) << tty.raw_err;
  EXPECT_THAT(tty.lines, Contains(StepLine("verify node by node", "5 broadcasting nodes checked")));
}

TEST_F(Progress, RunShowsTheRunAndTheBench) {
  const Output tty = Cli({"run", kCnn, "--bench", "20"});
  ASSERT_EQ(tty.code, 0) << tty.raw_err;
  EXPECT_THAT(tty.lines, Contains(StepLine("preparing the executor", "")));
  EXPECT_THAT(tty.lines, Contains(StepLine("run random inputs", "")));
  EXPECT_THAT(tty.lines, Contains(StepLine("bench 20 runs", "median [0-9.]+ ms")));
  // On a terminal a step is shown when it starts and redrawn in place when it ends.
  EXPECT_THAT(tty.raw_err, HasSubstr("\r[I] bench 20 runs ...\r"));
  // stdout keeps its one bench line.
  EXPECT_THAT(tty.out, ContainsRegex("^bench: runs=20 median_ms=[0-9.]+ min_ms=[0-9.]+\n$"));
  const Output file = Cli({"run", kCnn, "--bench", "20"}, Stderr::kFile);
  EXPECT_THAT(file.raw_err, Not(AnyStep()));
}

TEST_F(Progress, LongBenchDrawsABar) {
  // Enough runs of the small model to outlast the redraw interval (100 ms) several times; an
  // instrumented run is several times slower, so a quarter of them lasts as long there.
  const std::string runs = test_support::kAddressSanitizer ? "10000" : "40000";
  const Output tty = Cli({"run", kCnn, "--bench", runs});
  ASSERT_EQ(tty.code, 0) << tty.raw_err;
  EXPECT_THAT(tty.raw_err,
              ContainsRegex("\r\\[I\\] bench " + runs + " runs \\[#*\\.*\\] [0-9]+/" + runs + " "));
  EXPECT_THAT(tty.lines, Contains(StepLine("bench " + runs + " runs", "median [0-9.]+ ms")));
}

TEST_F(Progress, QuietSilencesEveryCommandOnATerminal) {
  const std::string rewritten = Rewritten();
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"check", kCnn, "--quiet"},
           {"check", kCnn, "-q"},
           {"opt", kCnn, "-o", Path("q.onnx"), "--quiet"},
           {"opt", kCnn, "-o", Path("q.onnx"), "-q", "--verify"},
           {"verify", kCnn, rewritten, "-q"},
           {"run", kCnn, "--bench", "5", "--quiet"},
       }) {
    const Output tty = Cli(args);
    EXPECT_EQ(tty.code, 0) << args[0] << " " << args.back() << ": " << tty.raw_err;
    EXPECT_THAT(tty.raw_err, Not(AnyStep())) << args[0] << " " << args.back();
  }
}

TEST_F(Progress, NothingWhenStderrIsAPipeOrAFile) {
  const std::string rewritten = Rewritten();
  for (Stderr where : {Stderr::kPipe, Stderr::kFile}) {
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"check", kCnn},
             {"opt", kCnn, "-o", Path("p.onnx"), "--verify"},
             {"verify", kCnn, rewritten},
             {"run", kCnn, "--bench", "5"},
         }) {
      const Output r = Cli(args, where);
      EXPECT_EQ(r.code, 0) << args[0] << ": " << r.raw_err;
      EXPECT_THAT(r.raw_err, AllOf(Not(AnyStep()), Not(HasSubstr("\r")))) << args[0];
    }
  }
}

TEST_F(Progress, ProgressFlagWritesFinishedStepsIntoALog) {
  const Output r = Cli({"opt", kCnn, "-o", Path("log.onnx"), "--progress"}, Stderr::kPipe);
  ASSERT_EQ(r.code, 0) << r.raw_err;
  EXPECT_THAT(r.raw_err, Not(HasSubstr("\r")));  // a log gets whole lines, no redraws
  EXPECT_THAT(r.lines, Contains(StepLine("pass align-ranks", ".*")));
  EXPECT_THAT(r.lines, Contains(StepLine("saving .*log\\.onnx", "")));
  const Output both = Cli({"opt", kCnn, "-o", Path("log.onnx"), "--progress", "-q"}, Stderr::kPipe);
  EXPECT_EQ(both.code, 64);
  EXPECT_THAT(both.raw_err, HasSubstr("--quiet and --progress exclude each other"));
}

TEST_F(Progress, AFailedStepEndsItsLineBeforeTheError) {
  const Output r = Cli({"check", Path("missing.onnx")});
  EXPECT_EQ(r.code, 2);
  ASSERT_EQ(r.lines.size(), 2u) << r.raw_err;
  EXPECT_THAT(r.lines[0], StepLine("loading .*missing\\.onnx", "failed"));
  EXPECT_THAT(r.lines[1], StartsWith(Path("missing.onnx")));
}

}  // namespace
}  // namespace onnx_bcast

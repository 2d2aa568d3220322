// The CLI's progress display: polygraphy-style step lines with timings on stderr, drawn in place
// (with a bar for counted work) while a step runs when stderr is a terminal. Never on stdout, so
// reports and JSON stay byte-for-byte what they were.
#ifndef ONNX_BCAST_TOOLS_PROGRESS_DISPLAY_H_
#define ONNX_BCAST_TOOLS_PROGRESS_DISPLAY_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "support/progress.h"
#include "tools/cli.h"

namespace onnx_bcast::tools {

/// Prints each step as `[I] WHAT ... OUTCOME (TIME)`. Interactive (a terminal): the step is
/// shown as soon as it starts and its line is rewritten with a carriage return, so a 20 s pass
/// is visible while it runs. Otherwise (--progress into a file or pipe): one line per finished
/// step and no control characters.
class StderrProgress final : public support::ProgressSink {
 public:
  explicit StderrProgress(bool interactive, std::FILE* out = stderr)
      : interactive_(interactive), out_(out) {}
  ~StderrProgress() override;

  void Begin(std::string_view what) override;
  void Update(int64_t done, int64_t total) override;
  void End(std::string_view outcome) override;
  void Finished(std::string_view what, std::string_view outcome, double seconds) override;

 private:
  using Clock = std::chrono::steady_clock;
  // Replaces the line drawn so far (interactive only); `final` ends it with a newline.
  void Draw(std::string line, bool final);
  // The finished line of a step: "[I] WHAT ... OUTCOME (TIME)".
  void Print(std::string_view outcome, double seconds);

  const bool interactive_;
  std::FILE* const out_;
  std::string what_;  // TerminalSafe already
  bool open_ = false;
  Clock::time_point start_;
  Clock::time_point last_draw_;
  size_t drawn_ = 0;  // bytes of the unfinished line on screen, to blank out when redrawn
};

/// The sink a command reports to: on stderr when it is a terminal or with --progress, none
/// (null) with --quiet or when stderr goes to a file or pipe.
std::unique_ptr<support::ProgressSink> MakeProgress(bool quiet, bool progress);

/// "0.42 s", "12 ms", "0.3 ms": short enough for a step line, precise enough for small ones.
std::string FormatElapsed(double seconds);

}  // namespace onnx_bcast::tools

#endif  // ONNX_BCAST_TOOLS_PROGRESS_DISPLAY_H_

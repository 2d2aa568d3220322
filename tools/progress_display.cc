// The CLI's progress display (see progress.h).
#include "tools/progress_display.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace onnx_bcast::tools {
namespace {

// Redraws of a bar at most this often: a million-iteration loop must not become a million
// terminal writes.
constexpr std::chrono::milliseconds kRedrawInterval(100);
constexpr int kBarWidth = 24;

// Columns of the terminal behind `out` (80 when it cannot be asked). An unfinished line must
// fit: a carriage return only goes back to the start of the last row of a wrapped line.
size_t TerminalColumns(std::FILE* out) {
  winsize size{};
  if (::ioctl(::fileno(out), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

// `line` cut to at most `width` bytes, not inside a UTF-8 sequence.
std::string Fit(std::string line, size_t width) {
  if (line.size() <= width) return line;
  size_t cut = width;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xc0) == 0x80) --cut;
  line.resize(cut);
  return line;
}

}  // namespace

std::string FormatElapsed(double seconds) {
  if (seconds >= 1) return absl::StrFormat("%.2f s", seconds);
  if (seconds >= 0.01) return absl::StrFormat("%.0f ms", seconds * 1e3);
  return absl::StrFormat("%.1f ms", seconds * 1e3);
}

StderrProgress::~StderrProgress() {
  // A step still open (a path that returned without ending it) must not leave the cursor in
  // the middle of a line for the shell prompt.
  if (open_) End("");
}

void StderrProgress::Begin(std::string_view what) {
  if (open_) End("");  // steps do not nest; close the previous one rather than garble it
  what_ = TerminalSafe(what);
  open_ = true;
  start_ = last_draw_ = Clock::now();
  if (interactive_) Draw(absl::StrCat("[I] ", what_, " ..."), /*final=*/false);
}

void StderrProgress::Update(int64_t done, int64_t total) {
  if (!interactive_ || !open_ || total <= 0) return;
  const Clock::time_point now = Clock::now();
  if (now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  done = std::clamp<int64_t>(done, 0, total);
  const int filled = static_cast<int>(done * kBarWidth / total);
  Draw(absl::StrCat("[I] ", what_, " [", std::string(filled, '#'),
                    std::string(kBarWidth - filled, '.'), "] ", done, "/", total, " ",
                    FormatElapsed(std::chrono::duration<double>(now - start_).count())),
       /*final=*/false);
}

void StderrProgress::End(std::string_view outcome) {
  if (!open_) return;
  open_ = false;
  Print(outcome, std::chrono::duration<double>(Clock::now() - start_).count());
}

void StderrProgress::Finished(std::string_view what, std::string_view outcome, double seconds) {
  if (open_) End("");  // steps do not nest
  what_ = TerminalSafe(what);
  Print(outcome, seconds);
}

void StderrProgress::Print(std::string_view outcome, double seconds) {
  std::string line = absl::StrCat("[I] ", what_, " ... ");
  if (!outcome.empty()) absl::StrAppend(&line, TerminalSafe(outcome), " ");
  absl::StrAppend(&line, "(", FormatElapsed(seconds), ")");
  if (interactive_) {
    Draw(std::move(line), /*final=*/true);
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
}

void StderrProgress::Draw(std::string line, bool final) {
  if (!final) line = Fit(std::move(line), TerminalColumns(out_) - 1);
  const size_t width = line.size();
  // Blank what is left of a longer unfinished line.
  if (width < drawn_) line.append(drawn_ - width, ' ');
  std::fprintf(out_, "\r%s%s", line.c_str(), final ? "\n" : "");
  std::fflush(out_);
  drawn_ = final ? 0 : width;
}

std::unique_ptr<support::ProgressSink> MakeProgress(bool quiet, bool progress) {
  if (quiet) return nullptr;
  const bool terminal = StderrIsTerminal();
  if (!terminal && !progress) return nullptr;
  return std::make_unique<StderrProgress>(terminal);
}

}  // namespace onnx_bcast::tools

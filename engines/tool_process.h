// What the adapters of engines with a converter share (ncnn's onnx2ncnn, MNN's MNNConvert): a
// scratch directory, the converter run as a process of its own with its output in a log, and
// the engine's own log lines captured while it loads and runs (engines print their reasons
// instead of returning them). Used from the child an adapter lives in (isolated_run.h).
#ifndef ONNX_BCAST_ENGINES_TOOL_PROCESS_H_
#define ONNX_BCAST_ENGINES_TOOL_PROCESS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace onnx_bcast::engines {

/// A fresh directory under the system's temporary directory, named `prefix` and a unique
/// suffix. Unavailable when it cannot be created.
absl::StatusOr<std::string> MakeScratchDir(const std::string& prefix);

/// An adapter's scratch directory (MakeScratchDir), removed with all it holds when this goes
/// or a new one replaces it, so that no converted model outlives the adapter.
class ScratchDir {
 public:
  ScratchDir() = default;
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  /// Makes a fresh directory named after `prefix`. Unavailable when it cannot.
  absl::Status Create(const std::string& prefix);
  /// `name` inside the directory.
  std::string File(const std::string& name) const;

 private:
  void Remove();
  std::string path_;  // empty: none yet
};

/// The build an engine was made from, "github.com/REPO commit COMMIT"; empty when the commit
/// is not known (the build was configured without one).
std::string CommitLabel(const std::string& repo, const std::string& commit);

/// The whole file at `path` (empty when it cannot be read).
std::string ReadWholeFile(const std::string& path);

/// Writes `bytes` to `path`. Unavailable when it cannot.
absl::Status WriteWholeFile(const std::string& path, std::string_view bytes);

/// The non-empty lines of `text`, trimmed, each once, in order, joined by "; ".
std::string UniqueLines(std::string_view text);

/// How a tool's process ended, and what it printed (stdout and stderr, interleaved).
struct ToolRun {
  bool signaled = false;
  int signal = 0;     ///< signaled: the signal
  int exit_code = 0;  ///< not signaled: the exit status
  std::string log;
};

/// Runs `argv` (argv[0] the program's path) as a process of its own with stdout and stderr
/// into `log_path`, and waits for it. Unavailable when it cannot be started.
absl::StatusOr<ToolRun> RunTool(const std::vector<std::string>& argv, const std::string& log_path);

/// While one of these is alive, fd 2 (and fd 1 with `stdout_too`) go to the file `path`, read
/// back by Take(). Engines log their reasons there; MNN prints to stdout, which in a probe's
/// child is the CLI's own stdout (a model written to `-o -`) and must not receive them.
class OutputCapture {
 public:
  OutputCapture(std::string path, bool stdout_too);
  ~OutputCapture();
  OutputCapture(const OutputCapture&) = delete;
  OutputCapture& operator=(const OutputCapture&) = delete;

  /// Restores the descriptors and returns what was written meanwhile (the file is removed).
  std::string Take();

 private:
  void Restore();
  std::string path_;
  int saved_[3] = {-1, -1, -1};  // by fd number; -1: not redirected
};

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_TOOL_PROCESS_H_

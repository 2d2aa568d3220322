// Engine calls in child processes: each job loads a model into a fresh adapter and runs it in
// a forked child, and the parent reads the outcome back over a pipe. An engine that aborts,
// lets an exception escape, crashes or hangs yields an outcome (crashed, with the signal, or
// timed out), never takes the caller down. The child's stderr is captured: engines log their
// reasons there.
#ifndef ONNX_BCAST_ENGINES_ISOLATED_RUN_H_
#define ONNX_BCAST_ENGINES_ISOLATED_RUN_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engines/engine.h"

namespace onnx_bcast::engines {

/// What became of one job.
enum class OutcomeKind {
  kRan,       ///< Loaded and ran: `outputs` hold the results.
  kRefused,   ///< The engine returned an error (load or run): `message` is its text.
  kCrashed,   ///< The child died of a signal or exited without a result: `signal`, `message`.
  kTimedOut,  ///< Killed after the timeout.
};

/// "ran", "refused", "crashed", "timed-out".
std::string_view OutcomeKindName(OutcomeKind kind);

struct EngineOutcome {
  OutcomeKind kind = OutcomeKind::kCrashed;
  /// "load" or "run": where a refusal or crash happened (a crash before the child reported
  /// the load is "load").
  std::string stage;
  /// Refused: the engine's message (first line). Crashed/timed out: what happened, then the
  /// child's last meaningful stderr line when there is one.
  std::string message;
  int signal = 0;  ///< crashed by a signal: its number
  NamedTensors outputs;
  /// The child's stderr (the last 64 KiB), for --debug style reports.
  std::string stderr_tail;
};

/// One model to load and run.
struct EngineJob {
  std::string model_bytes;  ///< serialized ModelProto
  NamedTensors inputs;
  std::vector<std::string> output_names;
  /// Only the outputs the loaded model still holds (EngineAdapter::RunAvailable): the outcome's
  /// outputs are then named, a subset of output_names.
  bool available_only = false;
};

struct IsolationOptions {
  /// Children alive at once.
  int parallel = 2;
  /// Per job, from fork to the last byte of its result.
  absl::Duration timeout = absl::Seconds(20);
};

/// Runs each job in its own forked child (at most `options.parallel` at a time) with an adapter
/// from `make_engine`, and returns the outcomes in job order. Errors only for the caller's own
/// failures (no pipe or fork); whatever the engine does is an outcome. Call it from a single
/// thread of a process with no other threads holding locks the engine may need (fork keeps
/// only the calling thread).
absl::StatusOr<std::vector<EngineOutcome>> RunIsolated(const EngineFactory& make_engine,
                                                       const std::vector<EngineJob>& jobs,
                                                       const IsolationOptions& options = {});

/// The line of an engine's stderr that best states why it failed: the last line that reads
/// as an error (an "error:" or "ERROR" line, OpenCV's cv::Exception format among them), else
/// the last non-empty line; log prefixes with timestamps ("[ERROR:0@0.123]") are removed so
/// that the message is the same from run to run. Empty when `text` has no such line.
std::string LastMeaningfulLine(std::string_view text);

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_ISOLATED_RUN_H_

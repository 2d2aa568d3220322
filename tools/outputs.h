// How the CLI writes what a command produces besides its main output: side outputs (--json,
// --report, --profile-json, ...) committed only once the main output is in place, and a model
// on stdout (-o -).
#ifndef ONNX_BCAST_TOOLS_OUTPUTS_H_
#define ONNX_BCAST_TOOLS_OUTPUTS_H_

#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/model_io.h"
#include "proto/safe_write.h"

namespace onnx_bcast::tools {

/// A side output (--json, --report): staged as soon as its text is known (the destination
/// checked and the text written to a temporary beside it, or held for stdout for "-"),
/// committed only once the command's main output is in place. A command that fails after
/// staging (the model cannot be saved) leaves no report behind: the temporary is removed when
/// the SideOutput goes. (A refusal, where the report is the one output, writes it with Write.)
/// The file is never written onto a link, a non-regular file or one of the command's inputs.
class SideOutput {
 public:
  /// False (after printing the error) when the destination is refused or cannot be written.
  bool Stage(const std::string& path, std::string text,
             const absl::StatusOr<proto::InputFiles>& inputs);
  /// Stage for a text that `produce` hands, piece by piece, to the sink it is given: a file
  /// gets each piece as it comes (a 100k-node check --json is never whole in memory). For "-"
  /// the pieces go to stdout at once when `stdout_now` (nothing the command writes later can
  /// fail), else they are held until Commit.
  bool StageStreamed(const std::string& path,
                     absl::FunctionRef<absl::Status(proto::StagedOutputFiles::Sink)> produce,
                     const absl::StatusOr<proto::InputFiles>& inputs, bool stdout_now);
  /// False (after printing the error) when the rename fails. Nothing staged: nothing to do.
  bool Commit();
  /// Stage and Commit at once, for a side output that is the command's last write.
  bool Write(const std::string& path, std::string text,
             const absl::StatusOr<proto::InputFiles>& inputs) {
    return Stage(path, std::move(text), inputs) && Commit();
  }

 private:
  std::string path_;
  std::optional<std::string> stdout_text_;
  proto::StagedOutputFiles file_;
};

/// True when `a` and `b` name one file (lexically, after resolving what exists): a side output
/// and the main output must differ, or one would replace the other.
bool SamePath(const std::string& a, const std::string& b);

/// `-o -`: the model's bytes on stdout (a model with external data needs a file).
absl::Status WriteModelToStdout(const proto::Model& model);

}  // namespace onnx_bcast::tools

#endif  // ONNX_BCAST_TOOLS_OUTPUTS_H_

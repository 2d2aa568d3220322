#include "tools/outputs.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "support/status_macros.h"
#include "tools/cli.h"

namespace onnx_bcast::tools {

bool SideOutput::Stage(const std::string& path, std::string text,
                       const absl::StatusOr<proto::InputFiles>& inputs) {
  path_ = path;
  if (path == "-") {
    stdout_text_ = std::move(text);
    return true;
  }
  // The same staging as a streamed output, handed the whole text as one piece (no copy).
  return StageStreamed(
      path, [&text](proto::StagedOutputFiles::Sink sink) { return sink(text); }, inputs,
      /*stdout_now=*/false);
}

bool SideOutput::StageStreamed(
    const std::string& path,
    absl::FunctionRef<absl::Status(proto::StagedOutputFiles::Sink)> produce,
    const absl::StatusOr<proto::InputFiles>& inputs, bool stdout_now) {
  path_ = path;
  if (path == "-") {
    std::string held;
    // Writes to stdout are not checked, as Commit's are not.
    (void)produce([&held, stdout_now](std::string_view piece) {
      if (stdout_now) {
        std::fwrite(piece.data(), 1, piece.size(), stdout);
      } else {
        held.append(piece);
      }
      return absl::OkStatus();
    });
    if (!stdout_now) stdout_text_ = std::move(held);
    return true;
  }
  absl::StatusOr<proto::StagedOutputFiles> staged =
      inputs.ok() ? proto::StagedOutputFiles::StageStreamed(path, *inputs, produce)
                  : absl::StatusOr<proto::StagedOutputFiles>(inputs.status());
  if (!staged.ok()) {
    // A failure of the inputs' listing has no path in its message; a staging failure has.
    PrintError(inputs.ok() ? std::string(staged.status().message())
                           : absl::StrCat(path, ": cannot write: ", staged.status().message()));
    return false;
  }
  file_ = *std::move(staged);
  return true;
}

bool SideOutput::Commit() {
  if (stdout_text_.has_value()) {
    std::fwrite(stdout_text_->data(), 1, stdout_text_->size(), stdout);
    stdout_text_.reset();
    return true;
  }
  if (absl::Status s = file_.Commit(); !s.ok()) {
    PrintError(std::string(s.message()));
    return false;
  }
  return true;
}

bool SamePath(const std::string& a, const std::string& b) {
  if (a == kStdio || b == kStdio) return false;
  std::error_code ec_a, ec_b;
  const std::filesystem::path pa = std::filesystem::weakly_canonical(a, ec_a);
  const std::filesystem::path pb = std::filesystem::weakly_canonical(b, ec_b);
  if (ec_a || ec_b) return a == b;
  return pa == pb;
}

absl::Status WriteModelToStdout(const proto::Model& model) {
  BCAST_ASSIGN_OR_RETURN(std::string bytes, proto::SerializeForStream(model));
  if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() ||
      std::fflush(stdout) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot write to stdout: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace onnx_bcast::tools

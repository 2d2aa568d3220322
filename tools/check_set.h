// `check MODEL|DIR ...` over many models (issue 25): finds the models under folders and checks
// each in a child process of this same binary (`check MODEL --json - -q ...`), several at once.
// A child per model keeps one model's crash, hang or memory from taking the others down, and
// gives each the single-model check unchanged.
#ifndef ONNX_BCAST_TOOLS_CHECK_SET_H_
#define ONNX_BCAST_TOOLS_CHECK_SET_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "report/check_set_report.h"

namespace onnx_bcast::tools {

/// The models named by `paths`, in order: a file as given; a folder searched recursively for
/// `*.onnx` and `*.onnxtxt` (sorted), never following a symlink out of it (a linked folder is
/// not entered; a linked file counts only when it resolves inside the folder). A path that does
/// not exist is kept: its check reports it unreadable. Duplicates are dropped.
std::vector<std::string> FindModels(const std::vector<std::string>& paths);

/// Told of each model as its check ends (in the order they end): the entry, and how many of
/// all are done.
using CheckDone = std::function<void(const report::CheckSetEntry&, size_t done, size_t total)>;

/// Checks every model in a child `self check MODEL --json - -q <child_args>`, at most `jobs` at
/// a time, and returns one entry per model in the order of `models` (exit code, the child's
/// text from stderr, its JSON document). Errors only for what stops the whole run (no scratch
/// folder, fork failing).
absl::StatusOr<std::vector<report::CheckSetEntry>> CheckModels(
    const std::string& self, const std::vector<std::string>& models,
    const std::vector<std::string>& child_args, int jobs, const CheckDone& done = nullptr);

}  // namespace onnx_bcast::tools

#endif  // ONNX_BCAST_TOOLS_CHECK_SET_H_

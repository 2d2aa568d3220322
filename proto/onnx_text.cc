// ONNX text form (libonnx's parser and printer) for tests, examples and golden files.
// Kept apart from model_io.cc: parser.h's KeyWord::MAP_TYPE collides with <sys/mman.h>.
#include <sstream>

#include "absl/strings/str_cat.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/printer.h"
#include "proto/model_io.h"
#include "proto/onnx_text.h"

namespace onnx_bcast::proto {

absl::StatusOr<Model> FinishLoad(Model model, const Limits& limits);

absl::StatusOr<Model> ParseModelText(std::string_view text, const std::string& label,
                                     const std::string& base_dir, const Limits& limits) {
  Model model;
  model.path = label;
  model.base_dir = base_dir;
  const std::string owned(text);
  try {
    onnx::OnnxParser parser(owned.c_str());
    auto status = parser.Parse(model.proto);
    if (!status.IsOK()) {
      std::string msg = status.ErrorMessage();
      for (char& c : msg) {
        if (c == '\n') c = ' ';
      }
      return absl::InvalidArgumentError(absl::StrCat(label, ": ONNX text parse error: ", msg));
    }
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": ONNX text parse error: ", e.what()));
  }
  return FinishLoad(std::move(model), limits);
}

std::string PrintGraph(const onnx::GraphProto& graph) {
  std::ostringstream os;
  os << graph;
  return os.str();
}

std::string PrintNode(const onnx::NodeProto& node) {
  std::ostringstream os;
  os << node;
  return os.str();
}

}  // namespace onnx_bcast::proto

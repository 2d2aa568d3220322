// ONNX text form (libonnx's parser and printer) for tests, examples and golden files.
// Kept apart from model_io.cc: parser.h's KeyWord::MAP_TYPE collides with <sys/mman.h>.
#include <algorithm>
#include <sstream>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/printer.h"
#include "proto/model_io.h"
#include "proto/onnx_text.h"

namespace onnx_bcast::proto {

absl::StatusOr<Model> FinishLoad(Model model, const Limits& limits);

namespace {

// libonnx's text parser recurses once per bracket level with no limit of its own (Ifs nested
// ~6000 deep overflowed the stack). Whatever --max-nesting says, the parser never sees more
// than this many levels: well within the main thread's stack, sanitizers included.
constexpr int kMaxTextNesting = 1000;

// The deepest bracket nesting of `text` ({, (, [ and attribute lists <...>; "=>" is not a
// bracket), outside string literals and # comments. Linear, no recursion.
int BracketDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '{' || c == '(' || c == '[' || c == '<') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == '}' || c == ')' || c == ']' || (c == '>' && (i == 0 || text[i - 1] != '='))) &&
               depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

absl::StatusOr<Model> ParseModelText(std::string_view text, const std::string& label,
                                     const std::string& base_dir, const Limits& limits) {
  Model model;
  model.path = label;
  model.base_dir = base_dir;
  const int limit = std::min(limits.max_nesting, kMaxTextNesting);
  if (BracketDepth(text) > limit) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": brackets nested deeper than the limit of ", limit));
  }
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

std::string PrintFunction(const onnx::FunctionProto& function) {
  std::ostringstream os;
  os << function;
  return os.str();
}

std::string PrintNode(const onnx::NodeProto& node) {
  std::ostringstream os;
  os << node;
  return os.str();
}

}  // namespace onnx_bcast::proto

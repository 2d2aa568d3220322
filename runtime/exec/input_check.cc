// Input checks against the declared types and shapes (see input_check.h).
#include "runtime/exec/input_check.h"

#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnx_bcast::runtime {

std::string DeclaredShape(const Graph& graph, size_t index) {
  if (index >= graph.input_shape_known.size() || !graph.input_shape_known[index]) {
    return "(no shape)";
  }
  std::vector<std::string> dims;
  const std::vector<int64_t>& shape = graph.input_shapes[index];
  for (size_t k = 0; k < shape.size(); ++k) {
    const std::string& symbol =
        k < graph.input_symbols[index].size() ? graph.input_symbols[index][k] : std::string();
    dims.push_back(shape[k] >= 0 ? absl::StrCat(shape[k]) : symbol.empty() ? "?" : symbol);
  }
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

absl::StatusOr<SymbolValues> CheckInputs(const Graph& graph, const Feeds& feeds,
                                         const SymbolValues& preset,
                                         const std::string& preset_label) {
  SymbolValues bound = preset;
  std::map<std::string, std::string> bound_by;  // symbol -> where its value came from
  for (const auto& [symbol, value] : preset) {
    bound_by[symbol] = absl::StrCat(preset_label, " ", symbol, "=", value);  // "--dim N=4"
  }
  // Graph input order, not feed order, so that the first input binds a symbol and the message
  // blames a later one, whatever order the caller listed them in.
  // Indexed by name: a model may have a million inputs (the last feed of a name wins, as in
  // the executor).
  std::unordered_map<std::string_view, const Value*> by_name;
  by_name.reserve(feeds.size());
  for (const auto& feed : feeds) by_name[feed.first] = &feed.second;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const std::string& name = graph.inputs[i];
    auto found = by_name.find(name);
    if (found == by_name.end()) continue;
    const Value* value = found->second;
    if (!value->is_tensor() || value->tensor == nullptr) continue;
    const Tensor& t = *value->tensor;
    const std::string given = absl::StrCat(DTypeName(t.dtype()), ShapeToString(t.shape()));
    const std::string declared = absl::StrCat(graph.input_types[i] == DType::kUndefined
                                                  ? ""
                                                  : std::string(DTypeName(graph.input_types[i])),
                                              DeclaredShape(graph, i));
    auto refuse = [&](const std::string& why) {
      return absl::InvalidArgumentError(absl::StrCat("input '", name, "': given ", given,
                                                     ", the model declares ", declared, ": ", why));
    };
    if (graph.input_types[i] != DType::kUndefined && graph.input_types[i] != t.dtype()) {
      return refuse("the element type differs");
    }
    if (!graph.input_shape_known[i]) continue;
    const std::vector<int64_t>& shape = graph.input_shapes[i];
    if (shape.size() != t.shape().size()) {
      return refuse(absl::StrCat("rank ", t.shape().size(), ", not ", shape.size()));
    }
    for (size_t k = 0; k < shape.size(); ++k) {
      const int64_t got = t.shape()[k];
      if (shape[k] >= 0) {
        if (got != shape[k])
          return refuse(absl::StrCat("dim ", k, " is ", got, ", not ", shape[k]));
        continue;
      }
      const std::string& symbol = graph.input_symbols[i][k];
      if (symbol.empty()) continue;
      auto [it, inserted] = bound.emplace(symbol, got);
      if (inserted) {
        bound_by[symbol] = absl::StrCat(got, " in input '", name, "'");
      } else if (it->second != got) {
        return refuse(absl::StrCat(symbol, " is ", got, " here but ", bound_by[symbol]));
      }
    }
  }
  return bound;
}

}  // namespace onnx_bcast::runtime

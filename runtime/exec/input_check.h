// Checks the values fed to a model against its declared input types and shapes before a run,
// each symbolic dim bound to one value across all inputs: a wrong input is refused naming
// what disagrees instead of failing later inside a kernel. Shared by `run` and the C++ API.
#ifndef ONNX_BCAST_RUNTIME_EXEC_INPUT_CHECK_H_
#define ONNX_BCAST_RUNTIME_EXEC_INPUT_CHECK_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/exec/executor.h"
#include "runtime/graph.h"

namespace onnx_bcast::runtime {

/// Values of symbolic dims by name.
using SymbolValues = std::map<std::string, int64_t>;

/// Checks every tensor of `feeds` that feeds a graph input: its dtype, rank and fixed dims
/// against the declaration, and each symbol bound to the same value in every input and to its
/// value in `preset` (the caller's explicit bindings, called `preset_label` in messages, e.g.
/// "--dim"). Values that are not tensors and names that are not graph inputs (initializer
/// overrides) are left to the executor. InvalidArgument with one line naming the input, the
/// declared and the given type or shape and the symbol that disagrees. Returns `preset` plus
/// the symbols the inputs bound.
absl::StatusOr<SymbolValues> CheckInputs(const Graph& graph, const Feeds& feeds,
                                         const SymbolValues& preset = {},
                                         const std::string& preset_label = "the given dims");

/// The declared shape of graph input `index` as "[N,3,?]" (symbols by name, "?" unknown dims).
std::string DeclaredShape(const Graph& graph, size_t index);

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_EXEC_INPUT_CHECK_H_

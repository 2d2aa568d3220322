// Symbol bindings for verification samples: symbolic dims bound to 1 in one sample and to
// distinct values > 1 in the others (broadcast bugs hide at 1). Values come from
// rt::RandomInputs / rt::RandomTensor (runtime/exec/random_inputs.h).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/graph.h"

namespace onnx_bcast::verify {

using Bindings = std::map<std::string, int64_t>;

/// One binding per sample: sample 0 binds every symbol to 1, the others to distinct values
/// > 1 (different in each sample); with `edge_cases` a last sample binds them to 0.
std::vector<Bindings> SampleBindings(const std::set<std::string>& symbols, int samples,
                                     bool edge_cases);

/// "N=1, T=1" for messages.
std::string BindingsToString(const Bindings& bindings);

/// The symbols of the graph's declared input shapes.
std::set<std::string> InputSymbols(const rt::Graph& graph);

}  // namespace onnx_bcast::verify

// Symbol bindings for verification samples: symbolic dims bound to 1 in one sample and to
// distinct values > 1 in the others (broadcast bugs hide at 1), chosen inside the model's
// combined broadcast condition (check's analysis) so that both models can run there; and, for
// --edge-cases, a binding outside it where both models must fail. Values come from
// runtime::RandomInputs / runtime::RandomTensor (runtime/exec/random_inputs.h).
#ifndef ONNX_BCAST_VERIFY_INPUTS_H_
#define ONNX_BCAST_VERIFY_INPUTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "broadcast/condition.h"
#include "runtime/graph.h"

namespace onnx_bcast::verify {

using Bindings = std::map<std::string, int64_t>;

/// One binding per sample, each satisfying `condition` where a binding within the search
/// bounds does: sample 0 binds every symbol to 1 where the condition allows it (else to its
/// smallest allowed value); the others to distinct values > 1, different in each sample,
/// taken from each symbol's exact set (ConditionSet::symbol_sets) and, for conditions over
/// several symbols, found by a bounded search over small values checked with
/// ConditionSet::Evaluate. With `edge_cases` a last sample binds every symbol to 0 (empty
/// tensors: outside the analysis's domain, the models must still agree or both fail).
std::vector<Bindings> SampleBindings(const std::set<std::string>& symbols, int samples,
                                     bool edge_cases,
                                     const broadcast::ConditionSet& condition = broadcast::ConditionSet());

/// A binding of `symbols` (values >= 1) under which `condition` is false, close to a
/// satisfying one (one symbol changed); nullopt when the condition holds everywhere or only
/// constrains other symbols (the search covers values up to 64).
std::optional<Bindings> ViolatingBinding(const std::set<std::string>& symbols,
                                         const broadcast::ConditionSet& condition);

/// "N=1, T=1" for messages.
std::string BindingsToString(const Bindings& bindings);

/// The symbols of the graph's declared input shapes.
std::set<std::string> InputSymbols(const runtime::Graph& graph);

}  // namespace onnx_bcast::verify

#endif  // ONNX_BCAST_VERIFY_INPUTS_H_

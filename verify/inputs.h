// Seeded random inputs for verification: symbolic dims bound to 1 in one sample and to distinct
// values > 1 in the others (broadcast bugs hide at 1), values that fit each dtype.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/exec/executor.h"
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

/// A concrete shape: symbols from `bindings`, unknown dims `unknown_dim`.
std::vector<int64_t> BindShape(const std::vector<int64_t>& dims,
                               const std::vector<std::string>& symbols, const Bindings& bindings,
                               int64_t unknown_dim);

/// Random values for every input of `graph`: floats in [-2, 2) (some negative), signed integers
/// in [-5, 5], unsigned in [0, 9], bools both ways. Deterministic in `seed`.
absl::StatusOr<rt::Feeds> RandomFeeds(const rt::Graph& graph, const Bindings& bindings,
                                      uint64_t seed, int64_t unknown_dim = 2);

/// Random values for one tensor of `dtype` and `shape`.
absl::StatusOr<rt::Tensor> RandomTensor(rt::DType dtype, const std::vector<int64_t>& shape,
                                        uint64_t seed);

}  // namespace onnx_bcast::verify

// Seeded random inputs for running a model without test data: shapes from the declared input
// types with symbolic dims bound by name, values in small ranges every op accepts.
#ifndef ONNX_BCAST_RUNTIME_EXEC_RANDOM_INPUTS_H_
#define ONNX_BCAST_RUNTIME_EXEC_RANDOM_INPUTS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/exec/executor.h"
#include "runtime/graph.h"

namespace onnx_bcast::rt {

/// How to make random inputs.
struct RandomInputOptions {
  uint64_t seed = 0;
  /// Symbolic dims by name (e.g. "batch" -> 4).
  std::map<std::string, int64_t> dims;
  /// Extent of symbolic dims not in `dims` and of unknown dims.
  int64_t default_dim = 1;
  /// Refuse (ResourceExhausted) an input with more elements than this, before allocating: a
  /// declared shape like [100000, 100000, 100000] must not exhaust memory.
  int64_t max_elements = int64_t{1} << 32;
};

/// A tensor of `dtype` and `shape` with the values RandomInputs uses, from its own `seed`.
absl::StatusOr<Tensor> RandomTensor(DType dtype, const std::vector<int64_t>& shape,
                                    uint64_t seed);

/// Random feeds for the graph inputs not named in `skip`: floats uniform in [-1, 1), integers
/// in [0, 10), bools 0/1. Unimplemented for inputs that are not tensors or have no known rank.
absl::StatusOr<Feeds> RandomInputs(const Graph& graph, const RandomInputOptions& options,
                                   const std::set<std::string>& skip = {});

}  // namespace onnx_bcast::rt

#endif  // ONNX_BCAST_RUNTIME_EXEC_RANDOM_INPUTS_H_

// Seeded random inputs for running a model without test data: shapes from the declared input
// types with symbolic dims bound by name, values in small ranges every op accepts.
#ifndef ONNX_BCAST_RUNTIME_EXEC_RANDOM_INPUTS_H_
#define ONNX_BCAST_RUNTIME_EXEC_RANDOM_INPUTS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/exec/executor.h"
#include "runtime/graph.h"

namespace onnx_bcast::runtime {

/// The values one input's random elements take (run/verify/opt --input-range NAME=LO:HI):
/// floating-point types uniform in [lo, hi]; integer types and bools whole numbers uniform in
/// [lo, hi] (both ends included: an attention mask 0:1 is 0 and 1); with `integers`, every type
/// takes whole numbers (a float32 mask of exactly 0.0 and 1.0).
struct ValueRange {
  double lo = 0;
  double hi = 0;
  bool integers = false;
  /// "LO:HI" or "LO:HI:int", as ParseValueRange reads it.
  std::string ToString() const;
};

/// "LO:HI" (numbers, LO <= HI, both finite) or "LO:HI:int" (whole numbers). InvalidArgument
/// naming what is wrong otherwise.
absl::StatusOr<ValueRange> ParseValueRange(absl::string_view text);

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
  /// Value ranges by input name (issue 44 item 5); inputs not named keep the defaults below.
  /// A name that is no graph input, or a range the input's type cannot hold (a fraction or a
  /// negative number for an unsigned type, a bool outside 0:1), is InvalidArgument.
  std::map<std::string, ValueRange> ranges;
};

/// A tensor of `dtype` and `shape` with the values RandomInputs uses, from its own `seed`;
/// within `range` when given (checked by CheckValueRange first).
absl::StatusOr<Tensor> RandomTensor(DType dtype, const std::vector<int64_t>& shape, uint64_t seed,
                                    const ValueRange* range = nullptr);

/// Whether `dtype` holds every value of `range`; InvalidArgument "input range NAME=LO:HI: ..."
/// otherwise.
absl::Status CheckValueRange(const std::string& input, DType dtype, const ValueRange& range);

/// Random feeds for the graph inputs not named in `skip`: floats uniform in [-1, 1), integers
/// in [0, 10), bools 0/1, or options.ranges' values. Unimplemented for inputs that are not
/// tensors or have no known rank.
absl::StatusOr<Feeds> RandomInputs(const Graph& graph, const RandomInputOptions& options,
                                   const std::set<std::string>& skip = {});

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_EXEC_RANDOM_INPUTS_H_

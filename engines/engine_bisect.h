// Engine bisection: which node's output first differs on the engine. The model is run on the
// engine once, asking for every intermediate tensor the converted model still holds (a
// converter fuses some away: EngineAdapter::RunAvailable), and each is judged against our
// float64 reference of the same tensor (runtime/exec/error_model.h) in topological order. The
// first one outside the bound names the node the engine computes wrongly, with both values and
// the bound; its inputs, where the engine returned them, matched. polygraphy's `debug reduce`
// and onnx2tf's per-op comparison do this for other runtimes; `verify MODEL --engine NAME` and
// opt (when the engine computes the written model wrongly) do it here.
#ifndef ONNX_BCAST_ENGINES_ENGINE_BISECT_H_
#define ONNX_BCAST_ENGINES_ENGINE_BISECT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engines/engine.h"
#include "proto/model_io.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/random_inputs.h"

namespace onnx_bcast::engines {

struct EngineDivergence {
  std::string tensor;
  std::string node;  ///< the producing node's name ("" when unnamed)
  std::string op;
  std::vector<std::string> input_shapes;  ///< "name [1,16,128]" of its inputs
  runtime::Comparison comparison;              ///< worst element, both values, the bound
  /// "Add '/blk/Add' (inputs x [1,16,128], b [128]): tensor 'y': 12 of 2048 elements differ ..."
  std::string Line() const;
};

struct EngineBisection {
  /// "ran", or the engine's outcome on the model ("refused", "crashed", "timed-out") with
  /// `why`; then nothing was compared.
  std::string outcome;
  std::string why;
  /// Intermediate tensors the engine returned and the reference has (compared up to the first
  /// divergence), and those the converted model no longer holds.
  int64_t compared = 0;
  int64_t unavailable = 0;
  /// The largest error / bound over the tensors compared that matched.
  double worst_ratio = 0;
  std::optional<EngineDivergence> divergence;
  /// One line: the divergence, or "no intermediate tensor differs (K compared, U fused away)".
  std::string Summary() const;
};

/// Runs `engine_model` on the engine (`make_engine`, named `engine`) and `reference_model` on
/// our executor (float32 and float64) with the same seeded inputs (seed 7) at `dims`, and finds
/// the first tensor both models compute (by name, in `reference_model`'s node order) whose
/// engine value is outside the error model's bound. Errors only when our executor cannot run
/// the reference model or no child can be started.
absl::StatusOr<EngineBisection> BisectOnEngine(
    const proto::Model& reference_model, const proto::Model& engine_model,
    const EngineFactory& make_engine, const std::string& engine,
    const std::map<std::string, int64_t>& dims,
    const std::map<std::string, runtime::ValueRange>& ranges = {});

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_ENGINE_BISECT_H_

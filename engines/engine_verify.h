// `opt --verify-engine`: the written model loaded and run on a real engine (in a child
// process, engines/isolated_run.h) and compared with the original model on our executor, with
// the same seeded inputs at the bound dims. The answer is one line a user reads before
// converting: "ncnn: runs, max abs 3e-06", "ncnn: refused at load: Expand not supported yet!",
// "ncnn: crashed (signal 11)".
#ifndef ONNX_BCAST_ENGINES_ENGINE_VERIFY_H_
#define ONNX_BCAST_ENGINES_ENGINE_VERIFY_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "engines/engine.h"
#include "proto/model_io.h"
#include "runtime/exec/random_inputs.h"

namespace onnx_bcast::engines {

struct EngineVerdict {
  /// engines::OutcomeKindName of the child's outcome, or "wrong" when it ran and an output
  /// differs from our executor's on the original.
  std::string outcome;
  /// "<engine>: runs, max abs <e>" / "<engine>: wrong: ..." / "<engine>: refused at load:
  /// ..." / "<engine>: crashed (signal N) at run: ..." / "<engine>: timed out ...".
  std::string line;
  /// When it ran: the largest absolute error against the float64 reference, and the largest
  /// error / the error model's bound.
  double max_abs_error = 0;
  double bound_ratio = 0;
};

/// Runs `rewritten` on the engine `make_engine` makes (named `engine`) and `original` on our
/// executor, each with seeded random inputs (seed 7) at `dims` (values within `ranges` for the
/// inputs it names: opt --input-range), and compares every graph
/// output (engines/judge.h: the error model against a float64 reference, shapes up to dims of
/// 1). Errors only when our executor cannot
/// run the original or no child can be started.
absl::StatusOr<EngineVerdict> VerifyOnEngine(
    const proto::Model& original, const proto::Model& rewritten,
    const engines::EngineFactory& make_engine, const std::string& engine,
    const std::map<std::string, int64_t>& dims,
    const std::map<std::string, runtime::ValueRange>& ranges = {});

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_ENGINE_VERIFY_H_

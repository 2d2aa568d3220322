// opt's engine steps, for the CLI, the C++ API and Python alike (driver::OptimizeAtDims calls
// them): the target's engine found by name, the dims it runs at, and the engine as the last
// judge of a written model (issue 42): the result run on the engine before it is written, the
// node that breaks named by bisection, and nodes that the model as given already had waived
// when the engine runs that model and matches.
#ifndef ONNX_BCAST_DRIVER_ENGINE_STEP_H_
#define ONNX_BCAST_DRIVER_ENGINE_STEP_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "engines/engine.h"
#include "engines/engine_bisect.h"
#include "engines/engine_verify.h"
#include "proto/model_io.h"
#include "runtime/exec/random_inputs.h"
#include "targets/targets.h"

namespace onnx_bcast::driver {

/// What opt asks of the target's engine.
struct EngineRequest {
  /// Decide forms live on the engine at exact shapes (opt --no-live-probe: false).
  bool live_probe = true;
  /// Run the written model on the engine before it is written and write nothing it refuses or
  /// computes wrongly (opt --no-verify-engine: false).
  bool verify = true;
  /// The user asked for the engine check (opt --verify-engine): a build without the target's
  /// engine is a usage error instead of a note.
  bool required = false;
  /// opt --probe-cache: where the live probes keep their answers.
  std::string probe_cache;
  /// opt --input-range: the values of the engine check's random inputs, by input name.
  std::map<std::string, runtime::ValueRange> input_ranges;
};

/// The engine a target names: its profile's name up to the first '-' ("ncnn-20260722" ->
/// "ncnn"), when a profile measured by probe-engine or a built-in engine's own target.
struct TargetEngine {
  std::string name;
  /// Null when this build has no adapter for it.
  std::optional<engines::EngineFactory> factory;
};
/// nullopt for a target that names no engine (explicit, a hand-written profile).
std::optional<TargetEngine> EngineOfTarget(const targets::TargetProfile& profile);

/// The dims a model runs at on an engine: `bound`, and each input symbol left unbound chosen
/// here (a leading axis 1, as a deployed batch; any other 32, a size every pooling stack takes;
/// moved inside the broadcast condition check derives where that fails). `text` receives every
/// dim, "N=1, H=32", followed by " (N, H unbound: chosen by opt)" when some were chosen.
std::map<std::string, int64_t> EngineDims(const proto::Model& model,
                                          const std::map<std::string, int64_t>& bound,
                                          std::string* text);

/// `verify MODEL --engine NAME` (and ORIGINAL REWRITTEN --engine NAME): `on_engine` run on the
/// engine NAME of engines/registry.h, every tensor it still holds judged against
/// `reference` on our executor, at `dims` (EngineDims chooses the unbound ones; `dims_text` says
/// which). NotFound when this build has no such engine; the bisection's own errors otherwise.
absl::StatusOr<engines::EngineBisection> BisectOnNamedEngine(
    const proto::Model& reference, const proto::Model& on_engine, const std::string& engine,
    const std::map<std::string, int64_t>& dims, std::string* dims_text,
    const std::map<std::string, runtime::ValueRange>& ranges = {});

}  // namespace onnx_bcast::driver

#endif  // ONNX_BCAST_DRIVER_ENGINE_STEP_H_

// The run sequence every entry point shares (the CLI's run, the public API's Run and through it
// Python, the run fuzzer): the runtime model loaded and its executor created, with the
// profile's hooks and a deadline; the given inputs checked against the model's declaration;
// random inputs for the rest, sized by the symbols the given ones and the dims bind; the run.
//
// Requires: a model admitted by driver::Load, Parse or Admit. Guarantees: no input reaches the
// executor before its type, shape and symbols were checked against the declaration.
#ifndef ONNX_BCAST_DRIVER_RUN_H_
#define ONNX_BCAST_DRIVER_RUN_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/model_io.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/profile.h"
#include "runtime/exec/random_inputs.h"
#include "support/progress.h"

namespace onnx_bcast::driver {

struct ExecutorSettings {
  /// How the model is converted for the executor (its bounds).
  runtime::LoadOptions load;
  /// Threads per kernel.
  int threads = 1;
  /// Bytes the runs may hold at once; 0: the executor's default (a quarter of physical memory).
  int64_t max_memory_bytes = 0;
  /// Largest tensor a run may compute; unset: the executor's default.
  std::optional<int64_t> max_tensor_elements;
  /// Wall-clock seconds for every run of the executor together; 0: no limit.
  double timeout_seconds = 0;
  /// Receives each node's run time and plan (run --profile); null: nothing is recorded. Must
  /// outlive the executor.
  runtime::RunProfile* profile = nullptr;
  /// One step, "preparing the executor".
  support::ProgressSink* progress = nullptr;
};

/// The executor of `model`. Errors: the runtime model's (InvalidArgument for a malformed
/// model, Unimplemented for what the executor cannot hold or run), unprefixed.
absl::StatusOr<std::unique_ptr<runtime::Executor>> PrepareExecutor(const proto::Model& model,
                                                              const ExecutorSettings& settings);

struct InputRequest {
  /// Values the caller gives (run --input, the API's inputs): checked, never replaced.
  runtime::Feeds given;
  /// Symbol values given explicitly, named `dims_label` in messages ("--dim", "dims").
  std::map<std::string, int64_t> dims;
  std::string dims_label = "the given dims";
  /// Random values for the graph inputs not given; false: an input not given is an error.
  bool random_missing = true;
  uint64_t seed = 0;
  /// runtime::RandomInputOptions::max_elements.
  int64_t max_elements = int64_t{1} << 32;
  /// runtime::RandomInputOptions::ranges (run --input-range, the API's input_ranges).
  std::map<std::string, runtime::ValueRange> ranges;
};

struct Inputs {
  /// Random values for the graph inputs not given (the given ones are not repeated here).
  runtime::Feeds random;
  /// The dims plus every symbol the given inputs bound: the sizes of the random inputs.
  std::map<std::string, int64_t> bound;
  /// Not OK when a given value does not fit the declaration (InvalidArgument naming the input
  /// and what disagrees; the CLI's exit 65). Nothing random is made then.
  absl::Status bad_input;
};

/// Whether every range of `ranges` names a graph input of `graph` (not an initializer) whose
/// declared element type holds it (runtime::CheckValueRange): InvalidArgument naming the range and
/// the model's inputs otherwise. For the commands that make random inputs later (opt's engine
/// check and --verify), so that a mistaken name is said before any pass runs.
absl::Status CheckInputRanges(const onnx::GraphProto& graph,
                              const std::map<std::string, runtime::ValueRange>& ranges);

/// Checks `request.given` against `graph`'s declaration and makes the random rest. Errors:
/// RandomInputs' (an input without a known rank, one past max_elements), and with
/// random_missing false the inputs not given ("LABEL: no value for input(s) ...").
absl::StatusOr<Inputs> MakeInputs(const runtime::Graph& graph, const InputRequest& request,
                                  const std::string& label);

struct RunRequest {
  ExecutorSettings executor;
  /// The caller's values, made once the graph is known (so that their names can be checked
  /// against it); unset: none. They go into `inputs.given`.
  std::function<absl::StatusOr<runtime::Feeds>(const runtime::Graph&)> given;
  InputRequest inputs;
};

struct RunResult {
  std::vector<runtime::Value> outputs;
  /// The graph's output names, in the order of `outputs`.
  std::vector<std::string> output_names;
};

/// One run of `model`: PrepareExecutor, the given values, MakeInputs (given first, then the
/// random ones), the run. Errors: each step's, unprefixed but for MakeInputs' own; a given
/// value that does not fit the declaration is InvalidArgument.
absl::StatusOr<RunResult> Run(const proto::Model& model, const RunRequest& request);

}  // namespace onnx_bcast::driver

#endif  // ONNX_BCAST_DRIVER_RUN_H_

// The engine adapter interface: one real inference engine (OpenCV DNN, later ncnn, MNN,
// onnxruntime) as load, run and refuse. Small on purpose: an adapter converts tensors and
// errors, nothing else; every call is made in a child process (isolated_run.h), so an
// adapter may let the engine abort or crash.
#ifndef ONNX_BCAST_ENGINES_ENGINE_H_
#define ONNX_BCAST_ENGINES_ENGINE_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/tensor.h"

namespace onnx_bcast::engines {

/// Tensors by name, in the order given (inputs to feed, or outputs asked for).
using NamedTensors = std::vector<std::pair<std::string, runtime::Tensor>>;

/// One inference engine. Calls run in the process that makes them: use RunIsolated
/// (isolated_run.h) to survive an engine that aborts, throws past the adapter or crashes.
class EngineAdapter {
 public:
  virtual ~EngineAdapter() = default;

  /// The engine's short name, e.g. "opencv" (profile and table names start with it).
  virtual std::string name() const = 0;
  /// The engine's version as the installed library reports it, e.g. "4.6.0".
  virtual std::string version() const = 0;
  /// Where the installed engine was built from, when the adapter knows (ncnn: the source
  /// commit that scripts/engines/build-ncnn.sh recorded); empty otherwise.
  virtual std::string build() const { return ""; }

  /// Reads and prepares a serialized ModelProto. A model the engine does not accept is an
  /// error whose message is the engine's own (e.g. the cv::Exception text).
  virtual absl::Status Load(std::string_view model_bytes) = 0;

  /// Runs the loaded model on `inputs` (float32, int32 or int64, bool) and returns the outputs
  /// named in `output_names`, in that order, in the element type the engine produced. An error
  /// carries the engine's own message.
  virtual absl::StatusOr<NamedTensors> Run(const NamedTensors& inputs,
                                           const std::vector<std::string>& output_names) = 0;

  /// As Run, but returns only the tensors among `names` that the loaded model still holds
  /// (a converter fuses or folds tensors away), in the order given, each named. Bisection on
  /// the engine (engines/engine_bisect.h) asks for every intermediate tensor this way. The
  /// default asks for all of them (an adapter that cannot tell which exist).
  virtual absl::StatusOr<NamedTensors> RunAvailable(const NamedTensors& inputs,
                                                    const std::vector<std::string>& names) {
    return Run(inputs, names);
  }
};

/// Makes a fresh adapter; called in the child process, so nothing of the engine's state is
/// created in the caller.
using EngineFactory = std::function<absl::StatusOr<std::unique_ptr<EngineAdapter>>()>;

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_ENGINE_H_

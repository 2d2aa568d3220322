#include "runtime/exec/load_executor.h"

#include <utility>

#include "support/status_macros.h"

namespace onnx_bcast::runtime {

absl::StatusOr<std::unique_ptr<Executor>> LoadExecutor(const proto::Model& model,
                                                       const RunOptions& options,
                                                       const LoadOptions& load) {
  BCAST_ASSIGN_OR_RETURN(std::shared_ptr<const Model> runtime, LoadRuntimeModel(model, load));
  return Executor::Create(std::move(runtime), options);
}

}  // namespace onnx_bcast::runtime

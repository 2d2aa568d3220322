// The one way every caller (driver's run sequence, verify, the engine probe and live probes,
// engine verification, the benchmarks) turns an admitted model into an executor: the runtime
// model converted under `load`'s bounds, then the executor created with `options`. The executor
// keeps the runtime model alive (Executor::model()).
#ifndef ONNX_BCAST_RUNTIME_EXEC_LOAD_EXECUTOR_H_
#define ONNX_BCAST_RUNTIME_EXEC_LOAD_EXECUTOR_H_

#include <memory>

#include "absl/status/statusor.h"
#include "proto/model_io.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"

namespace onnx_bcast::runtime {

/// Errors: LoadRuntimeModel's (InvalidArgument for a malformed model, Unimplemented for what
/// the runtime cannot hold), then Executor::Create's; unprefixed.
absl::StatusOr<std::unique_ptr<Executor>> LoadExecutor(const proto::Model& model,
                                                       const RunOptions& options = {},
                                                       const LoadOptions& load = {});

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_EXEC_LOAD_EXECUTOR_H_

// Computing constant parts of a model with the executor: fold-constants (passes/) hands the
// driver a fragment of the graph whose inputs are all constants, and the driver runs it here,
// so that every op has one implementation, the executor's.
#ifndef ONNX_BCAST_RUNTIME_EXEC_CONSTANT_EVAL_H_
#define ONNX_BCAST_RUNTIME_EXEC_CONSTANT_EVAL_H_

#include <vector>

#include "absl/status/statusor.h"
#include "proto/model_io.h"
#include "runtime/ops/op.h"

namespace onnx_bcast::runtime {

/// Runs `fragment`, a model whose main graph has no inputs (its nodes read initializers and
/// each other), and returns its graph outputs as tensors named after them, in order.
/// Errors: the loader's and the executor's (naming the node); Unimplemented for an output that
/// is not a tensor (a sequence or an optional).
absl::StatusOr<std::vector<onnx::TensorProto>> EvaluateConstantModel(
    const proto::Model& fragment, const RunOptions& options = {});

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_EXEC_CONSTANT_EVAL_H_

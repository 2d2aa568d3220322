// Computing part of a model on constants, for the passes that fold (fold-constants,
// legalize-measured): one node's output on constant inputs, in a proto::FragmentModel. Each
// pass had its own copy.
#ifndef ONNX_BCAST_PASSES_NODE_EVALUATION_H_
#define ONNX_BCAST_PASSES_NODE_EVALUATION_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "passes/pass.h"
#include "proto/model_io.h"
#include "proto/onnx.h"

namespace onnx_bcast::passes {

/// The IR version a fragment has at least: 4, so that initializers need not be graph inputs.
inline constexpr int64_t kFragmentMinIr = 4;

/// Output 0 of `node` computed by `evaluator` with every input (each named once; empty ones
/// skipped) an initializer holding `constant(name)`, which must not be null. The evaluator's
/// error, or Internal "no value" when it returns no single value.
absl::StatusOr<onnx::TensorProto> EvaluateOnConstants(
    const ConstantEvaluator& evaluator, const proto::Model& model, const onnx::NodeProto& node,
    const std::function<const onnx::TensorProto*(const std::string&)>& constant,
    const std::string& graph_name);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_NODE_EVALUATION_H_

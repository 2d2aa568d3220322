// Computing part of a model on constants, for the passes that fold (fold-constants,
// legalize-measured): the fragment model a ConstantEvaluator runs, and one node's output on
// constant inputs. Each pass had its own copy of both.
#ifndef ONNX_BCAST_PASSES_NODE_EVALUATION_H_
#define ONNX_BCAST_PASSES_NODE_EVALUATION_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "passes/pass.h"
#include "proto/model_io.h"
#include "proto/onnx.h"

namespace onnx_bcast::passes {

/// An empty model to run a piece of `model` in: its path and folder (external data of copied
/// initializers resolves as in `model`), its opset imports, IR version at least 4 (so that
/// initializers need not be graph inputs), and an empty graph named `graph_name`.
proto::Model FragmentModel(const proto::Model& model, const std::string& graph_name);

/// Output 0 of `node` computed by `evaluator` with every input (each named once; empty ones
/// skipped) an initializer holding `constant(name)`, which must not be null. The evaluator's
/// error, or Internal "no value" when it returns no single value.
absl::StatusOr<onnx::TensorProto> EvaluateOnConstants(
    const ConstantEvaluator& evaluator, const proto::Model& model, const onnx::NodeProto& node,
    const std::function<const onnx::TensorProto*(const std::string&)>& constant,
    const std::string& graph_name);

}  // namespace onnx_bcast::passes

#endif  // ONNX_BCAST_PASSES_NODE_EVALUATION_H_

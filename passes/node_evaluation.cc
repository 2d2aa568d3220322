// Computing part of a model on constants (see node_evaluation.h).
#include "passes/node_evaluation.h"

#include <unordered_set>
#include <utility>
#include <vector>

namespace onnx_bcast::passes {

absl::StatusOr<onnx::TensorProto> EvaluateOnConstants(
    const ConstantEvaluator& evaluator, const proto::Model& model, const onnx::NodeProto& node,
    const std::function<const onnx::TensorProto*(const std::string&)>& constant,
    const std::string& graph_name) {
  proto::Model fragment = proto::FragmentModel(model, graph_name, kFragmentMinIr);
  onnx::GraphProto* g = fragment.proto.mutable_graph();
  std::unordered_set<std::string> added;
  for (const std::string& in : node.input()) {
    if (in.empty() || !added.insert(in).second) continue;
    onnx::TensorProto t = *constant(in);
    t.set_name(in);
    *g->add_initializer() = std::move(t);
  }
  *g->add_node() = node;
  g->add_output()->set_name(node.output(0));
  absl::StatusOr<std::vector<onnx::TensorProto>> values = evaluator(fragment);
  if (!values.ok()) return values.status();
  if (values->size() != 1) return absl::InternalError("no value");
  return std::move((*values)[0]);
}

}  // namespace onnx_bcast::passes

// Computing part of a model on constants (see node_evaluation.h).
#include "passes/node_evaluation.h"

#include <algorithm>
#include <unordered_set>
#include <utility>
#include <vector>

namespace onnx_bcast::passes {

proto::Model FragmentModel(const proto::Model& model, const std::string& graph_name) {
  proto::Model fragment;
  fragment.path = model.path;
  fragment.base_dir = model.base_dir;
  onnx::ModelProto& m = fragment.proto;
  m.set_ir_version(std::max<int64_t>(model.proto.ir_version(), 4));
  *m.mutable_opset_import() = model.proto.opset_import();
  m.mutable_graph()->set_name(graph_name);
  return fragment;
}

absl::StatusOr<onnx::TensorProto> EvaluateOnConstants(
    const ConstantEvaluator& evaluator, const proto::Model& model, const onnx::NodeProto& node,
    const std::function<const onnx::TensorProto*(const std::string&)>& constant,
    const std::string& graph_name) {
  proto::Model fragment = FragmentModel(model, graph_name);
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

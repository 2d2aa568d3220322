// Per-node libonnx inference (see node_inference.h).
#include "proto/node_inference.h"

#include <exception>

#include "absl/strings/str_cat.h"
#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"
#include "proto/inference_guards.h"

namespace onnx_bcast::proto {
namespace {

// A light InferenceContext: vectors instead of the name maps libonnx builds per node.
class Context : public onnx::InferenceContext {
 public:
  Context(const onnx::NodeProto& node, absl::Span<const onnx::TypeProto* const> types,
          absl::Span<const onnx::TensorProto* const> data, std::vector<onnx::TypeProto>* outputs)
      : node_(node), types_(types), data_(data), outputs_(outputs) {
    outputs_->assign(static_cast<size_t>(node.output_size()), onnx::TypeProto());
  }
  const onnx::AttributeProto* getAttribute(const std::string& name) const override {
    for (const auto& a : node_.attribute()) {
      if (a.name() == name) return &a;
    }
    return nullptr;
  }
  size_t getNumInputs() const override { return static_cast<size_t>(node_.input_size()); }
  const onnx::TypeProto* getInputType(size_t i) const override {
    if (i >= types_.size()) fail_type_inference("input ", i, " is out of bounds");
    return types_[i];
  }
  const onnx::TensorProto* getInputData(size_t i) const override {
    if (i >= data_.size()) fail_type_inference("input ", i, " is out of bounds");
    return data_[i];
  }
  size_t getNumOutputs() const override { return outputs_->size(); }
  onnx::TypeProto* getOutputType(size_t i) override {
    if (i >= outputs_->size()) fail_type_inference("output ", i, " is out of bounds");
    return &(*outputs_)[i];
  }
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string&) override {
    fail_type_inference("subgraphs are not inferred node by node");
  }
  const onnx::SparseTensorProto* getInputSparseData(size_t) const override { return nullptr; }
  const onnx::TensorShapeProto* getSymbolicInput(size_t) const override { return nullptr; }

 private:
  const onnx::NodeProto& node_;
  absl::Span<const onnx::TypeProto* const> types_;
  absl::Span<const onnx::TensorProto* const> data_;
  std::vector<onnx::TypeProto>* outputs_;
};

}  // namespace

NodeInference::NodeInference(const onnx::ModelProto& model) {
  InstallInferenceGuards();
  for (const auto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") {
      default_opset_ = static_cast<int>(opset.version());
    }
  }
}

const void* NodeInference::Schema(const onnx::NodeProto& node) {
  if (!node.domain().empty() || default_opset_ == 0) return nullptr;
  auto [it, inserted] = schemas_.try_emplace(node.op_type(), nullptr);
  if (inserted) {
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(node.op_type(), default_opset_, "");
    if (schema != nullptr && schema->has_type_and_shape_inference_function() &&
        !schema->Deprecated()) {
      it->second = schema;
    }
  }
  return it->second;
}

bool NodeInference::Supported(const onnx::NodeProto& node) { return Schema(node) != nullptr; }

absl::Status NodeInference::Infer(const onnx::NodeProto& node,
                                  absl::Span<const onnx::TypeProto* const> input_types,
                                  absl::Span<const onnx::TensorProto* const> input_data,
                                  std::vector<onnx::TypeProto>* outputs) {
  const auto* schema = static_cast<const onnx::OpSchema*>(Schema(node));
  if (schema == nullptr) {
    return absl::UnimplementedError(absl::StrCat("no inference for ", node.op_type()));
  }
  Context ctx(node, input_types, input_data, outputs);
  try {
    schema->GetTypeAndShapeInferenceFunction()(ctx);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(node.op_type(), " '", node.name(), "': ", e.what()));
  }
  return absl::OkStatus();
}

absl::Status NodeInference::MergeInto(const onnx::TypeProto& inferred, onnx::TypeProto* existing) {
  if (inferred.value_case() == onnx::TypeProto::VALUE_NOT_SET) return absl::OkStatus();
  if (existing->value_case() == onnx::TypeProto::VALUE_NOT_SET) {
    *existing = inferred;
    return absl::OkStatus();
  }
  if (!inferred.has_tensor_type() || !existing->has_tensor_type()) {
    // Sequences, maps, optionals: left to whole-graph inference.
    return absl::InvalidArgumentError("non-tensor type merge");
  }
  const auto& in = inferred.tensor_type();
  auto* ex = existing->mutable_tensor_type();
  if (in.elem_type() != 0 && ex->elem_type() != 0 && in.elem_type() != ex->elem_type()) {
    return absl::InvalidArgumentError("element types differ");
  }
  if (in.has_shape() && ex->has_shape()) {
    if (in.shape().dim_size() != ex->shape().dim_size()) {
      return absl::InvalidArgumentError("ranks differ");
    }
    for (int i = 0; i < in.shape().dim_size(); ++i) {
      const auto& a = in.shape().dim(i);
      const auto& b = ex->shape().dim(i);
      if (a.has_dim_value() && b.has_dim_value() && a.dim_value() != b.dim_value()) {
        return absl::InvalidArgumentError("dims differ");
      }
    }
  }
  if (ex->elem_type() == 0) ex->set_elem_type(in.elem_type());
  if (!in.has_shape()) return absl::OkStatus();
  if (!ex->has_shape()) {
    auto* shape = ex->mutable_shape();
    for (int j = 0; j < in.shape().dim_size(); ++j) shape->add_dim();
  }
  for (int i = 0; i < in.shape().dim_size(); ++i) {
    auto* dim = ex->mutable_shape()->mutable_dim(i);
    if (!dim->has_dim_value()) *dim = in.shape().dim(i);
  }
  return absl::OkStatus();
}

}  // namespace onnx_bcast::proto

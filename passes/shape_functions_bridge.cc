// Temporary bridge until passes/shape_functions.cc lands (another helper writes it): the
// smallest implementation of shape_functions.h that keeps the analysis's behaviour of before
// the symbolic work (Shape's value for Expand targets, constants' contents). CMake builds this
// file only while shape_functions.cc does not exist; delete it when that file is on main.
#include <optional>
#include <string_view>
#include <vector>

#include "passes/shape_functions.h"
#include "proto/shapes.h"

namespace onnx_bcast::passes {

bool HasShapeFunction(std::string_view op_type) { return op_type == "Shape"; }

std::optional<std::vector<SymTensor>> InferSymbolic(const ShapeFnContext& ctx) {
  const onnx::NodeProto& node = *ctx.node;
  if (node.op_type() != "Shape" || node.input_size() != 1 || ctx.inputs.empty() ||
      ctx.inputs[0] == nullptr || !ctx.inputs[0]->shape.rank_known) {
    return std::nullopt;
  }
  const bcast::Shape& in = ctx.inputs[0]->shape;
  int64_t start = 0, end = in.rank();
  for (const auto& a : node.attribute()) {
    if (a.name() == "start") start = a.i();
    if (a.name() == "end") end = a.i();
  }
  if (start < 0) start += in.rank();
  if (end < 0) end += in.rank();
  start = std::clamp<int64_t>(start, 0, in.rank());
  end = std::clamp<int64_t>(end, start, in.rank());
  SymTensor out;
  out.elem = onnx::TensorProto::INT64;
  out.shape = bcast::Shape::Of({end - start});
  out.value.emplace(in.dims.begin() + start, in.dims.begin() + end);
  return std::vector<SymTensor>{std::move(out)};
}

SymTensor SymTensorOfConstant(const onnx::TensorProto& tensor) {
  SymTensor t;
  t.elem = tensor.data_type();
  t.shape = proto::ShapeOfTensor(tensor);
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL || t.shape.rank() > 1) return t;
  const std::optional<int64_t> n = t.shape.NumElements();
  if (!n || *n > kMaxValueElements) return t;
  if (t.elem == onnx::TensorProto::INT64 || t.elem == onnx::TensorProto::INT32) {
    absl::StatusOr<std::vector<int64_t>> v = proto::ReadIntValues(tensor, "", kMaxValueElements);
    if (v.ok() && static_cast<int64_t>(v->size()) == *n) {
      t.value.emplace();
      for (int64_t x : *v) t.value->push_back(x >= 0 ? bcast::Dim::Value(x) : bcast::Dim());
    }
  }
  return t;
}

}  // namespace onnx_bcast::passes

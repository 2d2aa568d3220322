// Size facts about TensorProto payloads.
#include "proto/tensor_util.h"

#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnx_bcast::proto {

int ElementBits(int32_t data_type) {
  using T = onnx::TensorProto;
  switch (data_type) {
    case T::FLOAT:
    case T::INT32:
    case T::UINT32:
      return 32;
    case T::UINT8:
    case T::INT8:
    case T::BOOL:
      return 8;
    case T::UINT16:
    case T::INT16:
    case T::FLOAT16:
    case T::BFLOAT16:
      return 16;
    case T::INT64:
    case T::UINT64:
    case T::DOUBLE:
    case T::COMPLEX64:
      return 64;
    case T::COMPLEX128:
      return 128;
    // Newer IR versions: float8 variants (17-20) are one byte, int4/uint4 (21, 22) and
    // float4e2m1 (23) are packed two to a byte.
    case 17:
    case 18:
    case 19:
    case 20:
      return 8;
    case 21:
    case 22:
    case 23:
      return 4;
    default:
      return 0;
  }
}

int64_t RawByteSize(int32_t data_type, int64_t count) {
  const int bits = ElementBits(data_type);
  if (bits >= 8) return count * (bits / 8);
  return (count * bits + 7) / 8;
}

int64_t TypedFieldSize(const onnx::TensorProto& tensor, int32_t data_type) {
  using T = onnx::TensorProto;
  switch (data_type) {
    case T::FLOAT:
    case T::COMPLEX64:
      return tensor.float_data_size();
    case T::DOUBLE:
    case T::COMPLEX128:
      return tensor.double_data_size();
    case T::INT64:
      return tensor.int64_data_size();
    case T::UINT32:
    case T::UINT64:
      return tensor.uint64_data_size();
    case T::STRING:
      return tensor.string_data_size();
    default:
      return tensor.int32_data_size();
  }
}

absl::StatusOr<int64_t> CheckedElementCount(const onnx::TensorProto& tensor, int64_t limit) {
  int64_t count = 1;
  for (int i = 0; i < tensor.dims_size(); ++i) {
    const int64_t d = tensor.dims(i);
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", tensor.name(), "' has negative dim ", d, " at axis ", i));
    }
    if (d != 0 && count > limit / d) {
      return absl::ResourceExhaustedError(
          absl::StrCat("tensor '", tensor.name(), "' declares ", DimsToString(tensor),
                       ", more than the limit of ", limit, " elements"));
    }
    count *= d;
  }
  if (count > limit) {
    return absl::ResourceExhaustedError(absl::StrCat("tensor '", tensor.name(), "' declares ",
                                                     count, " elements, more than the limit of ",
                                                     limit));
  }
  return count;
}

std::string DimsToString(const onnx::TensorProto& tensor) {
  return absl::StrCat("[", absl::StrJoin(tensor.dims(), ","), "]");
}

onnx::NodeProto ConstantNode(std::string node_name, std::string output, onnx::TensorProto value) {
  onnx::NodeProto node;
  node.set_op_type("Constant");
  node.set_name(std::move(node_name));
  node.add_output(std::move(output));
  onnx::AttributeProto* attr = node.add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  value.clear_name();
  *attr->mutable_t() = std::move(value);
  return node;
}

static void ForEachTensor(onnx::GraphProto* g, const std::function<void(onnx::TensorProto*)>& fn);

static void ForEachTensorInNode(onnx::NodeProto* node,
                                const std::function<void(onnx::TensorProto*)>& fn) {
  for (auto& attr : *node->mutable_attribute()) {
    if (attr.has_t()) fn(attr.mutable_t());
    for (auto& t : *attr.mutable_tensors()) fn(&t);
    if (attr.has_sparse_tensor()) {
      fn(attr.mutable_sparse_tensor()->mutable_values());
      fn(attr.mutable_sparse_tensor()->mutable_indices());
    }
    if (attr.has_g()) ForEachTensor(attr.mutable_g(), fn);
    for (auto& g : *attr.mutable_graphs()) ForEachTensor(&g, fn);
  }
}

static void ForEachTensor(onnx::GraphProto* g, const std::function<void(onnx::TensorProto*)>& fn) {
  for (auto& t : *g->mutable_initializer()) fn(&t);
  for (auto& st : *g->mutable_sparse_initializer()) {
    fn(st.mutable_values());
    fn(st.mutable_indices());
  }
  for (auto& node : *g->mutable_node()) ForEachTensorInNode(&node, fn);
}

void ForEachModelTensor(onnx::ModelProto* m, const std::function<void(onnx::TensorProto*)>& fn) {
  ForEachTensor(m->mutable_graph(), fn);
  for (auto& f : *m->mutable_functions()) {
    for (auto& node : *f.mutable_node()) ForEachTensorInNode(&node, fn);
  }
  for (auto& info : *m->mutable_training_info()) {
    if (info.has_initialization()) ForEachTensor(info.mutable_initialization(), fn);
    if (info.has_algorithm()) ForEachTensor(info.mutable_algorithm(), fn);
  }
}

}  // namespace onnx_bcast::proto

// Conversions between ONNX protos and symbolic shapes.
#include "proto/shapes.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "proto/external_data.h"
#include "proto/tensor_util.h"
#include "support/status_macros.h"

namespace onnx_bcast::proto {

broadcast::Shape ShapeOfType(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) {
    return broadcast::Shape::UnknownRank();
  }
  std::vector<broadcast::Dim> dims;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      dims.push_back(broadcast::Dim::Value(d.dim_value()));
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      dims.push_back(broadcast::Dim::Symbol(d.dim_param()));
    } else {
      dims.push_back(broadcast::Dim::Unknown());
    }
  }
  return broadcast::Shape::FromDims(std::move(dims));
}

void SetShapeOfType(const broadcast::Shape& shape, onnx::TypeProto* type, SymbolText symbols) {
  auto* tensor = type->mutable_tensor_type();
  if (!shape.rank_known) {
    tensor->clear_shape();
    return;
  }
  auto* s = tensor->mutable_shape();
  s->clear_dim();
  for (const broadcast::Dim& d : shape.dims) {
    auto* dim = s->add_dim();
    if (d.is_value()) {
      dim->set_dim_value(d.value());
    } else if (d.is_symbol() && symbols == SymbolText::kBareName) {
      dim->set_dim_param(d.symbol());
    } else if (d.is_symbolic()) {
      dim->set_dim_param(d.ToString());
    }
  }
}

broadcast::Shape ShapeOfTensor(const onnx::TensorProto& tensor) {
  std::vector<broadcast::Dim> dims;
  for (int64_t d : tensor.dims()) dims.push_back(d >= 0 ? broadcast::Dim::Value(d) : broadcast::Dim());
  return broadcast::Shape::FromDims(std::move(dims));
}

absl::StatusOr<std::vector<int64_t>> ReadIntValues(const onnx::TensorProto& tensor,
                                                   const std::string& base_dir,
                                                   int64_t max_values) {
  BCAST_ASSIGN_OR_RETURN(int64_t count, CheckedElementCount(tensor, max_values));
  const int32_t type = tensor.data_type();
  if (type != onnx::TensorProto::INT64 && type != onnx::TensorProto::INT32) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", tensor.name(), "' is not INT64 or INT32"));
  }
  std::vector<int64_t> values;
  values.reserve(static_cast<size_t>(count));
  std::string raw;
  const std::string* bytes = nullptr;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    BCAST_ASSIGN_OR_RETURN(std::string data, ReadExternalData(tensor, base_dir));
    raw = std::move(data);
    bytes = &raw;
  } else if (tensor.has_raw_data()) {
    bytes = &tensor.raw_data();
  }
  if (bytes != nullptr) {
    const size_t width = type == onnx::TensorProto::INT64 ? 8 : 4;
    if (bytes->size() != static_cast<size_t>(count) * width) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", tensor.name(), "' payload does not match its dims"));
    }
    for (int64_t i = 0; i < count; ++i) {
      if (width == 8) {
        int64_t v;
        std::memcpy(&v, bytes->data() + i * 8, 8);
        values.push_back(v);
      } else {
        int32_t v;
        std::memcpy(&v, bytes->data() + i * 4, 4);
        values.push_back(v);
      }
    }
  } else if (type == onnx::TensorProto::INT64) {
    values.assign(tensor.int64_data().begin(), tensor.int64_data().end());
  } else {
    values.assign(tensor.int32_data().begin(), tensor.int32_data().end());
  }
  if (static_cast<int64_t>(values.size()) != count) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", tensor.name(), "' payload does not match its dims"));
  }
  return values;
}

}  // namespace onnx_bcast::proto

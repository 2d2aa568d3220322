// SequenceProto / OptionalProto test-data files decoded into RawTensors and written back.
#include "proto/sequence_codec.h"

#include "absl/strings/str_cat.h"
#include "onnx/onnx-data.pb.h"
#include "proto/model_io.h"
#include "proto/tensor_codec.h"
#include "support/status_macros.h"

namespace onnx_bcast::proto {
namespace {

std::string DirOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

absl::Status DecodeSequence(const onnx::SequenceProto& seq, const std::string& path,
                            RawValue* out) {
  if (seq.elem_type() != onnx::SequenceProto::TENSOR &&
      seq.elem_type() != onnx::SequenceProto::UNDEFINED) {
    return absl::UnimplementedError(
        absl::StrCat(path, ": sequences of element kind ", seq.elem_type(), " not supported"));
  }
  out->kind = RawValue::Kind::kSequence;
  out->name = seq.name();
  for (const onnx::TensorProto& t : seq.tensor_values()) {
    absl::StatusOr<RawTensor> decoded = DecodeTensor(t, DirOf(path));
    if (!decoded.ok()) {
      return absl::Status(decoded.status().code(),
                          absl::StrCat(path, ": ", decoded.status().message()));
    }
    if (out->elem_type == 0) out->elem_type = decoded->data_type;
    out->sequence.push_back(std::move(*decoded));
  }
  return absl::OkStatus();
}

int32_t TensorElemType(const onnx::TypeProto& type) {
  if (type.has_tensor_type()) return type.tensor_type().elem_type();
  if (type.has_sequence_type()) return TensorElemType(type.sequence_type().elem_type());
  if (type.has_optional_type()) return TensorElemType(type.optional_type().elem_type());
  return 0;
}

// An OptionalProto header: the value's name and what it holds (empty until the caller sets it).
onnx::OptionalProto NamedOptional(const std::string& name,
                                  onnx::OptionalProto::DataType elem_type) {
  onnx::OptionalProto opt;
  opt.set_name(name);
  opt.set_elem_type(elem_type);
  return opt;
}

}  // namespace

absl::StatusOr<RawValue> LoadValueFile(const std::string& path, const onnx::TypeProto* type) {
  RawValue out;
  if (type == nullptr || type->has_tensor_type() || type->value_case() == 0) {
    BCAST_ASSIGN_OR_RETURN(RawTensor t, LoadTensorFile(path));
    out.name = t.name;
    out.tensor = std::move(t);
    return out;
  }
  BCAST_ASSIGN_OR_RETURN(std::string bytes, ReadTestDataFile(path));
  if (type->has_sequence_type()) {
    onnx::SequenceProto seq;
    if (!seq.ParseFromString(bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": not a SequenceProto"));
    }
    BCAST_RETURN_IF_ERROR(DecodeSequence(seq, path, &out));
    if (out.elem_type == 0) out.elem_type = TensorElemType(*type);
    return out;
  }
  if (type->has_optional_type()) {
    onnx::OptionalProto opt;
    if (!opt.ParseFromString(bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": not an OptionalProto"));
    }
    out.name = opt.name();
    out.elem_type = TensorElemType(*type);
    if (opt.has_tensor_value()) {
      absl::StatusOr<RawTensor> t = DecodeTensor(opt.tensor_value(), DirOf(path));
      if (!t.ok()) {
        return absl::Status(t.status().code(), absl::StrCat(path, ": ", t.status().message()));
      }
      out.tensor = std::move(*t);
      out.in_optional = true;
      return out;
    }
    if (opt.has_sequence_value()) {
      BCAST_RETURN_IF_ERROR(DecodeSequence(opt.sequence_value(), path, &out));
      out.name = opt.name();
      out.in_optional = true;
      if (out.elem_type == 0) out.elem_type = TensorElemType(*type);
      return out;
    }
    if (opt.has_map_value() || opt.has_optional_value() || opt.has_sparse_tensor_value()) {
      return absl::UnimplementedError(absl::StrCat(path, ": optional of this kind not supported"));
    }
    out.kind = RawValue::Kind::kEmptyOptional;
    return out;
  }
  return absl::UnimplementedError(absl::StrCat(path, ": values of this type not supported"));
}

absl::StatusOr<std::string> SerializeValueFile(const RawValue& value) {
  switch (value.kind) {
    case RawValue::Kind::kTensor: {
      RawTensor t = value.tensor;
      if (t.name.empty()) t.name = value.name;
      if (!value.in_optional) return EncodeTensor(t).SerializeAsString();
      onnx::OptionalProto opt = NamedOptional(value.name, onnx::OptionalProto::TENSOR);
      *opt.mutable_tensor_value() = EncodeTensor(t);
      return opt.SerializeAsString();
    }
    case RawValue::Kind::kSequence: {
      onnx::SequenceProto seq;
      seq.set_name(value.name);
      seq.set_elem_type(onnx::SequenceProto::TENSOR);
      for (const RawTensor& t : value.sequence) *seq.add_tensor_values() = EncodeTensor(t);
      if (!value.in_optional) return seq.SerializeAsString();
      onnx::OptionalProto opt = NamedOptional(value.name, onnx::OptionalProto::SEQUENCE);
      *opt.mutable_sequence_value() = std::move(seq);
      return opt.SerializeAsString();
    }
    case RawValue::Kind::kEmptyOptional: {
      return NamedOptional(value.name, onnx::OptionalProto::TENSOR).SerializeAsString();
    }
  }
  return absl::InternalError("unknown value kind");
}

absl::Status SaveValueFile(const RawValue& value, const std::string& path) {
  BCAST_ASSIGN_OR_RETURN(std::string bytes, SerializeValueFile(value));
  return WriteFileAtomically(path, bytes);
}

}  // namespace onnx_bcast::proto

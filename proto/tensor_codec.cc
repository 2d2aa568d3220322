// Tensors decoded from and encoded to TensorProto, and .pb tensor files.
#include "proto/tensor_codec.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "proto/model_io.h"
#include "proto/tensor_data.h"
#include "proto/tensor_util.h"

namespace onnx_bcast::proto {

int64_t RawTensor::NumElements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

absl::StatusOr<RawTensor> DecodeTensor(const onnx::TensorProto& tensor,
                                       const std::string& base_dir, int64_t max_elements) {
  RawTensor out;
  out.name = tensor.name();
  out.data_type = tensor.data_type();
  absl::StatusOr<int64_t> count = CheckedElementCount(tensor, max_elements);
  if (!count.ok()) return count.status();
  out.dims.assign(tensor.dims().begin(), tensor.dims().end());
  if (tensor.data_type() == onnx::TensorProto::STRING) {
    if (tensor.string_data_size() != *count) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", tensor.name(), "' has ",
                                                     tensor.string_data_size(),
                                                     " strings, dims need ", *count));
    }
    out.strings.assign(tensor.string_data().begin(), tensor.string_data().end());
    return out;
  }
  const int bits = ElementBits(tensor.data_type());
  if (bits < 8) {
    return absl::UnimplementedError(absl::StrCat("tensor '", tensor.name(), "' has data type ",
                                                 tensor.data_type(), ", not supported"));
  }
  absl::StatusOr<std::string> bytes =
      ReadRawBytes(tensor, base_dir, RawByteSize(tensor.data_type(), max_elements));
  if (!bytes.ok()) return bytes.status();
  out.bytes = std::move(*bytes);
  return out;
}

onnx::TensorProto EncodeTensor(const RawTensor& tensor) {
  onnx::TensorProto t;
  t.set_name(tensor.name);
  t.set_data_type(tensor.data_type);
  for (int64_t d : tensor.dims) t.add_dims(d);
  if (tensor.data_type == onnx::TensorProto::STRING) {
    for (const std::string& s : tensor.strings) t.add_string_data(s);
  } else {
    t.set_raw_data(tensor.bytes);
  }
  return t;
}

bool IsTensorFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  onnx::TensorProto t;
  // Sequence/Map/Optional protos of the newer test data parse as TensorProtos with unknown
  // fields only; a real tensor has a data type.
  return in && t.ParseFromIstream(&in) && t.data_type() != 0;
}

absl::StatusOr<RawTensor> LoadTensorFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFileBytes(path);
  if (!bytes.ok()) return bytes.status();
  onnx::TensorProto t;
  if (!t.ParseFromString(*bytes) || t.data_type() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a TensorProto"));
  }
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  absl::StatusOr<RawTensor> decoded = DecodeTensor(t, dir);
  if (!decoded.ok()) {
    return absl::Status(decoded.status().code(),
                        absl::StrCat(path, ": ", decoded.status().message()));
  }
  return decoded;
}

absl::Status SaveTensorFile(const RawTensor& tensor, const std::string& path) {
  return WriteFileAtomically(path, EncodeTensor(tensor).SerializeAsString());
}

}  // namespace onnx_bcast::proto

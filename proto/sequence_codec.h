// Test-data values beyond plain tensors: SequenceProto and OptionalProto files (onnx-data.proto)
// read and written as decoded RawTensors, with the file's kind taken from the model's type.
#ifndef ONNX_BCAST_PROTO_SEQUENCE_CODEC_H_
#define ONNX_BCAST_PROTO_SEQUENCE_CODEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/onnx.h"
#include "proto/tensor_codec.h"

namespace onnx_bcast::proto {

/// One decoded test-data value: a tensor, a sequence of tensors, or an empty optional. An
/// optional that holds a value decodes as that value.
struct RawValue {
  enum class Kind { kTensor, kSequence, kEmptyOptional };
  Kind kind = Kind::kTensor;
  std::string name;
  RawTensor tensor;                 ///< kTensor
  std::vector<RawTensor> sequence;  ///< kSequence
  /// Tensor element type of an (empty) sequence or empty optional, 0 when unknown.
  int32_t elem_type = 0;
  /// A kTensor or kSequence the file holds wrapped in an OptionalProto (the value of an
  /// optional-typed input or output): read from one, and written as one.
  bool in_optional = false;
};

/// Reads input_K.pb / output_K.pb. `type` (the model's declared type of the value, or null)
/// says which message the file holds: sequence_type -> SequenceProto, optional_type ->
/// OptionalProto, otherwise TensorProto. Messages start with the path.
absl::StatusOr<RawValue> LoadValueFile(const std::string& path, const onnx::TypeProto* type);

/// The bytes of `value`'s TensorProto, SequenceProto or OptionalProto file.
absl::StatusOr<std::string> SerializeValueFile(const RawValue& value);

/// Writes `value` as a TensorProto, SequenceProto or OptionalProto file (atomically).
absl::Status SaveValueFile(const RawValue& value, const std::string& path);

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_SEQUENCE_CODEC_H_
